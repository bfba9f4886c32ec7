"""What installed bytecode saves: each command timed with and without the .pyc files.

`make setup` installs compiled bytecode for the environment (`uv sync --compile-bytecode`)
and the project (`compileall`), because these machines set PYTHONDONTWRITEBYTECODE=1 and a
process would otherwise compile every module it imports, every time. "Without" is measured
by pointing PYTHONPYCACHEPREFIX at an empty folder: Python then looks for .pyc files only
there, finds none and compiles from source, exactly as on a machine with none installed (and,
with PYTHONDONTWRITEBYTECODE set, writes none). Nothing is deleted or rebuilt.

Commands, each run --repeat times per mode (median and min printed):
  1. `bench --help`
  2. `bench warehouse rebuild` on an empty artifact store
  3. a Dagster run worker's start: `dagster asset materialize` of `experiment_design` on a
     temporary instance (the run loads the code location as every run worker does)
  4. with --make-test, the whole `make test` once per mode (about 10-30 minutes each)

Prints figures; asserts nothing (the machines are shared and noisy).
    .venv/bin/python benchmarks/bytecode.py [--repeat 3] [--make-test]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = ROOT / ".venv" / "bin"


def _timed(cmd: list[str], env: dict[str, str], cwd: Path = ROOT) -> float:
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).decode(errors="replace").strip().splitlines()[-3:]
        raise SystemExit(f"{' '.join(cmd)} exited {done.returncode}: {' / '.join(tail)}")
    return elapsed


def _env(scratch: Path, bytecode: bool) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.pop("PYTHONPYCACHEPREFIX", None)
    if not bytecode:
        empty = scratch / "no-pycache"
        empty.mkdir(exist_ok=True)
        env["PYTHONPYCACHEPREFIX"] = str(empty)
    data = Path(tempfile.mkdtemp(dir=scratch))
    (data / "artifacts").mkdir()
    env["BENCH_DATA_DIR"] = str(data)
    env["DAGSTER_HOME"] = tempfile.mkdtemp(dir=scratch)
    return env


COMMANDS: dict[str, list[str]] = {
    "bench --help": [str(VENV_BIN / "bench"), "--help"],
    "bench warehouse rebuild (empty store)": [str(VENV_BIN / "bench"), "warehouse", "rebuild"],
    "Dagster run worker start (materialize experiment_design)": [
        str(VENV_BIN / "dagster"),
        "asset",
        "materialize",
        "-m",
        "bench_pipeline.definitions",
        "--select",
        "experiment_design",
    ],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--make-test", action="store_true", help="also time make test per mode")
    args = parser.parse_args()
    commands = dict(COMMANDS)
    if args.make_test:
        commands["make test"] = ["make", "test"]
    print(f"{'command':58} {'no bytecode':>22} {'bytecode':>22} {'ratio':>6}")
    with tempfile.TemporaryDirectory(prefix="bench-bytecode-") as tmp:
        scratch = Path(tmp)
        for name, cmd in commands.items():
            repeat = 1 if name == "make test" else args.repeat
            times: dict[bool, list[float]] = {False: [], True: []}
            for _ in range(repeat):
                for bytecode in (False, True):
                    times[bytecode].append(_timed(cmd, _env(scratch, bytecode)))
            cold, warm = (statistics.median(times[b]) for b in (False, True))
            print(
                f"{name:58} {cold:7.2f} s (min {min(times[False]):5.2f})"
                f" {warm:7.2f} s (min {min(times[True]):5.2f}) {cold / warm:5.2f}x",
                flush=True,
            )


if __name__ == "__main__":
    main()

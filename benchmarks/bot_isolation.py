"""What running each bot evaluation in a child process group costs, and what it buys.

- the child's start-up: a fresh Python importing the bot (paid once per evaluation, out of
  its time budget);
- a game that plays normally (`canvas-basic`, 5 s window): isolated and in-process;
- the flooding page of tests/hostile/test_bot_hard_cap.py under a 20 s cap: isolated, and
  in-process where only the watchdog holds the cap (how every evaluation ran before).

Prints figures; asserts nothing. About 3 minutes on a 2-core machine.
    .venv/bin/python benchmarks/bot_isolation.py [--cap 20] [--repeats 5]
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench_pipeline.bot.evaluate import evaluate  # noqa: E402
from tests.hostile.test_bot_hard_cap import _flood_game  # noqa: E402

GAME = REPO / "tests" / "bot" / "games" / "canvas-basic"


def start_up(repeats: int) -> list[float]:
    times = []
    for _ in range(repeats):
        began = time.monotonic()
        subprocess.run(
            [sys.executable, "-c", "import bench_pipeline.bot.evaluate"], check=True, cwd=REPO
        )
        times.append(time.monotonic() - began)
    return times


def timed(target: Path, *, isolated: bool, cap: float, endurance: float) -> tuple[float, float]:
    """(the evaluation's own duration, wall seconds of the call)."""
    with tempfile.TemporaryDirectory() as evidence:
        began = time.monotonic()
        result = evaluate(str(target), endurance, Path(evidence), cap, isolated=isolated)
        return result.duration_s, time.monotonic() - began


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cap", type=float, default=20.0)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    times = start_up(args.repeats)
    print(
        f"child start-up (python importing the bot), {args.repeats} runs: "
        f"median {statistics.median(times):.2f} s, max {max(times):.2f} s"
    )
    for isolated in (True, False):
        duration, wall = timed(GAME, isolated=isolated, cap=60.0, endurance=5.0)
        how = "isolated  " if isolated else "in-process"
        print(f"canvas-basic, 5 s window, {how}: {duration:.1f} s evaluation, {wall:.1f} s call")
    folder = Path(tempfile.mkdtemp())
    try:
        flood = _flood_game(folder / "flood")
        for isolated in (True, False):
            how = "isolated  " if isolated else "in-process"
            duration, wall = timed(flood, isolated=isolated, cap=args.cap, endurance=3.0)
            print(
                f"flooding page, {args.cap:.0f} s cap, {how}: {duration:.1f} s evaluation, "
                f"{wall:.1f} s call"
            )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"this process's peak memory: {peak:.0f} MB (in-process evaluations count here)")


if __name__ == "__main__":
    main()

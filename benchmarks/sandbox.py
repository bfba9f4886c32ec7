"""Cost of the sandbox: bubblewrap vs running directly, and a sandboxed TypeScript build.

Prints figures; asserts nothing (the machines are shared and noisy).
    .venv/bin/python benchmarks/sandbox.py [--runs 20] [--builds 3]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench_pipeline.build import build_project, toolchain_bin
from bench_pipeline.sandbox import SandboxPolicy, get_sandbox, sandbox_path

TS_FILES = {
    "tsconfig.json": (
        '{"compilerOptions": {"target": "es2022", "module": "es2022", "strict": true,'
        ' "outDir": "dist", "rootDir": "src", "lib": ["es2022", "dom"]}, "include": ["src"]}'
    ),
    "index.html": '<canvas id="c"></canvas><script type="module" src="dist/main.js"></script>',
    "src/pieces.ts": (
        "export type Cell = 0 | 1;\n"
        "export const PIECES: Cell[][][] = [[[1, 1, 1, 1]], [[1, 1], [1, 1]], [[0, 1, 0], [1, 1, 1]]];\n"
        "export function rotate(p: Cell[][]): Cell[][] {\n"
        "  return p[0].map((_, i) => p.map((row) => row[i]).reverse());\n"
        "}\n"
    ),
    "src/board.ts": (
        "import { Cell } from './pieces.js';\n"
        "export class Board {\n"
        "  cells: Cell[][] = Array.from({ length: 20 }, () => Array<Cell>(10).fill(0));\n"
        "  clearLines(): number {\n"
        "    const kept = this.cells.filter((row) => row.some((c) => c === 0));\n"
        "    const cleared = 20 - kept.length;\n"
        "    this.cells = [...Array.from({ length: cleared }, () => Array<Cell>(10).fill(0)), ...kept];\n"
        "    return cleared;\n"
        "  }\n"
        "}\n"
    ),
    "src/main.ts": (
        "import { Board } from './board.js';\n"
        "import { PIECES, rotate } from './pieces.js';\n"
        "const canvas = document.getElementById('c') as HTMLCanvasElement;\n"
        "const board = new Board();\n"
        "canvas.width = 200 + board.clearLines() + rotate(PIECES[0]).length;\n"
    ),
}


def _median_s(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _direct(argv: list[str]) -> Callable[[], object]:
    env = {"PATH": sandbox_path(), "LANG": "C.UTF-8"}
    return lambda: subprocess.run(argv, env=env, check=True, capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20, help="runs per command")
    parser.add_argument("--builds", type=int, default=3, help="TypeScript builds")
    args = parser.parse_args()

    sandbox = get_sandbox("bubblewrap")
    reason = sandbox.unavailable_reason()
    if reason:
        print(f"bubblewrap unavailable: {reason}")
        return
    policy = SandboxPolicy(timeout_s=60)
    with tempfile.TemporaryDirectory(prefix="bench-sandbox-") as tmp:
        workspace = Path(tmp) / "ws"
        workspace.mkdir()
        for argv in (["true"], ["node", "-e", "0"]):

            def sandboxed(argv: list[str] = argv) -> object:
                result = sandbox.run(argv, workspace, policy)
                assert result.ok, result.summary() + result.stderr
                return result

            direct = _median_s(_direct(argv), args.runs)
            boxed = _median_s(sandboxed, args.runs)
            print(
                f"{' '.join(argv):12} direct {direct * 1000:7.1f} ms   bubblewrap "
                f"{boxed * 1000:7.1f} ms   x{boxed / direct:5.1f}   "
                f"(+{(boxed - direct) * 1000:.1f} ms per command, median of {args.runs})"
            )

        # network=True: the host-side egress proxy plus the bridge started in the sandbox.
        egress_policy = SandboxPolicy(timeout_s=60, network=True)

        def with_egress() -> object:
            result = sandbox.run(["true"], workspace, egress_policy)
            assert result.ok, result.summary() + result.stderr
            return result

        plain = _median_s(lambda: sandbox.run(["true"], workspace, policy), args.runs)
        egress = _median_s(with_egress, args.runs)
        print(
            f"true, network=True (egress proxy + bridge) {egress * 1000:7.1f} ms vs "
            f"{plain * 1000:.1f} ms without network (+{(egress - plain) * 1000:.1f} ms per run)"
        )

        tools = toolchain_bin()
        if tools is None:
            print("TypeScript build: skipped, the pinned toolchain is not installed (make setup)")
            return
        times, last = [], None
        for i in range(args.builds):
            project = Path(tmp) / f"ts{i}"
            for name, text in TS_FILES.items():
                (project / name).parent.mkdir(parents=True, exist_ok=True)
                (project / name).write_text(text)
            start = time.perf_counter()
            last = build_project(project, sandbox, toolchain_bin=tools)
            times.append(time.perf_counter() - start)
        assert last is not None
        direct_tsc = _median_s(
            lambda: subprocess.run(
                [str(tools / "tsc"), "-p", str(Path(tmp) / "ts0")], check=False, capture_output=True
            ),
            args.builds,
        )
        print(
            f"TypeScript build (3 .ts files, build_project): median {statistics.median(times):.2f} s"
            f" over {args.builds} builds (build_ok={last.build_ok}); "
            f"tsc -p directly: median {direct_tsc:.2f} s"
        )


if __name__ == "__main__":
    main()

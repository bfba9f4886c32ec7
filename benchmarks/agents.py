"""Speed of the agent-generation stage with the offline synthetic agent, and of building
what it writes.

Prints figures; asserts nothing (the machines are shared and noisy).
    .venv/bin/python benchmarks/agents.py [--runs 40] [--builds 3]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from bench_pipeline.agents import adapter_for
from bench_pipeline.agents.stage import ARCHIVE, STAGE, extract_workspace, run_generation
from bench_pipeline.build import build_project, toolchain_bin
from bench_pipeline.design.axes import default_config
from bench_pipeline.sandbox import get_sandbox
from bench_pipeline.warehouse.artifacts import ArtifactStore


def spec(i: int, language: str) -> dict:
    config = {**default_config(), "agent": "synthetic", "language": language}
    return {
        "run_id": f"bench.c{i:04d}.r0",
        "experiment": "bench",
        "cell_id": f"c{i:04d}",
        "repeat": 0,
        "seed": i,
        "agent": "synthetic",
        "model": config["model"],
        "input_usd_per_mtok": 3.0,
        "output_usd_per_mtok": 15.0,
        "model_strength": 0.75,
        "config": config,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--builds", type=int, default=3)
    args = parser.parse_args()
    sandbox = get_sandbox("bubblewrap")
    with tempfile.TemporaryDirectory() as tmp:
        store = ArtifactStore(Path(tmp) / "artifacts")
        started = time.perf_counter()
        for i in range(args.runs):
            run_generation(spec(i, "javascript"), store, adapter_for, sandbox)
        elapsed = time.perf_counter() - started
        print(
            f"synthetic agent: {args.runs} runs (project + transcript + archive + record) in "
            f"{elapsed:.2f} s = {args.runs / elapsed:.1f} runs/s"
        )

        ts = run_generation(spec(9999, "typescript"), store, adapter_for, sandbox).record
        archive = store.run_dir(ts["run_id"], STAGE) / ARCHIVE
        times = []
        for n in range(args.builds):
            workspace = Path(tmp) / f"build{n}"
            extract_workspace(archive, workspace)
            t0 = time.perf_counter()
            result = build_project(workspace, sandbox, toolchain_bin=toolchain_bin(), timeout_s=120)
            times.append(time.perf_counter() - t0)
            assert result.build_ok or result.served_dir, result.message
        print(
            f"sandboxed build of a synthetic TypeScript project ({ts['files']} files, "
            f"{ts['workspace_bytes']} bytes): median {statistics.median(times):.2f} s over "
            f"{args.builds} builds (min {min(times):.2f}, max {max(times):.2f})"
        )


if __name__ == "__main__":
    main()

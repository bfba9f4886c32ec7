"""Speed of the agent-generation stage with the offline synthetic agent, of building what it
writes, and of one scripted session of each real CLI (Claude Code, Codex: the pinned
toolchain/agents install) in the sandbox against the scripted model API.

Prints figures; asserts nothing (the machines are shared and noisy).
    .venv/bin/python benchmarks/agents.py [--runs 40] [--builds 3] [--cli-runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from bench_pipeline.agents import adapter_for
from bench_pipeline.agents.base import AgentSetupError, AgentTask
from bench_pipeline.agents.claude_code import ClaudeCodeAdapter
from bench_pipeline.agents.cli_adapter import CliAdapter
from bench_pipeline.agents.codex import CodexAdapter
from bench_pipeline.agents.stage import ARCHIVE, STAGE, extract_workspace, run_generation
from bench_pipeline.build import build_project, toolchain_bin
from bench_pipeline.design.axes import default_config
from bench_pipeline.sandbox import get_sandbox
from bench_pipeline.sandbox.base import Sandbox, SandboxPolicy
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
    parser.add_argument("--cli-runs", type=int, default=3, help="scripted sessions per real CLI")
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
        if args.cli_runs > 0:
            real_clis(sandbox, Path(tmp), args.cli_runs)


def real_clis(sandbox: Sandbox, folder: Path, runs: int) -> None:
    """Wall time of one scripted `success` session per real CLI (adapter.run: HOME, sandbox,
    proxy, the CLI's whole session, judging) and the time before its first model request."""
    # The same sandbox with the network on, running nothing: what the sandbox itself costs.
    policy = SandboxPolicy(timeout_s=30, network=True)
    empty = []
    for n in range(3):
        box = folder / f"empty{n}"
        box.mkdir()
        t0 = time.perf_counter()
        sandbox.run(["/bin/true"], box, policy)
        empty.append(time.perf_counter() - t0)
    print(f"sandbox with egress proxy, running /bin/true: median {statistics.median(empty):.2f} s")
    adapters: dict[str, type[CliAdapter]] = {
        "claude-code": ClaudeCodeAdapter,
        "codex": CodexAdapter,
    }
    for harness, adapter in adapters.items():
        walls, firsts = [], []
        for n in range(runs):
            run_dir = folder / f"{harness}-{n}"
            (run_dir / "workspace").mkdir(parents=True)
            task = AgentTask(
                run_id=f"bench.{harness}.r{n}",
                cell_id="c0",
                repeat=n,
                seed=0,
                agent=harness,
                model="scripted-success",
                config={**default_config(), "agent": harness},
                prompt="Build a Tetris game in the browser.",
                workspace=run_dir / "workspace",
                transcript_path=run_dir / "transcript.jsonl",
                budget_usd=5.0,
                max_turns=50,
                time_limit_s=300.0,
                input_usd_per_mtok=3.0,
                output_usd_per_mtok=15.0,
            )
            started = time.time()
            t0 = time.perf_counter()
            try:
                outcome = adapter().run(task, sandbox)
            except AgentSetupError as exc:  # the CLI is not installed here
                print(f"real {harness} CLI: skipped ({exc})")
                break
            walls.append(time.perf_counter() - t0)
            assert outcome.status == "completed", outcome.message
            first = outcome.details["scripted_api"]["first_request_at"]
            firsts.append(first - started)
        if not walls:
            continue
        print(
            f"real {harness} CLI, scripted success session (5 replies, 14 tool calls): "
            f"wall median {statistics.median(walls):.2f} s (min {min(walls):.2f}, max "
            f"{max(walls):.2f}) over {runs}; before its first request median "
            f"{statistics.median(firsts):.2f} s (min {min(firsts):.2f}, max {max(firsts):.2f})"
        )


if __name__ == "__main__":
    main()

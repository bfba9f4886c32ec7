"""Speed of the warehouse at scale: load 100,000 runs' records and build every SQL model.

Writes a throwaway artifact store (the default experiment's 51 cells, repeated over
several experiments until there are --runs runs, each with its agent_generation,
sandboxed_build, bot_evaluation and quality_metrics records) in a temporary folder that
is deleted at the end, then times:

- loading the sources alone (`_load_sources`: the JSON records into raw_* tables),
- building the SQL models alone (each model's CREATE, in dependency order, per model),
- running every declared data test,
- a models-only rebuild through the public API (`build_warehouse(..., sources=False)`,
  which also copies the live file first),
- the end-to-end `build_warehouse` on a fresh file, in a child process that is killed
  if its memory passes --rss-limit-gb (it did at 100,000 runs on a 24 GB machine).

Prints figures; asserts nothing (the machines are shared and noisy). Transcript events
are not generated (they would multiply the file count; the models over them are views).
    .venv/bin/python benchmarks/warehouse.py [--runs 100000]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

from bench_pipeline import settings
from bench_pipeline.bot.contract import BOT_VERSION, TEST_IDS
from bench_pipeline.design import design_experiment, load_experiment
from bench_pipeline.warehouse.artifacts import ArtifactStore
from bench_pipeline.warehouse.build import _load_sources, build_warehouse
from bench_pipeline.warehouse.datatests import run_data_tests
from bench_pipeline.warehouse.models import load_models

RUNS_PER_EXPERIMENT = 5_000
STAGES = ("agent_generation", "sandboxed_build", "bot_evaluation", "quality_metrics")
STATUSES = ["completed"] * 17 + ["failed", "budget_exceeded", "timed_out"]


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: kilobytes


@contextmanager
def _timer(label: str, timings: dict[str, float]) -> Iterator[None]:
    start = time.perf_counter()
    yield
    timings[label] = time.perf_counter() - start


def _records(run: dict[str, Any], config: dict[str, Any], rng: random.Random) -> list[dict]:
    """The four stage records of one run, with the fields (and about the size) the real
    stages write: see SOURCE_SCHEMAS in build.py and each stage's to_record."""
    status = rng.choice(STATUSES)
    built = status == "completed" or rng.random() < 0.3
    passed = rng.randint(6, 16) if built else 0
    verdicts = {
        t: "PASS" if i < passed else rng.choice(["FAIL", "INCONCLUSIVE"])
        for i, t in enumerate(TEST_IDS)
    }
    if not built:
        verdicts = {t: "INCONCLUSIVE" for t in TEST_IDS} | {"loads": "FAIL"}
    agent = {
        "run_id": run["run_id"],
        "experiment": run["experiment"],
        "cell_id": run["cell_id"],
        "repeat": run["repeat"],
        "agent": config["agent"],
        "adapter": config["agent"],
        "model": config["model"],
        "status": status,
        "message": f"the agent finished: {status}",
        "exit_code": 0 if status == "completed" else 1,
        "duration_s": round(rng.uniform(60, 1800), 3),
        "budget_hit": status == "budget_exceeded",
        "transcript_lines": rng.randint(50, 900),
        "input_tokens": rng.randint(20_000, 2_000_000),
        "output_tokens": rng.randint(2_000, 120_000),
        "cache_read_tokens": rng.randint(0, 1_500_000),
        "cache_creation_tokens": rng.randint(0, 200_000),
        "cost_usd": round(rng.uniform(0.05, config["budget_usd"]), 4),
        "cost_source": "reported",
        "turns": rng.randint(3, config["max_turns"]),
        "tool_calls": rng.randint(5, 200),
        "budget_usd": float(config["budget_usd"]),
        "max_turns": config["max_turns"],
        "time_limit_s": 60.0 * config["time_limit_min"],
        "wall_s": round(rng.uniform(60, 1800), 3),
        "started_at": "2025-01-01T00:00:00+00:00",
        "finished_at": "2025-01-01T00:20:00+00:00",
        "prompt_version": "1",
        "prompt_chars": 2400,
        "context_file": None,
        "files": rng.randint(1, 30),
        "workspace_bytes": rng.randint(5_000, 400_000),
        "archive_bytes": rng.randint(2_000, 100_000),
        "archive_sha256": "0" * 64,
        "skipped_files": [],
        "transcript_path": f"/data/runs/{run['run_id']}/agent_generation/transcript.jsonl",
        "archive_path": f"/data/runs/{run['run_id']}/agent_generation/workspace.tar.gz",
        "previous_attempt": None,
        "details": json.dumps({"session_id": run["run_id"]}),
    }
    build = {
        "run_id": run["run_id"],
        "build_ok": built,
        "kind": "static" if config["framework"] == "vanilla" else "npm",
        "message": "served index.html" if built else "no entry point",
        "duration_s": round(rng.uniform(0.5, 120), 3),
        "served_dir": f"/data/runs/{run['run_id']}/sandboxed_build/dist" if built else None,
        "entry_point": "index.html" if built else None,
        "output_bytes": rng.randint(10_000, 900_000) if built else None,
        "sandbox": "bubblewrap",
        "log_path": f"/data/runs/{run['run_id']}/sandboxed_build/build.log",
    }
    bot = {
        "run_id": run["run_id"],
        "bot_version": BOT_VERSION,
        "gameplay_score": round(100.0 * passed / len(TEST_IDS), 2),
        "duration_s": round(rng.uniform(30, 90), 3),
        "renderer": rng.choice(["canvas", "dom", "svg"]),
        "grid_cols": 10,
        "grid_rows": 20,
        "start": "auto",
        "controls": {"left": "ArrowLeft", "right": "ArrowRight", "rotate": "ArrowUp"},
        "score_source": "dom",
        "tests": verdicts,
        "reasons": {t: f"observed {v.lower()}" for t, v in verdicts.items()},
        "passed": passed,
        "failed": sum(v == "FAIL" for v in verdicts.values()),
        "inconclusive": sum(v == "INCONCLUSIVE" for v in verdicts.values()),
        "artifacts_dir": f"/data/runs/{run['run_id']}/bot_evaluation",
    }
    quality = {
        "run_id": run["run_id"],
        "experiment": run["experiment"],
        "quality_score": round(rng.uniform(15, 98), 1),
        "eslint_errors": rng.randint(0, 40),
        "eslint_warnings": rng.randint(0, 80),
        "ts_compiles": rng.random() < 0.8,
        "bundle_bytes": rng.randint(5_000, 900_000),
        "function_length_max": rng.randint(10, 300),
        "nesting_depth_max": rng.randint(1, 9),
        "naming_consistency": round(rng.random(), 3),
        "file_count": rng.randint(1, 30),
        "duplication_pct": round(rng.uniform(0, 25), 2),
        "html_errors": rng.randint(0, 5),
        "magic_numbers": rng.randint(0, 60),
        "transcript_tool_calls": rng.randint(5, 200),
        "transcript_wasted_turns": rng.randint(0, 20),
        "transcript_productivity_ratio": round(rng.random(), 3),
        "transcript_self_tested": rng.random() < 0.4,
        "sonar_cognitive_complexity": None,
        "sonar_bugs": None,
        "sonar_code_smells": None,
        "unavailable": json.dumps({"sonar": "no server configured"}),
        "breakdown": json.dumps({"eslint": 20, "structure": 30, "size": 20, "naming": 30}),
    }
    return [agent, build, bot, quality]


def _write_chunk(store: ArtifactStore, chunk: list[tuple[dict, dict]], seed: int) -> None:
    # Plain writes, not the store's atomic fsync'ed ones: this builds a fixture, and an
    # fsync per file would make generating 400,000 files take many minutes.
    rng = random.Random(seed)
    for run, config in chunk:
        for stage, record in zip(STAGES, _records(run, config, rng), strict=True):
            path = store.root / "records" / stage / f"{run['run_id']}.json"
            with open(path, "w") as fh:
                fh.write(json.dumps(record, sort_keys=True))


def generate(store: ArtifactStore, n_runs: int) -> int:
    """Designs and per-run records for n_runs runs; returns the number of files written."""
    base = design_experiment(load_experiment(settings.experiments_dir() / "default.yaml"))
    cells = base.to_json_dict()["cells"]
    configs = {c["cell_id"]: c["config"] for c in cells}
    work: list[tuple[dict, dict]] = []
    n_experiments = max(1, -(-n_runs // RUNS_PER_EXPERIMENT))
    for e in range(n_experiments):
        name = f"bench{e:03d}"
        count = min(RUNS_PER_EXPERIMENT, n_runs - e * RUNS_PER_EXPERIMENT)
        runs = [
            {
                "run_id": f"{name}.{cells[i % len(cells)]['cell_id']}.r{i // len(cells)}",
                "cell_id": cells[i % len(cells)]["cell_id"],
                "repeat": i // len(cells),
                "seed": i,
            }
            for i in range(count)
        ]
        store.save_design({"experiment": name, "cells": cells, "runs": runs})
        work.extend(({**r, "experiment": name}, configs[r["cell_id"]]) for r in runs)
    for stage in STAGES:
        (store.root / "records" / stage).mkdir(parents=True, exist_ok=True)
    chunks = [work[i : i + 2_000] for i in range(0, len(work), 2_000)]
    # Threads: most of the time is in open/write/close, which release the GIL.
    with ThreadPoolExecutor(max_workers=min(8, (os.cpu_count() or 2) * 2)) as pool:
        list(pool.map(lambda ic: _write_chunk(store, ic[1], ic[0]), enumerate(chunks)))
    return len(work) * len(STAGES) + n_experiments


_END_TO_END = """
import sys, time
from pathlib import Path
from bench_pipeline import settings
from bench_pipeline.warehouse.artifacts import ArtifactStore
from bench_pipeline.warehouse.build import build_warehouse
start = time.perf_counter()
build = build_warehouse(ArtifactStore(Path(sys.argv[1])), Path(sys.argv[2]), settings.sql_models_dir())
print(time.perf_counter() - start, build.rows("fct_runs"), build.rows("fct_test_results"))
"""


def _mem_total_mb() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) / 1024
    return 8_192.0


def _watched_build(store: ArtifactStore, db: Path, limit_mb: float) -> tuple[str, float]:
    """build_warehouse end to end in a child process, killed if its RSS passes limit_mb.

    Why a child: DuckDB's multi-threaded read_json over ~10^5 files can take tens of GB
    (see main), and a benchmark must not take a shared machine down with it.
    Returns (what happened, the child's peak RSS in MB).
    """
    child = subprocess.Popen(
        [sys.executable, "-c", _END_TO_END, str(store.root), str(db)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    start = time.perf_counter()
    peak = 0.0
    status = Path(f"/proc/{child.pid}/status")
    while child.poll() is None:
        try:
            rss = next(
                int(line.split()[1]) / 1024
                for line in status.read_text().splitlines()
                if line.startswith("VmRSS:")
            )
        except (OSError, StopIteration):
            rss = 0.0
        peak = max(peak, rss)
        if rss > limit_mb:
            child.kill()
            child.wait()
            return (
                f"KILLED after {time.perf_counter() - start:.1f} s: its RSS passed the "
                f"{limit_mb / 1024:.1f} GB limit (still loading the sources)",
                peak,
            )
        time.sleep(0.2)
    out, err = child.communicate()
    if child.returncode != 0:
        return f"failed (exit {child.returncode}): {err.strip().splitlines()[-1:]}", peak
    seconds, runs, results = out.strip().splitlines()[-1].split()
    return f"{float(seconds):.1f} s (fct_runs {runs} rows, fct_test_results {results} rows)", peak


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=100_000, help="runs to generate")
    parser.add_argument(
        "--rss-limit-gb",
        type=float,
        default=round(0.6 * _mem_total_mb() / 1024, 1),
        help="kill the end-to-end build past this RSS (default: 60 %% of the RAM)",
    )
    args = parser.parse_args()
    timings: dict[str, float] = {}
    models = load_models(settings.sql_models_dir())
    tests = [t for m in models for t in m.tests]

    with tempfile.TemporaryDirectory(prefix="bench-warehouse-") as tmp:
        store = ArtifactStore(Path(tmp) / "artifacts")
        with _timer("generate", timings):
            files = generate(store, args.runs)
        print(
            f"generate {args.runs} runs ({files} JSON files): {timings['generate']:.1f} s; "
            f"peak RSS {_peak_rss_mb():.0f} MB"
        )

        # The two halves apart, on a scratch file: the builder's own helper for the
        # sources, then each model's CREATE as the builder issues it.
        scratch = Path(tmp) / "scratch.duckdb"
        with duckdb.connect(str(scratch)) as con:
            with _timer("sources", timings):
                sources = _load_sources(con, store)
            per_model: dict[str, float] = {}
            with _timer("models", timings):
                for model in models:
                    kind = "VIEW" if model.materialized == "view" else "TABLE"
                    with _timer(model.name, per_model):
                        con.execute(f"CREATE OR REPLACE {kind} {model.name} AS {model.sql}")
            with _timer("tests", timings):
                results = run_data_tests(con, tests)
            rows = con.execute("select count(*) from fct_runs").fetchone()
            con.execute("CHECKPOINT")
        print(
            f"load sources, _load_sources ({len(sources)} tables from {files} JSON files, "
            f"one NDJSON per stage): {timings['sources']:.1f} s; "
            f"peak RSS {_peak_rss_mb():.0f} MB"
        )
        slowest = sorted(per_model.items(), key=lambda kv: -kv[1])[:5]
        print(
            f"build {len(models)} SQL models over {rows[0] if rows else 0} runs: "
            f"{timings['models']:.2f} s (target <= 15 s; slowest: "
            f"{', '.join(f'{n} {s:.2f} s' for n, s in slowest)})"
        )
        failed = [r.summary() for r in results if not r.passed]
        print(
            f"run {len(tests)} data tests: {timings['tests']:.2f} s "
            f"({len(tests) - len(failed)} pass{'; ' + '; '.join(failed) if failed else ''})"
        )

        # For scale: the same record files read by plain Python (json.loads, one DataFrame
        # per stage). Tells whether DuckDB's read_json or the file system is the bottleneck.
        with _timer("python_read", timings):
            for stage in STAGES:
                folder = store.root / "records" / stage
                frame = pd.DataFrame.from_records(
                    [json.loads(p.read_bytes()) for p in folder.glob("*.json")]
                )
                del frame
        print(
            f"  for comparison, the same {files} files read with json.loads into pandas: "
            f"{timings['python_read']:.1f} s"
        )

        # The public models-only rebuild on that file (it copies the live file first).
        db = Path(tmp) / "warehouse.duckdb"
        shutil.copyfile(scratch, db)
        scratch.unlink()
        with _timer("models_only", timings):
            build_warehouse(store, db, settings.sql_models_dir(), sources=False)
        print(
            f"models-only rebuild, build_warehouse(sources=False), {db.stat().st_size / 1e6:.0f}"
            f" MB file: {timings['models_only']:.2f} s (target <= 15 s)"
        )

        outcome, child_peak = _watched_build(
            store, Path(tmp) / "fresh.duckdb", args.rss_limit_gb * 1024
        )
        print(
            f"build_warehouse end to end (fresh file, DuckDB's default threads): {outcome}; "
            f"its peak RSS {child_peak:.0f} MB"
        )
        share = timings["sources"] / (timings["sources"] + timings["models"])
        print(
            f"loading the JSON records is {share:.0%} of load + models; "
            f"peak RSS of this process {_peak_rss_mb():.0f} MB"
        )


if __name__ == "__main__":
    main()

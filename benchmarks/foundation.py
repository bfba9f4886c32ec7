"""Speed of the foundation: designing experiments and rebuilding the warehouse.

Prints figures; asserts nothing (the machines are shared and noisy).
    .venv/bin/python benchmarks/foundation.py [--runs 10000]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from bench_pipeline import settings
from bench_pipeline.design import design_experiment, load_experiment
from bench_pipeline.warehouse.artifacts import ArtifactStore
from bench_pipeline.warehouse.build import build_warehouse


def _timed(fn, repeat: int = 5) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10_000, help="run records to load")
    args = parser.parse_args()

    default = settings.experiments_dir() / "default.yaml"
    design = design_experiment(load_experiment(default))
    times = _timed(lambda: design_experiment(load_experiment(default)))
    print(
        f"design default.yaml ({len(design.cells)} cells, {len(design.runs)} runs): "
        f"median {statistics.median(times) * 1000:.1f} ms, max {max(times) * 1000:.1f} ms"
    )

    with tempfile.TemporaryDirectory() as tmp:
        store = ArtifactStore(Path(tmp) / "artifacts")
        base = design.to_json_dict()
        runs = [
            {
                "run_id": f"bench.{c['cell_id']}.r{i}",
                "cell_id": c["cell_id"],
                "repeat": i,
                "seed": i,
            }
            for i in range(args.runs // len(base["cells"]) + 1)
            for c in base["cells"]
        ][: args.runs]
        store.save_design({"experiment": "bench", "cells": base["cells"], "runs": runs})
        start = time.perf_counter()
        for run in runs:
            store.write_record("run_spec", run["run_id"], {"cell_id": run["cell_id"], "cost": 1.0})
        write_s = time.perf_counter() - start
        print(f"write {len(runs)} run records: {write_s:.2f} s ({len(runs) / write_s:.0f}/s)")
        db = Path(tmp) / "warehouse.duckdb"
        times = _timed(lambda: build_warehouse(store, db, settings.sql_models_dir()), repeat=3)
        print(
            f"warehouse rebuild over {len(runs)} runs: median {statistics.median(times):.2f} s, "
            f"max {max(times):.2f} s"
        )


if __name__ == "__main__":
    main()

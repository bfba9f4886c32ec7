"""Several partition runs in separate processes at once: none fails, no row is lost.

This is the situation of `dagster dev` with a backfill: each run is its own process,
and DuckDB admits one writing process per file. Runs write only their own artifact
files; warehouse builds serialize on a lock and swap a fresh file in.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import pytest

from assets.experiment_design import experiment_design, run_spec
from assets.partitions import run_partitions
from bench_pipeline import settings
from bench_pipeline.warehouse.build import query

WORKER = """
import json, os, sys, time
from pathlib import Path
import dagster as dg
from assets.experiment_design import experiment_design, run_spec
from assets.warehouse import warehouse
from bench_pipeline.definitions import defs

keys = json.loads(sys.argv[1])
go = Path(sys.argv[2])
while not go.exists():  # start together with the other workers
    time.sleep(0.01)
with dg.DagsterInstance.get() as instance:
    for key in keys:
        result = dg.materialize(
            [experiment_design, run_spec, warehouse], selection=[run_spec], partition_key=key,
            instance=instance, resources=defs.resources,
        )
        assert result.success, key
        # Every worker also reloads the warehouse sources (and one model), so builds overlap
        # with writes and each other.
        result = dg.materialize(
            [experiment_design, run_spec, warehouse],
            selection=dg.AssetSelection.assets("warehouse_sources", "stg_runs"),
            instance=instance, resources=defs.resources,
        )
        assert result.success, "warehouse"
print("ok", flush=True)
"""


@pytest.mark.slow
def test_concurrent_partition_runs_lose_nothing(tmp_path: Path) -> None:
    home = tmp_path / "dagster_home"
    home.mkdir()
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "BENCH_DATA_DIR": str(tmp_path / "data"),
        "PYTHONPATH": str(settings.project_root()),
    }
    os.environ.update({k: env[k] for k in ("DAGSTER_HOME", "BENCH_DATA_DIR")})
    try:
        from bench_pipeline.definitions import defs

        with dg.DagsterInstance.get() as instance:
            result = dg.materialize(
                [experiment_design, run_spec],
                selection=[experiment_design],
                instance=instance,
                resources=defs.resources,
                run_config={
                    "ops": {
                        "experiment_design": {
                            "config": {"experiment": str(settings.experiments_dir() / "smoke.yaml")}
                        }
                    }
                },
            )
            assert result.success
            keys = instance.get_dynamic_partitions(run_partitions.name)
    finally:
        for k in ("DAGSTER_HOME", "BENCH_DATA_DIR"):
            os.environ.pop(k, None)
    assert len(keys) >= 4
    go = tmp_path / "go"
    halves = [keys[0::2], keys[1::2]]
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, json.dumps(half), str(go)],
            env=env,
            cwd=settings.project_root(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for half in halves
    ]
    time.sleep(1.0)
    go.touch()
    outputs = [w.communicate(timeout=300) for w in workers]
    for worker, (stdout, stderr) in zip(workers, outputs, strict=True):
        assert worker.returncode == 0, stderr[-3000:]
        assert stdout.strip() == "ok"

    db = tmp_path / "data" / "warehouse.duckdb"
    # The last build may have run before the other worker's last write: build once more.
    from bench_pipeline.warehouse.artifacts import ArtifactStore
    from bench_pipeline.warehouse.build import build_warehouse

    build_warehouse(ArtifactStore(tmp_path / "data" / "artifacts"), db, settings.sql_models_dir())
    _, rows = query(db, "select run_id from raw_run_spec order by run_id")
    assert [r[0] for r in rows] == sorted(keys)
    _, rows = query(db, "select count(*) from stg_runs")
    assert rows == [(len(keys),)]

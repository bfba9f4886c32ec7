"""Two sweep runs of the same experiment executing at the same moment launch one backfill.

Each sweep run is its own process (as under `dagster dev` or a deployment's run launcher),
on one shared instance: SQLite files on this machine, or a real Postgres database. Nothing
in either process knows about the other; only the instance's storage decides.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest

from assets.partitions import run_partitions
from assets.sweeps.launch import sweep_backfill_id
from bench_pipeline import settings

WORKER = """
import json, sys, time
from pathlib import Path
import dagster as dg
from bench_pipeline.definitions import defs

ready, go = Path(sys.argv[1]), Path(sys.argv[2])
job = defs.resolve_job_def("sweep_job")
config = {"ops": {"experiment_design": {"config": {"experiment": "smoke", "launch": True}}}}
with dg.DagsterInstance.get() as instance:
    instance.get_runs(limit=1)  # connected and imported: only the sweep itself is left
    ready.touch()
    while not go.exists():
        time.sleep(0.002)
    result = job.execute_in_process(
        run_config=config, instance=instance, resources=defs.resources, raise_on_error=False
    )
    metadata = {}
    for event in result.get_asset_materialization_events():
        metadata = {k: v.value for k, v in event.materialization.metadata.items()}
    print(json.dumps({
        "success": result.success,
        "run_id": result.run_id,
        "launched_runs": metadata.get("launched_runs"),
        "launch": metadata.get("launch"),
        "backfill_id": metadata.get("backfill_id"),
    }))
"""


@pytest.fixture
def postgres_database() -> Iterator[str]:
    """A new, empty database on the local server (127.0.0.1:5432), dropped afterwards."""
    pytest.importorskip("psycopg2")
    from tests.deploy.pg import fresh_database

    with fresh_database("bench_sweeps") as name:
        yield name


@pytest.fixture(params=["sqlite", "postgres"])
def dagster_home(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """A DAGSTER_HOME whose instance both sweep processes share."""
    home = tmp_path / "dagster_home"
    home.mkdir()
    if request.param == "postgres":
        from tests.deploy.pg import PG

        database = request.getfixturevalue("postgres_database")
        db = {
            "hostname": PG["host"],
            "port": PG["port"],
            "username": PG["user"],
            "password": "",
            "db_name": database,
            # SQLAlchemy 2.1 maps postgresql:// to psycopg 3, which is not installed.
            "scheme": "postgresql+psycopg2",
        }
        (home / "dagster.yaml").write_text(
            json.dumps({"storage": {"postgres": {"postgres_db": db}}})
        )
    # Created once, before the sweeps, as `dagster dev` or a deployment has it.
    with dg.DagsterInstance.from_config(str(home)) as instance:
        instance.get_runs(limit=1)
        instance.get_dynamic_partitions(run_partitions.name)
    return home


def _start_together(tmp_path: Path, env: dict[str, str], count: int) -> list[dict]:
    """Start `count` sweep processes, wait until each is loaded and connected, then release
    them at once; returns what each printed."""
    go = tmp_path / "go"
    ready = [tmp_path / f"ready-{i}" for i in range(count)]
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(flag), str(go)],
            env=env,
            cwd=settings.project_root(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for flag in ready
    ]
    try:
        while not all(flag.exists() for flag in ready):
            failed = [w for w in workers if w.poll() is not None]
            assert not failed, failed[0].communicate()[1][-3000:]
            time.sleep(0.05)
        go.touch()
        outputs = [w.communicate(timeout=300) for w in workers]
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
    for worker, (_, stderr) in zip(workers, outputs, strict=True):
        assert worker.returncode == 0, stderr[-3000:]
    return [json.loads(stdout.strip().splitlines()[-1]) for stdout, _ in outputs]


@pytest.mark.slow
@pytest.mark.postgres
def test_two_sweep_runs_at_once_launch_one_backfill(dagster_home: Path, tmp_path: Path) -> None:
    env = {
        **os.environ,
        "DAGSTER_HOME": str(dagster_home),
        "BENCH_DATA_DIR": str(tmp_path / "data"),
        "PYTHONPATH": str(settings.project_root()),
    }
    first, second = _start_together(tmp_path, env, 2)

    # Both sweep runs succeed: losing the race is not an error.
    assert first["success"] and second["success"]
    winner, loser = sorted([first, second], key=lambda r: -r["launched_runs"])
    assert (winner["launched_runs"], loser["launched_runs"]) == (4, 0)

    with dg.DagsterInstance.from_config(str(dagster_home)) as instance:
        runs = instance.get_dynamic_partitions(run_partitions.name)
        assert sorted(runs) == sorted(set(runs)) and len(runs) == 4
        [backfill] = instance.get_backfills()
        target = backfill.asset_backfill_data.target_subset.partitions_subsets_by_asset_key
        assert set(target[dg.AssetKey("agent_generation")].get_partition_keys()) == set(runs)
        assert backfill.tags["bench/launched_by"] == winner["run_id"]
        assert {r.run_id for r in instance.get_runs()} == {first["run_id"], second["run_id"]}

    assert backfill.backfill_id == sweep_backfill_id("smoke", runs) == winner["backfill_id"]
    # The loser says which backfill launched its runs: seen in flight if it planned after the
    # winner's insert, else refused by the storage while inserting the same id.
    assert loser["launch"].startswith(f"backfill {backfill.backfill_id} already launched these 4")

"""The Dagster instance on the real Postgres server (127.0.0.1:5432, trust auth).

The project's own assets through deploy/dagster.postgres.yaml; the team deployment files
(deploy/dagster.yaml and friends) are tested in tests/deploy/."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest
import yaml

from assets.experiment_design import experiment_design, run_spec
from assets.partitions import run_partitions
from bench_pipeline import settings

psycopg2 = pytest.importorskip("psycopg2")
from tests.deploy.pg import PG  # noqa: E402

EXPERIMENTS = settings.experiments_dir()


@pytest.mark.slow
@pytest.mark.postgres
def test_materializations_land_in_postgres(pg_database: str, resources: dict, monkeypatch) -> None:
    # The documented deployment file, with its environment variables filled in.
    storage = yaml.safe_load((settings.project_root() / "deploy/dagster.postgres.yaml").read_text())
    monkeypatch.setenv("DAGSTER_PG_HOST", PG["host"])
    monkeypatch.setenv("DAGSTER_PG_PORT", str(PG["port"]))
    monkeypatch.setenv("DAGSTER_PG_USER", PG["user"])
    monkeypatch.setenv("DAGSTER_PG_PASSWORD", "")
    monkeypatch.setenv("DAGSTER_PG_DB", pg_database)
    with dg.instance_for_test(overrides={"storage": storage["storage"]}) as instance:
        assert type(instance.run_storage).__name__ == "PostgresRunStorage"
        result = dg.materialize(
            [experiment_design, run_spec],
            selection=[experiment_design],
            instance=instance,
            resources=resources,
            run_config={
                "ops": {
                    "experiment_design": {"config": {"experiment": str(EXPERIMENTS / "smoke.yaml")}}
                }
            },
        )
        assert result.success
        keys = instance.get_dynamic_partitions(run_partitions.name)
        assert keys, "the design registered no run partitions"
        result = dg.materialize(
            [experiment_design, run_spec],
            selection=[run_spec],
            partition_key=keys[0],
            instance=instance,
            resources=resources,
        )
        assert result.success

    # Read back with plain SQL: the rows are really in the server, not in a local file.
    conn = psycopg2.connect(dbname=pg_database, **PG)
    with conn, conn.cursor() as cur:
        cur.execute("SELECT count(*) FROM runs")
        assert cur.fetchone()[0] == 2
        cur.execute("SELECT partition FROM dynamic_partitions WHERE partitions_def_name = 'runs'")
        assert {row[0] for row in cur.fetchall()} == set(keys)
        cur.execute(
            "SELECT count(*) FROM event_logs WHERE dagster_event_type = 'ASSET_MATERIALIZATION'"
        )
        assert cur.fetchone()[0] == 2
    conn.close()
    assert Path(
        resources["artifact_store"].root, "records", "run_spec", f"{keys[0]}.json"
    ).is_file()

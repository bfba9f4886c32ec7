"""A real partitioned materialization through the team instance (deploy/dagster.yaml) on the
local Postgres server: the runs, their materializations and the pool slots a step claims all
live in the server's tables."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from tests.deploy.conftest import DEPLOY, dagster_home_with, load_instance, pg_query

RUNS = dg.DynamicPartitionsDefinition(name="runs")
KEYS = ["demo.c1.r1", "demo.c2.r1"]


def _play_asset(seen: dict[str, Any]) -> dg.AssetsDefinition:
    # A stand-in for bot_evaluation: partitioned by run, in the `browser` pool. (`context` is
    # unannotated: dagster cannot resolve a postponed annotation inside a closure.)
    @dg.asset(partitions_def=RUNS, pool="browser")
    def play(context) -> dg.MaterializeResult:
        # While the step runs it holds a browser slot, as the instance records it.
        seen[context.partition_key] = context.instance.event_log_storage.get_concurrency_info(
            "browser"
        )
        return dg.MaterializeResult(metadata={"score": 1})

    return play


@pytest.mark.slow
@pytest.mark.postgres
def test_partitioned_materializations_and_pool_slots_live_in_postgres(
    pg_env: dict[str, str], pg_database: str, tmp_path: Path
) -> None:
    home = dagster_home_with(DEPLOY / "dagster.yaml", tmp_path / "dagster_home")
    seen: dict[str, Any] = {}
    play = _play_asset(seen)
    with load_instance(home) as instance:
        storage = instance.event_log_storage
        # A pool nobody sized falls back to the instance default (concurrency.pools).
        before = storage.get_concurrency_info("browser")
        assert (before.limit, before.using_default_limit) == (1, True)
        storage.set_concurrency_slots("browser", 2)
        info = storage.get_concurrency_info("browser")
        assert (info.limit, info.slot_count, info.using_default_limit) == (2, 2, False)

        instance.add_dynamic_partitions(RUNS.name, KEYS)
        run_ids = []
        for key in KEYS:
            result = dg.materialize([play], partition_key=key, instance=instance)
            assert result.success
            run_ids.append(result.run_id)

        for key, run_id in zip(KEYS, run_ids, strict=True):
            during = seen[key]
            assert during.limit == 2
            assert [(s.run_id, s.step_key) for s in during.claimed_slots] == [(run_id, "play")]
        # Released when the step ended: the next step may take the slot.
        assert storage.get_concurrency_info("browser").claimed_slots == []
        materialized = instance.get_materialized_partitions(play.key)
        assert materialized == set(KEYS)

    # Straight from the server: runs, their materializations per partition, the pool.
    assert pg_query(pg_database, "SELECT run_id, status FROM runs ORDER BY create_timestamp") == [
        (run_id, "SUCCESS") for run_id in run_ids
    ]
    rows = pg_query(
        pg_database,
        "SELECT run_id, partition FROM event_logs "
        "WHERE dagster_event_type = 'ASSET_MATERIALIZATION' ORDER BY id",
    )
    assert rows == list(zip(run_ids, KEYS, strict=True))
    rows = pg_query(
        pg_database,
        "SELECT count(*), count(run_id) FROM concurrency_slots WHERE concurrency_key = 'browser'",
    )
    assert rows == [(2, 0)]  # two slots, none held
    assert pg_query(pg_database, "SELECT partition FROM dynamic_partitions ORDER BY partition") == [
        (k,) for k in sorted(KEYS)
    ]

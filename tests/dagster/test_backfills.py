"""The shim over Dagster's private backfill API (assets/sweeps/backfills.py), on a real
SQLite instance: a Dagster upgrade that moves those classes fails here first."""

from __future__ import annotations

import dagster as dg

from assets.sweeps import backfills

runs = dg.DynamicPartitionsDefinition(name="shim_runs")


@dg.asset(partitions_def=runs)
def per_run() -> None: ...


@dg.asset(deps=[per_run])
def across_runs() -> None: ...


def _graph():
    return dg.Definitions(assets=[per_run, across_runs]).resolve_asset_graph()


def _add(instance: dg.DagsterInstance, backfill_id: str, partitions: list[str]) -> bool:
    return backfills.add_asset_backfill(
        instance,
        _graph(),
        backfill_id=backfill_id,
        partitions=partitions,
        selection=[per_run.key, across_runs.key],
        tags={"bench/experiment": "shim"},
        title="shim",
        description="a test backfill",
    )


def test_a_backfill_is_created_once_and_seen_in_flight() -> None:
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("shim_runs", ["r1", "r2", "r3"])
        assert _add(instance, "sweep-one", ["r1", "r2"]) is True
        assert _add(instance, "sweep-one", ["r1", "r2"]) is False  # same id: refused
        assert _add(instance, "sweep-two", ["r3"]) is True

        state = backfills.backfill_state(instance, "sweep-one")
        assert state is not None and state.in_flight
        assert state.tags["bench/experiment"] == "shim" and state.created_at > 0
        assert backfills.backfill_state(instance, "no-such-backfill") is None
        assert backfills.partitions_in_flight(instance, per_run.key) == {
            "r1": "sweep-one",
            "r2": "sweep-one",
            "r3": "sweep-two",
        }
        # Unpartitioned assets are in the backfill, not in any partition's flight list.
        assert backfills.partitions_in_flight(instance, across_runs.key) == {}


def test_a_finished_backfill_is_no_longer_in_flight() -> None:
    from dagster._core.execution.backfill import BulkActionStatus

    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("shim_runs", ["r1"])
        assert _add(instance, "sweep-done", ["r1"])
        done = instance.get_backfill("sweep-done")
        assert done is not None
        instance.update_backfill(done.with_status(BulkActionStatus.COMPLETED_SUCCESS))
        state = backfills.backfill_state(instance, "sweep-done")
        assert state is not None and not state.in_flight
        assert backfills.partitions_in_flight(instance, per_run.key) == {}

"""The one place that uses Dagster's private backfill API (`dagster._core.execution.backfill`).

Dagster 1.13 has no public API to create an asset backfill from code or to list backfills
by status; the UI's "Materialize" button and the daemon use these classes. Everything the
sweeps need from them is here, in plain types, so a Dagster upgrade that moves them breaks
this module and its test (tests/dagster/test_backfills.py), not the launch logic.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import dagster as dg
from dagster._core.execution.backfill import BulkActionsFilter, BulkActionStatus, PartitionBackfill
from sqlalchemy.exc import IntegrityError

# A backfill in these states may still start or be running Dagster runs. (CANCELING and
# FAILING cancel their runs, which takes a while: relaunching then could run an agent twice.)
IN_FLIGHT_STATUSES = (
    BulkActionStatus.REQUESTED,
    BulkActionStatus.CANCELING,
    BulkActionStatus.FAILING,
)


@dataclass(frozen=True)
class BackfillState:
    """What the launch logic needs to know of an existing backfill."""

    backfill_id: str
    in_flight: bool
    created_at: float
    tags: Mapping[str, str]


def partitions_in_flight(instance: dg.DagsterInstance, asset: dg.AssetKey) -> dict[str, str]:
    """Partition of `asset` → id of the unfinished backfill that targets it."""
    busy: dict[str, str] = {}
    for backfill in instance.get_backfills(
        filters=BulkActionsFilter(statuses=list(IN_FLIGHT_STATUSES))
    ):
        data = backfill.asset_backfill_data
        if data is None:
            continue
        subsets = data.target_subset.partitions_subsets_by_asset_key
        if asset in subsets:
            busy.update(dict.fromkeys(subsets[asset].get_partition_keys(), backfill.backfill_id))
    return busy


def backfill_state(instance: dg.DagsterInstance, backfill_id: str) -> BackfillState | None:
    backfill = instance.get_backfill(backfill_id)
    if backfill is None:
        return None
    return BackfillState(
        backfill_id,
        in_flight=backfill.status in IN_FLIGHT_STATUSES,
        created_at=backfill.backfill_timestamp,
        tags=dict(backfill.tags),
    )


def add_asset_backfill(
    instance: dg.DagsterInstance,
    asset_graph,
    *,
    backfill_id: str,
    partitions: Sequence[str],
    selection: Sequence[dg.AssetKey],
    tags: Mapping[str, str],
    title: str,
    description: str,
) -> bool:
    """Create the backfill of `selection` for `partitions` (unpartitioned assets once, after
    them), as the UI does. False, and nothing created, when a backfill with this id exists:
    the run storage's unique key on backfill ids admits one insert (SQLite and Postgres)."""
    backfill = PartitionBackfill.from_asset_partitions(
        backfill_id=backfill_id,
        asset_graph=asset_graph,
        partition_names=list(partitions),
        asset_selection=list(selection),
        backfill_timestamp=time.time(),
        tags=dict(tags),
        dynamic_partitions_store=instance,
        all_partitions=False,
        title=title,
        description=description,
        run_config=None,
    )
    try:
        instance.add_backfill(backfill)
    except IntegrityError:
        if instance.get_backfill(backfill_id) is None:  # refused for another reason
            raise
        return False
    return True

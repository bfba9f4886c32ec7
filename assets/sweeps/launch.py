"""Launching a sweep's runs as one Dagster backfill.

The backfill daemon (`dagster dev`, or the daemon of a deployment) executes it with each
asset's backfill policy (ten runs per Dagster run), respects the pools, and shows progress
on the UI's Backfills page. Dagster 1.13 has no public API for creating a backfill from
code, so this uses `PartitionBackfill` the way the UI's "Materialize" button does; it is
pinned with the rest of Dagster in uv.lock and covered by tests/dagster/test_sweeps.py.
"""

import time
from collections.abc import Sequence

import dagster as dg
from dagster._core.execution.backfill import BulkActionsFilter, BulkActionStatus, PartitionBackfill
from dagster._core.utils import make_new_backfill_id

from bench_pipeline import settings

# The per-run stages, in order, then what every sweep refreshes at its end.
RUN_STAGE_KEYS = [
    dg.AssetKey(name)
    for name in (
        "run_spec",
        "agent_generation",
        "sandboxed_build",
        "bot_evaluation",
        "quality_metrics",
    )
]
EXPERIMENT_TAG = "bench/experiment"


def partitions_in_flight(instance: dg.DagsterInstance) -> set[str]:
    """Run partitions an unfinished backfill still targets: launching them again would run
    the same agent twice at once."""
    busy: set[str] = set()
    backfills = instance.get_backfills(
        filters=BulkActionsFilter(statuses=[BulkActionStatus.REQUESTED])
    )
    agent = dg.AssetKey("agent_generation")
    for backfill in backfills:
        data = backfill.asset_backfill_data
        if data is None:
            continue
        subset = data.target_subset
        if agent in subset.partitions_subsets_by_asset_key:
            busy |= set(subset.partitions_subsets_by_asset_key[agent].get_partition_keys())
    return busy


def project_asset_graph(context: dg.AssetExecutionContext):
    """The asset graph of the code location the run belongs to; the project's own when the
    run was executed in process from a bare job (tests, `execute_in_process`)."""
    try:
        return context.repository_def.asset_graph
    except dg.DagsterInvariantViolationError:
        pass
    except Exception:  # a CheckError when no repository was loaded
        pass
    from bench_pipeline.definitions import defs  # the module that imports this one

    return defs.resolve_asset_graph()


def _unpartitioned_downstream(asset_graph) -> list[dg.AssetKey]:
    """Everything that reads the per-run stages and is built once for all runs (the
    warehouse, the analysis, the site): derived from the graph, so a new model or stage
    downstream is part of every sweep without a list to keep up to date."""
    seen: set[dg.AssetKey] = set()
    todo = [k for k in RUN_STAGE_KEYS if asset_graph.has(k)]
    while todo:
        for child in asset_graph.get(todo.pop()).child_keys:
            if child not in seen:
                seen.add(child)
                todo.append(child)
    return sorted(
        (k for k in seen if asset_graph.get(k).partitions_def is None),
        key=lambda k: k.to_user_string(),
    )


def launch_backfill(
    context: dg.AssetExecutionContext, run_ids: Sequence[str], experiment: str
) -> str:
    """Create a backfill of the per-run stages for `run_ids`, then of what is built from
    all runs (once, after them). Returns the backfill id."""
    asset_graph = project_asset_graph(context)
    selection = [k for k in RUN_STAGE_KEYS if asset_graph.has(k)]
    selection += _unpartitioned_downstream(asset_graph)
    backfill_id = make_new_backfill_id()
    backfill = PartitionBackfill.from_asset_partitions(
        backfill_id=backfill_id,
        asset_graph=asset_graph,
        partition_names=list(run_ids),
        asset_selection=selection,
        backfill_timestamp=time.time(),
        tags={
            EXPERIMENT_TAG: experiment,
            "bench/launched_by": context.run.run_id,
            # Run monitoring cancels a Dagster run past this (a hung step must not hold a
            # pool slot forever); each stage has its own tighter per-run limit as well.
            "dagster/max_runtime": str(settings.max_run_seconds()),
        },
        dynamic_partitions_store=context.instance,
        all_partitions=False,
        title=f"sweep {experiment}: {len(run_ids)} runs",
        description=f"Launched by {context.job_name} run {context.run.run_id}",
        run_config=None,
    )
    context.instance.add_backfill(backfill)
    return backfill_id

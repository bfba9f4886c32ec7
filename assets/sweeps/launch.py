"""Launching a sweep's runs as one Dagster backfill, exactly once.

The backfill daemon (`dagster dev`, or the daemon of a deployment) executes it with each
asset's backfill policy (ten runs per Dagster run), respects the pools, and shows progress
on the UI's Backfills page. Dagster 1.13 has no public API for creating a backfill from
code: `assets/sweeps/backfills.py` holds the private calls, the way the UI's "Materialize"
button makes them; this module holds the decisions (tests/dagster/test_sweeps.py).

Idempotent by construction: a backfill's id is derived from the experiment and the sorted
run ids, and the instance's run storage has a unique key on backfill ids (SQLite and
Postgres alike). Two sweep runs that launch the same runs at the same moment — two schedule
ticks, a double click, two processes or two machines — both try to insert the same id;
the database accepts one and refuses the other, which then reports the winner.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import dagster as dg
from sqlalchemy.exc import IntegrityError

from assets.sweeps import backfills
from bench_pipeline import settings, stages

# The per-run stages, in order (bench_pipeline/stages.py); what every sweep refreshes at
# its end is derived from the graph (_unpartitioned_downstream).
RUN_STAGE_KEYS = [dg.AssetKey(name) for name in stages.PER_RUN]
EXPERIMENT_TAG = "bench/experiment"
LAUNCHED_BY_TAG = "bench/launched_by"
# A sweep's launch-time settings, read by its runs' steps (the backfill's tags reach every
# run it starts): the bot's window and the cap on one run's spending.
ENDURANCE_TAG = "bench/bot_endurance_s"
BUDGET_CAP_TAG = "bench/budget_cap_usd"


def run_tags(context: dg.AssetExecutionContext) -> Mapping[str, str]:
    """The tags of the run executing this step; none for a context built by hand (an asset
    invoked directly has no run)."""
    try:
        return context.run.tags
    except Exception:  # Dagster's DagsterInvalidPropertyError outside a run
        return {}


def partitions_in_flight(instance: dg.DagsterInstance) -> dict[str, str]:
    """Run partition → id of the unfinished backfill that targets it: launching those again
    would run the same agent twice at once."""
    return backfills.partitions_in_flight(instance, dg.AssetKey("agent_generation"))


def register_runs(
    instance: dg.DagsterInstance, partitions_def_name: str, run_ids: Sequence[str]
) -> list[str]:
    """Register the partitions of `run_ids` that are not yet; returns those this call found
    missing. Two sweeps registering the same runs at once both succeed: Postgres skips a
    duplicate row, SQLite's unique index refuses the whole insert, which is then redone
    without the rows the other process added."""
    for _ in range(5):
        known = set(instance.get_dynamic_partitions(partitions_def_name))
        new = [run_id for run_id in run_ids if run_id not in known]
        if not new:
            return []
        try:
            instance.add_dynamic_partitions(partitions_def_name, new)
            return new
        except IntegrityError:
            continue
    raise RuntimeError(
        f"could not register {len(run_ids)} `{partitions_def_name}` partitions: another "
        "process kept adding the same ones (5 attempts)"
    )


def sweep_backfill_id(experiment: str, run_ids: Sequence[str], attempt: int = 0) -> str:
    """The id of the backfill of exactly these runs (order does not matter). `attempt`
    counts earlier backfills of the same runs that ended without completing them.
    At most 32 characters: Postgres stores backfill ids as VARCHAR(32)."""
    text = "\n".join([experiment, *sorted(set(run_ids)), str(attempt)])
    return "sweep-" + hashlib.sha256(text.encode()).hexdigest()[:20]


@dataclass(frozen=True)
class Launch:
    """What `launch_backfill` did: created `backfill_id`, or found that another sweep run
    (`launched_by`) had just created it for the same runs."""

    backfill_id: str
    launched: bool
    launched_by: str

    def describe(self, runs: int) -> str:
        if self.launched:
            return f"launched backfill {self.backfill_id} of {runs} runs"
        return (
            f"backfill {self.backfill_id} already launched these {runs} runs "
            f"(sweep run {self.launched_by}); launched nothing"
        )


def project_asset_graph(context: dg.AssetExecutionContext):
    """The asset graph of the code location the run belongs to; for a job executed in
    process with no code location (tests, `execute_in_process`), the project's, which a
    job's own graph is not (it holds only the job's selection). The project's definitions
    are loaded by module name then, not imported here (they import this module) nor
    handed over as module state at import time."""
    try:
        return context.repository_def.asset_graph
    except Exception:  # Dagster's CheckError: no repository was loaded
        from bench_pipeline.orchestration.project import definitions_module

        return definitions_module().defs.resolve_asset_graph()


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
    instance: dg.DagsterInstance,
    asset_graph,
    run_ids: Sequence[str],
    experiment: str,
    *,
    launched_by: str,
    job_name: str,
    planned_at: float,
    run_tags: Mapping[str, str] | None = None,
) -> Launch:
    """Create the backfill of the per-run stages for `run_ids`, then of what is built from
    all runs (once, after them), unless another sweep run just did.

    `planned_at` is when the caller read which runs were complete or in flight. A backfill
    of the same runs created after that, or still in flight, is a concurrent launch: this
    one yields to it. One created before and finished since did not complete these runs
    (else they would not be asked for again): the next attempt id launches them anew.
    """
    if not run_ids:
        raise ValueError(f"{experiment}: no runs to launch")
    selection = [k for k in RUN_STAGE_KEYS if asset_graph.has(k)]
    selection += _unpartitioned_downstream(asset_graph)
    for attempt in itertools.count():
        backfill_id = sweep_backfill_id(experiment, run_ids, attempt)
        # The decision: the storage's unique key on backfill ids admits one insert.
        created = backfills.add_asset_backfill(
            instance,
            asset_graph,
            backfill_id=backfill_id,
            partitions=run_ids,
            selection=selection,
            tags={
                **(run_tags or {}),
                EXPERIMENT_TAG: experiment,
                LAUNCHED_BY_TAG: launched_by,
                # Run monitoring cancels a Dagster run past this (a hung step must not hold
                # a pool slot forever); each stage has its own tighter per-run limit as well.
                "dagster/max_runtime": str(settings.max_run_seconds()),
            },
            title=f"sweep {experiment}: {len(run_ids)} runs",
            description=f"Launched by {job_name} run {launched_by}",
        )
        if created:
            return Launch(backfill_id, launched=True, launched_by=launched_by)
        existing = backfills.backfill_state(instance, backfill_id)
        if existing is None:  # removed between the refusal and this read: try again
            continue
        if existing.in_flight or existing.created_at >= planned_at:
            return Launch(
                backfill_id, launched=False, launched_by=existing.tags.get(LAUNCHED_BY_TAG, "?")
            )
    raise AssertionError("unreachable")  # itertools.count() never ends

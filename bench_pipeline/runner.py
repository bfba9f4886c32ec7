"""`bench run`: the main job executed in-process against the project's Dagster instance.

Each step is a real Dagster materialization recorded in the instance, so the UI shows
what `bench run` did. Per-run assets are executed as single runs over contiguous
ranges of partition keys (their backfill policy allows it), which keeps a sweep of
hundreds of runs to a handful of Dagster runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import dagster as dg

RANGE_START = "dagster/asset_partition_range_start"
RANGE_END = "dagster/asset_partition_range_end"
# The CLI prints its own progress; Dagster's step-by-step DEBUG lines stay in the run's log.
QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


@dataclass(frozen=True)
class MainRunSummary:
    experiment: str
    runs: int
    new_runs: int
    executed_runs: int
    warehouse: Path
    tables: dict[str, int]


def contiguous_ranges(ordered_keys: Sequence[str], wanted: set[str]) -> list[tuple[str, str]]:
    """Group `wanted` keys into (first, last) ranges of consecutive keys in `ordered_keys`."""
    ranges: list[tuple[str, str]] = []
    start: str | None = None
    prev: str | None = None
    for key in ordered_keys:
        if key in wanted:
            start = start or key
            prev = key
        elif start is not None and prev is not None:
            ranges.append((start, prev))
            start = prev = None
    if start is not None and prev is not None:
        ranges.append((start, prev))
    return ranges


def _check(result: dg.ExecuteInProcessResult, what: str) -> None:
    if not result.success:
        raise RuntimeError(f"{what} failed; open the run {result.run_id} in `bench ui` for details")


def run_main(
    experiment_file: Path,
    instance: dg.DagsterInstance,
    progress: Callable[[str], None] = print,
) -> MainRunSummary:
    # Imported here so that `bench design` and `bench sql` stay fast to start.
    from assets.design import experiment_design, run_spec
    from assets.partitions import run_partitions
    from assets.warehouse import warehouse
    from bench_pipeline.definitions import defs
    from bench_pipeline.design import load_experiment

    experiment = load_experiment(experiment_file)  # refuse a bad file before anything runs
    resources = defs.resources
    all_assets = [experiment_design, run_spec, warehouse]

    progress(f"designing {experiment.name} from {experiment_file}")
    before = set(instance.get_dynamic_partitions(run_partitions.name))
    result = dg.materialize(
        all_assets,
        selection=[experiment_design],
        instance=instance,
        resources=resources,
        run_config={
            **QUIET,
            "ops": {"experiment_design": {"config": {"experiment_file": str(experiment_file)}}},
        },
        tags={"bench/experiment": experiment.name},
    )
    _check(result, "experiment_design")
    ordered = instance.get_dynamic_partitions(run_partitions.name)
    prefix = f"{experiment.name}."
    wanted = {k for k in ordered if k.startswith(prefix)}
    # Only runs that have not been through the stages yet: what exists is never redone here
    # (agent runs cost money); recomputing stale stages is the automation's job.
    done = instance.get_materialized_partitions(run_spec.key)
    todo = wanted - done
    if not todo:
        progress("every run of this experiment already has its stages")

    for first, last in contiguous_ranges(ordered, todo):
        progress(f"run stages for partitions {first} … {last}")
        result = dg.materialize(
            all_assets,
            selection=[run_spec],
            instance=instance,
            resources=resources,
            run_config=QUIET,
            tags={RANGE_START: first, RANGE_END: last, "bench/experiment": experiment.name},
        )
        _check(result, f"run stages {first}…{last}")

    progress("building the warehouse")
    result = dg.materialize(
        all_assets, selection=[warehouse], instance=instance, resources=resources, run_config=QUIET
    )
    _check(result, "warehouse")
    mat = result.asset_materializations_for_node("warehouse")[0]
    tables = {
        k.removeprefix("rows/"): int(v.value)
        for k, v in mat.metadata.items()
        if k.startswith("rows/")
    }
    return MainRunSummary(
        experiment=experiment.name,
        runs=len(wanted),
        new_runs=len(wanted - before),
        executed_runs=len(todo),
        warehouse=Path(str(mat.metadata["path"].value)),
        tables=tables,
    )

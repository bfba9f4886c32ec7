"""`bench run`: the main job executed in-process against the project's Dagster instance.

Each step is a real Dagster materialization recorded in the instance, so the UI shows
what `bench run` did. Per-run assets are executed as single runs over contiguous
ranges of partition keys (their backfill policy allows it), which keeps a sweep of
hundreds of runs to a handful of Dagster runs.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import dagster as dg

from bench_pipeline import settings

RANGE_START = "dagster/asset_partition_range_start"
RANGE_END = "dagster/asset_partition_range_end"
# The CLI prints its own progress; Dagster's step-by-step DEBUG lines stay in the run's log.
# Runs per Dagster run of the per-run stages.
CHUNK = 6
QUALITY_AND_BOT = {dg.AssetKey("bot_evaluation"), dg.AssetKey("quality_metrics")}
QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


@dataclass(frozen=True)
class MainRunSummary:
    experiment: str
    runs: int
    new_runs: int
    executed_runs: int
    warehouse: Path
    tables: dict[str, int]
    failed: list[str] = field(default_factory=list)  # one line per chunk of runs that failed
    site: Path | None = None  # the results site's index.html


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


def chunked(
    ordered_keys: Sequence[str], ranges: list[tuple[str, str]], size: int
) -> list[tuple[str, str]]:
    """Split each (first, last) range into ranges of at most `size` keys: one Dagster run
    each, so progress shows and a failure stops a few runs, not the sweep."""
    position = {key: i for i, key in enumerate(ordered_keys)}
    out: list[tuple[str, str]] = []
    for first, last in ranges:
        keys = ordered_keys[position[first] : position[last] + 1]
        out.extend((keys[i], keys[min(i + size, len(keys)) - 1]) for i in range(0, len(keys), size))
    return out


def _failure_text(result: dg.ExecuteInProcessResult) -> str:
    for event in result.all_events:
        if event.is_step_failure and event.step_failure_data is not None:
            error = event.step_failure_data.error
            text = error.message.strip() if error else "step failed"
            return f"{event.step_key}: {text.splitlines()[0] if text else 'failed'}"
    return "the run failed"


def _clock(seconds: float) -> str:
    return f"{int(seconds // 60)}:{int(seconds % 60):02d}"


def _chunk_scores(result: dg.ExecuteInProcessResult) -> list[str]:
    """One line per run of a chunk: what the bot and the quality tools made of it."""
    runs = {
        event.partition
        for event in result.get_asset_materialization_events()
        if event.partition and event.asset_key in QUALITY_AND_BOT
    }
    if not runs:
        return []
    from bench_pipeline.warehouse.artifacts import ArtifactStore

    store = ArtifactStore(settings.artifacts_dir())
    lines = []
    for run_id in sorted(runs):
        bot = store.read_record("bot_evaluation", run_id) or {}
        quality = store.read_record("quality_metrics", run_id) or {}
        lines.append(
            f"    {run_id}: gameplay {bot.get('gameplay_score', '—')}, "
            f"quality {quality.get('quality_score', '—')}"
        )
    return lines


def _check(result: dg.ExecuteInProcessResult, what: str) -> None:
    if not result.success:
        raise RuntimeError(
            f"{what} failed: {_failure_text(result)}; "
            f"open the run {result.run_id} in `bench ui` for details"
        )


def run_main(
    experiment_file: Path,
    instance: dg.DagsterInstance,
    progress: Callable[[str], None] = print,
    endurance_s: float = 30.0,
) -> MainRunSummary:
    # Imported here so that `bench design` and `bench sql` stay fast to start.
    from assets.analysis import effects_analysis
    from assets.build import sandboxed_build
    from assets.design import experiment_design, run_spec
    from assets.evaluation import bot_evaluation
    from assets.generation import agent_generation
    from assets.partitions import run_partitions
    from assets.quality import quality_metrics
    from assets.report import results_site
    from assets.warehouse import warehouse
    from bench_pipeline.definitions import defs
    from bench_pipeline.design import load_experiment

    experiment = load_experiment(experiment_file)  # refuse a bad file before anything runs
    resources = defs.resources
    run_stages = [run_spec, agent_generation, sandboxed_build, bot_evaluation, quality_metrics]
    all_assets = [experiment_design, *run_stages, warehouse, effects_analysis, results_site]

    progress(f"designing {experiment.name} from {experiment_file}")
    before = set(instance.get_dynamic_partitions(run_partitions.name))
    result = dg.materialize(
        all_assets,
        selection=[experiment_design],
        instance=instance,
        resources=resources,
        run_config={
            **QUIET,
            "ops": {"experiment_design": {"config": {"experiment": str(experiment_file)}}},
        },
        tags={"bench/experiment": experiment.name},
    )
    _check(result, "experiment_design")
    ordered = instance.get_dynamic_partitions(run_partitions.name)
    prefix = f"{experiment.name}."
    wanted = {k for k in ordered if k.startswith(prefix)}
    # Only runs that have not been through every stage yet: what exists is never redone
    # here, and an agent run that exists is reused, not repeated (it costs money);
    # recomputing stale stages is the automation's job.
    done = instance.get_materialized_partitions(
        bot_evaluation.key
    ) & instance.get_materialized_partitions(quality_metrics.key)
    todo = wanted - done
    if not todo:
        progress("every run of this experiment already has its stages")

    failed: list[str] = []
    chunks = chunked(ordered, contiguous_ranges(ordered, todo), CHUNK)
    started = time.monotonic()
    for n, (first, last) in enumerate(chunks, start=1):
        elapsed = time.monotonic() - started
        eta = f", about {_clock(elapsed / (n - 1) * (len(chunks) - n + 1))} left" if n > 1 else ""
        progress(
            f"[{n}/{len(chunks)}] agent, build, bot and quality for runs {first} … {last} "
            f"({_clock(elapsed)} elapsed{eta})"
        )
        result = dg.materialize(
            all_assets,
            selection=run_stages,
            instance=instance,
            resources=resources,
            run_config={
                **QUIET,
                "ops": {"bot_evaluation": {"config": {"endurance_seconds": endurance_s}}},
            },
            tags={RANGE_START: first, RANGE_END: last, "bench/experiment": experiment.name},
            raise_on_error=False,
        )
        for line in _chunk_scores(result):
            progress(line)
        if not result.success:
            # The rest of the sweep goes on; the warehouse still gets what did succeed.
            failure = _failure_text(result)
            failed.append(f"runs {first} … {last}: {failure} (Dagster run {result.run_id})")
            progress(f"failed: {failure}")

    progress("building the warehouse, its marts, the effects analysis and the results site")
    result = dg.materialize(
        all_assets,
        selection=[warehouse, effects_analysis, results_site],
        instance=instance,
        resources=resources,
        run_config=QUIET,
        raise_on_error=False,
    )
    _check(result, "warehouse")
    tables: dict[str, int] = {}
    db_path = None
    site = None
    for mat in result.get_asset_materialization_events():
        metadata = mat.materialization.metadata
        name = mat.asset_key.to_user_string()
        if name == "warehouse_sources":
            db_path = Path(str(metadata["path"].value))
            tables |= {
                k.removeprefix("rows/"): int(v.value)
                for k, v in metadata.items()
                if k.startswith("rows/")
            }
        elif name == "results_site":
            site = Path(str(metadata["index"].value))
        elif "dagster/row_count" in metadata:
            tables[name] = int(metadata["dagster/row_count"].value)
    return MainRunSummary(
        experiment=experiment.name,
        runs=len(wanted),
        new_runs=len(wanted - before),
        executed_runs=len(todo),
        warehouse=db_path or settings.warehouse_path(),
        tables=tables,
        failed=failed,
        site=site,
    )

"""`bench run`: the main job executed in-process against the project's Dagster instance.

Each step is a real Dagster materialization recorded in the instance, so the UI shows
what `bench run` did. Per-run assets are executed as single runs over contiguous
ranges of partition keys (their backfill policy allows it), which keeps a sweep of
hundreds of runs to a handful of Dagster runs.
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import dagster as dg

from bench_pipeline import settings, stages

RANGE_START = "dagster/asset_partition_range_start"
RANGE_END = "dagster/asset_partition_range_end"
# The CLI prints its own progress; Dagster's step-by-step DEBUG lines stay in the run's log.
# Runs per Dagster run of the per-run stages.
CHUNK = 6
# The stages whose materializations make a run complete (stages.py).
QUALITY_AND_BOT = {dg.AssetKey(s) for s in stages.COMPLETES_RUN}
QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
# Who executes a `bench run` Dagster run (in this process, so no run launcher and no run
# monitoring sees it die): the next start fails the runs whose process is gone.
HOST_TAG = "bench/host"
PID_TAG = "bench/pid"
PID_START_TAG = "bench/pid_start"
LIVE_STATUSES = (dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED)


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
    # Bad records moved aside during this run (integrity.py), one line each: run, stage,
    # path, why; and the (stage, run) pairs computed again because of an earlier one.
    quarantined: list[str] = field(default_factory=list)
    repaired: list[str] = field(default_factory=list)


def _stage_columns() -> dict[str, dict[str, str]]:
    """The per-run stages whose records the resume logic checks, with the columns the
    warehouse relies on."""
    from bench_pipeline.warehouse.build import SOURCE_SCHEMAS

    return {stage: SOURCE_SCHEMAS.get(f"raw_{stage}", {}) for stage in stages.PER_RUN}


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


def failure_text(result: dg.ExecuteInProcessResult) -> str:
    for event in result.all_events:
        if event.is_step_failure and event.step_failure_data is not None:
            error = event.step_failure_data.error
            text = error.message.strip() if error else "step failed"
            return f"{event.step_key}: {text.splitlines()[0] if text else 'failed'}"
    return "the run failed"


def owner_tags() -> dict[str, str]:
    from bench_pipeline.sandbox.reap import start_time

    return {
        HOST_TAG: socket.gethostname(),
        PID_TAG: str(os.getpid()),
        PID_START_TAG: str(start_time(os.getpid()) or 0),
    }


def _worker_pid(instance: dg.DagsterInstance, run_id: str) -> int | None:
    """The pid of a launched run's worker, from the engine event every run worker writes
    first ("Started process for run (pid: N).", EngineEventData.in_process)."""
    events = instance.all_logs(run_id, of_type=dg.DagsterEventType.ENGINE_EVENT)
    for entry in reversed(events):
        event = entry.dagster_event
        if event is None or not entry.message.startswith("Started process for run"):
            continue
        pid = event.engine_event_data.metadata.get("pid")
        with contextlib.suppress(AttributeError, TypeError, ValueError):
            return int(pid.value)  # type: ignore[union-attr]
    return None


def _is_local(instance: dg.DagsterInstance) -> bool:
    """Run history in SQLite files of this DAGSTER_HOME: every run worker ran on this host
    (a shared Postgres instance has workers on other hosts, whose pids mean nothing here)."""
    return type(instance.run_storage).__name__.startswith("Sqlite")


def fail_dead_runs(instance: dg.DagsterInstance) -> list[str]:
    """Mark FAILURE every STARTING/STARTED run whose process is gone (SIGKILL, a closed
    terminal, a reboot), free the pool slots it held, and return one line per run.

    A `bench run` names its process in the run's tags (host, pid, start time); a run
    launched by the UI/daemon (default launcher) names its worker's pid in its first engine
    event, which is trusted only on a local (SQLite) instance. Runs of live processes and of
    other hosts are left alone.
    """
    from bench_pipeline.sandbox.reap import owner_alive

    host = socket.gethostname()
    local = _is_local(instance)
    failed = []
    for record in instance.get_run_records(dg.RunsFilter(statuses=list(LIVE_STATUSES))):
        run = record.dagster_run
        if PID_TAG in run.tags:
            if run.tags.get(HOST_TAG) != host:
                continue
            try:
                pid = int(run.tags[PID_TAG])
                started = int(run.tags.get(PID_START_TAG, "0")) or None
            except ValueError:
                continue
            what = f"the `bench run` process (pid {pid} on {host}) that executed this run"
        else:
            worker = _worker_pid(instance, run.run_id) if local else None
            if worker is None:
                continue
            pid, started = worker, None
            what = f"the run worker process (pid {pid} on {host})"
        if owner_alive(pid, started):
            continue
        message = f"{what} is gone (killed or crashed); marked failed by the next start"
        instance.report_run_failed(run, message)
        instance.event_log_storage.free_concurrency_slots_for_run(run.run_id)
        failed.append(f"Dagster run {run.run_id} ({run.job_name}): {message}")
    return failed


def start_up(instance: dg.DagsterInstance | None, progress: Callable[[str], None]) -> None:
    """What every start (`bench run`, `bench ui`) does first: take back what a killed
    pipeline left (sandbox cgroups, /etc folders, processes, files of sandbox uids) and
    fail its Dagster runs."""
    from bench_pipeline.sandbox.reap import reap_once

    report = reap_once()
    if report.anything:
        progress(f"after an earlier crash: {report.summary()}")
    from bench_pipeline.warehouse.writer import reap_building_leftovers

    for path in reap_building_leftovers(settings.warehouse_path()):
        progress(f"after an earlier crash: removed the unfinished warehouse copy {path}")
    if instance is not None:
        for line in fail_dead_runs(instance):
            progress(f"marked failed: {line}")


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


def check_result(result: dg.ExecuteInProcessResult, what: str) -> None:
    if not result.success:
        raise RuntimeError(
            f"{what} failed: {failure_text(result)}; "
            f"open the run {result.run_id} in `bench ui` for details"
        )


def run_main(
    experiment_file: Path,
    instance: dg.DagsterInstance,
    progress: Callable[[str], None] = print,
    endurance_s: float = 30.0,
) -> MainRunSummary:
    # Imported here so that `bench design` and `bench sql` stay fast to start.
    from bench_pipeline.design import load_experiment
    from bench_pipeline.orchestration.project import load_project
    from bench_pipeline.warehouse.artifacts import ArtifactStore
    from bench_pipeline.warehouse.integrity import pending_repairs, quarantined, scan_records

    start_up(instance, progress)
    experiment = load_experiment(experiment_file)  # refuse a bad file before anything runs
    project = load_project()
    resources = project.resources
    stage_assets_by_name = project.stage_assets
    run_partitions = project.run_partitions
    experiment_design = stage_assets_by_name[stages.DESIGN]
    run_stages = project.per_run_assets
    all_assets = project.all_assets

    progress(f"designing {experiment.name} from {experiment_file}")
    before = set(instance.get_dynamic_partitions(run_partitions.name))
    result = dg.materialize(
        all_assets,
        selection=[experiment_design],
        instance=instance,
        resources=resources,
        run_config={
            **QUIET,
            # `bench run` runs what it designs: BENCH_SWEEP_DRY_RUN is for launched sweeps.
            "ops": {
                "experiment_design": {
                    "config": {"experiment": str(experiment_file), "dry_run": False}
                }
            },
        },
        tags={"bench/experiment": experiment.name, **owner_tags()},
    )
    check_result(result, "experiment_design")
    ordered = instance.get_dynamic_partitions(run_partitions.name)
    prefix = f"{experiment.name}."
    wanted = {k for k in ordered if k.startswith(prefix)}
    # Only runs that have not been through every stage yet: what exists is never redone
    # here, and an agent run that exists is reused, not repeated (it costs money);
    # recomputing stale stages is the automation's job.
    done = stages.complete_runs(
        {
            s: instance.get_materialized_partitions(stage_assets_by_name[s].key)
            for s in stages.COMPLETES_RUN
        }
    )
    # A record that cannot be loaded is moved aside, and its stage is computed again
    # below for that run alone. Never the agent's: a new agent run costs money, so a run
    # whose agent record is quarantined is held back and named (docs/warehouse.md).
    store = ArtifactStore(settings.artifacts_dir())
    known = {e.moved_to for e in quarantined(store)}
    for entry in scan_records(store, _stage_columns(), sorted(wanted)):
        progress(f"quarantined a bad record: {entry.describe()}")
    repairs = pending_repairs(store, wanted)
    held = repairs.pop("agent_generation", set())
    for run_id in sorted(held):
        progress(
            f"run {run_id}: its agent_generation record is quarantined; the agent is not "
            "run again by itself (it costs money): fix the file and move it back to "
            "records/agent_generation/, or materialize agent_generation for this run"
        )
    todo = wanted - done - held
    if not todo and not repairs:
        progress("every run of this experiment already has its stages")

    failed: list[str] = []
    repaired: list[str] = []
    stage_assets = {a.key.to_user_string(): a for a in run_stages}
    for stage in stages.REPAIRABLE:
        runs = repairs.get(stage, set()) - todo - held
        for first, last in chunked(ordered, contiguous_ranges(ordered, runs), CHUNK):
            progress(f"recomputing {stage} for runs {first} … {last} (its record was quarantined)")
            result = dg.materialize(
                all_assets,
                selection=[stage_assets[stage]],
                instance=instance,
                resources=resources,
                run_config={
                    **QUIET,
                    "ops": {"bot_evaluation": {"config": {"endurance_seconds": endurance_s}}}
                    if stage == "bot_evaluation"
                    else {},
                },
                tags={
                    RANGE_START: first,
                    RANGE_END: last,
                    "bench/experiment": experiment.name,
                    **owner_tags(),
                },
                raise_on_error=False,
            )
            if not result.success:
                failure = failure_text(result)
                failed.append(f"{stage} of runs {first} … {last}: {failure}")
                progress(f"failed: {failure}")
        repaired.extend(f"{stage} of {run_id}" for run_id in sorted(runs))
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
            tags={
                RANGE_START: first,
                RANGE_END: last,
                "bench/experiment": experiment.name,
                **owner_tags(),
            },
            raise_on_error=False,
        )
        for line in _chunk_scores(result):
            progress(line)
        if not result.success:
            # The rest of the sweep goes on; the warehouse still gets what did succeed.
            failure = failure_text(result)
            failed.append(f"runs {first} … {last}: {failure} (Dagster run {result.run_id})")
            progress(f"failed: {failure}")

    progress("building the warehouse, its marts, the effects analysis and the results site")
    result = dg.materialize(
        all_assets,
        selection=project.across_run_assets,
        instance=instance,
        resources=resources,
        run_config=QUIET,
        tags=owner_tags(),
        raise_on_error=False,
    )
    check_result(result, "warehouse")
    moved = [e.describe() for e in quarantined(store) if e.moved_to not in known]
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
        quarantined=moved,
        repaired=repaired,
    )

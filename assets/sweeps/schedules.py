"""`new_model_backfill_schedule`: a model added to the registry gets its runs by itself."""

import hashlib
import os
from pathlib import Path

import dagster as dg

from assets.partitions import run_partitions
from assets.sweeps.jobs import sweep_job
from assets.sweeps.launch import EXPERIMENT_TAG
from bench_pipeline import settings
from bench_pipeline.design import DesignError, design_experiment, find_experiment, load_experiment
from bench_pipeline.orchestration import pending_runs

# Nightly by default (03:00 UTC, after the day's experiments); BENCH_NEW_MODEL_CRON moves it.
NEW_MODEL_CRON = os.environ.get("BENCH_NEW_MODEL_CRON", "0 3 * * *")

# A sweep_job run in one of these states has not finished: it may still register and launch.
UNFINISHED_RUN_STATUSES = [
    dg.DagsterRunStatus.NOT_STARTED,
    dg.DagsterRunStatus.QUEUED,
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED,
    dg.DagsterRunStatus.CANCELING,
]


def standard_sweep() -> str:
    """The experiment every model gets (a name or a file): `BENCH_STANDARD_SWEEP`, else
    experiments/standard.yaml, whose `model: {levels: registry}` lists every registry model."""
    return os.environ.get("BENCH_STANDARD_SWEEP") or "standard"


def _experiment_file(ref: object) -> Path | None:
    if not isinstance(ref, str):
        return None
    try:
        return find_experiment(ref, settings.experiments_dir(), settings.project_root()).resolve()
    except DesignError:
        return None


def unfinished_sweep_run(
    instance: dg.DagsterInstance, experiment: str, path: Path
) -> dg.DagsterRun | None:
    """A sweep_job run of this experiment that is queued or running: one this schedule
    requested on an earlier tick (tagged with the experiment), or one launched from the UI
    with `launch: true` whose config names the same experiment file."""
    runs = instance.get_runs(
        dg.RunsFilter(job_name=sweep_job.name, statuses=UNFINISHED_RUN_STATUSES)
    )
    for run in runs:
        if run.tags.get(EXPERIMENT_TAG) == experiment:
            return run
        config = (run.run_config or {}).get("ops", {}).get("experiment_design", {})
        config = config.get("config", {}) if isinstance(config, dict) else {}
        if config.get("launch") is True and _experiment_file(config.get("experiment")) == path:
            return run
    return None


def new_model_requests(instance: dg.DagsterInstance, experiment_ref: str):
    """A RunRequest of `sweep_job` for the standard sweep's unregistered runs, or why not.

    Idempotent across ticks: while a sweep_job run of the experiment is queued or running
    it skips (that run will register and launch them), and once it registered them there is
    nothing left. The run key alone would not do: Dagster scopes a schedule's run key to one
    tick (its scheduled time), so the next tick with the same key starts a second run.
    Should two sweep runs still execute at once, `launch_backfill` creates one backfill.
    """
    try:
        path = find_experiment(experiment_ref, settings.experiments_dir(), settings.project_root())
        design = design_experiment(load_experiment(path))
    except DesignError as exc:
        return dg.SkipReason(f"the standard sweep cannot be designed: {exc}")
    registered = set(instance.get_dynamic_partitions(run_partitions.name))
    todo = pending_runs(design, registered)
    if not todo:
        return dg.SkipReason(todo.describe())
    running = unfinished_sweep_run(instance, design.experiment, path.resolve())
    if running is not None:
        return dg.SkipReason(
            f"sweep_job run {running.run_id} ({running.status.value.lower()}) is already "
            f"launching {design.experiment}'s runs; {todo.describe()}"
        )
    key = hashlib.sha256("\n".join(sorted(todo.run_ids)).encode()).hexdigest()[:16]
    return dg.RunRequest(
        # Dedupes within one tick only (a daemon that crashed mid-tick and retries it).
        run_key=f"new-runs-{design.experiment}-{key}",
        run_config=dg.RunConfig(
            ops={"experiment_design": {"config": {"experiment": str(path), "launch": True}}}
        ),
        tags={
            EXPERIMENT_TAG: design.experiment,
            "bench/new_models": ",".join(todo.new_models)[:200],
            "bench/pending_runs": str(len(todo.run_ids)),
        },
    )


@dg.schedule(
    job=sweep_job,
    cron_schedule=NEW_MODEL_CRON,
    execution_timezone="UTC",
    default_status=dg.DefaultScheduleStatus.RUNNING,
    description="Nightly: design the standard sweep against today's model registry and, when "
    "a model (or any run of it) has no registered runs yet, launch sweep_job for them. "
    "Skips while a sweep_job run of the standard sweep is queued or running; two sweep runs "
    "at once still launch one backfill.",
)
def new_model_backfill_schedule(context: dg.ScheduleEvaluationContext):
    return new_model_requests(context.instance, standard_sweep())

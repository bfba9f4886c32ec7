"""`new_model_backfill_schedule`: a model added to the registry gets its runs by itself."""

import hashlib
import os

import dagster as dg

from assets.partitions import run_partitions
from assets.sweeps.jobs import sweep_job
from bench_pipeline import settings
from bench_pipeline.design import DesignError, design_experiment, find_experiment, load_experiment
from bench_pipeline.orchestration import pending_runs

# Nightly by default (03:00 UTC, after the day's experiments); BENCH_NEW_MODEL_CRON moves it.
NEW_MODEL_CRON = os.environ.get("BENCH_NEW_MODEL_CRON", "0 3 * * *")


def standard_sweep() -> str:
    """The experiment every model gets (a name or a file): `BENCH_STANDARD_SWEEP`, else
    experiments/standard.yaml, whose `model: {levels: registry}` lists every registry model."""
    return os.environ.get("BENCH_STANDARD_SWEEP") or "standard"


def new_model_requests(instance: dg.DagsterInstance, experiment_ref: str):
    """A RunRequest of `sweep_job` for the standard sweep's unregistered runs, or why not.

    Idempotent: the run key names exactly the runs to register, so a second evaluation
    before they are registered launches nothing new, and after, there is nothing to launch.
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
    key = hashlib.sha256("\n".join(sorted(todo.run_ids)).encode()).hexdigest()[:16]
    return dg.RunRequest(
        run_key=f"new-runs-{design.experiment}-{key}",
        run_config=dg.RunConfig(
            ops={"experiment_design": {"config": {"experiment": str(path), "launch": True}}}
        ),
        tags={
            "bench/experiment": design.experiment,
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
    "Running it twice launches nothing new.",
)
def new_model_backfill_schedule(context: dg.ScheduleEvaluationContext):
    return new_model_requests(context.instance, standard_sweep())

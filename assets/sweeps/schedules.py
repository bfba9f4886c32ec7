"""`new_model_backfill_schedule`: a model added to the registry gets its runs by itself."""

import hashlib
import os
from dataclasses import dataclass, replace
from pathlib import Path

import dagster as dg

from assets.partitions import run_partitions
from assets.sweeps.jobs import sweep_job
from assets.sweeps.launch import EXPERIMENT_TAG
from bench_pipeline import settings
from bench_pipeline.design import DesignError, design_experiment, find_experiment, load_experiment
from bench_pipeline.orchestration import pending_runs
from bench_pipeline.orchestration.estimate import (
    CostEstimate,
    estimate_cost,
    recorded_agent_runs,
    token_history,
)
from bench_pipeline.warehouse.artifacts import ArtifactStore

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


@dataclass(frozen=True)
class NextLaunch:
    """What the schedule's next tick would do now: `run_ids` it would launch (empty: it
    skips, for `reason`), and what they would cost."""

    experiment: str
    reason: str
    run_ids: list[str]
    new_models: list[str]
    estimate: CostEstimate | None
    path: Path | None = None
    estimate_error: str | None = None

    def describe(self) -> str:
        cost = f" ({self.estimate.describe()})" if self.estimate is not None else ""
        if self.estimate_error:
            cost = f" (no cost estimate: {self.estimate_error})"
        if self.run_ids:
            return (
                f"would launch {len(self.run_ids)} runs of {self.experiment}{cost}: {self.reason}"
            )
        return f"launches nothing: {self.reason}{cost}"


def _estimate(experiment, design, run_ids: list[str]) -> CostEstimate | None:
    """What launching `run_ids` would cost. Raises ValueError for a bad BENCH_ESTIMATE_TOKENS
    (next_launch reports it beside its decision, which does not depend on it)."""
    if not run_ids:
        return None
    store = ArtifactStore(settings.artifacts_dir())
    history = token_history(recorded_agent_runs(store.record_glob("agent_generation")))
    return estimate_cost(design, run_ids, experiment.registry, history)


def next_launch(instance: dg.DagsterInstance, experiment_ref: str) -> NextLaunch:
    """`_next_launch`, with a cost estimate that cannot be made said beside the decision."""
    try:
        return _next_launch(instance, experiment_ref)
    except ValueError as exc:  # only the estimate raises it (a bad BENCH_ESTIMATE_TOKENS)
        plan = _next_launch(instance, experiment_ref, with_estimate=False)
        return replace(plan, estimate_error=str(exc))


def _next_launch(
    instance: dg.DagsterInstance, experiment_ref: str, with_estimate: bool = True
) -> NextLaunch:
    """Decide what a tick launches. Spending is always asked for: only models added to an
    experiment that a person has already swept (some of its runs are registered) get their
    runs here; an experiment nobody swept on this instance, or new repeats and cells of
    models already swept, wait for a person to launch them (the estimate says what that
    would cost)."""
    try:
        path = find_experiment(experiment_ref, settings.experiments_dir(), settings.project_root())
        experiment = load_experiment(path)
        design = design_experiment(experiment)
    except DesignError as exc:
        return NextLaunch(
            str(experiment_ref), f"the standard sweep cannot be designed: {exc}", [], [], None
        )
    registered = set(instance.get_dynamic_partitions(run_partitions.name))
    todo = pending_runs(design, registered)
    name = design.experiment
    if not todo:
        return NextLaunch(name, todo.describe(), [], [], None, path)
    estimate = _estimate if with_estimate else (lambda *_: None)
    everything = estimate(experiment, design, todo.run_ids)
    if len(todo.run_ids) == todo.total_runs:
        return NextLaunch(
            name,
            f"nobody has swept {name} on this instance yet, and a schedule never starts "
            f"spending on its own: launch it from sweep_job (experiment: {name}) once; after "
            "that, models added to the registry get their runs here",
            [],
            [],
            everything,
            path,
        )
    model_of = {cell.cell_id: str(cell.config["model"]) for cell in design.cells}
    new = set(todo.new_models)
    run_ids = [
        r.run_id
        for r in design.runs
        if r.run_id in set(todo.run_ids) and model_of[r.cell_id] in new
    ]
    if not run_ids:
        return NextLaunch(
            name,
            f"{todo.describe()}, all of models already swept (new repeats or cells): "
            "this schedule only adds models new to the registry; launch them from sweep_job",
            [],
            [],
            everything,
            path,
        )
    running = unfinished_sweep_run(instance, name, path.resolve())
    cost = estimate(experiment, design, run_ids)
    if running is not None:
        return NextLaunch(
            name,
            f"sweep_job run {running.run_id} ({running.status.value.lower()}) is already "
            f"launching {name}'s runs; {todo.describe()}",
            [],
            [],
            cost,
            path,
        )
    return NextLaunch(
        name,
        f"models new to {name}, which was swept before: {', '.join(sorted(new))}",
        run_ids,
        sorted(new),
        cost,
        path,
    )


def new_model_requests(instance: dg.DagsterInstance, experiment_ref: str):
    """A RunRequest of `sweep_job` for the runs of models new to an already swept standard
    sweep (only those models: `only_models`), or why not (`next_launch`).

    Idempotent across ticks: while a sweep_job run of the experiment is queued or running
    it skips (that run will register and launch them), and once it registered them there is
    nothing left. The run key alone would not do: Dagster scopes a schedule's run key to one
    tick (its scheduled time), so the next tick with the same key starts a second run.
    Should two sweep runs still execute at once, `launch_backfill` creates one backfill.
    """
    plan = next_launch(instance, experiment_ref)
    if not plan.run_ids:
        return dg.SkipReason(plan.describe())
    assert plan.path is not None
    key = hashlib.sha256("\n".join(sorted(plan.run_ids)).encode()).hexdigest()[:16]
    tags = {
        EXPERIMENT_TAG: plan.experiment,
        "bench/new_models": ",".join(plan.new_models)[:200],
        "bench/pending_runs": str(len(plan.run_ids)),
    }
    if plan.estimate is not None:
        tags["bench/estimated_usd"] = f"{plan.estimate.usd:.2f}"
        tags["bench/budget_caps_usd"] = f"{plan.estimate.cap_usd:.2f}"
    return dg.RunRequest(
        # Dedupes within one tick only (a daemon that crashed mid-tick and retries it).
        run_key=f"new-runs-{plan.experiment}-{key}",
        run_config=dg.RunConfig(
            ops={
                "experiment_design": {
                    "config": {
                        "experiment": str(plan.path),
                        "launch": True,
                        "only_models": plan.new_models,
                    }
                }
            }
        ),
        tags=tags,
    )


@dg.schedule(
    job=sweep_job,
    cron_schedule=NEW_MODEL_CRON,
    execution_timezone="UTC",
    default_status=dg.DefaultScheduleStatus.RUNNING,
    description="Nightly: design the standard sweep against today's model registry and, for "
    "models added to it since a person swept it, launch sweep_job for their runs only. "
    "Running by default because it never starts spending by itself: on an instance where "
    "nobody has swept the standard sweep it launches nothing, and new repeats or cells of "
    "models already swept wait for a person too. Preview tick result shows what it would "
    "launch and the cost at the registry's prices (also `bench status`). Skips while a "
    "sweep_job run of the standard sweep is queued or running.",
)
def new_model_backfill_schedule(context: dg.ScheduleEvaluationContext):
    return new_model_requests(context.instance, standard_sweep())

"""Stage 1: the experiment design and the per-run specs every later stage reads."""

import time
from dataclasses import dataclass, replace

import dagster as dg
from pydantic import Field

from assets.metadata import log_step_summary, run_result, table_preview
from assets.partitions import run_partitions
from assets.sweeps.launch import (
    BUDGET_CAP_TAG,
    ENDURANCE_TAG,
    launch_backfill,
    partitions_in_flight,
    project_asset_graph,
    register_runs,
)
from bench_pipeline import settings, stages
from bench_pipeline.design import (
    DesignError,
    DesignResult,
    design_experiment,
    find_experiment,
    load_experiment,
)
from bench_pipeline.orchestration import pending_runs
from bench_pipeline.orchestration.estimate import (
    estimate_cost,
    recorded_agent_runs,
    token_history,
)
from bench_pipeline.run_spec import RUN_SPEC_STAGE, build_run_spec
from resources import ArtifactStoreResource

DESIGN_CODE_VERSION = "2"


class ExperimentDesignConfig(dg.Config):
    """Which experiment to design, and whether to launch its runs (shown in the launchpad)."""

    experiment: str = Field(
        default="demo",
        description="An experiment name (experiments/<name>.yaml) or the path of an experiment "
        "YAML file, absolute or relative to the project.",
    )
    launch: bool = Field(
        default=False,
        description="Also launch, as one backfill, every run of the experiment that has not "
        "been through all stages yet (agent runs that exist are reused, never repeated).",
    )
    only_models: list[str] = Field(
        default_factory=list,
        description="Launch only the runs of these models (empty: every model). The nightly "
        "schedule sets it to the models new to the registry, so it never launches the runs "
        "of models a person has not asked for.",
    )
    # Launch-time settings: for this sweep's runs only (they travel as tags of its
    # backfill); empty means the environment's default, which the launchpad shows.
    bot_endurance_s: float | None = Field(
        default=None,
        description="The bot's endurance window for this sweep's runs, seconds (empty: "
        "BENCH_BOT_ENDURANCE_S, else 30). A short window makes a quick sweep.",
    )
    repeats: int | None = Field(
        default=None,
        description="Runs per cell for this sweep (empty: BENCH_SWEEP_REPEATS, else the "
        "experiment file's `repeats`). Fewer launches only the first repeats; more adds "
        "repeats to the experiment's design.",
    )
    budget_cap_usd: float | None = Field(
        default=None,
        description="The most one run of this sweep may spend, US dollars: each run's cap is "
        "the lower of this and its cell's `budget_usd` (empty: BENCH_BUDGET_CAP_USD, else "
        "the cells' own).",
    )
    dry_run: bool | None = Field(
        default=None,
        description="Estimate the runs this sweep would launch and their cost at the "
        "registry's prices, and launch, register and write nothing (empty: "
        "BENCH_SWEEP_DRY_RUN, else false).",
    )


@dataclass(frozen=True)
class LaunchSettings:
    """A sweep's launch-time settings, the config's or else the environment's."""

    bot_endurance_s: float
    repeats: int | None
    budget_cap_usd: float | None
    dry_run: bool

    def run_tags(self) -> dict[str, str]:
        """What the sweep's runs read (its backfill's tags reach every run it starts)."""
        tags = {ENDURANCE_TAG: f"{self.bot_endurance_s:g}"}
        if self.budget_cap_usd is not None:
            tags[BUDGET_CAP_TAG] = f"{self.budget_cap_usd:g}"
        return tags


def launch_settings(config: ExperimentDesignConfig) -> LaunchSettings:
    """The config's settings over the environment's; a bad value is one line, no retry."""
    try:
        endurance = config.bot_endurance_s
        if endurance is None:
            endurance = settings.checked_bot_endurance_s()
        repeats = config.repeats if config.repeats is not None else settings.sweep_repeats()
        cap = config.budget_cap_usd
        if cap is None:
            cap = settings.budget_cap_usd()
        dry = config.dry_run if config.dry_run is not None else settings.sweep_dry_run()
    except settings.SettingError as exc:
        raise dg.Failure(description=str(exc), allow_retries=False) from exc
    problems = []
    if not endurance >= 0.5:
        problems.append(f"bot_endurance_s {endurance} must be at least 0.5 seconds")
    if repeats is not None and repeats < 1:
        problems.append(f"repeats {repeats} must be at least 1")
    if cap is not None and not cap > 0:
        problems.append(f"budget_cap_usd {cap} must be above 0")
    if problems:
        raise dg.Failure(description="; ".join(problems), allow_retries=False)
    return LaunchSettings(float(endurance), repeats, cap, dry)


def _experiment_path(ref: str):
    try:
        return find_experiment(ref, settings.experiments_dir(), root=settings.project_root())
    except DesignError as exc:
        raise dg.Failure(description=str(exc), allow_retries=False) from exc


@dg.asset(
    group_name=stages.EXPERIMENT_DESIGN.group_name,
    kinds={"python", "yaml"},
    code_version=DESIGN_CODE_VERSION,
    description="The cells and runs of an experiment file, designed with pyDOE3. "
    "Registers one `runs` partition per new run; never removes one.",
)
def experiment_design(
    context: dg.AssetExecutionContext,
    config: ExperimentDesignConfig,
    artifact_store: ArtifactStoreResource,
) -> dg.MaterializeResult:
    chosen = launch_settings(config)
    try:
        experiment = load_experiment(_experiment_path(config.experiment))
        if chosen.repeats is not None and chosen.repeats > experiment.repeats:
            # More repeats than the file: the extra runs join the experiment's design
            # (analysed with the others); fewer only limits what this sweep launches.
            experiment = replace(experiment, repeats=chosen.repeats)
        design = design_experiment(experiment)
    except DesignError as exc:
        # A bad file is the user's to fix: one readable line, no retry, nothing written.
        raise dg.Failure(description=str(exc), allow_retries=False) from exc
    used = {c.config["model"] for c in design.cells}
    unknown = sorted(set(config.only_models) - used)
    if unknown:
        raise dg.Failure(
            description=f"only_models: {', '.join(unknown)} not in {experiment.name}'s "
            f"models ({', '.join(sorted(used))})",
            allow_retries=False,
        )
    to_launch = _only_repeats(_only_models(design, config.only_models), chosen.repeats)
    if chosen.dry_run:
        return _dry_run(context, experiment, design, to_launch, chosen, artifact_store)
    models = {m: experiment.registry.get(m).to_json_dict() for m in sorted(used)}
    # The baselines travel with the design: the effects analysis compares every level
    # with the baseline the experiment named, not with whichever level is most frequent.
    stored = artifact_store.store().save_design(
        {**design.to_json_dict(), "models": models, "baselines": experiment.baseline_config()}
    )

    # The design file is written first so that a partition never exists without its run.
    new_runs = register_runs(context.instance, run_partitions.name, [r.run_id for r in design.runs])
    context.log.info(
        f"{experiment.name}: {len(design.cells)} cells, {len(design.runs)} runs, "
        f"{len(new_runs)} new partitions"
    )
    launched = {}
    if config.launch:
        launched = _launch(context, to_launch, chosen)
    preview = [
        {"cell_id": c.cell_id, "designs": ",".join(c.designs), **c.config} for c in design.cells
    ]
    return dg.MaterializeResult(
        metadata={
            "experiment": experiment.name,
            "experiment_file": dg.MetadataValue.path(str(experiment.path)),
            "cells": len(design.cells),
            "runs": len(design.runs),
            "new_runs": len(new_runs),
            "retired_runs": sum(1 for r in stored["runs"] if not r["current"]),
            "cells_per_design": dg.MetadataValue.json(design.counts_by_design()),
            "design_file": dg.MetadataValue.path(
                str(artifact_store.store().design_path(experiment.name))
            ),
            "preview": table_preview(preview),
            **launched,
        }
    )


def _only_models(design: DesignResult, models: list[str]) -> DesignResult:
    """The design restricted to the cells (and runs) of `models`; all of it when empty."""
    if not models:
        return design
    cells = [c for c in design.cells if c.config["model"] in models]
    kept = {c.cell_id for c in cells}
    return replace(design, cells=cells, runs=[r for r in design.runs if r.cell_id in kept])


def _only_repeats(design: DesignResult, repeats: int | None) -> DesignResult:
    """The design's runs of the first `repeats` repeats; all of it when None."""
    if repeats is None:
        return design
    return replace(design, runs=[r for r in design.runs if r.repeat < repeats])


def _to_launch(instance: dg.DagsterInstance, design: DesignResult):
    """(runs not complete, runs not complete nor in flight, run → backfill in flight)."""
    done = stages.complete_runs(
        {s: instance.get_materialized_partitions(dg.AssetKey(s)) for s in stages.COMPLETES_RUN}
    )
    busy = partitions_in_flight(instance)
    return pending_runs(design, done), pending_runs(design, done | busy.keys()), busy


def _dry_run(
    context: dg.AssetExecutionContext,
    experiment,
    design: DesignResult,
    to_launch: DesignResult,
    chosen: LaunchSettings,
    artifact_store: ArtifactStoreResource,
) -> dg.MaterializeResult:
    """What the sweep would launch and cost; registers, writes and launches nothing."""
    _, todo, _ = _to_launch(context.instance, to_launch)
    store = artifact_store.store()
    history = token_history(recorded_agent_runs(store.record_glob("agent_generation")))
    estimate = estimate_cost(
        design, todo.run_ids, experiment.registry, history, chosen.budget_cap_usd
    )
    message = f"dry run: would launch {estimate.describe()}; launched nothing"
    context.log.info(message)
    return dg.MaterializeResult(
        metadata={
            "experiment": experiment.name,
            "dry_run": True,
            "launch": message,
            "would_launch_runs": len(todo.run_ids),
            "launched_runs": 0,
            "estimated_usd": round(estimate.usd, 2),
            "budget_caps_usd": round(estimate.cap_usd, 2),
            "estimate_by_model": table_preview([m.to_json_dict() for m in estimate.models]),
            "bot_endurance_s": chosen.bot_endurance_s,
            "cells": len(design.cells),
            "runs": len(design.runs),
        }
    )


def _launch(context: dg.AssetExecutionContext, design, chosen: LaunchSettings) -> dict:
    """Backfill the runs that have not been through every stage and are not in flight.

    Exactly once, even when two sweep runs of the experiment execute at the same time:
    `launch_backfill` lets the instance's storage pick one; the other run succeeds and says
    which backfill already launched its runs.
    """
    instance = context.instance
    planned_at = time.time()
    incomplete, todo, busy = _to_launch(instance, design)
    held = sorted({busy[r] for r in incomplete.run_ids if r in busy})
    held_by: dict[str, object] = {"in_flight_runs": len(incomplete.run_ids) - len(todo.run_ids)}
    if held:
        held_by["in_flight_backfills"] = dg.MetadataValue.json(held)
    if not todo:
        if held:
            message = (
                f"backfill{'s' * (len(held) > 1)} {', '.join(held)} already launched these "
                f"{len(incomplete.run_ids)} runs; launched nothing"
            )
        else:
            message = f"nothing to launch: all {incomplete.total_runs} runs are complete"
        context.log.info(message)
        links = {"backfill": dg.MetadataValue.url(f"/runs/b/{held[0]}")} if len(held) == 1 else {}
        return {"launched_runs": 0, "launch": message, **held_by, **links}
    launch = launch_backfill(
        instance,
        project_asset_graph(context),
        todo.run_ids,
        design.experiment,
        launched_by=context.run.run_id,
        job_name=context.job_name,
        planned_at=planned_at,
        run_tags=chosen.run_tags(),
    )
    message = launch.describe(len(todo.run_ids))
    context.log.info(f"{message} ({todo.describe()})")
    launched = {
        "launched_runs": len(todo.run_ids) if launch.launched else 0,
        "launch": message,
        "backfill_id": launch.backfill_id,
        "backfill": dg.MetadataValue.url(f"/runs/b/{launch.backfill_id}"),
        "bot_endurance_s": chosen.bot_endurance_s,
        "budget_cap_usd": chosen.budget_cap_usd,
        **held_by,
    }
    if launch.launched:
        launched["launched_by_model"] = dg.MetadataValue.json(todo.by_model)
    return launched


@dg.asset(
    partitions_def=run_partitions,
    deps=[experiment_design],
    group_name=stages.EXPERIMENT_DESIGN.group_name,
    kinds={"python"},
    code_version=DESIGN_CODE_VERSION,
    backfill_policy=dg.BackfillPolicy.multi_run(max_partitions_per_run=10),
    description="The frozen specification of one run: its cell's config, seed, and the "
    "model's harness and prices as the registry had them when the run was planned.",
)
def run_spec(
    context: dg.AssetExecutionContext, artifact_store: ArtifactStoreResource
) -> dg.MaterializeResult:
    store = artifact_store.store()
    specs = [build_run_spec(store, run_id) for run_id in context.partition_keys]
    for spec in specs:
        store.write_record(RUN_SPEC_STAGE, spec["run_id"], spec)
    shown = (
        "experiment",
        "cell_id",
        "repeat",
        "seed",
        "agent",
        "model",
        "provider",
        "input_usd_per_mtok",
        "output_usd_per_mtok",
    )
    log_step_summary(
        context,
        f"run_spec: {len(specs)} runs",
        [{k: s[k] for k in ("run_id", "cell_id", "model")} for s in specs],
    )
    # Each run's partition shows its own spec (prices included), not the step's.
    return run_result(
        context,
        store,
        RUN_SPEC_STAGE,
        {
            s["run_id"]: {
                **{k: s.get(k) for k in shown},
                "config": dg.MetadataValue.json(s["config"]),
            }
            for s in specs
        },
    )

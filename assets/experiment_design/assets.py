"""Stage 1: the experiment design and the per-run specs every later stage reads."""

import time
from dataclasses import replace

import dagster as dg
from pydantic import Field

from assets.metadata import log_step_summary, run_result, table_preview
from assets.partitions import run_partitions
from assets.sweeps.launch import (
    launch_backfill,
    partitions_in_flight,
    project_asset_graph,
    register_runs,
)
from bench_pipeline import settings
from bench_pipeline.design import (
    DesignError,
    DesignResult,
    design_experiment,
    find_experiment,
    load_experiment,
)
from bench_pipeline.orchestration import pending_runs
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


def _experiment_path(ref: str):
    try:
        return find_experiment(ref, settings.experiments_dir(), root=settings.project_root())
    except DesignError as exc:
        raise dg.Failure(description=str(exc), allow_retries=False) from exc


@dg.asset(
    group_name="experiment_design",
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
    try:
        experiment = load_experiment(_experiment_path(config.experiment))
        design = design_experiment(experiment)
    except DesignError as exc:
        # A bad file is the user's to fix: one readable line, no retry, nothing written.
        raise dg.Failure(description=str(exc), allow_retries=False) from exc
    used = {c.config["model"] for c in design.cells}
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
        unknown = sorted(set(config.only_models) - used)
        if unknown:
            raise dg.Failure(
                description=f"only_models: {', '.join(unknown)} not in {experiment.name}'s "
                f"models ({', '.join(sorted(used))})",
                allow_retries=False,
            )
        launched = _launch(context, _only_models(design, config.only_models))
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


def _launch(context: dg.AssetExecutionContext, design) -> dict:
    """Backfill the runs that have not been through every stage and are not in flight.

    Exactly once, even when two sweep runs of the experiment execute at the same time:
    `launch_backfill` lets the instance's storage pick one; the other run succeeds and says
    which backfill already launched its runs.
    """
    instance = context.instance
    planned_at = time.time()
    done = instance.get_materialized_partitions(
        dg.AssetKey("bot_evaluation")
    ) & instance.get_materialized_partitions(dg.AssetKey("quality_metrics"))
    busy = partitions_in_flight(instance)
    incomplete = pending_runs(design, done)
    todo = pending_runs(design, done | busy.keys())
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
    )
    message = launch.describe(len(todo.run_ids))
    context.log.info(f"{message} ({todo.describe()})")
    launched = {
        "launched_runs": len(todo.run_ids) if launch.launched else 0,
        "launch": message,
        "backfill_id": launch.backfill_id,
        "backfill": dg.MetadataValue.url(f"/runs/b/{launch.backfill_id}"),
        **held_by,
    }
    if launch.launched:
        launched["launched_by_model"] = dg.MetadataValue.json(todo.by_model)
    return launched


@dg.asset(
    partitions_def=run_partitions,
    deps=[experiment_design],
    group_name="experiment_design",
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

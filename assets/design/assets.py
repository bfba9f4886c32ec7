"""Stage 1: the experiment design and the per-run specs every later stage reads."""

import dagster as dg
from pydantic import Field

from assets.metadata import markdown_table
from assets.partitions import run_partitions
from assets.sweeps.launch import launch_backfill, partitions_in_flight
from bench_pipeline import settings
from bench_pipeline.design import DesignError, design_experiment, find_experiment, load_experiment
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

    known = set(context.instance.get_dynamic_partitions(run_partitions.name))
    new_runs = [r.run_id for r in design.runs if r.run_id not in known]
    # The design file is written first so that a partition never exists without its run.
    if new_runs:
        context.instance.add_dynamic_partitions(run_partitions.name, new_runs)
    context.log.info(
        f"{experiment.name}: {len(design.cells)} cells, {len(design.runs)} runs, "
        f"{len(new_runs)} new partitions"
    )
    launched = {}
    if config.launch:
        launched = _launch(context, design)
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
            "preview": markdown_table(preview),
            **launched,
        }
    )


def _launch(context: dg.AssetExecutionContext, design) -> dict:
    """Backfill the runs that have not been through every stage and are not in flight."""
    instance = context.instance
    done = instance.get_materialized_partitions(
        dg.AssetKey("bot_evaluation")
    ) & instance.get_materialized_partitions(dg.AssetKey("quality_metrics"))
    busy = partitions_in_flight(instance)
    todo = pending_runs(design, done | busy)
    if not todo:
        context.log.info(f"nothing to launch: {todo.describe()} and complete or in flight")
        return {"launched_runs": 0}
    backfill_id = launch_backfill(context, todo.run_ids, design.experiment)
    context.log.info(f"launched backfill {backfill_id}: {todo.describe()}")
    return {
        "launched_runs": len(todo.run_ids),
        "backfill_id": backfill_id,
        "backfill": dg.MetadataValue.url(f"/runs/b/{backfill_id}"),
        "launched_by_model": dg.MetadataValue.json(todo.by_model),
    }


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
    return dg.MaterializeResult(
        metadata={
            "runs": len(specs),
            "models": dg.MetadataValue.json(sorted({s["model"] for s in specs})),
            "first_run": specs[0]["run_id"] if specs else "",
        }
    )

"""The one Dagster `Definitions` of the project (loaded by workspace.yaml)."""

from __future__ import annotations

import dagster as dg

from assets.analysis import effects_analysis
from assets.build import sandboxed_build
from assets.design import experiment_design, run_spec
from assets.evaluation import bot_evaluation
from assets.generation import agent_generation
from assets.quality import quality_metrics
from assets.report import results_site
from assets.sweeps.automation import automation_condition_sensor
from assets.sweeps.jobs import sweep_job
from assets.sweeps.schedules import new_model_backfill_schedule
from assets.warehouse import warehouse
from bench_pipeline import settings
from resources import (
    AgentResource,
    ArtifactStoreResource,
    SandboxResource,
    SonarQubeResource,
    WarehouseResource,
)

# Run monitoring (dagster.yaml) cancels a run past this; see settings.max_run_seconds.
RUN_LIMIT = {"dagster/max_runtime": str(settings.max_run_seconds())}

experiment_design_job = dg.define_asset_job(
    "experiment_design_job",
    selection=[experiment_design],
    description="Design an experiment file and register its run partitions (launch nothing).",
)

run_stages_job = dg.define_asset_job(
    "run_stages_job",
    selection=[run_spec, agent_generation, sandboxed_build, bot_evaluation, quality_metrics],
    description="Every per-run stage for the selected run partitions.",
    tags=RUN_LIMIT,
)

warehouse_job = dg.define_asset_job(
    "warehouse_job",
    selection=[warehouse, effects_analysis, results_site],
    description="Rebuild the DuckDB warehouse from the artifact store: sources, every SQL "
    "model with its data tests, the effects analysis marts, and the results site.",
    tags=RUN_LIMIT,
)

ALL_ASSETS = [
    experiment_design,
    run_spec,
    agent_generation,
    sandboxed_build,
    bot_evaluation,
    quality_metrics,
    warehouse,
    effects_analysis,
    results_site,
]

defs = dg.Definitions(
    assets=ALL_ASSETS,
    # A run's steps execute in the run's own process: a subprocess per step (the default
    # multiprocess executor) imports the project again, which took longer than most steps'
    # own work (docs/orchestration.md, "Where the time goes"). Pools and retry policies
    # still apply; bot_evaluation and quality_metrics now follow each other instead of
    # overlapping, which costs less than their two subprocesses on a few cores.
    executor=dg.in_process_executor,
    jobs=[sweep_job, experiment_design_job, run_stages_job, warehouse_job],
    schedules=[new_model_backfill_schedule],
    sensors=[
        automation_condition_sensor(
            dg.AssetSelection.assets(sandboxed_build, bot_evaluation, quality_metrics)
            | dg.AssetSelection.assets(warehouse, effects_analysis, results_site)
        )
    ],
    resources={
        "agent": AgentResource(),
        "artifact_store": ArtifactStoreResource(),
        "sandbox": SandboxResource(),
        "sonar": SonarQubeResource.from_env(),
        "warehouse": WarehouseResource(),
    },
)

"""The one Dagster `Definitions` of the project, assembled from the stages' folders.

`workspace.yaml` loads it through `bench_pipeline.definitions:defs`, the name other tools
use (docs/interfaces.md §8). Which assets exist, and in which order, follows the one stage
list in `bench_pipeline/stages.py`; each stage's folder under `assets/` holds its asset.
"""

from __future__ import annotations

import dagster as dg

from assets.agent_generation import agent_generation
from assets.automation import automation_condition_sensor
from assets.bot_evaluation import bot_evaluation
from assets.effects_analysis import effects_analysis
from assets.experiment_design import experiment_design, run_spec
from assets.quality_metrics import quality_metrics
from assets.results_site import results_site
from assets.sandboxed_build import sandboxed_build
from assets.sweeps.jobs import sweep_job
from assets.sweeps.schedules import new_model_backfill_schedule
from assets.warehouse import warehouse
from bench_pipeline import settings, stages
from resources import (
    AgentResource,
    ArtifactStoreResource,
    SandboxResource,
    SonarQubeResource,
    WarehouseResource,
)

# Keyed by op name, which is the stage's name (the warehouse is one multi-asset).
STAGE_ASSETS: dict[str, dg.AssetsDefinition] = {
    a.node_def.name: a
    for a in (
        experiment_design,
        run_spec,
        agent_generation,
        sandboxed_build,
        bot_evaluation,
        quality_metrics,
        warehouse,
        effects_analysis,
        results_site,
    )
}
if list(STAGE_ASSETS) != list(stages.STAGES):  # a stage added in one place only
    raise RuntimeError(
        f"assets/definitions.py has the stages {list(STAGE_ASSETS)}, "
        f"bench_pipeline/stages.py lists {list(stages.STAGES)}"
    )
ALL_ASSETS = list(STAGE_ASSETS.values())
PER_RUN_ASSETS = [STAGE_ASSETS[s] for s in stages.PER_RUN]
ACROSS_RUN_ASSETS = [STAGE_ASSETS[s] for s in stages.ACROSS_RUNS]

# Run monitoring (dagster.yaml) cancels a run past this; see settings.max_run_seconds.
RUN_LIMIT = {"dagster/max_runtime": str(settings.max_run_seconds())}

experiment_design_job = dg.define_asset_job(
    "experiment_design_job",
    selection=[experiment_design],
    description="Design an experiment file and register its run partitions (launch nothing).",
)

run_stages_job = dg.define_asset_job(
    "run_stages_job",
    selection=PER_RUN_ASSETS,
    description="Every per-run stage for the selected run partitions.",
    tags=RUN_LIMIT,
)

warehouse_job = dg.define_asset_job(
    "warehouse_job",
    selection=ACROSS_RUN_ASSETS,
    description="Rebuild the DuckDB warehouse from the artifact store: sources, every SQL "
    "model with its data tests, the effects analysis marts, and the results site.",
    tags=RUN_LIMIT,
)

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
            dg.AssetSelection.assets(*(STAGE_ASSETS[s] for s in stages.AUTOMATED_PER_RUN))
            | dg.AssetSelection.assets(*ACROSS_RUN_ASSETS)
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

"""The one Dagster `Definitions` of the project (loaded by workspace.yaml)."""

from __future__ import annotations

import dagster as dg

from assets.analysis import effects_analysis
from assets.build import sandboxed_build
from assets.design import experiment_design, run_spec
from assets.evaluation import bot_evaluation, bot_evaluation_has_sixteen_verdicts
from assets.generation import agent_generation
from assets.quality import quality_metrics
from assets.warehouse import warehouse
from resources import (
    AgentResource,
    ArtifactStoreResource,
    SandboxResource,
    SonarQubeResource,
    WarehouseResource,
)

experiment_design_job = dg.define_asset_job(
    "experiment_design_job",
    selection=[experiment_design],
    description="Design an experiment file and register its run partitions.",
)

run_stages_job = dg.define_asset_job(
    "run_stages_job",
    selection=[run_spec, agent_generation, sandboxed_build, bot_evaluation, quality_metrics],
    description="Every per-run stage for the selected run partitions.",
)

warehouse_job = dg.define_asset_job(
    "warehouse_job",
    selection=[warehouse, effects_analysis],
    description="Rebuild the DuckDB warehouse from the artifact store: sources, every SQL "
    "model with its data tests, and the effects analysis marts.",
)

defs = dg.Definitions(
    assets=[
        experiment_design,
        run_spec,
        agent_generation,
        sandboxed_build,
        bot_evaluation,
        quality_metrics,
        warehouse,
        effects_analysis,
    ],
    asset_checks=[bot_evaluation_has_sixteen_verdicts],
    jobs=[experiment_design_job, run_stages_job, warehouse_job],
    resources={
        "agent": AgentResource(),
        "artifact_store": ArtifactStoreResource(),
        "sandbox": SandboxResource(),
        "sonar": SonarQubeResource(),
        "warehouse": WarehouseResource(),
    },
)

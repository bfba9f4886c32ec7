"""`sweep_job`: what a researcher launches from the UI."""

import dagster as dg

from assets.experiment_design import experiment_design
from assets.experiment_design.assets import ExperimentDesignConfig

sweep_job = dg.define_asset_job(
    "sweep_job",
    selection=[experiment_design],
    config=dg.RunConfig(
        ops={"experiment_design": ExperimentDesignConfig(experiment="demo", launch=True)}
    ),
    description="Launch a sweep: design the experiment (a name from experiments/ or a YAML "
    "path), register one `runs` partition per new run, and launch every run that has not been "
    "through all stages as one backfill (agent → build → bot → quality, then the warehouse "
    "and the effects analysis). Watch it under Runs → Backfills.",
    tags={"bench/kind": "sweep"},
)

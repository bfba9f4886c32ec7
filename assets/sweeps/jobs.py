"""`sweep_job`: what a researcher launches from the UI."""

import dagster as dg

from assets.experiment_design import experiment_design
from assets.experiment_design.assets import ExperimentDesignConfig
from bench_pipeline import settings


def _launchpad_defaults() -> ExperimentDesignConfig:
    """What the launchpad shows: the environment's launch-time settings at load time. A bad
    variable is left out here (the code location must still load) and fails the sweep's
    step with one line naming it."""
    values: dict = {}
    for field, read in (
        ("bot_endurance_s", settings.checked_bot_endurance_s),
        ("repeats", settings.sweep_repeats),
        ("budget_cap_usd", settings.budget_cap_usd),
        ("dry_run", settings.sweep_dry_run),
    ):
        try:
            values[field] = read()
        except settings.SettingError:
            continue
    return ExperimentDesignConfig(experiment="demo", launch=True, **values)


sweep_job = dg.define_asset_job(
    "sweep_job",
    selection=[experiment_design],
    config=dg.RunConfig(ops={"experiment_design": _launchpad_defaults()}),
    description="Launch a sweep: design the experiment (a name from experiments/ or a YAML "
    "path), register one `runs` partition per new run, and launch every run that has not been "
    "through all stages as one backfill (agent → build → bot → quality, then the warehouse "
    "and the effects analysis). Watch it under Runs → Backfills. The launchpad also sets this "
    "sweep's bot window, repeats, budget cap per run, and a dry run that only estimates the "
    "runs and their cost.",
    tags={"bench/kind": "sweep"},
)

"""Dagster assets, one folder per pipeline stage. Stage logic lives in `bench_pipeline`."""

import warnings

import dagster as dg

# Deliberate choices Dagster marks beta, silenced here because every process that loads the
# project (code server, daemon, each run worker) printed them again: about a hundred lines
# per `bench ui` session. `backfill_policy` (BackfillPolicy.multi_run) is what keeps a sweep
# to a few Dagster runs instead of one per benchmark run (docs/orchestration.md). Any other
# beta or preview warning still shows.
warnings.filterwarnings(
    "ignore", message=r"Parameter `backfill_policy` of function", category=dg.BetaWarning
)

"""Dagster assets, one folder per pipeline stage. Stage logic lives in `bench_pipeline`."""

import warnings

import dagster as dg

# BackfillPolicy is "beta" in Dagster 1.13, and chosen on purpose: it is what turns a sweep
# of hundreds of runs into a few Dagster runs (docs/orchestration.md). Its warning (one per
# per-run asset, on every load of the definitions: `bench ui`, `bench run`, each run
# worker) tells a user nothing they can act on, so it is silenced for that parameter alone;
# any other beta or preview warning still shows.
warnings.filterwarnings("ignore", message=r"Parameter `backfill_policy`", category=dg.BetaWarning)

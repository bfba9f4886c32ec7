"""Dagster assets, one folder per pipeline stage. Stage logic lives in `bench_pipeline`."""

"""How sweeps are scheduled on a machine: concurrency pools fitted to it, which runs of an
experiment still need launching, retry back-off. Pure Python: Dagster wiring is in assets/sweeps."""

from bench_pipeline.orchestration.pending import PendingRuns, pending_runs
from bench_pipeline.orchestration.pools import (
    POOLS,
    PoolLimit,
    apply_pool_limits,
    check_pool_limits,
    file_pool_limits,
    load_pool_file,
    machine_defaults,
    pool_limits,
)
from bench_pipeline.orchestration.retries import backoff_seconds

__all__ = [
    "POOLS",
    "PendingRuns",
    "PoolLimit",
    "apply_pool_limits",
    "backoff_seconds",
    "check_pool_limits",
    "file_pool_limits",
    "load_pool_file",
    "machine_defaults",
    "pending_runs",
    "pool_limits",
]

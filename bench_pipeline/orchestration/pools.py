"""Concurrency pools: how many steps of each kind run at once across all Dagster runs.

Each per-run stage declares a pool (`@asset(pool=...)`). The limits come from one of two
places, and `BENCH_POOL_<NAME>` overrides either:

- fitted to the machine that runs the steps (`bench ui`, `bench run`, `bench pools`): a limit
  an operator already set in the UI (Deployment → Concurrency) is left alone;
- a reviewed pools file (`bench pools --file deploy/pools.yaml`, a team deployment whose
  daemon does not run the steps): the file is the operator's decision, so its limits replace
  whatever the instance holds. `--check` compares instead of writing.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml

# Why each pool exists, shown by `bench pools` and in docs/orchestration.md.
POOLS: dict[str, str] = {
    "agents": "agent runs: bound by the provider's rate limits, not by this machine",
    "builds": "npm installs, tsc and the quality tools: about one core each",
    "browser": "Playwright evaluations: one Chromium (about one core and 1 GB) per step",
    "warehouse": "the DuckDB warehouse writer: must stay 1 (one writer swaps the file)",
}
AGENTS_DEFAULT = 4
BROWSER_MEMORY_GB = 1.5
# DuckDB admits one writing process per file: more than one warehouse step at a time would
# only queue on the builder's file lock while holding run workers.
FIXED = {"warehouse": 1}


@dataclass(frozen=True)
class PoolLimit:
    pool: str
    limit: int
    # "machine" (fitted default), "file" (a pools file) or "env" (BENCH_POOL_<NAME>)
    source: str


def _memory_gb() -> float:
    try:
        pages = os.sysconf("SC_PHYS_PAGES")
        size = os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 4.0
    return pages * size / 1024**3


def machine_defaults(cpus: int | None = None, memory_gb: float | None = None) -> dict[str, int]:
    """Limits fitted to a machine with `cpus` cores and `memory_gb` of memory."""
    cpus = max(1, cpus if cpus is not None else (os.cpu_count() or 1))
    memory_gb = memory_gb if memory_gb is not None else _memory_gb()
    return {
        "agents": AGENTS_DEFAULT,
        "builds": cpus,
        "browser": max(1, min(cpus, int(memory_gb // BROWSER_MEMORY_GB))),
        "warehouse": 1,
    }


def _env_limit(pool: str, env: Mapping[str, str]) -> int | None:
    """`BENCH_POOL_<POOL>` as a limit, None when unset; ValueError naming it when invalid."""
    name = f"BENCH_POOL_{pool.upper()}"
    raw = env.get(name, "").strip()
    if not raw:
        return None
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"{name}={raw!r}: give a positive whole number of concurrent steps")
    if pool in FIXED and int(raw) != FIXED[pool]:
        raise ValueError(
            f"{name}={raw}: the {pool} has exactly one writer; leave it at {FIXED[pool]}"
        )
    return int(raw)


def pool_limits(
    env: Mapping[str, str] | None = None, cpus: int | None = None, memory_gb: float | None = None
) -> list[PoolLimit]:
    """The limit of every pool: `BENCH_POOL_<NAME>` when set, else the machine default.

    Raises ValueError with the variable's name for a value that is not a positive integer,
    and for a warehouse limit other than 1.
    """
    env = os.environ if env is None else env
    limits = []
    for pool, default in machine_defaults(cpus, memory_gb).items():
        value = _env_limit(pool, env)
        if value is None:
            limits.append(PoolLimit(pool, default, "machine"))
        else:
            limits.append(PoolLimit(pool, value, "env"))
    return limits


def load_pool_file(path: str | os.PathLike[str]) -> list[PoolLimit]:
    """The limits of a pools file (`pools:` mapping pool name to limit, as deploy/pools.yaml).

    Raises ValueError naming the file and the key for an unreadable file, a pool the project
    does not have, a limit that is not a positive integer, and a warehouse limit other than 1.
    A pool the file leaves out is not in the result.
    """
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise ValueError(f"{path}: cannot read: {error}") from error
    pools = data.get("pools") if isinstance(data, Mapping) else None
    if not isinstance(pools, Mapping) or not pools:
        raise ValueError(f"{path}: expected a non-empty `pools:` mapping of pool: limit")
    limits = []
    for name, limit in pools.items():
        if name not in POOLS:
            raise ValueError(
                f"{path}: pools.{name}: unknown pool (the project's pools: {', '.join(POOLS)})"
            )
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(
                f"{path}: pools.{name}: {limit!r} is not a positive whole number of steps"
            )
        if name in FIXED and limit != FIXED[name]:
            raise ValueError(
                f"{path}: pools.{name} must be {FIXED[name]} (one DuckDB writer), not {limit}"
            )
        limits.append(PoolLimit(name, limit, "file"))
    return limits


def file_pool_limits(
    path: str | os.PathLike[str], env: Mapping[str, str] | None = None
) -> list[PoolLimit]:
    """The limits of a pools file, each overridden by its `BENCH_POOL_<NAME>` when set.

    A pool the file leaves out is included only when its variable is set: the others are left
    to the instance (its `concurrency.pools.default_limit` or a limit set in the UI).
    """
    env = os.environ if env is None else env
    from_file = {item.pool: item for item in load_pool_file(path)}
    limits = []
    for pool in POOLS:
        value = _env_limit(pool, env)
        if value is not None:
            limits.append(PoolLimit(pool, value, "env"))
        elif pool in from_file:
            limits.append(from_file[pool])
    return limits


def _current_limits(instance) -> dict[str, int]:
    """The limit the instance stores for each pool that has one."""
    storage = instance.event_log_storage
    return {
        pool: storage.get_concurrency_info(pool).slot_count
        for pool in storage.get_concurrency_keys()
    }


def _set_slots(storage, pool: str, limit: int, attempts: int = 5) -> None:
    """Set a pool's limit. Two processes starting at once on a shared instance (two `bench
    worker`s, a worker and `bench ui`) can both find the pool unset and both insert it: the
    storage's unique key refuses the second insert, which then sets the limit on the row the
    first one made (an update). Both want the same limit; the last write stands."""
    from sqlalchemy.exc import IntegrityError

    for attempt in range(attempts):
        try:
            storage.set_concurrency_slots(pool, limit)
            return
        except IntegrityError:
            if attempt == attempts - 1:
                raise


def apply_pool_limits(
    instance, limits: list[PoolLimit] | None = None, *, force: bool = False
) -> list[str]:
    """Store the limits in a Dagster instance (what the UI's Concurrency page shows).

    Without `force`, a pool an operator already set is kept unless `BENCH_POOL_<NAME>` asks
    otherwise: `bench ui` and `bench run` call this at every start, and must not undo a choice
    made in the UI. With `force` (a reviewed pools file) every limit given is stored. Returns
    one line per pool saying what was done.
    """
    storage = instance.event_log_storage
    configured = _current_limits(instance)
    lines = []
    for item in limits if limits is not None else pool_limits():
        current = configured.get(item.pool)
        if current is not None and not force and item.source != "env":
            lines.append(f"{item.pool}: {current} (kept: set on this instance)")
            continue
        if current != item.limit:
            _set_slots(storage, item.pool, item.limit)
        was = f"; was {current}" if current is not None and current != item.limit else ""
        lines.append(f"{item.pool}: {item.limit} ({item.source}{was})")
    return lines


def check_pool_limits(instance, limits: list[PoolLimit]) -> list[str]:
    """One line per pool whose limit on the instance differs from `limits`; empty when in
    sync. Changes nothing."""
    configured = _current_limits(instance)
    drift = []
    for item in limits:
        current = configured.get(item.pool)
        if current != item.limit:
            has = "no limit set" if current is None else str(current)
            drift.append(f"{item.pool}: {has} on the instance, {item.limit} wanted ({item.source})")
    return drift

"""Two processes that start at once on a shared Postgres instance (two `bench worker`s, a
worker and `bench ui`) both set the pools: neither may fail on the other's insert.

Seen in a clean-clone CI run: the second worker died on Postgres's unique key of
concurrency_limits, having found the pool unset a moment before the first inserted it."""

from __future__ import annotations

import threading
import uuid

import dagster as dg
import pytest
import yaml

from bench_pipeline import settings
from bench_pipeline.orchestration.pools import PoolLimit, apply_pool_limits


def _at_once(instances: list[dg.DagsterInstance], limits: list[PoolLimit]) -> list[BaseException]:
    """apply_pool_limits in one thread per instance, released together; what they raised."""
    start = threading.Barrier(len(instances))
    errors: list[BaseException] = []

    def apply(instance: dg.DagsterInstance) -> None:
        start.wait()
        try:
            apply_pool_limits(instance, limits)
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=apply, args=(i,)) for i in instances]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return errors


@pytest.mark.postgres
def test_two_processes_setting_the_same_new_pools_at_once_both_succeed(pg_env: dict) -> None:
    storage = yaml.safe_load((settings.project_root() / "deploy/dagster.postgres.yaml").read_text())
    with (
        dg.instance_for_test(overrides={"storage": storage["storage"]}) as first,
        dg.instance_for_test(overrides={"storage": storage["storage"]}) as second,
    ):
        for _ in range(8):  # the race is one of timing: several rounds of new pools
            limits = [PoolLimit(f"race_{uuid.uuid4().hex[:8]}", 2, "machine") for _ in range(3)]
            assert not _at_once([first, second], limits)
            for item in limits:
                assert first.event_log_storage.get_concurrency_info(item.pool).slot_count == 2

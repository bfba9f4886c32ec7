"""The pools' limits: fitted to a machine, from BENCH_POOL_*, from a reviewed file; stored in a
Dagster instance (keeping a limit set in the UI, or forcing the file's) and compared with it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest
import yaml

from bench_pipeline import settings
from bench_pipeline.orchestration import (
    POOLS,
    PoolLimit,
    apply_pool_limits,
    check_pool_limits,
    file_pool_limits,
    load_pool_file,
    machine_defaults,
    pool_limits,
)

DEPLOY_POOLS = settings.project_root() / "deploy" / "pools.yaml"


@pytest.fixture
def instance() -> Iterator[dg.DagsterInstance]:
    with dg.instance_for_test() as instance:
        yield instance


def _stored(instance: dg.DagsterInstance) -> dict[str, int]:
    return {p.name: p.limit for p in instance.event_log_storage.get_pool_limits()}


def _pools_file(tmp_path: Path, pools) -> Path:
    path = tmp_path / "pools.yaml"
    path.write_text(yaml.safe_dump({"pools": pools}, sort_keys=False))
    return path


# --- machine defaults and BENCH_POOL_* --------------------------------------------------------


def test_machine_defaults_fit_cores_and_memory() -> None:
    assert machine_defaults(cpus=8, memory_gb=16) == {
        "agents": 4,
        "builds": 8,
        "browser": 8,  # min(8 cores, 16 GB / 1.5 GB = 10)
        "warehouse": 1,
    }
    assert machine_defaults(cpus=16, memory_gb=6)["browser"] == 4  # memory-bound
    # A tiny machine still runs one of each.
    assert machine_defaults(cpus=0, memory_gb=0.5) == {
        "agents": 4,
        "builds": 1,
        "browser": 1,
        "warehouse": 1,
    }
    assert set(machine_defaults()) == set(POOLS)


def test_pool_limits_take_env_over_the_machine() -> None:
    limits = pool_limits(
        {"BENCH_POOL_BROWSER": " 3 ", "BENCH_POOL_AGENTS": ""}, cpus=8, memory_gb=16
    )
    assert limits == [
        PoolLimit("agents", 4, "machine"),
        PoolLimit("builds", 8, "machine"),
        PoolLimit("browser", 3, "env"),
        PoolLimit("warehouse", 1, "machine"),
    ]


@pytest.mark.parametrize("value", ["0", "-1", "two", "1.5"])
def test_pool_limits_refuse_a_value_that_is_not_a_positive_integer(value: str) -> None:
    with pytest.raises(ValueError, match=r"^BENCH_POOL_BUILDS=.*positive whole number"):
        pool_limits({"BENCH_POOL_BUILDS": value}, cpus=2, memory_gb=4)


def test_pool_limits_refuse_a_second_warehouse_writer() -> None:
    with pytest.raises(ValueError, match=r"^BENCH_POOL_WAREHOUSE=2: .*one writer"):
        pool_limits({"BENCH_POOL_WAREHOUSE": "2"}, cpus=2, memory_gb=4)
    assert pool_limits({"BENCH_POOL_WAREHOUSE": "1"}, cpus=2, memory_gb=4)[-1].source == "env"


# --- the pools file ---------------------------------------------------------------------------


def test_deploy_pools_file_loads() -> None:
    limits = load_pool_file(DEPLOY_POOLS)
    assert {item.pool for item in limits} == set(POOLS)
    assert {item.source for item in limits} == {"file"}
    assert PoolLimit("warehouse", 1, "file") in limits


def test_load_pool_file_keeps_the_file_order_and_allows_a_subset(tmp_path: Path) -> None:
    path = _pools_file(tmp_path, {"browser": 3, "agents": 12})
    assert load_pool_file(path) == [
        PoolLimit("browser", 3, "file"),
        PoolLimit("agents", 12, "file"),
    ]


@pytest.mark.parametrize(
    ("pools", "message"),
    [
        ({"browsers": 2}, "pools.browsers: unknown pool"),
        ({"builds": 0}, "pools.builds: 0 is not a positive whole number"),
        ({"builds": -2}, "pools.builds: -2 is not a positive whole number"),
        ({"builds": 1.5}, "pools.builds: 1.5 is not a positive whole number"),
        ({"builds": "2"}, "pools.builds: '2' is not a positive whole number"),
        ({"builds": True}, "pools.builds: True is not a positive whole number"),
        ({"builds": None}, "pools.builds: None is not a positive whole number"),
        ({"warehouse": 2}, "pools.warehouse must be 1 (one DuckDB writer), not 2"),
        ({}, "expected a non-empty `pools:` mapping"),
        (["agents"], "expected a non-empty `pools:` mapping"),
    ],
)
def test_load_pool_file_names_the_file_and_the_key(tmp_path: Path, pools, message: str) -> None:
    path = _pools_file(tmp_path, pools)
    with pytest.raises(ValueError) as error:
        load_pool_file(path)
    assert str(error.value).startswith(f"{path}: ")
    assert message in str(error.value)
    assert "\n" not in str(error.value)


def test_load_pool_file_refuses_a_missing_or_broken_file(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"missing\.yaml: cannot read"):
        load_pool_file(tmp_path / "missing.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("pools: {agents: [\n")
    with pytest.raises(ValueError, match=r"broken\.yaml: cannot read"):
        load_pool_file(broken)
    no_pools = tmp_path / "other.yaml"
    no_pools.write_text("limits:\n  agents: 2\n")
    with pytest.raises(ValueError, match=r"other\.yaml: expected a non-empty `pools:`"):
        load_pool_file(no_pools)


def test_env_overrides_a_file_entry_and_adds_a_pool_the_file_leaves_out(tmp_path: Path) -> None:
    path = _pools_file(tmp_path, {"agents": 6, "browser": 2, "warehouse": 1})
    env = {"BENCH_POOL_BROWSER": "5", "BENCH_POOL_BUILDS": "3"}
    assert file_pool_limits(path, env) == [
        PoolLimit("agents", 6, "file"),
        PoolLimit("builds", 3, "env"),
        PoolLimit("browser", 5, "env"),
        PoolLimit("warehouse", 1, "file"),
    ]
    assert file_pool_limits(path, {}) == load_pool_file(path)
    with pytest.raises(ValueError, match="BENCH_POOL_WAREHOUSE"):
        file_pool_limits(path, {"BENCH_POOL_WAREHOUSE": "3"})


# --- storing and checking -----------------------------------------------------------------------


def test_apply_stores_the_limits_on_a_fresh_instance(instance: dg.DagsterInstance) -> None:
    limits = pool_limits({}, cpus=4, memory_gb=8)
    lines = apply_pool_limits(instance, limits)
    assert _stored(instance) == {"agents": 4, "builds": 4, "browser": 4, "warehouse": 1}
    assert lines == ["agents: 4 (machine)", "builds: 4 (machine)", "browser: 4 (machine)",
                     "warehouse: 1 (machine)"]  # fmt: skip
    assert check_pool_limits(instance, limits) == []


def test_apply_keeps_a_limit_set_in_the_ui_unless_env_asks(instance: dg.DagsterInstance) -> None:
    instance.event_log_storage.set_concurrency_slots("browser", 7)
    instance.event_log_storage.set_concurrency_slots("builds", 9)
    limits = pool_limits({"BENCH_POOL_BUILDS": "2"}, cpus=4, memory_gb=8)
    lines = apply_pool_limits(instance, limits)
    assert "browser: 7 (kept: set on this instance)" in lines
    assert "builds: 2 (env; was 9)" in lines
    assert _stored(instance) == {"agents": 4, "builds": 2, "browser": 7, "warehouse": 1}
    # What was kept differs from the machine's limits, and the check says so.
    assert check_pool_limits(instance, limits) == ["browser: 7 on the instance, 4 wanted (machine)"]


def test_apply_with_force_replaces_a_limit_set_in_the_ui(
    instance: dg.DagsterInstance, tmp_path: Path
) -> None:
    instance.event_log_storage.set_concurrency_slots("browser", 7)
    limits = load_pool_file(_pools_file(tmp_path, {"browser": 2, "builds": 3}))
    assert check_pool_limits(instance, limits) == [
        "browser: 7 on the instance, 2 wanted (file)",
        "builds: no limit set on the instance, 3 wanted (file)",
    ]
    lines = apply_pool_limits(instance, limits, force=True)
    assert lines == ["browser: 2 (file; was 7)", "builds: 3 (file)"]
    # Pools the file leaves out are not touched.
    assert _stored(instance) == {"browser": 2, "builds": 3}
    assert check_pool_limits(instance, limits) == []
    # Applying again changes nothing and says so without a "was".
    assert apply_pool_limits(instance, limits, force=True) == [
        "browser: 2 (file)",
        "builds: 3 (file)",
    ]


def test_check_changes_nothing(instance: dg.DagsterInstance) -> None:
    limits = load_pool_file(DEPLOY_POOLS)
    drift = check_pool_limits(instance, limits)
    assert [line.split(":")[0] for line in drift] == [item.pool for item in limits]
    assert _stored(instance) == {}

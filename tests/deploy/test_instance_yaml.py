"""The Dagster instance files under deploy/ load as real instances and say what docs/deploy.md
says: Postgres storage (against the real server), the run queue, pools, run retries and run
monitoring. Plus the pool limits of deploy/pools.yaml, applied with `bench pools --file`."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.deploy.conftest import DEPLOY, dagster_home_with, load_instance, pg_query

ALL_YAML = sorted(p for p in DEPLOY.rglob("*") if p.suffix in {".yaml", ".yml"})
# The settings every team instance shares; the Docker one adds a launcher and log storage.
SHARED_KEYS = (
    "storage",
    "run_coordinator",
    "concurrency",
    "run_retries",
    "run_monitoring",
    "telemetry",
)
PROJECT_POOLS = {"agents", "builds", "browser", "warehouse"}


def _yaml(path: Path):
    return yaml.safe_load(path.read_text())


@pytest.mark.parametrize("path", ALL_YAML, ids=lambda p: str(p.relative_to(DEPLOY)))
def test_every_yaml_under_deploy_parses(path: Path) -> None:
    assert isinstance(_yaml(path), dict), f"{path} is not a YAML mapping"


def test_the_deploy_folder_has_the_documented_files() -> None:
    names = {str(p.relative_to(DEPLOY)) for p in ALL_YAML}
    assert {
        "dagster.yaml",
        "dagster.postgres.yaml",
        "pools.yaml",
        "docker/dagster.yaml",
        "docker/docker-compose.yaml",
        "docker/workspace.yaml",
        "k8s/values.yaml",
        "k8s/pvc.yaml",
    } <= names


def test_docker_instance_shares_every_setting_but_the_launcher_with_the_team_instance() -> None:
    # Two copies of the same limits would drift; this keeps them one decision.
    team, docker = _yaml(DEPLOY / "dagster.yaml"), _yaml(DEPLOY / "docker/dagster.yaml")
    for key in SHARED_KEYS:
        assert docker[key] == team[key], f"deploy/docker/dagster.yaml differs in `{key}`"


def test_instance_files_use_the_psycopg2_scheme_and_env_vars_for_postgres() -> None:
    for name in ("dagster.yaml", "dagster.postgres.yaml", "docker/dagster.yaml"):
        db = _yaml(DEPLOY / name)["storage"]["postgres"]["postgres_db"]
        assert db["scheme"] == "postgresql+psycopg2", name
        assert {k: v for k, v in db.items() if k != "scheme"} == {
            "hostname": {"env": "DAGSTER_PG_HOST"},
            "port": {"env": "DAGSTER_PG_PORT"},
            "username": {"env": "DAGSTER_PG_USER"},
            "password": {"env": "DAGSTER_PG_PASSWORD"},
            "db_name": {"env": "DAGSTER_PG_DB"},
        }, name


@pytest.mark.slow
@pytest.mark.postgres
def test_team_instance_loads_on_postgres_with_queue_pools_retries_and_monitoring(
    pg_env: dict[str, str], pg_database: str, tmp_path: Path
) -> None:
    home = dagster_home_with(DEPLOY / "dagster.yaml", tmp_path / "dagster_home")
    with load_instance(home) as instance:
        assert type(instance.run_storage).__name__ == "PostgresRunStorage"
        assert type(instance.event_log_storage).__name__ == "PostgresEventLogStorage"
        assert type(instance.schedule_storage).__name__ == "PostgresScheduleStorage"
        assert type(instance.run_coordinator).__name__ == "QueuedRunCoordinator"
        assert type(instance.run_launcher).__name__ == "DefaultRunLauncher"

        concurrency = instance.get_concurrency_config()
        assert concurrency.run_queue_config.max_concurrent_runs == 8
        assert concurrency.pool_config.default_pool_limit == 1
        assert concurrency.pool_config.pool_granularity.value == "op"
        # The same, as the storage reports it to the UI.
        assert instance.event_log_storage.get_pool_config().default_pool_limit == 1

        assert instance.run_retries_enabled
        assert instance.run_retries_max_retries == 1
        assert not instance.run_retries_retry_on_asset_or_op_failure
        assert instance.run_monitoring_enabled
        assert instance.run_monitoring_max_runtime_seconds == 43200
        assert instance.run_monitoring_start_timeout_seconds == 300
        assert not instance.telemetry_enabled

        instance.add_dynamic_partitions("runs", ["demo.c1.r1", "demo.c1.r2"])

    # A second instance object (another process would do the same) sees the partitions: they
    # are in the server, not in this instance's memory or in a local file.
    with load_instance(home) as again:
        assert set(again.get_dynamic_partitions("runs")) == {"demo.c1.r1", "demo.c1.r2"}
    rows = pg_query(pg_database, "SELECT partition FROM dynamic_partitions ORDER BY partition")
    assert rows == [("demo.c1.r1",), ("demo.c1.r2",)]
    assert not list(home.glob("**/*.db")), "SQLite files appeared in DAGSTER_HOME"


def test_docker_instance_structure() -> None:
    """What the DockerRunLauncher needs, checked on the file (structure only)."""
    config = _yaml(DEPLOY / "docker/dagster.yaml")
    launcher = config["run_launcher"]
    assert (launcher["module"], launcher["class"]) == ("dagster_docker", "DockerRunLauncher")
    assert launcher["config"]["network"] == "bench_network"
    kwargs = launcher["config"]["container_kwargs"]
    assert "bench_data:/data" in kwargs["volumes"]
    assert kwargs["shm_size"] == "1g"
    # Forwarded from the daemon into each run: Postgres, the store's paths, the secrets.
    forwarded = set(launcher["config"]["env_vars"])
    assert {f"DAGSTER_PG_{k}" for k in ("HOST", "PORT", "USER", "PASSWORD", "DB")} <= forwarded
    assert {"BENCH_DATA_DIR", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "BENCH_SONAR_TOKEN"} <= (
        forwarded
    )
    # Logs and Dagster's own files on the shared volume, where the webserver can read them.
    assert config["compute_logs"]["config"]["base_dir"].startswith("/data/")
    assert config["local_artifact_storage"]["config"]["base_dir"].startswith("/data/")


@pytest.mark.slow
@pytest.mark.postgres
@pytest.mark.skipif(
    importlib.util.find_spec("dagster_docker") is None,
    reason="dagster-docker is not installed in the project's .venv (the image installs it; "
    "see deploy/docker/Dockerfile) - only the YAML structure is checked here",
)
def test_docker_instance_loads_with_the_docker_run_launcher(
    pg_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = dagster_home_with(DEPLOY / "docker/dagster.yaml", tmp_path / "dagster_home")
    with load_instance(home) as instance:
        assert type(instance.run_launcher).__name__ == "DockerRunLauncher"
        assert instance.run_launcher.networks == ["bench_network"]
        assert instance.run_launcher.container_kwargs["volumes"] == ["bench_data:/data"]
        assert type(instance.run_coordinator).__name__ == "QueuedRunCoordinator"
        assert type(instance.run_storage).__name__ == "PostgresRunStorage"


def _definitions_pools() -> set[str]:
    from bench_pipeline.definitions import defs

    return {
        op.pool
        for job in defs.resolve_all_job_defs()
        for op in job.graph.iterate_op_defs()
        if op.pool
    }


def test_pools_file_sizes_every_pool_the_assets_use_and_warehouse_is_one() -> None:
    pools = _yaml(DEPLOY / "pools.yaml")["pools"]
    used = _definitions_pools()
    assert used >= PROJECT_POOLS, f"the assets no longer use {PROJECT_POOLS - used}?"
    assert used <= set(pools), f"pools without a limit in deploy/pools.yaml: {used - set(pools)}"
    assert pools["warehouse"] == 1


BENCH = Path(sys.executable).with_name("bench")


def _bench_pools(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    """`bench pools ...` as the compose `pools` service runs it, on the instance of `home`."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("BENCH_POOL_")}
    return subprocess.run(
        [str(BENCH), "pools", *args],
        env={**clean, "DAGSTER_HOME": str(home), "COLUMNS": "200", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def _stored_limits(home: Path) -> dict[str, int]:
    with load_instance(home) as instance:
        return {p.name: p.limit for p in instance.event_log_storage.get_pool_limits()}


@pytest.mark.slow
@pytest.mark.postgres
def test_bench_pools_file_sets_the_limits_in_postgres_and_checks_them(
    pg_env: dict[str, str], pg_database: str, tmp_path: Path
) -> None:
    home = dagster_home_with(DEPLOY / "dagster.yaml", tmp_path / "dagster_home")
    pools_file = str(DEPLOY / "pools.yaml")
    wanted = _yaml(DEPLOY / "pools.yaml")["pools"]

    # A fresh database has no per-pool limits: every pool of the file is drift.
    check = _bench_pools(home, "--file", pools_file, "--check")
    assert check.returncode == 1, check.stdout + check.stderr
    for name in wanted:
        assert f"{name}: no limit set on the instance" in check.stdout
    assert f"{len(wanted)} pool(s) differ from {pools_file}" in check.stderr
    assert _stored_limits(home) == {}  # --check wrote nothing

    # Someone changed a limit in the UI: the reviewed file wins over it.
    with load_instance(home) as instance:
        instance.event_log_storage.set_concurrency_slots("browser", 7)
    done = _bench_pools(home, "--file", pools_file)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "(file; was 7)" in done.stdout
    assert _stored_limits(home) == wanted
    rows = pg_query(
        pg_database, "SELECT concurrency_key, count(*) FROM concurrency_slots GROUP BY 1"
    )
    assert dict(rows) == wanted

    check = _bench_pools(home, "--file", pools_file, "--check")
    assert check.returncode == 0, check.stdout + check.stderr

    # `bench pools` without a file (as `bench ui` / `bench run` do) keeps the team's limits.
    fitted = _bench_pools(home)
    assert fitted.returncode == 0, fitted.stdout + fitted.stderr
    assert _stored_limits(home) == wanted

    # BENCH_POOL_<NAME> still overrides a file entry, and --check compares with it too.
    override = {"BENCH_POOL_BROWSER": str(wanted["browser"] + 1)}
    check = _bench_pools(home, "--file", pools_file, "--check", **override)
    assert check.returncode == 1
    assert check.stdout.strip() == (
        f"browser: {wanted['browser']} on the instance, {wanted['browser'] + 1} wanted (env)"
    )
    done = _bench_pools(home, "--file", pools_file, **override)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _stored_limits(home) == {**wanted, "browser": wanted["browser"] + 1}
    assert _bench_pools(home, "--file", pools_file, "--check", **override).returncode == 0
    assert _bench_pools(home, "--file", pools_file, "--check").returncode == 1


@pytest.mark.parametrize(
    ("pools", "message"),
    [
        ({"browser": 2, "warehouse": 2}, "pools.warehouse must be 1"),
        ({"browsers": 2}, "pools.browsers: unknown pool"),
        ({"builds": 0}, "pools.builds: 0 is not a positive whole number"),
        ({"builds": "two"}, "pools.builds: 'two' is not a positive whole number"),
    ],
)
@pytest.mark.parametrize("check", [False, True], ids=["apply", "check"])
def test_bench_pools_refuses_a_bad_file_with_one_line_and_exit_2(
    tmp_path: Path, pools: dict, message: str, check: bool
) -> None:
    bad = tmp_path / "pools.yaml"
    bad.write_text(yaml.safe_dump({"pools": pools}))
    home = tmp_path / "dagster_home"
    result = _bench_pools(home, "--file", str(bad), *(["--check"] if check else []))
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert f"{bad}: {message}" in result.stderr
    assert not (home / "dagster.yaml").exists() and not list(home.glob("**/*.db"))

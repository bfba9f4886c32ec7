"""Fixtures for the deployment files: a fresh Postgres database per test, and instances
loaded from deploy/*.yaml exactly as a daemon or webserver would load them."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest

from bench_pipeline import settings

psycopg2 = pytest.importorskip("psycopg2")
from tests.deploy.pg import PG, admin_connection, fresh_database, pg_query  # noqa: E402, F401

DEPLOY = settings.project_root() / "deploy"


@pytest.fixture
def pg_database(postgres: dict[str, object]) -> Iterator[str]:
    """A new, empty database on the local server, dropped afterwards."""
    with fresh_database("bench_deploy") as name:
        yield name


@pytest.fixture
def pg_env(pg_database: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The DAGSTER_PG_* variables every deploy/*.yaml reads, pointing at `pg_database`."""
    env = {
        "DAGSTER_PG_HOST": PG["host"],
        "DAGSTER_PG_PORT": str(PG["port"]),
        "DAGSTER_PG_USER": PG["user"],
        "DAGSTER_PG_PASSWORD": "",
        "DAGSTER_PG_DB": pg_database,
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return env


def dagster_home_with(yaml_file: Path, home: Path) -> Path:
    """A DAGSTER_HOME holding `yaml_file` as its dagster.yaml (what the deploy docs say to do)."""
    home.mkdir(parents=True, exist_ok=True)
    shutil.copy(yaml_file, home / "dagster.yaml")
    return home


def load_instance(home: Path) -> dg.DagsterInstance:
    return dg.DagsterInstance.from_config(str(home))

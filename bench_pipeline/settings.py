"""Where things live on disk. Every path can be moved with an environment variable.

Defaults sit under the project root so that `make run` and `bench` agree without
configuration; tests point them at temporary folders.
"""

from __future__ import annotations

import os
from pathlib import Path


def project_root() -> Path:
    """The checkout that holds pyproject.toml (editable install), else the working directory."""
    here = Path(__file__).resolve().parents[1]
    return here if (here / "pyproject.toml").is_file() else Path.cwd()


def data_dir() -> Path:
    """Root of everything the pipeline writes: artifacts, warehouse, run workspaces."""
    return Path(os.environ.get("BENCH_DATA_DIR") or project_root() / "data").resolve()


def artifacts_dir() -> Path:
    return Path(os.environ.get("BENCH_ARTIFACTS_DIR") or data_dir() / "artifacts").resolve()


def warehouse_path() -> Path:
    return Path(os.environ.get("BENCH_WAREHOUSE") or data_dir() / "warehouse.duckdb").resolve()


def experiments_dir() -> Path:
    return project_root() / "experiments"


def sql_models_dir() -> Path:
    """The SQL models: BENCH_SQL_MODELS_DIR (a fork's or a test's copy), else dbt_like_sql/."""
    return Path(os.environ.get("BENCH_SQL_MODELS_DIR") or project_root() / "dbt_like_sql")


def dagster_home() -> Path:
    """Project-local DAGSTER_HOME so that run history survives `dagster dev` restarts."""
    return Path(os.environ.get("DAGSTER_HOME") or project_root() / "dagster_home").resolve()


def toolchain_bin() -> Path:
    """The pinned npm toolchain (tsc, eslint, ...) that `make setup` installs."""
    return Path(
        os.environ.get("BENCH_TOOLCHAIN_BIN")
        or project_root() / "toolchain" / "node_modules" / ".bin"
    ).resolve()


def bot_endurance_s() -> float:
    """Default endurance window of the bot (seconds): BENCH_BOT_ENDURANCE_S, else 30."""
    raw = os.environ.get("BENCH_BOT_ENDURANCE_S", "").strip()
    return float(raw) if raw else 30.0


def max_run_seconds() -> int:
    """Backstop on one Dagster run (run monitoring cancels it after this): each stage has its
    own tighter limit per benchmark run (agent time limit, build timeout, bot hard cap)."""
    raw = os.environ.get("BENCH_MAX_RUN_SECONDS", "").strip()
    return int(raw) if raw else 6 * 3600

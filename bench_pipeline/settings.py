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


def agent_cli_bin() -> Path:
    """Where the pinned agent CLIs (claude, codex) that `make setup` installs live:
    BENCH_AGENT_CLI_BIN, else toolchain/agents/node_modules/.bin (toolchain/agents/package.json
    pins their versions)."""
    return Path(
        os.environ.get("BENCH_AGENT_CLI_BIN")
        or project_root() / "toolchain" / "agents" / "node_modules" / ".bin"
    ).absolute()


def bot_endurance_s() -> float:
    """Default endurance window of the bot (seconds): BENCH_BOT_ENDURANCE_S, else 30."""
    raw = os.environ.get("BENCH_BOT_ENDURANCE_S", "").strip()
    return float(raw) if raw else 30.0


# An evaluation's hard cap cannot be shorter than this: play ends 12 s before the cap and
# the browser is closed 5 s before it (bot/timings.py).
MIN_BOT_HARD_CAP_S = 15.0


def bot_hard_cap_s() -> float:
    """Hard cap of one bot evaluation (seconds): BENCH_BOT_HARD_CAP_S, else 60.

    The evaluation's whole process tree ends by then whatever the page does (bot/isolate.py)."""
    from bench_pipeline.bot.timings import TIMINGS

    raw = os.environ.get("BENCH_BOT_HARD_CAP_S", "").strip()
    if not raw:
        return TIMINGS.hard_cap_s
    return check_bot_hard_cap(raw, "BENCH_BOT_HARD_CAP_S")


def check_bot_hard_cap(raw: str | float, name: str) -> float:
    """`raw` as a hard cap in seconds, or a ValueError naming `name` and the bounds."""
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{name} must be a number of seconds, not {raw!r}") from None
    if not MIN_BOT_HARD_CAP_S <= value <= 3600:
        raise ValueError(f"{name} must be between {MIN_BOT_HARD_CAP_S:.0f} and 3600 seconds")
    return value


def max_run_seconds() -> int:
    """Backstop on one Dagster run (run monitoring cancels it after this): each stage has its
    own tighter limit per benchmark run (agent time limit, build timeout, bot hard cap)."""
    raw = os.environ.get("BENCH_MAX_RUN_SECONDS", "").strip()
    return int(raw) if raw else 6 * 3600


class SettingError(ValueError):
    """An environment variable with a value that cannot be used (one line: which, and why)."""


def _env_number(name: str, minimum: float, integer: bool = False) -> float | None:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    try:
        value = int(raw) if integer else float(raw)
    except ValueError:
        kind = "a whole number" if integer else "a number"
        raise SettingError(f"{name}={raw!r} is not {kind}") from None
    if not value >= minimum:  # also refuses NaN
        raise SettingError(f"{name}={raw!r} must be at least {minimum:g}")
    return value


def sweep_repeats() -> int | None:
    """Runs per cell for sweeps launched without their own `repeats` (BENCH_SWEEP_REPEATS);
    None: each experiment file's `repeats`."""
    value = _env_number("BENCH_SWEEP_REPEATS", 1, integer=True)
    return None if value is None else int(value)


def budget_cap_usd() -> float | None:
    """A cap on every run's spending for sweeps launched without their own
    (BENCH_BUDGET_CAP_USD); None: each cell's `budget_usd` alone."""
    return _env_number("BENCH_BUDGET_CAP_USD", 0.01)


def sweep_dry_run() -> bool:
    """Sweeps estimate and launch nothing unless told otherwise (BENCH_SWEEP_DRY_RUN=1)."""
    raw = os.environ.get("BENCH_SWEEP_DRY_RUN", "").strip().lower()
    if raw in {"", "0", "false", "no"}:
        return False
    if raw in {"1", "true", "yes"}:
        return True
    raise SettingError(f"BENCH_SWEEP_DRY_RUN={raw!r}: expected 1/true/yes or 0/false/no")


def checked_bot_endurance_s() -> float:
    """bot_endurance_s with a one-line error for a bad BENCH_BOT_ENDURANCE_S."""
    value = _env_number("BENCH_BOT_ENDURANCE_S", 0.5)
    return 30.0 if value is None else value

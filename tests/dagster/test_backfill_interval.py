"""The daemon `bench ui` and deployments run looks at backfills every few seconds.

Dagster 1.13 fixes its backfill daemon's sleep at 30 s; a UI sweep waited for it twice
(bench_pipeline/orchestration/daemon.py, docs/orchestration.md).
"""

from __future__ import annotations

import inspect
import itertools
import os
import re
import signal
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from bench_pipeline.orchestration import daemon

ITERATION = "No backfill jobs in progress"


def _daemon(home: Path, env: dict[str, str], seconds: float) -> subprocess.CompletedProcess:
    """Our daemon on an empty instance for `seconds`, then Ctrl-C; its log."""
    (home / "dagster.yaml").touch()
    command = [sys.executable, "-m", daemon.THIS_MODULE, "run", "--empty-workspace"]
    process = subprocess.Popen(
        [*command, "--log-level", "debug"],
        env={**os.environ, "DAGSTER_HOME": str(home), **env},
        cwd=home,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        out, _ = process.communicate(timeout=seconds)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGINT)
        out, _ = process.communicate(timeout=60)
    return subprocess.CompletedProcess(process.args, process.returncode, out, "")


@pytest.mark.slow
def test_the_backfill_daemon_looks_at_backfills_at_the_interval_set(tmp_path: Path) -> None:
    log = _daemon(tmp_path, {daemon.INTERVAL_ENV: "2"}, seconds=25).stdout
    stamps = [
        datetime.strptime(m, "%Y-%m-%d %H:%M:%S")
        for m in re.findall(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) \+0000.*" + ITERATION, log)
    ]
    # Dagster's own 30 s would give one iteration in the window; at 2 s, several. The first
    # comes once the daemon is up, which takes seconds of the window on a loaded machine.
    assert len(stamps) >= 3, log[-3000:]
    gaps = sorted((b - a).total_seconds() for a, b in itertools.pairwise(stamps))
    assert gaps[0] < 30 and gaps[len(gaps) // 2] <= 10, gaps


@pytest.mark.parametrize("value", ["soon", "0.5", "31"])
def test_a_bad_interval_is_refused_before_anything_starts(tmp_path: Path, value: str) -> None:
    result = _daemon(tmp_path, {daemon.INTERVAL_ENV: value}, seconds=120)
    assert result.returncode == 2
    assert daemon.INTERVAL_ENV in result.stdout and "Traceback" not in result.stdout


def test_the_interval_defaults_to_five_seconds_and_takes_fractions() -> None:
    assert daemon.backfill_interval_s({}) == daemon.DEFAULT_INTERVAL_S == 5.0
    assert daemon.backfill_interval_s({daemon.INTERVAL_ENV: " 2.5 "}) == 2.5


def test_dagster_dev_still_starts_its_daemon_the_way_we_replace() -> None:
    """A canary for upgrades: `dagster dev` opens its daemon with open_ipc_subprocess and
    `-m dagster._daemon`; our `dev` swaps that module for ours and keeps every argument."""
    from dagster._cli import dev
    from dagster._daemon import controller

    source = inspect.getsource(dev)
    assert "open_ipc_subprocess(" in source and f'"{daemon.DAGSTER_DAEMON_MODULE}"' in source
    assert isinstance(controller.DEFAULT_DAEMON_INTERVAL_SECONDS, int | float)
    command = [sys.executable, "-m", "dagster._daemon", "run", "--log-level", "info", "-m", "x"]
    assert daemon.daemon_command(command) == [
        sys.executable,
        "-m",
        daemon.THIS_MODULE,
        "run",
        "--log-level",
        "info",
        "-m",
        "x",
    ]
    webserver = [sys.executable, "-m", "dagster_webserver", "-h", "127.0.0.1"]
    assert daemon.daemon_command(webserver) == webserver

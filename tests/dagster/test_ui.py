"""`bench ui` starts the Dagster webserver on this project (workspace.yaml → defs)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from bench_pipeline import settings


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _graphql(port: int, query: str) -> dict:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/graphql",
        data=json.dumps({"query": query}).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


@pytest.mark.slow
def test_bench_ui_serves_the_project_assets(tmp_path: Path) -> None:
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copy(settings.project_root() / "dagster_home" / "dagster.yaml", home)
    port = _free_port()
    log = (tmp_path / "ui.log").open("w")
    process = subprocess.Popen(
        [str(Path(sys.executable).with_name("bench")), "ui", "--port", str(port)],
        env={**os.environ, "DAGSTER_HOME": str(home), "BENCH_DATA_DIR": str(tmp_path / "data")},
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # so the webserver and daemon children stop with it
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                data = _graphql(port, "{ assetNodes { assetKey { path } groupName } }")
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(
                        "the UI did not start:\n" + (tmp_path / "ui.log").read_text()[-3000:]
                    )
                time.sleep(0.5)
        groups = {tuple(n["assetKey"]["path"]): n["groupName"] for n in data["data"]["assetNodes"]}
        assert groups[("experiment_design",)] == "experiment_design"
        assert groups[("fct_runs",)] == "warehouse"
        assert groups[("mart_main_effects",)] == "effects_analysis"
        jobs = _graphql(
            port,
            "{ repositoriesOrError { ... on RepositoryConnection { nodes { jobs { name } } } } }",
        )
        names = {j["name"] for r in jobs["data"]["repositoriesOrError"]["nodes"] for j in r["jobs"]}
        assert "experiment_design_job" in names
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        with contextlib.suppress(ProcessLookupError):  # children that outlived a slow shutdown
            os.killpg(process.pid, signal.SIGKILL)
        log.close()

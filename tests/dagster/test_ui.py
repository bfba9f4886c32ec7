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

import duckdb
import pytest

from bench_pipeline import settings
from tests.dagster.test_ui_signals import _descendants


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _graphql(port: int, query: str, variables: dict | None = None, timeout: float = 10) -> dict:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/graphql",
        data=json.dumps({"query": query, "variables": variables or {}}).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.load(response)


LAUNCH = """
mutation Launch($params: ExecutionParams!) {
  launchPipelineExecution(executionParams: $params) {
    __typename
    ... on LaunchRunSuccess { run { runId } }
    ... on PythonError { message }
    ... on RunConfigValidationInvalid { errors { message } }
  }
}
"""
BACKFILLS = "{ partitionBackfillsOrError { ... on PartitionBackfills { results { id status } } } }"


def _wait(what: str, deadline: float, probe, log: Path):
    while time.monotonic() < deadline:
        value = probe()
        if value is not None:
            return value
        time.sleep(2)
    pytest.fail(f"timed out waiting for {what}:\n" + log.read_text()[-4000:])


@pytest.mark.slow
def test_bench_ui_serves_the_project_and_launches_a_sweep(
    tmp_path: Path, dagster_webserver: Path
) -> None:
    """The webserver answers GraphQL about this project's assets and jobs; a sweep launched
    the way the launchpad does runs as a backfill through the daemon into the warehouse."""
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copy(settings.project_root() / "dagster_home" / "dagster.yaml", home)
    port = _free_port()
    log = (tmp_path / "ui.log").open("w")
    process = subprocess.Popen(
        [str(Path(sys.executable).with_name("bench")), "ui", "--port", str(port)],
        env={
            **os.environ,
            "DAGSTER_HOME": str(home),
            "BENCH_DATA_DIR": str(tmp_path / "data"),
            "BENCH_BOT_ENDURANCE_S": "3",
        },
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

        # dagster dev's daemon child runs through our module (a 5 s backfill interval).
        def our_daemon():
            commands = [command for _, _, command in _descendants(process.pid).values()]
            return next((c for c in commands if "orchestration.daemon run" in c), None)

        _wait("the daemon", time.monotonic() + 60, our_daemon, tmp_path / "ui.log")
        groups = {tuple(n["assetKey"]["path"]): n["groupName"] for n in data["data"]["assetNodes"]}
        assert groups[("experiment_design",)] == "experiment_design"
        assert groups[("fct_runs",)] == "warehouse"
        assert groups[("mart_main_effects",)] == "effects_analysis"
        jobs = _graphql(
            port,
            "{ repositoriesOrError { ... on RepositoryConnection { nodes { jobs { name } } } } }",
        )
        names = {j["name"] for r in jobs["data"]["repositoriesOrError"]["nodes"] for j in r["jobs"]}
        assert {"sweep_job", "experiment_design_job"} <= names

        # One run, one model: the smallest sweep that goes through every stage.
        tiny = tmp_path / "tiny.yaml"
        tiny.write_text(
            "name: tiny\nrepeats: 1\naxes:\n  agent: {levels: [synthetic]}\n"
            "designs:\n  - type: main_effects\n"
            f"models_file: {settings.experiments_dir() / 'models.yaml'}\n"
        )
        where = _graphql(
            port,
            "{ repositoriesOrError { ... on RepositoryConnection "
            "{ nodes { name location { name } } } } }",
        )["data"]["repositoriesOrError"]["nodes"][0]
        params = {
            "selector": {
                "repositoryLocationName": where["location"]["name"],
                "repositoryName": where["name"],
                "pipelineName": "sweep_job",
            },
            "runConfigData": {
                "ops": {"experiment_design": {"config": {"experiment": str(tiny), "launch": True}}}
            },
        }
        launched = _graphql(port, LAUNCH, {"params": params})["data"]["launchPipelineExecution"]
        assert launched["__typename"] == "LaunchRunSuccess", launched
        log_path = tmp_path / "ui.log"
        deadline = time.monotonic() + 420

        def backfill_done():
            results = _graphql(port, BACKFILLS)["data"]["partitionBackfillsOrError"]["results"]
            if results and results[0]["status"] not in ("REQUESTED", "CANCELING"):
                return results[0]
            return None

        backfill = _wait("the sweep's backfill", deadline, backfill_done, log_path)
        assert backfill["status"] in ("COMPLETED", "COMPLETED_SUCCESS"), backfill
        db = tmp_path / "data" / "warehouse.duckdb"
        with duckdb.connect(str(db), read_only=True) as con:
            assert con.execute("select count(*), count(score) from fct_runs").fetchone() == (1, 1)
            assert con.execute("select count(*) from fct_test_results").fetchone() == (16,)
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

"""The team deployment's moving parts for real, minus containers: a gRPC code server (the
`user_code` command of docker-compose.yaml), a workspace shaped like deploy/docker/workspace.yaml
and `dagster-daemon run` on deploy/dagster.yaml over the local Postgres. A sensor requests one
run; it must go through the queue (QueuedRunCoordinator), be launched by the daemon and end
SUCCESS, all recorded in Postgres. (The launcher is the default one - a process next to the code
server - since no Docker engine or cluster runs here.)"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from dagster import DagsterEventType as E

from tests.deploy.conftest import DEPLOY, dagster_home_with, load_instance, pg_query

DEFS = """
import dagster as dg

@dg.asset(pool="browser")
def ping():
    return dg.MaterializeResult(metadata={"ok": True})

ping_job = dg.define_asset_job("ping_job", selection=[ping])

@dg.sensor(job=ping_job, minimum_interval_seconds=1,
           default_status=dg.DefaultSensorStatus.RUNNING)
def once(context):
    return dg.RunRequest(run_key="once")

defs = dg.Definitions(assets=[ping], jobs=[ping_job], sensors=[once])
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _start(command: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        command,
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group: stopped with everything it spawned
    )


def _stop(process: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)


@pytest.mark.slow
@pytest.mark.postgres
def test_daemon_queues_launches_and_records_a_run_in_postgres(
    pg_env: dict[str, str], pg_database: str, tmp_path: Path
) -> None:
    home = dagster_home_with(DEPLOY / "dagster.yaml", tmp_path / "dagster_home")
    (tmp_path / "defs.py").write_text(DEFS)
    port = _free_port()
    workspace = yaml.safe_load((DEPLOY / "docker/workspace.yaml").read_text())
    workspace["load_from"][0]["grpc_server"].update(host="127.0.0.1", port=port)
    (home / "workspace.yaml").write_text(yaml.safe_dump(workspace))

    # As the compose `pools` service does before the daemon starts: the schema is created and
    # the pool the asset uses gets its limit.
    with load_instance(home) as instance:
        instance.event_log_storage.set_concurrency_slots("browser", 1)

    env = {**os.environ, "DAGSTER_HOME": str(home)}
    bin_dir = Path(sys.executable).parent
    server = ["code-server", "start", "-h", "127.0.0.1", "-p", str(port)]
    code_server = _start(
        [str(bin_dir / "dagster"), *server, "-f", str(tmp_path / "defs.py"), "-a", "defs"],
        tmp_path / "code_server.log",
        env,
    )
    daemon = None
    try:
        daemon = _start(
            [str(bin_dir / "dagster-daemon"), "run", "-w", str(home / "workspace.yaml")],
            tmp_path / "daemon.log",
            env,
        )
        deadline = time.monotonic() + 240
        status = None
        while time.monotonic() < deadline:
            rows = pg_query(pg_database, "SELECT status FROM runs")
            status = rows[0][0] if rows else None
            if status in ("SUCCESS", "FAILURE", "CANCELED"):
                break
            for name, process in (("code server", code_server), ("daemon", daemon)):
                assert process.poll() is None, f"the {name} exited early"
            time.sleep(2)
        logs = "\n".join(
            f"--- {p.name}\n{p.read_text()[-3000:]}" for p in sorted(tmp_path.glob("*.log"))
        )
        assert status == "SUCCESS", f"run status {status!r}\n{logs}"
    finally:
        for process in (daemon, code_server):
            if process is not None:
                _stop(process)

    events = {
        row[0]
        for row in pg_query(
            pg_database, "SELECT DISTINCT dagster_event_type FROM event_logs WHERE run_id <> ''"
        )
    }
    # Queued by the QueuedRunCoordinator, launched by the daemon (STARTING), then run.
    # (Stored under their historical names: RUN_ENQUEUED is "PIPELINE_ENQUEUED", ...)
    run_events = {E.RUN_ENQUEUED, E.RUN_STARTING, E.RUN_START, E.RUN_SUCCESS}
    assert {e.value for e in run_events} <= events, events
    assert "ASSET_MATERIALIZATION" in events
    # The step took, and gave back, the one `browser` slot.
    assert pg_query(
        pg_database,
        "SELECT count(*), count(run_id) FROM concurrency_slots WHERE concurrency_key = 'browser'",
    ) == [(1, 0)]
    # The sensor's tick is in Postgres too (schedule storage), not in a local file.
    assert pg_query(pg_database, "SELECT count(*) FROM job_ticks")[0][0] >= 1
    assert not list(home.glob("**/*.db"))

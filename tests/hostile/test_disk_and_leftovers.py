"""Hostile: filling the disk, and what a killed pipeline leaves behind.

Attack first, then the defence, with real bubblewrap as root, real `bench run` processes
and a real Dagster instance:

- three 300 MB files under a 500 MB quota are stopped as limit_hit "disk";
- a `command` agent that fills its workspace is recorded as such, and the sweep goes on;
- a pipeline SIGKILLed mid-run leaves cgroups, /etc folders and sandbox-owned files, which
  the next start takes back, leaving nothing running;
- a `bench run` SIGKILLed mid-run leaves its Dagster run STARTED; the next start fails it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import dagster as dg
import pytest
import yaml

from bench_pipeline import settings
from bench_pipeline.sandbox import SandboxPolicy
from bench_pipeline.sandbox.bubblewrap import BubblewrapSandbox, processes_of_uid
from bench_pipeline.sandbox.disk import disk_usage
from bench_pipeline.sandbox.reap import in_sandbox_range, stale_cgroups
from bench_pipeline.warehouse.build import query

MIB = 1024 * 1024
REPO = settings.project_root()
BENCH = Path(sys.executable).with_name("bench")
# What one poll interval of the disk watch may let through past the quota here: writes go
# to the page cache at ~1-2 GB/s and the first poll comes after 50 ms; the bound leaves
# room for a loaded machine and is still far below what the attack would write unchecked.
OVERRUN_BOUND = 256 * MIB
# A pipeline that starts one sandboxed run which leaves files behind and then waits.
PIPELINE = """
import sys
from pathlib import Path
from bench_pipeline.sandbox import SandboxPolicy, get_sandbox
ws = Path(sys.argv[1])
script = "mkdir -p out; echo x > out/a.js; ln -s /etc/hostname out/link; touch ready; sleep 300"
get_sandbox("bubblewrap").run(["sh", "-c", script], ws, SandboxPolicy(timeout_s=300))
"""
NEXT_START = """
import sys
from pathlib import Path
from bench_pipeline.sandbox import SandboxPolicy, get_sandbox
result = get_sandbox("bubblewrap").run(["true"], Path(sys.argv[1]), SandboxPolicy(timeout_s=60))
print(result.summary())
"""


@pytest.fixture
def root_bwrap(bwrap: BubblewrapSandbox) -> BubblewrapSandbox:
    if not bwrap.as_root:
        pytest.skip("sandbox uids, cgroups and the reaper need root")
    return bwrap


def _wait_for(predicate: Callable[[], object], what: str, limit_s: float = 120.0) -> None:
    deadline = time.monotonic() + limit_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.1)


def _used_bytes(path: Path) -> int:
    stats = os.statvfs(path)
    return (stats.f_blocks - stats.f_bfree) * stats.f_frsize


def _sandbox_owned(root: Path) -> list[Path]:
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            path = Path(dirpath) / name
            if in_sandbox_range(path.lstat().st_uid):
                found.append(path)
    return found


def _leftovers_of(pid: int) -> tuple[list[str], list[Path]]:
    """The cgroups and /etc folders a (dead) pipeline process `pid` left behind."""
    cgroups = [name for name in stale_cgroups() if name.startswith(f"bench-sandbox-{pid}-")]
    etc = list(Path(tempfile.gettempdir()).glob(f"bench-sandbox-etc-{pid}-*"))
    return cgroups, etc


@pytest.mark.slow
def test_three_300mb_files_under_a_500mb_quota_are_stopped(
    root_bwrap: BubblewrapSandbox, tmp_path: Path
) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    before = _used_bytes(tmp_path)
    script = "for i in 1 2 3; do head -c 300M /dev/zero > f$i || echo short $i; done; echo done"
    result = root_bwrap.run(
        ["sh", "-c", script], workspace, SandboxPolicy(timeout_s=120, disk_quota_mb=500)
    )

    assert result.limit_hit == "disk" and result.exit_code is None, result.summary()
    # The kernel refused the writes past the quota (ENOSPC) and the run was stopped: either
    # before the script ended, or with its later writes cut short.
    assert "done" not in result.stdout or "short 2" in result.stdout, result.stdout
    assert "500 MiB disk quota" in result.stderr
    held = disk_usage([workspace])
    assert held <= 500 * MIB + OVERRUN_BOUND, held
    assert held < 900 * MIB  # what the attack would have written
    assert all(p.lstat().st_uid == os.getuid() for p in workspace.iterdir())
    shutil.rmtree(workspace)
    # Nothing of it was written anywhere else on the host (other tests write too: a margin).
    assert _used_bytes(tmp_path) - before < OVERRUN_BOUND


@pytest.mark.slow
def test_a_pipeline_killed_mid_run_is_cleaned_up_by_the_next_start(
    root_bwrap: BubblewrapSandbox, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    workspace = data / "artifacts" / "runs" / "r1" / "agent_generation" / "workspace"
    workspace.mkdir(parents=True)
    env = {**os.environ, "BENCH_DATA_DIR": str(data)}
    pipeline = subprocess.Popen(
        [sys.executable, "-c", PIPELINE, str(workspace)], cwd=REPO, env=env, start_new_session=True
    )
    try:
        _wait_for(lambda: (workspace / "ready").exists(), "the sandboxed run to start")
        uid = (workspace / "ready").stat().st_uid
    finally:
        pipeline.send_signal(signal.SIGKILL)  # the attack: no finally block of it runs
        pipeline.wait()

    # What it left: its cgroups, its /etc folder, the workspace still the sandbox uid's.
    cgroups, etc = _leftovers_of(pipeline.pid)
    assert etc, "the killed pipeline left no /etc folder (nothing to test)"
    if root_bwrap.use_cgroups and Path("/sys/fs/cgroup/pids").is_dir():
        assert cgroups
    assert in_sandbox_range(uid) and _sandbox_owned(workspace)

    # The next start (a later sandboxed run anywhere) takes it all back.
    other = tmp_path / "other"
    other.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", NEXT_START, str(other)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert _leftovers_of(pipeline.pid) == ([], [])
    assert _sandbox_owned(data) == []
    assert (workspace / "out" / "a.js").stat().st_uid == os.getuid()
    assert (workspace / "out" / "link").lstat().st_uid == os.getuid()
    assert Path("/etc/hostname").stat().st_uid == 0  # the link was not followed
    assert processes_of_uid(uid) == []


def _experiment(tmp_path: Path, agents: list[str], repeats: int = 1) -> Path:
    spec = {
        "name": "hostile",
        "description": "disk and leftovers",
        "repeats": repeats,
        "axes": {
            "agent": {"levels": agents, "baseline": agents[0]},
            "model": {"levels": ["claude-sonnet-4-6"]},
        },
        "designs": [{"type": "main_effects"}],
    }
    path = tmp_path / "hostile.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def _bench_env(tmp_path: Path, command: str, **extra: str) -> dict[str, str]:
    env = {
        **os.environ,
        "BENCH_DATA_DIR": str(tmp_path / "data"),
        "DAGSTER_HOME": str(tmp_path / "dagster_home"),
        "BENCH_AGENT_COMMAND": command,
        "BENCH_BOT_ENDURANCE_S": "2",
        **extra,
    }
    for name in ("BENCH_ARTIFACTS_DIR", "BENCH_WAREHOUSE"):
        env.pop(name, None)
    return env


@pytest.mark.slow
def test_an_agent_filling_the_disk_is_recorded_and_the_sweep_goes_on(tmp_path: Path) -> None:
    fill = "sh -c 'i=0; while :; do i=$((i+1)); head -c 1M /dev/zero > f$i || exit 3; done'"
    env = _bench_env(tmp_path, fill, BENCH_SANDBOX_DISK_MB="64")
    experiment = _experiment(tmp_path, ["synthetic", "command"])
    done = subprocess.run(
        [str(BENCH), "run", str(experiment), "--endurance-seconds", "2"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

    db = tmp_path / "data" / "warehouse.duckdb"
    _, rows = query(db, "select run_id, agent, status from fct_runs order by agent")
    runs = {agent: (run_id, status) for run_id, agent, status in rows}
    assert set(runs) == {"command", "synthetic"}, rows
    assert runs["synthetic"][1] == "completed"
    assert runs["command"][1] == "failed"
    record_path = tmp_path / "data" / "artifacts" / "records" / "agent_generation"
    record = json.loads((record_path / f"{runs['command'][0]}.json").read_text())
    assert "disk limit" in record["message"]
    assert json.loads(record["details"])["sandbox"]["limit_hit"] == "disk"
    workspace = tmp_path / "data" / "artifacts" / "runs" / runs["command"][0]
    held = disk_usage([workspace / "agent_generation" / "workspace"])
    assert held <= 64 * MIB + OVERRUN_BOUND
    assert _sandbox_owned(tmp_path / "data") == []


@pytest.mark.slow
def test_a_killed_bench_run_is_marked_failed_by_the_next_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wait = "sh -c 'echo started > started.txt; sleep 300'"
    env = _bench_env(tmp_path, wait)
    experiment = _experiment(tmp_path, ["command"])
    bench = subprocess.Popen(
        [str(BENCH), "run", str(experiment)],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    runs = tmp_path / "data" / "artifacts" / "runs"
    try:
        _wait_for(lambda: list(runs.glob("*/agent_generation/workspace/started.txt")), "the agent")
    finally:
        bench.send_signal(signal.SIGKILL)
        bench.wait()

    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))
    with dg.DagsterInstance.get() as instance:
        stuck = instance.get_runs(dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED]))
        assert len(stuck) == 1  # the attack: nobody will ever finish this run
        run_id = stuck[0].run_id
    assert _leftovers_of(bench.pid)[1]

    # The next start: any `bench run` (this one with a file that does not exist, so that it
    # stops right after its start-up).
    again = subprocess.run(
        [str(BENCH), "run", str(tmp_path / "missing.yaml")],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert again.returncode == 2, again.stderr
    assert "marked failed" in again.stderr and run_id in again.stderr
    with dg.DagsterInstance.get() as instance:
        run = instance.get_run_by_id(run_id)
        assert run is not None and run.status == dg.DagsterRunStatus.FAILURE
        failures = [
            e.message
            for e in instance.all_logs(run_id)
            if e.dagster_event and e.dagster_event.event_type_value == "PIPELINE_FAILURE"
        ]
        assert any(f"pid {bench.pid}" in (m or "") and "gone" in (m or "") for m in failures)
    assert _leftovers_of(bench.pid) == ([], [])
    assert _sandbox_owned(tmp_path / "data") == []


# A run worker as the default launcher starts one (its first engine event names its pid,
# exactly as dagster's `api execute_run` writes it), hanging in a step.
LAUNCHED_WORKER = """
import os, sys, time
import dagster as dg
from dagster._core.events import EngineEventData

@dg.asset
def hangs(context: dg.AssetExecutionContext) -> None:
    pid = os.getpid()
    context.instance.report_engine_event(
        f"Started process for run (pid: {pid}).", context.dagster_run, EngineEventData.in_process(pid)
    )
    open(sys.argv[1], "w").write(context.run_id)
    time.sleep(300)

with dg.DagsterInstance.get() as instance:
    dg.materialize([hangs], instance=instance)
"""


@pytest.mark.slow
def test_a_dead_launched_run_worker_is_marked_failed_by_the_next_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = _bench_env(tmp_path, "true")
    (tmp_path / "dagster_home").mkdir()
    marker = tmp_path / "run_id"
    worker = subprocess.Popen(
        [sys.executable, "-c", LAUNCHED_WORKER, str(marker)], cwd=tmp_path, env=env
    )
    try:
        _wait_for(lambda: marker.exists() or worker.poll() is not None, "the run worker")
        assert marker.exists(), "the run worker ended before its step ran"
    finally:
        worker.send_signal(signal.SIGKILL)
        worker.wait()
    run_id = marker.read_text()

    again = subprocess.run(
        [str(BENCH), "run", str(tmp_path / "missing.yaml")],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert again.returncode == 2, again.stderr
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))
    with dg.DagsterInstance.get() as instance:
        run = instance.get_run_by_id(run_id)
        assert run is not None and run.status == dg.DagsterRunStatus.FAILURE
    assert f"run worker process (pid {worker.pid}" in again.stderr


def test_a_build_filling_the_disk_is_a_readable_failure(
    root_bwrap: BubblewrapSandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bench_pipeline.build import build_project, toolchain_bin

    monkeypatch.setenv("BENCH_SANDBOX_DISK_MB", "16")
    fill = "i=0; while :; do i=$((i+1)); head -c 1M /dev/zero > f$i || exit 3; done"
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "package.json").write_text(json.dumps({"name": "x", "scripts": {"build": fill}}))
    (workspace / "index.html").write_text("<canvas></canvas>")

    result = build_project(workspace, root_bwrap, toolchain_bin=toolchain_bin(), timeout_s=120)

    assert not result.build_ok
    assert "disk limit hit" in result.message, result.message
    assert result.to_record()["limit_hit"] == "disk"
    assert disk_usage([workspace]) <= 16 * MIB + OVERRUN_BOUND

"""Reaping what a killed pipeline left, without touching a pipeline that still runs.

The leftovers of a dead owner are made for real (a cgroup named after an exited process,
processes running as sandbox uids, an /etc folder, files owned by a sandbox uid, a planted
symlink); the live pipeline is a real sandboxed run in another process.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench_pipeline.sandbox import processes, reap
from bench_pipeline.sandbox.bubblewrap import BubblewrapSandbox, kill_uid, processes_of_uid
from bench_pipeline.sandbox.cgroup import CgroupSet
from bench_pipeline.sandbox.reap import (
    etc_folders,
    owner_alive,
    reap_stale,
    stale_cgroups,
    start_time,
)
from tests.sandbox.helpers import quick

REPO = Path(__file__).resolve().parents[2]
ORPHAN_UIDS = (3_899_001, 3_899_002)
# A run that marks itself started, then waits for the test to say `go`.
LIVE_RUN = """
import sys
from pathlib import Path
from bench_pipeline.sandbox import SandboxPolicy, get_sandbox
ws = Path(sys.argv[1])
script = "echo mine > mine.txt; touch started; while [ ! -e go ]; do sleep 0.05; done"
result = get_sandbox("bubblewrap").run(["sh", "-c", script], ws, SandboxPolicy(timeout_s=120))
print(result.summary())
sys.exit(0 if result.ok else 1)
"""


def _dead_owner() -> tuple[int, int]:
    """The pid and start time of a process that has exited."""
    proc = subprocess.Popen(["sleep", "0"])
    started = start_time(proc.pid)  # readable until we reap it (a zombie keeps its stat)
    proc.wait()
    assert started is not None
    return proc.pid, started


def _wait_for(predicate, what: str, limit_s: float = 60.0) -> None:
    deadline = time.monotonic() + limit_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.05)


@pytest.fixture
def orphans() -> Iterator[tuple[int, int]]:
    yield ORPHAN_UIDS
    for uid in ORPHAN_UIDS:  # only if a test failed half-way: never leave them running
        kill_uid(uid)


def _start_orphan(prefix: list[str], uid: int) -> None:
    """`sleep 300` as `uid`, reparented to init like the survivors of a killed pipeline
    (its shell exits at once), so that nobody here waits for it."""
    command = [*prefix, "setpriv", "--clear-groups", "--inh-caps=-all"]
    command += [f"--reuid={uid}", f"--regid={uid}", "sleep", "300"]
    subprocess.run(
        ["sh", "-c", '"$@" >/dev/null 2>&1 &', "orphan", *command], check=True, timeout=30
    )


def test_the_reaper_knows_the_sandbox_uid_range() -> None:
    from bench_pipeline.sandbox import bubblewrap

    assert reap.UID_RANGE == bubblewrap.UID_RANGE


def test_owner_alive_checks_pid_and_start_time() -> None:
    me = os.getpid()
    assert owner_alive(me, start_time(me))
    assert not owner_alive(me, (start_time(me) or 0) + 1)  # a recycled pid is not the owner
    pid, started = _dead_owner()
    assert not owner_alive(pid, started)


def test_a_sandboxed_run_names_its_owner(bwrap: BubblewrapSandbox, workspace: Path) -> None:
    seen: list[str] = []

    def look(line: str) -> None:
        seen.extend(p.name for p in Path(tempfile.gettempdir()).glob("bench-sandbox-etc-*"))
        seen.extend(stale_cgroups())  # ours are live: never listed as stale

    result = bwrap.run(["echo", "hi"], workspace, quick(), on_stdout_line=look)
    assert result.ok, result.summary()
    mine = [n for n in seen if n.startswith(f"bench-sandbox-etc-{os.getpid()}-")]
    assert mine, seen
    assert not [n for n in seen if not n.startswith("bench-sandbox-etc-")]


def test_reaps_a_dead_owner_and_leaves_a_live_pipeline_alone(
    bwrap: BubblewrapSandbox,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    orphans: tuple[int, int],
) -> None:
    dead_pid, dead_start = _dead_owner()
    data = tmp_path / "data"
    # --- a second pipeline, alive, mid-run (started first: its own start-up reaps too) ---
    live_ws = data / "runs" / "r2" / "workspace"
    live_ws.mkdir(parents=True)
    live = subprocess.Popen(
        [sys.executable, "-c", LIVE_RUN, str(live_ws)],
        cwd=REPO,
        env={**os.environ, "BENCH_DATA_DIR": str(tmp_path / "elsewhere")},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    _wait_for(lambda: (live_ws / "started").exists(), "the live run to start")
    # --- the leftovers of a pipeline that was SIGKILLed (its owner is dead) ---
    monkeypatch.setattr(processes, "owner_tag", lambda: f"{dead_pid}-{dead_start}")
    cgroups = CgroupSet.create(max_processes=50, memory_bytes=256 * 2**20, cpus=None)
    monkeypatch.undo()
    if not cgroups.active:
        (live_ws / "go").touch()
        live.wait(timeout=120)
        pytest.skip(f"no cgroups here: {cgroups.unavailable}")
    in_cgroup, loose = orphans
    _start_orphan(cgroups.join_command(), in_cgroup)
    _start_orphan([], loose)
    _wait_for(lambda: processes_of_uid(in_cgroup) and processes_of_uid(loose), "the orphans")
    stale_etc = Path(
        tempfile.mkdtemp(prefix=f"bench-sandbox-etc-{dead_pid}-{dead_start}-{in_cgroup}-")
    )
    left = data / "runs" / "r1" / "workspace"
    (left / "sub").mkdir(parents=True)
    (left / "sub" / "file.js").write_text("x")
    secret = tmp_path / "host-secret"  # a host file the planted link points at
    secret.write_text("secret")
    os.chown(secret, 12345, 12345)
    (left / "link").symlink_to(secret)
    for path in (left, left / "sub", left / "sub" / "file.js"):
        os.chown(path, in_cgroup, in_cgroup)
    os.lchown(left / "link", in_cgroup, in_cgroup)

    try:
        live_uid = (live_ws / "mine.txt").stat().st_uid
        live_etc = [f for f in etc_folders() if f.uid == live_uid]
        assert live_etc and live_etc[0].live

        report = reap_stale([data])

        # The dead owner's leftovers are gone or given back (another pipeline starting on
        # this machine meanwhile may have reaped some of them first: that is fine too) ...
        assert not report.errors, report.errors
        assert not any(d.exists() for d in cgroups.dirs.values())
        assert not stale_etc.exists()
        assert processes_of_uid(in_cgroup) == [] and processes_of_uid(loose) == []
        assert report.chowned == 4
        for path in (left, left / "sub", left / "sub" / "file.js", left / "link"):
            assert path.lstat().st_uid == os.getuid(), path
        assert secret.stat().st_uid == 12345  # the link was not followed
        # ... and the live pipeline did not notice.
        assert live.poll() is None
        assert live_etc[0].path.exists()
        assert (live_ws / "mine.txt").stat().st_uid == live_uid
        assert processes_of_uid(live_uid)
    finally:
        (live_ws / "go").touch()
        out, errors = live.communicate(timeout=120)
    assert live.returncode == 0, (out, errors)
    # The live run ended normally: its files are the caller's now.
    assert (live_ws / "mine.txt").stat().st_uid == os.getuid()

"""`bench ui` started as a background job stops cleanly, with all it started, on SIGINT and
SIGTERM (a background job inherits SIGINT ignored, and `dagster dev` then ignores SIGTERM too)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from bench_pipeline import settings


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _webserver_answers(port: int) -> bool:
    try:
        with urllib.request.urlopen(
            f"http://127.0.0.1:{port}/graphql?query=%7B__typename%7D", timeout=5
        ) as response:
            return response.status == 200
    except (OSError, urllib.error.URLError):
        return False


def _stat(pid: int) -> tuple[str, int, int, int] | None:
    """(state, ppid, process group, start time) of a process, None when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[0], int(fields[1]), int(fields[2]), int(fields[19])


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _descendants(root: int) -> dict[int, tuple[int, int, str]]:
    """Every live process under `root`: pid → (process group, start time, command line)."""
    children: dict[int, list[int]] = {}
    stats = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (stat := _stat(int(entry.name))) is not None:
            stats[int(entry.name)] = stat
            children.setdefault(stat[1], []).append(int(entry.name))
    found: dict[int, tuple[int, int, str]] = {}
    todo = list(children.get(root, []))
    while todo:
        pid = todo.pop()
        state, _, group, start = stats[pid]
        if state != "Z":
            found[pid] = (group, start, _cmdline(pid))
        todo.extend(children.get(pid, []))
    return found


def _still_running(pid: int, start: int) -> bool:
    """The same process (not a reused pid) exists and is not a zombie."""
    stat = _stat(pid)
    return stat is not None and stat[3] == start and stat[0] != "Z"


def _group_members(group: int) -> list[int]:
    return [
        int(entry.name)
        for entry in Path("/proc").iterdir()
        if entry.name.isdigit()
        and (stat := _stat(int(entry.name))) is not None
        and stat[2] == group
        and stat[0] != "Z"
    ]


@pytest.mark.slow
@pytest.mark.parametrize("stop_signal", [signal.SIGINT, signal.SIGTERM], ids=["INT", "TERM"])
def test_bench_ui_in_the_background_stops_on_a_signal(
    tmp_path: Path, stop_signal: signal.Signals, dagster_webserver: Path
) -> None:
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copy(settings.project_root() / "dagster_home" / "dagster.yaml", home)
    port = _free_port()
    bench = Path(sys.executable).with_name("bench")
    log = tmp_path / "ui.log"
    # As a user's script does it: a non-interactive shell starts `bench ui &` (which makes
    # the job ignore SIGINT), shows what a background job ignores, waits for it and keeps
    # its exit code.
    script = (
        "grep ^SigIgn: /proc/self/status &\nwait\n"
        f'"{bench}" ui --port {port} > "{log}" 2>&1 &\n'
        'echo "pid=$!"\nwait $!\necho "rc=$?"\n'
    )
    shell = subprocess.Popen(
        ["bash", "-c", script],
        env={**os.environ, "DAGSTER_HOME": str(home), "BENCH_DATA_DIR": str(tmp_path / "data")},
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,  # the cleanup below can then reach the shell and bench
    )
    assert shell.stdout is not None
    started: dict[int, tuple[int, int, str]] = {}
    try:
        ignored = int(shell.stdout.readline().split()[1], 16)
        assert ignored & (1 << (signal.SIGINT - 1)), "the background job should ignore SIGINT"
        pid = int(shell.stdout.readline().removeprefix("pid="))

        deadline = time.monotonic() + 240  # only so that a broken start cannot hang the suite
        while not _webserver_answers(port):
            if shell.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the UI did not start:\n{log.read_text()[-3000:]}")
            time.sleep(1)
        started = _descendants(pid)
        commands = " ".join(command for _, _, command in started.values())
        # `dagster dev` and its daemon run through bench_pipeline/orchestration/daemon.py.
        parts = ("daemon dev", "dagster_webserver", "orchestration.daemon run", "code-server")
        for part in parts:
            assert part in commands, f"{part} should run under bench ui: {commands}"

        os.kill(pid, stop_signal)
        try:
            tail, _ = shell.communicate(timeout=300)  # a hang guard, not a speed requirement
        except subprocess.TimeoutExpired:
            pytest.fail(f"bench ui did not exit on {stop_signal.name}:\n{log.read_text()[-3000:]}")

        text = log.read_text()
        assert tail.strip() == "rc=0", f"{tail}\n{text[-3000:]}"
        assert "Dagster services shut down" in text  # dagster dev's own clean shutdown
        assert "did not stop in" not in text  # nothing had to be killed
        # A quiet start and stop: no traceback for the stop it was asked for, no warning
        # about the project's deliberate Dagster choices (docs/orchestration.md).
        assert "Traceback" not in text, text[-3000:]
        assert "BetaWarning" not in text and "SupersessionWarning" not in text, text[-3000:]
        assert _stat(pid) is None or _stat(pid)[0] == "Z"
        left = {p: c for p, (_, start, c) in started.items() if _still_running(p, start)}
        assert not left, f"still running after bench ui exited: {left}"
        for group in {group for group, _, _ in started.values()}:
            assert not _group_members(group), f"process group {group} still has members"
        assert not _webserver_answers(port)
        with socket.socket() as sock:  # a new UI could listen on the port again
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(("127.0.0.1", port))
    finally:
        for pid_left, (_, start, _) in started.items():
            if _still_running(pid_left, start):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid_left, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(shell.pid, signal.SIGKILL)
        shell.wait()

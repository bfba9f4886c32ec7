"""One evaluation in a child process group of its own, ended at its hard cap whatever happens.

The in-process watchdog (`evaluate._Watchdog`) kills the browser at the cap, but it cannot
make the Python process that drives the browser come back: a page that throws and logs
thousands of times per frame queues millions of events in Playwright's driver, and Python
goes on reading them for minutes after the browser is gone, deaf to SIGINT while it is
inside the driver's event loop. So the evaluation runs in a child, and this process, which
does nothing but wait, ends it:

- The parent (`evaluate_isolated`) makes a private scratch folder (mode 0700) holding the
  request, the result, the evaluation's work folder (the copy of the game, the Chromium
  profile) and the child's TMPDIR (where Playwright's driver and an unsandboxed Chromium
  write). It starts `python -m bench_pipeline.bot.child SCRATCH` as the leader of a new
  process group and waits until the cap. Then, or on any exception (KeyboardInterrupt
  included), it kills the group (the child and the Playwright driver), every process whose
  command line names the scratch folder (Chromium, the game's server), the processes of
  the sandbox uid the child drew, and removes the scratch folder and the child's generated
  /etc folder. Nothing of the evaluation outlives the call.
- The child (`child.py`) runs `evaluate_in_process` against the parent's clock and writes the
  evaluation as JSON. A thread in it kills its own process group if the parent goes away
  (a killed Dagster worker) or the cap passes, so it never outlives its parent either.

An evaluation ended by the parent is a result, not an error: every verdict INCONCLUSIVE,
saying the cap was reached before the bot could derive them.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

from bench_pipeline.bot.browser import BrowserMissingError
from bench_pipeline.bot.contract import TEST_IDS, Calibration, Evaluation, TestResult, Verdict
from bench_pipeline.bot.scratch import (
    CONSOLE_FILE,
    EVALUATION_FILE,
    OBSERVATIONS_FILE,
    kill_matching,
    write_atomic,
)
from bench_pipeline.bot.serve import TargetError, check_url, entry_point

SCRATCH_PREFIX = "bench-bot-run-"
REQUEST_FILE = "request.json"
RESULT_FILE = "result.json"
ERROR_FILE = "error.json"
# The child's own guard looks this often whether its parent is gone or the cap passed.
GUARD_EVERY_S = 0.2
_ETC_UID = re.compile(r"-(\d+)-[^-]*$")


class EvaluationCrashed(RuntimeError):
    """The bot's child process ended before it derived verdicts, for another reason than
    the cap (killed from outside, out of memory, a bug): worth another go."""


# Evaluations under way in this process: cleaned at exit if a caller never got to it.
_live: dict[Path, subprocess.Popen[bytes]] = {}
_live_lock = threading.Lock()


def evaluate_isolated(
    target: str, endurance_s: float, artifacts: Path | None, hard_cap_s: float
) -> Evaluation:
    """`evaluate_in_process` in a child process group that ends at `hard_cap_s` from now."""
    started = time.monotonic()
    deadline = started + hard_cap_s
    # A target the bot cannot run at all is said at once, without a child.
    if target.startswith(("http://", "https://")):
        check_url(target)
    else:
        entry_point(Path(target))
    # BENCH_BOT_SCRATCH_TAG names this process's evaluations among others on the machine
    # (the hostile tests look for their own leftovers while other evaluations run).
    tag = "".join(c for c in os.environ.get("BENCH_BOT_SCRATCH_TAG", "") if c.isalnum())[:16]
    scratch = Path(tempfile.mkdtemp(prefix=SCRATCH_PREFIX + (f"{tag}-" if tag else "")))
    proc: subprocess.Popen[bytes] | None = None
    child_tag: str | None = None
    timed_out = False
    ended = deadline
    outcome: tuple[dict[str, Any] | None, dict[str, Any] | None] = (None, None)
    try:
        (scratch / "tmp").mkdir()
        request = {
            "target": target,
            "endurance_s": endurance_s,
            "artifacts": str(artifacts) if artifacts is not None else None,
            "hard_cap_s": hard_cap_s,
            "started": started,
            "deadline": deadline,
            "parent": os.getpid(),
        }
        (scratch / REQUEST_FILE).write_text(json.dumps(request))
        proc = subprocess.Popen(
            [sys.executable, "-m", "bench_pipeline.bot.child", str(scratch)],
            stdin=subprocess.DEVNULL,
            # Whatever the child or the browser print goes to stderr: `bench evaluate
            # --json` keeps one JSON object alone on stdout.
            stdout=_stderr_fd(),
            process_group=0,
            close_fds=True,
        )
        with _live_lock:
            _live[scratch] = proc
        child_tag = _owner_tag(proc.pid)
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            timed_out = True
            # The evaluation ends now; what follows is clean-up.
            ended = time.monotonic()
            with contextlib.suppress(OSError):
                os.killpg(proc.pid, signal.SIGKILL)
    finally:
        # Also on KeyboardInterrupt: the caller's Ctrl-C leaves nothing behind, and a
        # second Ctrl-C waits until the clean-up is done (it is delivered right after).
        with _signals_held():
            outcome = _end(proc, scratch, child_tag)
    # The scratch folder is gone: what the child left there was read before.
    result, error = outcome
    if result is not None:
        return Evaluation.from_json(result)
    if error is not None:
        raise _error_from(error)
    if timed_out:
        evaluation = capped_evaluation(target, hard_cap_s, ended - started)
        if artifacts is not None:
            _write_capped_artifacts(artifacts, evaluation)
        return evaluation
    status = proc.returncode if proc is not None else None
    raise EvaluationCrashed(
        f"the bot's process ended (status {status}) before it derived verdicts for {target}"
    )


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM wait while the clean-up runs (in the main thread; elsewhere the
    signals go to the main thread anyway)."""
    held = {signal.SIGINT, signal.SIGTERM}
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def _end(
    proc: subprocess.Popen[bytes] | None, scratch: Path, child_tag: str | None
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """Kill everything the evaluation started and remove everything it wrote outside its
    evidence folder; returns the child's result and error as it left them (None: none).
    Idempotent; never raises."""
    if proc is not None:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            proc.wait(timeout=10)
    # Chromium and the game's server name the scratch folder (profile, served copy); an
    # unsandboxed Chromium runs in a process group of its own.
    kill_matching(str(scratch))
    if child_tag is not None:
        _remove_etc_folders(child_tag)
    outcome = (_read_json(scratch / RESULT_FILE), _read_json(scratch / ERROR_FILE))
    _remove(scratch)
    with _live_lock:
        _live.pop(scratch, None)
    return outcome


def _remove_etc_folders(child_tag: str) -> None:
    """The sandbox's /etc folders the child made (named after it), and their uid's processes."""
    from bench_pipeline.sandbox.processes import kill_uid
    from bench_pipeline.sandbox.reap import ETC_PREFIX

    for folder in Path(tempfile.gettempdir()).glob(f"{ETC_PREFIX}{child_tag}-*"):
        match = _ETC_UID.search(folder.name[len(ETC_PREFIX) + len(child_tag) :])
        if match and os.geteuid() == 0:
            kill_uid(int(match.group(1)))
        shutil.rmtree(folder, ignore_errors=True)


# Killed processes take a moment to die, and until then may still write into the folder
# being removed: it is tried again this often, this long.
REMOVE_TRIES, REMOVE_PAUSE_S = 30, 0.1


def _remove(folder: Path) -> None:
    for _ in range(REMOVE_TRIES):
        shutil.rmtree(folder, ignore_errors=True)
        if not folder.exists():
            return
        # Read-only folders a browser left: make them writable for the next try.
        for dirpath, dirnames, _files in os.walk(folder):
            for name in dirnames:
                with contextlib.suppress(OSError):
                    os.chmod(os.path.join(dirpath, name), 0o700)
        time.sleep(REMOVE_PAUSE_S)


def _owner_tag(pid: int) -> str | None:
    from bench_pipeline.sandbox.processes import start_time

    started = start_time(pid)
    return None if started is None else f"{pid}-{started}"


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _stderr_fd() -> int:
    try:
        return sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return subprocess.DEVNULL  # a captured stderr without a descriptor


def _error_from(error: dict[str, Any]) -> Exception:
    message = str(error.get("message") or "unknown error")
    kind = error.get("kind")
    if kind == "target":
        return TargetError(message)
    if kind == "browser":
        return BrowserMissingError(message)
    return EvaluationCrashed(f"the bot failed: {message}")


def capped_evaluation(target: str, hard_cap_s: float, duration_s: float) -> Evaluation:
    """The verdicts of an evaluation ended at its hard cap before it derived any."""
    reason = (
        f"the evaluation reached its hard cap of {hard_cap_s:.0f}s before the bot could "
        "derive verdicts (the page kept it busy): it was ended with its browser"
    )
    return Evaluation(
        target=target,
        calibration=Calibration(),
        results={test: TestResult(Verdict.INCONCLUSIVE, reason) for test in TEST_IDS},
        duration_s=duration_s,
        notes=[f"{duration_s:.2f}s {reason}"],
    )


def _write_capped_artifacts(folder: Path, evaluation: Evaluation) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    # No observation log was saved: one left by an earlier evaluation here would be
    # re-judged as if it were this one's.
    for name in (OBSERVATIONS_FILE, CONSOLE_FILE):
        (folder / name).unlink(missing_ok=True)
    write_atomic(folder / EVALUATION_FILE, json.dumps(evaluation.to_json(), indent=2).encode())


@atexit.register
def _end_all() -> None:
    with _live_lock:
        live = list(_live.items())
    for scratch, proc in live:
        _end(proc, scratch, _owner_tag(proc.pid))


# --- the child --------------------------------------------------------------------------


def guard_child(deadline: float, parent: int, scratch: Path) -> None:
    """Kill this process group when the cap has passed; when the parent is gone (killed
    with SIGKILL: it cleans up no more), do its clean-up first."""

    def watch() -> None:
        while True:
            if os.getppid() != parent:
                _orphaned(scratch)
            if time.monotonic() >= deadline:
                os.killpg(0, signal.SIGKILL)
            time.sleep(GUARD_EVERY_S)

    threading.Thread(target=watch, name="bench-bot-guard", daemon=True).start()


# Taken by the thread that cleans up for a child whose parent is gone, and never given
# back: the process ends when that thread is done, and no other thread may end it before.
_orphan_lock = threading.Lock()


def end_child(code: int, parent: int, scratch: Path) -> NoReturn:
    """How the child ends, from its main thread: through the orphan's clean-up when the
    parent is gone (waiting for the guard's, if that began first); else at once.

    Not a normal interpreter exit: a Playwright driver killed at the cap can leave its
    event loop waiting on nothing. The parent ends what is left of the group."""
    if os.getppid() != parent or _orphan_lock.locked():
        _orphaned(scratch)
    os._exit(code)


def _orphaned(scratch: Path) -> NoReturn:
    """The parent's `_end`, done by the child for itself: everything else of its group and
    everything naming the scratch folder killed, the /etc folder and the scratch removed."""
    from bench_pipeline.sandbox.processes import owner_tag

    _orphan_lock.acquire()  # a second caller waits here until the first ends the process

    me = os.getpid()
    group = os.getpgid(0)
    for pid_dir in Path("/proc").glob("[0-9]*"):
        pid = int(pid_dir.name)
        with contextlib.suppress(OSError):
            if pid != me and os.getpgid(pid) == group:
                os.kill(pid, signal.SIGKILL)
    kill_matching(str(scratch), spare=me)
    _remove_etc_folders(owner_tag())
    _remove(scratch)
    os._exit(1)

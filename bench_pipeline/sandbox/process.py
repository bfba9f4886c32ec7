"""Run one process tree under a time limit while reading its output with caps.

Shared by every back end: `OutputCollector` applies the output rules (what is kept, what is
counted, the line hook, the transcript file) to chunks of bytes wherever they come from (a
pipe here, the docker attach stream there); `run_process` starts a local process in its own
session, feeds the collector from both pipes with one `selectors` loop (no reader threads,
so a hook stop or a timeout is handled where the kill happens) and kills the whole process
group when the time is up, the hook asks for it or the output explodes.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import BinaryIO, Literal

from bench_pipeline.sandbox.base import LineHook, SandboxPolicy, SandboxResult

Stream = Literal["stdout", "stderr"]

# Combined stdout+stderr after which a program is killed whatever its cap: gigabytes of
# output are a runaway, and reading them to the end would take minutes.
TOTAL_OUTPUT_KILL_BYTES = 64 * 1024 * 1024
# Each stream is killed once it wrote this many times its cap (the rest would be dropped
# anyway; a little slack lets a chatty but finite program finish).
OUTPUT_KILL_FACTOR = 4
# The transcript file (stdout_file) keeps at most this many times the cap.
TRANSCRIPT_FACTOR = 20
# A "line" longer than this is handed to the hook truncated: a program printing 5 GB without
# a newline must not make us buffer 5 GB.
MAX_LINE_BYTES = 1024 * 1024
# Between SIGTERM to the group and SIGKILL.
KILL_GRACE_S = 0.5
# After the main process exited, how long descendants still holding the pipes may keep
# writing before we stop reading (they are killed first; this only bounds a stuck read).
DRAIN_AFTER_EXIT_S = 2.0
# A process that survives SIGKILL this long is stuck in the kernel; we stop waiting for it.
STUCK_AFTER_KILL_S = 10.0
READ_CHUNK = 64 * 1024


def signal_exit_code(returncode: int) -> int:
    """Shell convention for a signal death (128 + n), as bwrap and docker report it too."""
    return 128 - returncode if returncode < 0 else returncode


class _KeptBytes:
    """The first half of the cap and the latest bytes up to the other half.

    Keeping both ends matters for logs: the command that failed is at the start, the
    compiler error usually at the end.
    """

    def __init__(self, cap: int) -> None:
        self.cap = max(0, cap)
        # Room for the "[... N bytes dropped ...]" marker so that the result stays <= cap.
        self._marker_room = 64 if self.cap >= 256 else 0
        self.head_cap = self.cap // 2 if self._marker_room else self.cap
        self.tail_cap = max(0, self.cap - self.head_cap - self._marker_room)
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def add(self, data: bytes) -> None:
        room = self.head_cap - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if not data:
            return
        if self.tail_cap == 0:
            self.dropped += len(data)
            return
        self.tail += data
        excess = len(self.tail) - self.tail_cap
        if excess > 0:
            del self.tail[:excess]
            self.dropped += excess

    def text(self) -> str:
        if not self.dropped:
            return (bytes(self.head) + bytes(self.tail)).decode("utf-8", errors="replace")
        marker = f"\n[... {self.dropped} bytes dropped ...]\n".encode()
        kept = bytes(self.head) + marker + bytes(self.tail)
        return kept[: self.cap].decode("utf-8", errors="replace")


class OutputCollector:
    """Applies a policy's output rules to the bytes a program writes, in arrival order.

    `feed` returns a reason to kill the program (the hook's stop string, or "output" when it
    wrote far more than anyone will read) or None to go on.
    """

    def __init__(
        self,
        policy: SandboxPolicy,
        on_stdout_line: LineHook | None = None,
        stdout_file: Path | None = None,
    ) -> None:
        cap = policy.output_cap_bytes
        self.kill_bytes = policy.output_kill_bytes or OUTPUT_KILL_FACTOR * cap
        self.total_kill_bytes = max(TOTAL_OUTPUT_KILL_BYTES, self.kill_bytes)
        self.kept: dict[Stream, _KeptBytes] = {"stdout": _KeptBytes(cap), "stderr": _KeptBytes(cap)}
        self.counts: dict[Stream, int] = {"stdout": 0, "stderr": 0}
        self.on_stdout_line = on_stdout_line
        self.stopped: str | None = None
        self.limit_hit: str | None = None
        self._pending = bytearray()  # an incomplete stdout line
        self._skip_rest_of_line = False  # the current line was already handed over truncated
        self._transcript: BinaryIO | None = None
        self._transcript_left = TRANSCRIPT_FACTOR * cap
        if stdout_file is not None:
            stdout_file.parent.mkdir(parents=True, exist_ok=True)
            self._transcript = stdout_file.open("ab")

    # Lines are only split when someone wants them: `yes` must not cost a Python call per line
    # when there is neither a hook nor a transcript.
    @property
    def _wants_lines(self) -> bool:
        return self.on_stdout_line is not None or self._transcript is not None

    def feed(self, stream: Stream, data: bytes) -> str | None:
        if not data:
            return None
        self.counts[stream] += len(data)
        self.kept[stream].add(data)
        if stream == "stdout" and self._wants_lines and self.stopped is None:
            self._feed_lines(data)
            if self.stopped is not None:
                return self.stopped
        if self.limit_hit is None and (
            self.counts[stream] > self.kill_bytes
            or self.counts["stdout"] + self.counts["stderr"] >= self.total_kill_bytes
        ):
            self.limit_hit = "output"
            return "output"
        return None

    def _feed_lines(self, data: bytes) -> None:
        start = 0
        while self.stopped is None:
            newline = data.find(b"\n", start)
            if newline < 0:
                self._add_pending(data[start:])
                return
            self._add_pending(data[start:newline])
            line, self._pending = bytes(self._pending), bytearray()
            skipped, self._skip_rest_of_line = self._skip_rest_of_line, False
            if not skipped:
                self._line(line)
            start = newline + 1

    def _add_pending(self, piece: bytes) -> None:
        if self._skip_rest_of_line:
            return
        self._pending += piece
        if len(self._pending) > MAX_LINE_BYTES:
            line = bytes(self._pending[:MAX_LINE_BYTES])
            self._pending = bytearray()
            self._skip_rest_of_line = True
            self._line(line)

    def _line(self, line: bytes) -> None:
        if self._transcript is not None and self._transcript_left > 0:
            record = line + b"\n"
            if len(record) > self._transcript_left:
                record = b"[transcript truncated: output cap reached]\n"
                self._transcript_left = 0
            else:
                self._transcript_left -= len(record)
            self._transcript.write(record)
            self._transcript.flush()  # a live transcript: readers tail it while the run goes on
        if self.on_stdout_line is not None:
            reason = self.on_stdout_line(line.decode("utf-8", errors="replace"))
            if reason:
                self.stopped = reason

    def finish(self) -> None:
        """End of output: a last line without a newline is still a line."""
        if self._pending and not self._skip_rest_of_line and self.stopped is None:
            line, self._pending = bytes(self._pending), bytearray()
            self._line(line)
        if self._transcript is not None:
            self._transcript.close()
            self._transcript = None

    def fill(self, result: SandboxResult) -> SandboxResult:
        result.stdout = self.kept["stdout"].text()
        result.stderr = self.kept["stderr"].text()
        result.stdout_bytes = self.counts["stdout"]
        result.stderr_bytes = self.counts["stderr"]
        result.stopped = result.stopped or self.stopped
        result.limit_hit = result.limit_hit or self.limit_hit
        return result


def kill_group(pgid: int, sig: signal.Signals) -> None:
    # The group may already be gone (everything exited): nothing to do then.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def run_process(
    argv: Sequence[str],
    *,
    backend: str,
    policy: SandboxPolicy,
    env: Mapping[str, str],
    cwd: Path | None = None,
    on_stdout_line: LineHook | None = None,
    stdout_file: Path | None = None,
    display_argv: Sequence[str] | None = None,
    extra_kill: Callable[[], None] | None = None,
) -> SandboxResult:
    """Run `argv` as its own process group; kill the group on timeout, hook stop or output.

    `display_argv` is what the result reports (the user's command, not the wrapper around
    it); `extra_kill` is called with every SIGKILL, for back ends that can reach processes
    outside the group (a cgroup sweep). Back ends check for survivors themselves afterwards.
    """
    shown = list(display_argv if display_argv is not None else argv)
    collector = OutputCollector(policy, on_stdout_line, stdout_file)
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=dict(env),
            start_new_session=True,  # own session and group: one killpg reaches the tree
            close_fds=True,
        )
    except OSError as exc:
        collector.finish()
        result = SandboxResult(backend, shown, None, time.monotonic() - start, error=str(exc))
        return collector.fill(result)

    pgid = proc.pid  # start_new_session: the child leads its own group
    assert proc.stdout is not None and proc.stderr is not None
    selector = selectors.DefaultSelector()
    for pipe, name in ((proc.stdout, "stdout"), (proc.stderr, "stderr")):
        os.set_blocking(pipe.fileno(), False)
        selector.register(pipe, selectors.EVENT_READ, name)

    deadline = start + policy.timeout_s
    timed_out = False
    kill_reason: str | None = None
    term_sent_at: float | None = None
    kill_sent_at: float | None = None
    exited_at: float | None = None

    def begin_kill(reason: str) -> None:
        nonlocal kill_reason, term_sent_at
        if kill_reason is None:
            kill_reason = reason
            term_sent_at = time.monotonic()
            kill_group(pgid, signal.SIGTERM)

    def hard_kill() -> None:
        nonlocal kill_sent_at
        kill_sent_at = time.monotonic()
        kill_group(pgid, signal.SIGKILL)
        if extra_kill is not None:
            extra_kill()

    try:
        while True:
            now = time.monotonic()
            if exited_at is None and proc.poll() is not None:
                exited_at = now
                # The leader is gone; whatever it left in its group dies with it (a sandboxed
                # command does not get to leave daemons behind).
                kill_group(pgid, signal.SIGKILL)
            if kill_reason is None and now >= deadline and exited_at is None:
                timed_out = True
                begin_kill("timeout")
            if (
                term_sent_at is not None
                and kill_sent_at is None
                and (exited_at is not None or now - term_sent_at >= KILL_GRACE_S)
            ):
                hard_kill()
            if not selector.get_map():
                if exited_at is not None:
                    break
                # Both pipes closed but the leader still runs: just wait for it.
                wait_s = 0.05
            else:
                wait_s = 0.25
            if exited_at is not None and now - exited_at >= DRAIN_AFTER_EXIT_S:
                break
            if kill_sent_at is not None and now - kill_sent_at >= STUCK_AFTER_KILL_S:
                break
            limit = min(wait_s, max(0.0, deadline - now)) if kill_reason is None else wait_s
            if not selector.get_map():
                # Output is over; wait for the exit itself (returns as soon as it happens).
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=limit)
                continue
            for key, _ in selector.select(timeout=limit):
                try:
                    data = os.read(key.fd, READ_CHUNK)
                except BlockingIOError:
                    continue
                if not data:
                    selector.unregister(key.fileobj)
                    continue
                reason = collector.feed(key.data, data)
                if reason is not None and exited_at is None:
                    begin_kill(reason)
    finally:
        selector.close()
        proc.stdout.close()
        proc.stderr.close()
        if proc.poll() is None:
            hard_kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=STUCK_AFTER_KILL_S)
        collector.finish()

    duration = time.monotonic() - start
    killed = kill_reason is not None
    exit_code = None if killed or proc.returncode is None else signal_exit_code(proc.returncode)
    result = SandboxResult(backend, shown, exit_code, duration, timed_out=timed_out)
    if proc.returncode is None:
        result.error = "the process did not die after SIGKILL (stuck in the kernel?)"
    return collector.fill(result)

"""What the sandbox knows of the host's processes: those of a uid (and how to kill them
all), a process's start time, and this process's owner tag.

Its own module because the sandbox back end, the cgroups and the reaper of a crashed
run's leftovers all need it, and the reaper is itself used by the back end.
"""

from __future__ import annotations

import functools
import os
import signal
import time
from pathlib import Path


def _process_uid(pid: str) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("Uid:"):
                    return int(line.split()[1])  # real uid
    except (OSError, ValueError, IndexError):
        return None
    return None


def processes_of_uid(uid: int) -> list[int]:
    return [int(pid) for pid in os.listdir("/proc") if pid.isdigit() and _process_uid(pid) == uid]


def kill_uid(uid: int, wait_s: float = 2.0) -> bool:
    """SIGKILL every process running as `uid`; True when none is left.

    A pidfd pins the process between checking its uid and signalling it, so a recycled pid
    (a fork bomb churns through them) can never make us kill a stranger.
    """
    deadline = time.monotonic() + wait_s
    while True:
        pids = processes_of_uid(uid)
        if not pids:
            return True
        for pid in pids:
            try:
                fd = os.pidfd_open(pid)
            except OSError:
                continue
            try:
                if _process_uid(str(pid)) == uid:
                    signal.pidfd_send_signal(fd, signal.SIGKILL)
            except OSError:
                pass
            finally:
                os.close(fd)
        if time.monotonic() >= deadline:
            return not processes_of_uid(uid)
        time.sleep(0.02)


def start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot, None when it does not exist."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after the last ')'.
    fields = raw[raw.rfind(")") + 2 :].split()
    try:
        return int(fields[19])  # field 22 overall
    except (IndexError, ValueError):
        return None


@functools.cache
def owner_tag() -> str:
    """`<pid>-<start>` of this process, for the names of what a run creates."""
    return f"{os.getpid()}-{start_time(os.getpid()) or 0}"

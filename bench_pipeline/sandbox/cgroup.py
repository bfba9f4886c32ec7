"""A private cgroup (v1) per sandboxed run: hard pids/memory/CPU limits for the whole tree.

Rlimits are per process (RLIMIT_DATA, RLIMIT_FSIZE) or per uid (RLIMIT_NPROC); a cgroup
bounds the *sum* over every process of the run - 256 processes of 4 GB each are not a
4 GB limit - and lists every process of the run, however it detached itself, so it can be
killed to the last one. It is an extra layer: when the host does not let us create cgroups
(no root, cgroup v2 without delegation, read-only /sys/fs/cgroup) the sandbox still works
with rlimits and a dedicated uid, and says so in `CgroupSet.unavailable`.

The run's cgroups are created *inside the cgroups we already are in* (read from
/proc/self/cgroup), so whatever limits the host put on us still apply to the sandbox.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shlex
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench_pipeline.sandbox import processes

CGROUP_ROOT = Path("/sys/fs/cgroup")
CONTROLLERS = ("pids", "memory", "cpu", "freezer")
_counter = itertools.count()


def _v1_mounts() -> dict[str, tuple[Path, str]]:
    """controller -> (mount point, root of the hierarchy seen through that mount)."""
    mounts: dict[str, tuple[Path, str]] = {}
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return mounts
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3 or tail[0] != "cgroup":
            continue
        for option in tail[2].split(","):
            if option in CONTROLLERS:
                mounts[option] = (Path(fields[4]), fields[3])
    return mounts


def _own_cgroups() -> dict[str, str]:
    """controller -> our cgroup path in that hierarchy (v1 lines of /proc/self/cgroup)."""
    own: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return own
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        for controller in parts[1].split(","):
            if controller in CONTROLLERS:
                own[controller] = parts[2]
    return own


def _write(path: Path, value: str) -> None:
    path.write_text(value)


def _read_int_field(path: Path, key: str) -> int:
    """A `key N` line of a cgroup stats file (pids.events, memory.oom_control); 0 if absent."""
    try:
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    except (OSError, ValueError):
        pass
    return 0


@dataclass
class CgroupSet:
    """The cgroups of one run, one per controller we could create (maybe none)."""

    dirs: dict[str, Path] = field(default_factory=dict)
    unavailable: str | None = None  # why there are no (or fewer) cgroups, for the docs/logs

    @classmethod
    def create(
        cls,
        *,
        max_processes: int,
        memory_bytes: int,
        cpus: float | None,
        enabled: bool = True,
    ) -> CgroupSet:
        if not enabled:
            return cls(unavailable="cgroups disabled for this sandbox")
        mounts, own = _v1_mounts(), _own_cgroups()
        if "pids" not in mounts:
            return cls(unavailable="no cgroup v1 pids hierarchy mounted")
        # The owner (pid and start time) in the name lets the next start reap it after a
        # crash without touching a live pipeline's cgroups (sandbox/reap.py).
        name = (
            f"bench-sandbox-{processes.owner_tag()}-{next(_counter)}-{time.monotonic_ns() % 10**9}"
        )
        made = cls()
        for controller in CONTROLLERS:
            if controller not in mounts or (controller == "cpu" and not cpus):
                continue
            mount, root = mounts[controller]
            ours = own.get(controller, "/")
            relative = os.path.relpath(ours, root) if ours.startswith(root) else "."
            directory = (mount / relative / name).resolve()
            try:
                directory.mkdir()
            except OSError as exc:
                if controller == "pids":
                    return cls(unavailable=f"cannot create a cgroup in {directory.parent}: {exc}")
                continue  # the others are extras
            made.dirs[controller] = directory
            try:
                made._configure(controller, directory, max_processes, memory_bytes, cpus)
            except OSError as exc:
                made.remove()
                return cls(unavailable=f"cannot configure cgroup {directory}: {exc}")
        return made

    @staticmethod
    def _configure(
        controller: str, directory: Path, max_processes: int, memory_bytes: int, cpus: float | None
    ) -> None:
        if controller == "pids":
            _write(directory / "pids.max", str(max_processes))
        elif controller == "memory":
            _write(directory / "memory.limit_in_bytes", str(memory_bytes))
            swap = directory / "memory.memsw.limit_in_bytes"
            if swap.exists():  # no swapping past the limit either (absent without swap accounting)
                _write(swap, str(memory_bytes))
        elif controller == "cpu" and cpus:
            period = 100_000
            _write(directory / "cpu.cfs_period_us", str(period))
            _write(directory / "cpu.cfs_quota_us", str(int(period * cpus)))

    @property
    def active(self) -> bool:
        return "pids" in self.dirs

    def join_command(self) -> list[str]:
        """A prefix that moves itself into the run's cgroups then execs the rest of argv.

        Joining in the child before anything else runs (rather than writing its pid from
        here after it started) means no process of the run is ever outside the cgroups;
        a shell does it without preexec_fn, which is unsafe in a threaded parent.
        """
        if not self.dirs:
            return []
        joins = " && ".join(
            f"echo $$ > {shlex.quote(str(d / 'cgroup.procs'))}" for d in self.dirs.values()
        )
        script = f'{joins} || {{ echo "sandbox: cannot join cgroup" >&2; exit 125; }}; exec "$@"'
        return ["/bin/sh", "-c", script, "bench-sandbox-join"]

    def pids(self) -> list[int]:
        directory = self.dirs.get("pids")
        if directory is None:
            return []
        try:
            return [int(p) for p in (directory / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return []

    def kill_all(self, wait_s: float = 2.0) -> bool:
        """SIGKILL every process of the run; True when none is left alive.

        A killed process leaves cgroup.procs as it exits; its zombie is reaped by its parent
        (in the sandbox: the dying pid namespace's init), which the caller may wait for by uid.

        The freezer (when we have it) stops a fork bomb from forking while we kill it.
        """
        freezer = self.dirs.get("freezer")
        deadline = time.monotonic() + wait_s
        while True:
            pids = self.pids()
            if not pids:
                return True
            if pids:
                if freezer is not None:
                    with contextlib.suppress(OSError):
                        _write(freezer / "freezer.state", "FROZEN")
                for pid in pids:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(pid, signal.SIGKILL)  # a member's pid cannot be recycled
                if freezer is not None:  # SIGKILL is delivered once the tasks are thawed
                    with contextlib.suppress(OSError):
                        _write(freezer / "freezer.state", "THAWED")
            if time.monotonic() >= deadline:
                return not self.pids()
            time.sleep(0.02)

    def limit_hit(self) -> str | None:
        """'memory' when the OOM killer struck inside the run, 'processes' when a fork failed."""
        memory = self.dirs.get("memory")
        if memory is not None and _read_int_field(memory / "memory.oom_control", "oom_kill"):
            return "memory"
        pids = self.dirs.get("pids")
        if pids is not None and _read_int_field(pids / "pids.events", "max"):
            return "processes"
        return None

    def peak_memory_bytes(self) -> int | None:
        memory = self.dirs.get("memory")
        if memory is None:
            return None
        try:
            return int((memory / "memory.max_usage_in_bytes").read_text())
        except (OSError, ValueError):
            return None

    def remove(self) -> None:
        """Kill what is left and delete the cgroups (rmdir fails while a member lives)."""
        if not self.dirs:
            return
        self.kill_all()
        for directory in self.dirs.values():
            for _ in range(50):
                try:
                    directory.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)
        self.dirs = {}

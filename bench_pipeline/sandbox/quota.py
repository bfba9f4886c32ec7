"""A disk quota the kernel keeps: one size- and inode-limited tmpfs per sandboxed run.

The host's ext4 root has no quota support, and a watchdog that walks paths can be fooled
(a path too long to open counted as empty: 1.5 GB under a 1 GB quota; 400,000 empty files
counted as 8.7 MB). So, when we are root, each run gets a tmpfs mounted with
`size=<quota>,nr_inodes=<file quota>`: the kernel refuses the write past either (ENOSPC),
whatever the names, depth or sparseness. How it is laid out:

    <tmp>/bench-sandbox-quota-<pid>-<start>-<uid>-XXXX/    root-only, the tmpfs
        0/    bind-mounted over the workspace (host path unchanged, so the run and anyone
              watching it see the live files there)
        1/    bind-mounted over policy.writable[0] (an agent's HOME), ...

All the run's folders share the one tmpfs, so the quota is their sum. Before the run the
folders' contents are copied in (owned by the sandbox uid, modification times kept); after
it the binds are unmounted and the contents synced back out (owned by the caller) through
`fdtree.sync_tree`, which leaves untouched files alone, bounded by the same quota counted by *apparent* size (a sparse file
costs its full length: that is what every later copy of it would write), the same number
of entries, and a deadline. The host folders never hold a file of the sandbox uid.

A killed pipeline leaves the mounts behind; `reap_mounts()` (run by the next start, see
reap.py) copies such a run's files out the same way and unmounts them. The tmpfs lives in
RAM: a run may hold `quota` bytes more memory, so its memory cgroup is raised by as much.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench_pipeline.sandbox import fdtree, processes
from bench_pipeline.sandbox.base import SandboxResult

QUOTA_PREFIX = "bench-sandbox-quota-"
# The tmpfs's source name in /proc/self/mountinfo: owner (pid, start) and uid.
SOURCE_PREFIX = "bench-quota-"
_SOURCE = re.compile(r"^bench-quota-(\d+)-(\d+)-(\d+)$")
# Copying the files back out may take this long at most (a full 1 GiB tmpfs copies in ~1 s).
COPY_OUT_S = 300.0
MIB = 1024 * 1024


class QuotaError(RuntimeError):
    """The quota filesystem could not be set up (the message says why)."""


def mount_available() -> bool:
    """tmpfs quota mounts need root (CAP_SYS_ADMIN) and the `mount` tool."""
    return os.geteuid() == 0 and shutil.which("mount") is not None


def _run(argv: list[str]) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    if done.returncode != 0:
        raise QuotaError(f"{' '.join(argv[:3])} failed: {done.stderr.strip() or done.returncode}")


def _umount(path: Path | str) -> None:
    """Unmount; lazily when busy (a process of ours still holding a descriptor)."""
    done = subprocess.run(["umount", str(path)], capture_output=True, timeout=60, check=False)
    if done.returncode != 0:
        subprocess.run(["umount", "-l", str(path)], capture_output=True, timeout=60, check=False)


@dataclass
class CopyOut:
    """What the copy back out of the quota filesystem did, over all folders."""

    entries: int = 0
    bytes: int = 0
    limit: str | None = None
    dropped: list[str] = field(default_factory=list)
    dropped_count: int = 0
    errors: list[str] = field(default_factory=list)

    def add(self, report: fdtree.CopyReport) -> None:
        self.entries += report.entries
        self.bytes += report.bytes
        self.limit = self.limit or report.limit
        self.dropped += report.dropped[: fdtree.MAX_ERRORS - len(self.dropped)]
        self.dropped_count += report.dropped_count
        self.errors += report.errors


class QuotaMount:
    """The run's folders on one tmpfs of `quota_bytes` and `max_entries` inodes.

    `inside` owns the files during the run (the sandbox uid), `outside` after it. Use as a
    context manager; `full()` tells whether the kernel is refusing writes now, `copy_out`
    is filled on exit.
    """

    def __init__(
        self,
        folders: Sequence[Path],
        quota_bytes: int,
        max_entries: int,
        *,
        inside: tuple[int, int],
        outside: tuple[int, int],
        uid_tag: int,
        temp_dir: Path | None = None,
    ) -> None:
        self.folders = [Path(f) for f in folders]
        self.quota_bytes = quota_bytes
        self.max_entries = max_entries
        self.inside = inside
        self.outside = outside
        self.source = f"{SOURCE_PREFIX}{processes.owner_tag()}-{uid_tag}"
        self.prefix = f"{QUOTA_PREFIX}{processes.owner_tag()}-{uid_tag}-"
        self.temp_dir = temp_dir
        self.staging: Path | None = None
        self.mounted = False
        self.bound: list[Path] = []
        self.copy_in = CopyOut()
        self.copy_out = CopyOut()

    def __enter__(self) -> QuotaMount:
        try:
            self._set_up()
        except BaseException:
            self._tear_down(copy_back=False)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._tear_down(copy_back=True)

    def _set_up(self) -> None:
        self.staging = Path(tempfile.mkdtemp(prefix=self.prefix, dir=self.temp_dir))
        # Every folder and the tmpfs's root take an inode too.
        inodes = self.max_entries + len(self.folders) + 1
        options = f"size={self.quota_bytes},nr_inodes={inodes},mode=0700"
        _run(["mount", "-t", "tmpfs", "-o", options, self.source, str(self.staging)])
        self.mounted = True
        for index, folder in enumerate(self.folders):
            inner = self.staging / str(index)
            inner.mkdir()
            with fdtree.open_dir(folder) as src, fdtree.open_dir(inner) as dst:
                info = os.fstat(src)
                os.fchmod(dst, info.st_mode & 0o777)
                os.fchown(dst, *self.inside)
                report = fdtree.copy_tree(src, dst, fdtree.CopyLimits(owner=self.inside))
            self.copy_in.add(report)
            if report.errors:
                # ENOSPC: the folders already hold more than the quota before the run.
                raise QuotaError(
                    f"{folder} does not fit its {self.quota_bytes // MIB} MiB / "
                    f"{self.max_entries} file disk quota: {report.errors[0]}"
                )
            _run(["mount", "--bind", str(inner), str(folder)])
            self.bound.append(folder)

    def full(self) -> bool:
        """True when the kernel refuses writes now: no block or no inode left."""
        if not self.mounted or self.staging is None:
            return False
        try:
            stats = os.statvfs(self.staging)
        except OSError:
            return False
        return stats.f_bfree == 0 or stats.f_ffree == 0

    def _tear_down(self, *, copy_back: bool) -> None:
        """Unmount the binds, sync the folders back out, unmount the tmpfs; at most once."""
        bound, self.bound = self.bound, []
        for folder in reversed(bound):
            _umount(folder)
        staging, mounted = self.staging, self.mounted
        self.staging, self.mounted = None, False
        if copy_back and bound and staging is not None and mounted:
            self.copy_out = copy_back_out(
                staging, self.folders[: len(bound)], self.quota_bytes, self.max_entries,
                self.outside,
            )  # fmt: skip
        if mounted and staging is not None:
            _umount(staging)
        if staging is not None:
            with contextlib.suppress(OSError):
                staging.rmdir()

    def message(self) -> str:
        return (
            f"the writable folders filled their {self.quota_bytes / MIB:.0f} MiB disk quota "
            f"({self.max_entries} files and folders at most; kept by the kernel)"
        )


def copy_back_out(
    staging: Path,
    folders: Sequence[Path],
    quota_bytes: int,
    max_entries: int,
    owner: tuple[int, int],
) -> CopyOut:
    """Make each folder hold what its copy on the tmpfs (`staging/<index>`) holds, bounded
    in apparent bytes, entries and time over all folders together."""
    total = CopyOut()
    deadline = time.monotonic() + COPY_OUT_S
    for index, folder in enumerate(folders):
        inner = staging / str(index)
        try:
            with fdtree.open_dir(folder) as dst, fdtree.open_dir(inner) as src:
                report = fdtree.sync_tree(
                    src,
                    dst,
                    fdtree.CopyLimits(
                        max_bytes=quota_bytes - total.bytes,
                        max_entries=max_entries - total.entries,
                        deadline=deadline,
                        owner=owner,
                    ),
                )
        except OSError as exc:
            total.errors.append(f"{folder}: {exc.strerror or exc}")
            continue
        total.add(report)
    return total


def report_copy_out(result: SandboxResult, mount: QuotaMount) -> None:
    """What did not come back out of the quota filesystem is part of the result: a file
    past the quota by apparent size (sparse files count whole) is a disk limit hit."""
    copied = mount.copy_out
    if copied.limit or copied.dropped_count:
        shown = ", ".join(copied.dropped[:5])
        more = copied.dropped_count - len(copied.dropped[:5])
        line = (
            f"sandbox: {copied.dropped_count} file(s) not copied back out of the disk quota "
            f"({copied.limit or 'special files'} limit; sparse files count their full length)"
            f": {shown}" + (f" and {more} more" if more > 0 else "")
        )
        result.stderr = f"{result.stderr}\n{line}".lstrip("\n")
        if copied.limit in ("bytes", "entries", "time"):
            # What the run wrote is not all there: it ends like a run killed at its quota.
            result.limit_hit, result.exit_code = result.limit_hit or "disk", None
    if copied.errors:
        # The program ran: what could not be copied back is part of its result, not a
        # failure to start it (SandboxResult.error).
        line = f"sandbox: {len(copied.errors)} entries could not be copied back out: "
        result.stderr = f"{result.stderr}\n{line}{'; '.join(copied.errors[:3])}".lstrip("\n")


# --------------------------------------------------------------------- after a crash


@dataclass
class StaleMount:
    source: str
    root: str  # the mounted subfolder of the tmpfs ("/" for the tmpfs itself, "/0" ...)
    mount_point: Path


def _unescape(field_text: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field_text)


def quota_mounts() -> list[StaleMount]:
    """Every mount of a run's quota tmpfs (the tmpfs and its binds) in this namespace."""
    found = []
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return []
    for line in lines:
        head, _, tail = line.partition(" - ")
        fields, tail_fields = head.split(), tail.split()
        if len(fields) < 5 or len(tail_fields) < 2 or tail_fields[0] != "tmpfs":
            continue
        if _SOURCE.match(tail_fields[1]):
            found.append(
                StaleMount(tail_fields[1], _unescape(fields[3]), Path(_unescape(fields[4])))
            )
    return found


def reap_mounts(owner_alive: object) -> tuple[list[str], list[str]]:
    """Copy out and unmount the quota mounts of pipelines that are gone.

    `owner_alive(pid, start)` tells whether an owner lives. Returns (sources reaped, errors
    naming the folder they concern). The files come back owned by the caller, bounded like
    a normal end of run (apparent bytes and entries of the mount's own quota)."""
    assert callable(owner_alive)
    by_source: dict[str, list[StaleMount]] = {}
    for mount in quota_mounts():
        match = _SOURCE.match(mount.source)
        assert match is not None
        if not owner_alive(int(match.group(1)), int(match.group(2))):
            by_source.setdefault(mount.source, []).append(mount)
    reaped, errors = [], []
    me = (os.getuid(), os.getgid())
    for source, mounts in by_source.items():
        tmpfs = [m for m in mounts if m.root == "/"]
        binds = [m for m in mounts if m.root != "/"]
        for bind in binds:
            _umount(bind.mount_point)
        if tmpfs:
            staging = tmpfs[0].mount_point
            try:
                stats = os.statvfs(staging)
                quota, entries = stats.f_blocks * stats.f_frsize, stats.f_files
                for bind in binds:
                    index = bind.root.strip("/")
                    if not index.isdigit():
                        continue
                    out = _copy_one(staging / index, bind.mount_point, quota, entries, me)
                    errors += [f"{bind.mount_point}: {e}" for e in out.errors[:3]]
            except OSError as exc:
                errors.append(f"{staging}: {exc.strerror or exc}")
            for mount in tmpfs:
                _umount(mount.mount_point)
            with contextlib.suppress(OSError):
                staging.rmdir()
        reaped.append(source)
    return reaped, errors


def _copy_one(
    inner: Path, folder: Path, quota: int, entries: int, owner: tuple[int, int]
) -> CopyOut:
    total = CopyOut()
    try:
        with fdtree.open_dir(folder) as dst, fdtree.open_dir(inner) as src:
            limits = fdtree.CopyLimits(
                max_bytes=quota,
                max_entries=entries,
                deadline=time.monotonic() + COPY_OUT_S,
                owner=owner,
            )
            total.add(fdtree.sync_tree(src, dst, limits))
    except OSError as exc:
        total.errors.append(exc.strerror or str(exc))
    return total


class FullWatch:
    """Polls the quota tmpfs (one statvfs) while the run lasts; once the kernel refuses
    writes (no block or no inode left) it calls `stop` once: the run is over its quota,
    and a program that ignores ENOSPC must not run on until its timeout."""

    def __init__(self, mount: QuotaMount, stop: Callable[[], None], poll_s: float = 0.05) -> None:
        self.mount = mount
        self.stop = stop
        self.poll_s = poll_s
        self.tripped = False
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="sandbox-quota-watch", daemon=True)

    def __enter__(self) -> FullWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()
        if not self.tripped and self.mount.full():
            self.tripped = True

    def _loop(self) -> None:
        while not self._done.wait(self.poll_s):
            if self.mount.full():
                self.tripped = True
                self.stop()
                return

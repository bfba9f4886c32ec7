"""The disk quota's fallback: a watchdog over the bytes and entries the writable folders hold.

With root, the kernel keeps the quota (sandbox/quota.py: a size- and inode-limited tmpfs
per run). Without root no mount can be made, so this thread walks the folders instead and
kills the run past either bound, with RLIMIT_FSIZE set to at most the quota so that one
poll interval is the only overrun (the disk's write rate times the interval).

The walk is relative to directory descriptors and iterative (sandbox/fdtree.py): a path too
long to open or a tree too deep to recurse into is counted like any other (the path-based
walk this replaced counted them as empty: 1.5 GB passed a 1 GB quota). Usage counts the
larger of apparent size and allocated blocks (a sparse file costs what every later copy of
it writes), and files and folders against the file quota. Hard links count once.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from bench_pipeline.sandbox import fdtree

MIB = 1024 * 1024
# Walks at least this often while the walk is cheap ...
MIN_POLL_S = 0.05
# ... and at most this rarely: a huge tree must not make the watchdog eat a core, so the
# interval grows to WALK_COST_FACTOR times the last walk's duration, up to this bound.
MAX_POLL_S = 2.0
WALK_COST_FACTOR = 20
# Between walks, the filesystems' used space (statvfs, one system call) is checked this
# often: when it grew by half the room left since the last walk, the walk happens at once.
# Others' deletions can hide growth from it, so it only ever brings a walk forward.
STATVFS_POLL_S = 0.05


def measure(folders: Iterable[Path]) -> tuple[int, int]:
    """(bytes, entries) under `folders`, never following a symlink, at any depth or path
    length (sandbox/fdtree.py). Bytes are the larger of a file's apparent size and what it
    allocates: a sparse file costs what a copy of it would write. Hard links count once."""
    total = entries = 0
    seen: set[tuple[int, int]] = set()

    def visit(_fds: list[int], _name: str, info: os.stat_result, _depth: int) -> bool:
        nonlocal total, entries
        if info.st_nlink > 1 and not stat.S_ISDIR(info.st_mode):
            key = (info.st_dev, info.st_ino)
            if key in seen:
                return False
            seen.add(key)
        entries += 1
        size = info.st_size if stat.S_ISREG(info.st_mode) else 0
        total += max(size, info.st_blocks * 512)
        return True

    for folder in folders:
        try:
            with fdtree.open_dir(folder) as fd:
                fdtree.walk([fd], visit, errors=[])
        except OSError:
            continue  # the folder itself is gone
    return total, entries


def disk_usage(folders: Iterable[Path]) -> int:
    """Bytes under `folders` (see `measure`)."""
    return measure(folders)[0]


class DiskWatch:
    """Polls the usage of `folders` in a thread; past `quota_bytes` it calls `stop` once.

    Use as a context manager around the run. `tripped` tells whether the quota was passed
    (during the run or at the final measurement on exit), `peak_bytes` the largest usage
    seen.
    """

    def __init__(
        self,
        folders: Iterable[Path],
        quota_bytes: int,
        stop: Callable[[], None],
        *,
        min_poll_s: float = MIN_POLL_S,
        max_entries: int | None = None,
    ) -> None:
        self.max_entries = max_entries
        self.folders = [Path(f) for f in folders]
        self.quota_bytes = quota_bytes
        self.stop = stop
        self.min_poll_s = min_poll_s
        self.tripped = False
        self.peak_bytes = 0
        self.peak_entries = 0
        self.last_bytes = 0
        self.polls = 0
        self._devices: dict[int, Path] = {}
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="sandbox-disk-watch", daemon=True)

    def __enter__(self) -> DiskWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()
        self._measure()  # a program that wrote fast and exited between two polls

    def _measure(self) -> float:
        """One walk; returns how long it took."""
        started = time.monotonic()
        used, entries = measure(self.folders)
        self.polls += 1
        self.last_bytes = used
        self.peak_bytes = max(self.peak_bytes, used)
        self.peak_entries = max(self.peak_entries, entries)
        over_entries = self.max_entries is not None and entries > self.max_entries
        if (used > self.quota_bytes or over_entries) and not self.tripped:
            self.tripped = True
            self.stop()
        return time.monotonic() - started

    def _fs_used(self) -> int:
        total = 0
        for device in self._devices.values():
            try:
                stats = os.statvfs(device)
            except OSError:
                continue
            total += (stats.f_blocks - stats.f_bfree) * stats.f_frsize
        return total

    def _loop(self) -> None:
        # One folder per filesystem: statvfs answers for the whole filesystem.
        self._devices = {}
        for folder in self.folders:
            with contextlib.suppress(OSError):
                self._devices.setdefault(folder.stat().st_dev, folder)
        interval = self.min_poll_s
        next_walk = earliest_walk = time.monotonic() + interval
        fs_at_walk = self._fs_used()
        while not self._done.wait(min(STATVFS_POLL_S, self.min_poll_s)):
            now = time.monotonic()
            if now < next_walk:
                # Early only on real growth, and never more than a third of the time walking
                # (the filesystem is shared: other writers make it grow too).
                room = self.quota_bytes - self.last_bytes
                if now < earliest_walk or self._fs_used() - fs_at_walk < room / 2:
                    continue
            fs_at_walk = self._fs_used()
            took = self._measure()
            interval = min(MAX_POLL_S, max(self.min_poll_s, WALK_COST_FACTOR * took))
            now = time.monotonic()
            next_walk, earliest_walk = now + interval, now + 2 * took

    def message(self) -> str:
        if self.max_entries is not None and self.peak_entries > self.max_entries:
            return (
                f"the writable folders held {self.peak_entries} files and folders, over the "
                f"{self.max_entries} file disk quota"
            )
        return (
            f"the writable folders held {self.peak_bytes / MIB:.0f} MiB, over the "
            f"{self.quota_bytes / MIB:.0f} MiB disk quota"
        )

"""File names for untrusted ids, and copying evidence into the site without escaping it.

Run ids and experiment names come from data: a page's file name must be safe on every
filesystem and in a URL, and unique even where names differ only in case. Evidence is
copied only from inside the artifact store, never through a symlink, so a record naming
`/etc/shadow` (or a link to it) can never publish it.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import struct
from dataclasses import dataclass
from pathlib import Path

_SAFE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,120}$")
SAFE_FILE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,120}$")
RESERVED = frozenset({"index", "failing", "static", "charts", "files", "compare", "methodology"})


class Slugs:
    """Unique, URL- and filesystem-safe names: the id itself when it is safe, else a hash."""

    def __init__(self) -> None:
        self._by_id: dict[str, str] = {}
        self._taken: set[str] = set()

    def __call__(self, ident: str) -> str:
        if ident in self._by_id:
            return self._by_id[ident]
        base = ident
        if (
            not _SAFE.match(ident)
            or ident.endswith(".")
            or ident.lower() in RESERVED
            or ident.lower().startswith("page-")
            or ident.lower().startswith("failing-")
        ):
            cleaned = re.sub(r"[^A-Za-z0-9_-]+", "-", ident).strip("-")[:40] or "id"
            base = f"{cleaned}-{hashlib.sha256(ident.encode()).hexdigest()[:10]}"
        slug = base
        n = 2
        while slug.lower() in self._taken:  # case-insensitive filesystems (macOS, Windows)
            slug = f"{base}-{n}"
            n += 1
        self._taken.add(slug.lower())
        self._by_id[ident] = slug
        return slug


def inside(path: Path, root: Path) -> bool:
    """`path` is a regular file under `root`, reached without any symlink."""
    try:
        if path.is_symlink() or not path.is_file():
            return False
        real = path.resolve(strict=True)
        base = root.resolve(strict=True)
    except OSError:
        return False
    if not real.is_relative_to(base):
        return False
    # No symlinked folder on the way either.
    current = path
    while current != root and current.parent != current:
        if current.is_symlink():
            return False
        current = current.parent
    return True


@dataclass(frozen=True)
class Evidence:
    """The regular files of one run's stage folder in the artifact store (symlinks left out).

    Sizes are read on demand: a folder holds files the site never looks at (event logs).
    """

    folder: Path
    entries: dict[str, os.DirEntry[str]]

    @property
    def names(self) -> list[str]:
        return sorted(self.entries)

    def path(self, name: str) -> Path | None:
        return self.folder / name if name in self.entries else None

    def size(self, name: str) -> int | None:
        """Bytes, or None when the file went away since the scan (a run being redone)."""
        try:
            return self.entries[name].stat(follow_symlinks=False).st_size
        except OSError:
            return None


def _real_dir(path: Path) -> bool:
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return False
    return stat.S_ISDIR(mode) and not stat.S_ISLNK(mode)


def _scan(folder: Path, *, dirs: bool) -> dict[str, os.DirEntry[str]]:
    try:
        with os.scandir(folder) as it:
            if dirs:
                return {e.name: e for e in it if e.is_dir(follow_symlinks=False)}
            return {e.name: e for e in it if e.is_file(follow_symlinks=False)}
    except OSError:
        return {}


def run_evidence(root: Path, run_id: str) -> dict[str, Evidence]:
    """The stage folders of `<root>/runs/<run_id>/` as the artifact store lays them out
    (stage -> its regular files), leaving out symlinked folders and files.

    A few directory scans per run, no realpath per file: thousands of runs cost little.
    `<root>/runs` itself is checked once by the caller (runs_root_ok).
    """
    if run_id in {"", ".", ".."} or len(run_id) > 200 or any(c in run_id for c in "/\\\x00"):
        return {}
    run_dir = root / "runs" / run_id
    if not _real_dir(run_dir):
        return {}
    return {
        stage: Evidence(run_dir / stage, _scan(run_dir / stage, dirs=False))
        for stage in _scan(run_dir, dirs=True)
    }


def runs_root_ok(root: Path) -> bool:
    """`<root>/runs` is a real folder (a symlink there could point anywhere)."""
    return _real_dir(root / "runs")


def png_size(path: Path) -> tuple[int, int] | None:
    """(width, height) from a PNG's header, or None when it is not a PNG."""
    try:
        with path.open("rb") as fh:
            head = fh.read(24)
    except OSError:
        return None
    if len(head) < 24 or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    width, height = struct.unpack(">II", head[16:24])
    return (width, height) if width and height else None


def tail_text(path: Path, max_bytes: int = 6000, max_lines: int = 60) -> str | None:
    """The last lines of a text file (decoded leniently), or None when unreadable."""
    try:
        with path.open("rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - max_bytes))
            data = fh.read()
    except OSError:
        return None
    text = data.decode("utf-8", errors="replace")
    lines = text.splitlines()
    if size > max_bytes and lines:
        lines = lines[1:]  # the first line was cut
    return "\n".join(lines[-max_lines:])

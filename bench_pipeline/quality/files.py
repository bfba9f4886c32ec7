"""Copy an agent's project into a folder the quality tools may own, without trusting it.

The agent's tree is read-only for us and may be hostile or absurd: symlinks to host files
(we run as root, so following one could copy a secret into the work folder), gigabytes of
node_modules, a 5 MB minified bundle, images, thousands of generated files. The copy keeps
only what the tools read, never follows a symlink, and says what it left out.
"""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path

SOURCE_SUFFIXES = frozenset({".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx"})
TS_SUFFIXES = frozenset({".ts", ".mts", ".cts", ".tsx"})
HTML_SUFFIXES = frozenset({".html", ".htm"})
# What the analysis tools read: sources, pages, styles, and package.json/tsconfig.json.
ANALYSIS_SUFFIXES = SOURCE_SUFFIXES | HTML_SUFFIXES | {".css", ".json"}
# Folders of generated or vendored code: not the agent's own writing.
SKIP_DIRS = frozenset({"node_modules", "dist", "build", ".git"})


@dataclass
class CopyLimits:
    max_files: int = 1000  # files copied; beyond it the rest is skipped and said
    max_file_bytes: int = 1_000_000  # a bigger file is generated or minified, not written
    max_total_bytes: int = 30_000_000
    max_entries: int = 200_000  # directory entries looked at before giving up the walk
    suffixes: frozenset[str] | None = ANALYSIS_SUFFIXES  # None: every regular file
    skip_dirs: frozenset[str] = SKIP_DIRS


@dataclass
class CopyStats:
    copied: list[str] = field(default_factory=list)  # relative POSIX paths
    large: int = 0
    binary: int = 0
    symlinks: int = 0
    capped: int = 0  # files left out because max_files/max_total_bytes was reached
    walk_capped: bool = False
    bytes: int = 0

    def to_json(self) -> dict[str, int | bool]:
        return {
            "copied": len(self.copied),
            "large": self.large,
            "binary": self.binary,
            "symlinks": self.symlinks,
            "capped": self.capped,
            "walk_capped": self.walk_capped,
        }

    def notes(self) -> list[str]:
        notes = []
        if self.large:
            notes.append(f"{self.large} file(s) over 1 MB skipped (generated or minified)")
        if self.binary:
            notes.append(f"{self.binary} binary file(s) skipped")
        if self.symlinks:
            notes.append(f"{self.symlinks} symlink(s) not followed")
        if self.capped:
            notes.append(f"{self.capped} file(s) beyond the copy cap skipped")
        if self.walk_capped:
            notes.append("the folder walk stopped early: too many entries")
        return notes


def _is_binary(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return b"\0" in handle.read(8192)
    except OSError:
        return True


def copy_tree(source: Path, target: Path, limits: CopyLimits | None = None) -> CopyStats:
    """Copy the useful files of `source` into `target` (created); never raises for content."""
    limits = limits or CopyLimits()
    stats = CopyStats()
    target.mkdir(parents=True, exist_ok=True)
    entries = 0
    for dirpath, dirnames, filenames in os.walk(source, followlinks=False):
        here = Path(dirpath)
        # Sorted so that a capped copy is the same every time; symlinked folders are left out.
        kept = []
        for name in sorted(dirnames):
            if name in limits.skip_dirs:
                continue
            if (here / name).is_symlink():
                stats.symlinks += 1
                continue
            kept.append(name)
        dirnames[:] = kept
        for name in sorted(filenames):
            entries += 1
            if entries > limits.max_entries:
                stats.walk_capped = True
                return stats
            path = here / name
            if limits.suffixes is not None and path.suffix.lower() not in limits.suffixes:
                continue
            try:
                info = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISLNK(info.st_mode):
                stats.symlinks += 1
                continue
            if not stat.S_ISREG(info.st_mode):
                continue
            if info.st_size > limits.max_file_bytes:
                stats.large += 1
                continue
            if limits.suffixes is not None and _is_binary(path):
                stats.binary += 1
                continue
            if (
                len(stats.copied) >= limits.max_files
                or stats.bytes + info.st_size > limits.max_total_bytes
            ):
                stats.capped += 1
                continue
            relative = path.relative_to(source)
            destination = target / relative
            destination.parent.mkdir(parents=True, exist_ok=True)
            try:
                shutil.copyfile(path, destination, follow_symlinks=False)
            except OSError:
                continue
            stats.copied.append(relative.as_posix())
            stats.bytes += info.st_size
    return stats


def source_files(relative_paths: list[str]) -> list[str]:
    """The code files among `relative_paths` (declaration files .d.ts are not code)."""
    return [
        p
        for p in relative_paths
        if Path(p).suffix.lower() in SOURCE_SUFFIXES and not p.lower().endswith(".d.ts")
    ]

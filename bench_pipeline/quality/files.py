"""Copy an agent's project into a folder the quality tools may own, without trusting it.

The agent's tree is read-only for us and may be hostile or absurd: symlinks to host files
(we run as root, so following one could copy a secret into the work folder), gigabytes of
node_modules, a 5 MB minified bundle, images, thousands of generated files. The copy keeps
only what the tools read, never follows a symlink, and says what it left out.

A capped copy must still hold the game: the entry page (`index.html`, `dist/index.html`,
`build/index.html`, in the project's folder too), the package and TypeScript configs, and
what the page loads (scripts, styles, images, and the relative imports of those scripts)
are copied first; the rest of the tree fills the copy up to the cap. Otherwise a project of
10,000 files would lose its `index.html` to the cap and be measured as one without a page.
"""

from __future__ import annotations

import html.parser
import os
import re
import shutil
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from bench_pipeline.build.detect import ENTRY_POINTS, LOCK_FILES, find_project_root

SOURCE_SUFFIXES = frozenset({".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx"})
TS_SUFFIXES = frozenset({".ts", ".mts", ".cts", ".tsx"})
HTML_SUFFIXES = frozenset({".html", ".htm"})
# What the analysis tools read: sources, pages, styles, and package.json/tsconfig.json.
ANALYSIS_SUFFIXES = SOURCE_SUFFIXES | HTML_SUFFIXES | {".css", ".json"}
# Folders of generated or vendored code: not the agent's own writing.
SKIP_DIRS = frozenset({"node_modules", "dist", "build", ".git"})
# What a build needs beside the entry page, copied first as well.
PROJECT_FILES = ("package.json", *LOCK_FILES, "tsconfig.json")
# Files the entry page pulls in transitively, at most: a page does not load thousands.
MAX_ENTRY_FILES = 500
MAX_SCANNED_BYTES = 1_000_000
IMPORT_SUFFIXES = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".mts", ".cjs", ".cts")
_IMPORTS = re.compile(
    r"""(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)["'](\.{1,2}/[^"'\s]+)["']"""
)


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
    entry_files: list[str] = field(default_factory=list)  # copied first (see module doc)

    def to_json(self) -> dict[str, int | bool]:
        return {
            "copied": len(self.copied),
            "large": self.large,
            "binary": self.binary,
            "symlinks": self.symlinks,
            "capped": self.capped,
            "walk_capped": self.walk_capped,
            "entry_files": len(self.entry_files),
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
            notes.append(
                f"{self.capped} file(s) beyond the copy cap skipped (the entry page and the "
                f"{len(self.entry_files)} file(s) it loads were copied first)"
            )
        if self.walk_capped:
            notes.append("the folder walk stopped early: too many entries")
        return notes


def _is_binary(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return b"\0" in handle.read(8192)
    except OSError:
        return True


class _References(html.parser.HTMLParser):
    """The URLs a page loads: scripts, stylesheets, module preloads, images, media."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k.lower(): (v or "") for k, v in attrs}
        if tag in ("script", "img", "source", "audio", "video") and values.get("src"):
            self.urls.append(values["src"])
        elif tag == "link" and values.get("href"):
            self.urls.append(values["href"])


def _regular(path: Path) -> os.stat_result | None:
    """The lstat of a regular file (not a link, FIFO or device), else None."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return info if stat.S_ISREG(info.st_mode) else None


def _read_small(path: Path) -> str:
    info = _regular(path)
    if info is None or info.st_size > MAX_SCANNED_BYTES:
        return ""
    try:
        with path.open("rb") as handle:
            return handle.read(MAX_SCANNED_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return ""


def _real_file(source: Path, relative: str) -> bool:
    """True when `source/relative` is a regular file reached through real folders only: a
    link anywhere on the way (`assets -> /etc`) would lead the copy out of the project."""
    here = source
    parts = relative.split("/")
    for part in parts[:-1]:
        here = here / part
        try:
            if not stat.S_ISDIR(os.lstat(here).st_mode):
                return False
        except OSError:
            return False
    return _regular(here / parts[-1]) is not None


def _inside(relative: PurePosixPath) -> str | None:
    """`relative` normalized, or None when it climbs out of `source` (or names nothing)."""
    parts: list[str] = []
    for part in relative.parts:
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return None
            parts.pop()
        else:
            parts.append(part)
    if not parts:
        return None
    return "/".join(parts)


def _resolve_url(source: Path, page: str, url: str) -> str | None:
    if re.match(r"^([a-z][a-z0-9+.-]*:|//)", url, re.IGNORECASE):
        return None  # remote, data: and the like are not part of the project
    url = url.split("#")[0].split("?")[0]
    if not url:
        return None
    base = PurePosixPath() if url.startswith("/") else PurePosixPath(page).parent
    return _inside(base / url.lstrip("/"))


def _resolve_import(source: Path, module: str, specifier: str) -> str | None:
    """The file a relative import names: as written, with a code suffix, as a folder's
    index, or the .ts behind a .js specifier (TypeScript's ESM convention)."""
    base = _inside(PurePosixPath(module).parent / specifier)
    if base is None:
        return None
    stem, suffix = os.path.splitext(base)
    candidates = [base, *(base + s for s in IMPORT_SUFFIXES)]
    candidates += [f"{base}/index{s}" for s in IMPORT_SUFFIXES]
    if suffix in (".js", ".jsx", ".mjs", ".cjs"):
        candidates += [stem + s for s in (".ts", ".tsx", ".mts", ".cts")]
    return next((c for c in candidates if _real_file(source, c)), None)


def entry_files(source: Path, skip_dirs: Iterable[str] = ()) -> list[str]:
    """The entry pages, the project's config files and what the pages load, transitively
    (relative POSIX paths, in the order found, at most MAX_ENTRY_FILES). Nothing outside
    `source`, no link and nothing under `skip_dirs` is named."""
    skipped = frozenset(skip_dirs)
    roots = [""]
    project = find_project_root(source)
    if project != source and project.parent == source:
        roots.append(project.name)
    found: dict[str, None] = {}
    queue: list[str] = []

    def add(relative: str | None) -> None:
        if relative is None or relative in found or len(found) >= MAX_ENTRY_FILES:
            return
        if any(part in skipped for part in relative.split("/")[:-1]):
            return
        if not _real_file(source, relative):
            return
        found[relative] = None
        queue.append(relative)

    for root in roots:
        for name in (*ENTRY_POINTS, *PROJECT_FILES):
            add(f"{root}/{name}" if root else name)
    while queue:
        current = queue.pop(0)
        suffix = os.path.splitext(current)[1].lower()
        if suffix in HTML_SUFFIXES:
            scan = _References()
            try:
                scan.feed(_read_small(source / current))
            except Exception:  # html.parser on hostile markup: skip that page's links
                continue
            for url in scan.urls:
                add(_resolve_url(source, current, url))
        elif suffix in SOURCE_SUFFIXES or suffix == ".css":
            for specifier in _IMPORTS.findall(_read_small(source / current)):
                add(_resolve_import(source, current, specifier))
    return list(found)


def copy_tree(source: Path, target: Path, limits: CopyLimits | None = None) -> CopyStats:
    """Copy the useful files of `source` into `target` (created); never raises for content.

    The entry page and what it loads go first (`entry_files`), so a cap never drops them.
    """
    limits = limits or CopyLimits()
    stats = CopyStats()
    target.mkdir(parents=True, exist_ok=True)
    first = entry_files(source, limits.skip_dirs)
    for relative in first:
        if _copy_one(source, target, source / relative, limits, stats):
            stats.entry_files.append(relative)
    done = set(first)  # tried already: each file is counted once, copied or not
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
            if path.relative_to(source).as_posix() in done:
                continue
            _copy_one(source, target, path, limits, stats)
    return stats


def _copy_one(source: Path, target: Path, path: Path, limits: CopyLimits, stats: CopyStats) -> bool:
    """Copy one file if the limits allow it; True when copied."""
    if limits.suffixes is not None and path.suffix.lower() not in limits.suffixes:
        return False
    try:
        info = os.lstat(path)
    except OSError:
        return False
    if stat.S_ISLNK(info.st_mode):
        stats.symlinks += 1
        return False
    if not stat.S_ISREG(info.st_mode):
        return False
    if info.st_size > limits.max_file_bytes:
        stats.large += 1
        return False
    if limits.suffixes is not None and _is_binary(path):
        stats.binary += 1
        return False
    if len(stats.copied) >= limits.max_files or stats.bytes + info.st_size > limits.max_total_bytes:
        stats.capped += 1
        return False
    relative = path.relative_to(source)
    destination = target / relative
    destination.parent.mkdir(parents=True, exist_ok=True)
    try:
        shutil.copyfile(path, destination, follow_symlinks=False)
    except OSError:
        return False
    stats.copied.append(relative.as_posix())
    stats.bytes += info.st_size
    return True


def source_files(relative_paths: list[str]) -> list[str]:
    """The code files among `relative_paths` (declaration files .d.ts are not code)."""
    return [
        p
        for p in relative_paths
        if Path(p).suffix.lower() in SOURCE_SUFFIXES and not p.lower().endswith(".d.ts")
    ]

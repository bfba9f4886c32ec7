"""What did the agent make? A static page, an npm project, TypeScript without a bundler.

Pure inspection of the workspace (nothing runs here); `build.py` turns the answer into
sandboxed commands.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Folders that hold dependencies or outputs, never the agent's sources.
SKIPPED_DIRS = frozenset({"node_modules", "dist", "build", "out", ".git", "coverage"})
LOCK_FILES = ("package-lock.json", "npm-shrinkwrap.json")
DEPENDENCY_KEYS = ("dependencies", "devDependencies", "optionalDependencies")
# The bot's contract (docs/bot.md): the first of these is the page it plays.
ENTRY_POINTS = ("index.html", "dist/index.html", "build/index.html")
# After a build script ran, its output wins over a source index.html next to it: a Vite
# project's root index.html points at /src/main.ts, which no browser can run.
BUILT_ENTRY_POINTS = ("dist/index.html", "build/index.html", "index.html")
MAX_PACKAGE_JSON_BYTES = 5 * 1024 * 1024
MAX_TS_FILES = 2000  # beyond this the project is not "a few .ts files": tsc -p needs a tsconfig


@dataclass
class Project:
    """The workspace's project, as far as it can be told without running anything."""

    workspace: Path
    root: Path  # where package.json / tsconfig.json live (the workspace or one subfolder)
    package_json: dict[str, Any] | None = None
    package_error: str | None = None  # package.json exists but is not a JSON object
    has_lock: bool = False
    has_dependencies: bool = False
    build_script: str | None = None
    tsconfig: bool = False
    ts_files: list[Path] = field(default_factory=list)  # relative to root

    @property
    def has_package(self) -> bool:
        return self.package_json is not None or self.package_error is not None

    @property
    def uses_tsc(self) -> bool:
        """TypeScript the build must compile itself: no build script that would do it."""
        return self.build_script is None and (self.tsconfig or bool(self.ts_files))

    @property
    def kind(self) -> str:
        if self.package_error is not None or self.build_script is not None:
            return "npm"
        if self.uses_tsc:
            return "typescript"
        if self.has_package:
            return "npm"
        if (self.workspace / "index.html").is_file():
            return "static"
        return "none"

    @property
    def subfolder(self) -> str | None:
        return None if self.root == self.workspace else self.root.name


def _visible_dirs(folder: Path) -> list[Path]:
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return []
    return [
        e
        for e in entries
        if e.is_dir() and not e.is_symlink() and not e.name.startswith(".")
        if e.name not in SKIPPED_DIRS
    ]


def find_project_root(workspace: Path) -> Path:
    """The workspace, or the one subfolder holding the project when the root has none.

    "One obvious subfolder": agents sometimes scaffold into ./tetris (npm create vite tetris).
    When several subfolders hold a package.json, the one with a build script wins, else the
    first by name - a guess the build message names.
    """
    if (workspace / "package.json").is_file() or (workspace / "index.html").is_file():
        return workspace
    candidates = [d for d in _visible_dirs(workspace) if (d / "package.json").is_file()]
    if not candidates:
        return workspace
    with_build = [d for d in candidates if _build_script(_read_package(d)[0]) is not None]
    return (with_build or candidates)[0]


def _read_package(root: Path) -> tuple[dict[str, Any] | None, str | None]:
    path = root / "package.json"
    if not path.exists() and not path.is_symlink():
        return None, None
    # The agent wrote this file: it may be a FIFO (reading would block for ever), a link to
    # a host file or something huge. We read it as the caller, outside the sandbox.
    real = path.resolve()
    if not _inside(real, root.resolve()) or not real.is_file():
        return None, "package.json is not a regular file inside the project"
    if real.stat().st_size > MAX_PACKAGE_JSON_BYTES:
        return None, f"package.json is larger than {MAX_PACKAGE_JSON_BYTES:,} bytes"
    try:
        data = json.loads(real.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        return None, f"package.json is not valid JSON: {exc}"
    if not isinstance(data, dict):
        return None, f"package.json is not a JSON object (found {type(data).__name__})"
    return data, None


def _build_script(package: dict[str, Any] | None) -> str | None:
    if not package:
        return None
    scripts = package.get("scripts")
    script = scripts.get("build") if isinstance(scripts, dict) else None
    return script if isinstance(script, str) and script.strip() else None


def _ts_files(root: Path) -> list[Path]:
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        # Pruned in place: os.walk then never descends into dependencies or outputs.
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS and d[0] != ".")
        for name in sorted(filenames):
            if name.endswith((".ts", ".mts", ".cts")) and not name.endswith(".d.ts"):
                found.append((Path(dirpath) / name).relative_to(root))
                if len(found) >= MAX_TS_FILES:
                    return found
    return found


def detect_project(workspace: Path) -> Project:
    workspace = workspace.resolve()
    root = find_project_root(workspace)
    package, error = _read_package(root)
    project = Project(workspace=workspace, root=root, package_json=package, package_error=error)
    if package is not None:
        project.has_lock = any((root / name).is_file() for name in LOCK_FILES)
        project.has_dependencies = any(
            isinstance(package.get(key), dict) and package[key] for key in DEPENDENCY_KEYS
        )
        project.build_script = _build_script(package)
    project.tsconfig = (root / "tsconfig.json").is_file()
    project.ts_files = _ts_files(root)
    return project


def find_entry_point(project: Project, *, built: bool) -> Path | None:
    """The index.html to serve (absolute), searched in the workspace then the project folder.

    A page whose real path leaves the workspace (a symlinked dist/) is not served: the bot
    would otherwise play whatever host folder the symlink names.
    """
    order = BUILT_ENTRY_POINTS if built else ENTRY_POINTS
    bases = [project.workspace] if project.root == project.workspace else [project.root]
    if project.root != project.workspace:
        bases.append(project.workspace)
    for base in bases:
        for candidate in order:
            page = base / candidate
            if page.is_file() and _inside(page.resolve(), project.workspace):
                return page
    return None


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def folder_bytes(folder: Path) -> int:
    """Bytes of regular files under `folder`, node_modules excluded, symlinks not followed."""
    total = 0
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        dirnames[:] = [d for d in dirnames if d != "node_modules"]
        for name in filenames:
            try:
                info = os.lstat(os.path.join(dirpath, name))
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode):
                total += info.st_size
    return total

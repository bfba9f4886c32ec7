"""A per-run disk budget for the artifact store: what one run may leave under runs/<run_id>/.

The sandbox quota bounds what an agent or a build writes into a workspace while it runs
(sandbox/disk.py); this bounds what the pipeline then copies out of it into the store: the
workspace archive, transcripts, logs, screenshots. Workspace folders (`workspace/` of each
stage) are not counted: the sandbox quota already bounds each of them.

Past the budget a write is *refused*, never an exception: `admit` says why, the caller
records it (the archive lists the file as skipped with the reason), and every refusal is
also appended to `runs/<run_id>/REFUSED.txt` so a person looking at the run sees it.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from bench_pipeline.sandbox.disk import disk_usage

MIB = 1024 * 1024
DEFAULT_RUN_ARTIFACTS_MB = 512
REFUSED_FILE = "REFUSED.txt"
WORKSPACE_DIR = "workspace"
# Earlier attempts of a rerun agent are kept whole (they cost money); each had its budget.
ATTEMPTS_DIR = "attempts"


def run_artifacts_budget_bytes() -> int | None:
    """BENCH_RUN_ARTIFACTS_MB (0 or "none": no budget), else DEFAULT_RUN_ARTIFACTS_MB."""
    raw = os.environ.get("BENCH_RUN_ARTIFACTS_MB", "").strip().lower()
    if not raw:
        return DEFAULT_RUN_ARTIFACTS_MB * MIB
    if raw in ("0", "none", "off"):
        return None
    try:
        return int(raw) * MIB
    except ValueError:
        raise ValueError(f"BENCH_RUN_ARTIFACTS_MB must be a number of MiB, not {raw!r}") from None


def artifact_bytes(run_root: Path) -> int:
    """Bytes on disk under a run's folder, without the stages' workspace folders
    and earlier attempts."""
    if not run_root.is_dir():
        return 0
    folders: list[Path] = []
    files = 0
    for entry in os.scandir(run_root):
        path = Path(entry.path)
        if entry.name == ATTEMPTS_DIR:
            continue
        if entry.is_dir(follow_symlinks=False):
            # runs/<run_id>/<stage>/workspace is the sandbox's; the rest of the stage counts.
            for inner in os.scandir(path):
                is_workspace = inner.name == WORKSPACE_DIR and inner.is_dir(follow_symlinks=False)
                if not is_workspace:
                    folders.append(Path(inner.path))
        else:
            files += entry.stat(follow_symlinks=False).st_blocks * 512
    return files + _usage_of_entries(folders)


def _usage_of_entries(paths: list[Path]) -> int:
    total = 0
    for path in paths:
        info = path.lstat()
        total += info.st_blocks * 512
        if path.is_dir() and not path.is_symlink():
            total += disk_usage([path])
    return total


class ArtifactBudget:
    """The room left for one run's artifacts, measured once and then counted down."""

    def __init__(self, run_root: Path, budget_bytes: int | None = None) -> None:
        self.run_root = run_root
        self.budget_bytes = run_artifacts_budget_bytes() if budget_bytes is None else budget_bytes
        self.used = artifact_bytes(run_root)
        self.refused: list[str] = []

    @classmethod
    def for_folder(cls, folder: Path) -> ArtifactBudget | None:
        """The budget of the run whose stage folder `folder` is (runs/<run_id>/<stage>),
        None for a folder outside an artifact store (`bench evaluate --artifacts DIR`)."""
        folder = Path(folder)
        if folder.parent.parent.name != "runs":
            return None
        return cls(folder.parent)

    @property
    def room(self) -> int | None:
        return None if self.budget_bytes is None else max(0, self.budget_bytes - self.used)

    def admit(self, name: str, size: int) -> str | None:
        """None (and `size` counted) when `size` more bytes fit, else the reason to refuse."""
        if self.budget_bytes is None or self.used + size <= self.budget_bytes:
            self.used += size
            return None
        return self.refuse(name, size)

    def refuse(self, name: str, size: int) -> str:
        """Record that `name` was not stored for lack of room; returns the reason."""
        reason = (
            f"{name} ({size} bytes) refused: the run's artifacts would pass their "
            f"{self.budget_bytes / MIB:.0f} MiB budget ({self.used} bytes already stored)"
        )
        self.refused.append(reason)
        self._note(reason)
        return reason

    def write_bytes(self, path: Path, data: bytes) -> str | None:
        """Write `data` to `path` when it fits; else write nothing and return the reason."""
        reason = self.admit(path.name, len(data))
        if reason is None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        return reason

    def _note(self, reason: str) -> None:
        # A line of text per refusal: tiny, so it is never itself refused.
        self.run_root.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now(UTC).isoformat(timespec="seconds")
        with (self.run_root / REFUSED_FILE).open("a", encoding="utf-8") as fh:
            fh.write(f"{stamp} {reason}\n")

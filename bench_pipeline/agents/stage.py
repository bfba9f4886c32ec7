"""Stage 2, agent generation: one agent run for one run spec, kept whole.

Agent runs cost money, so this stage never silently repeats one: a run whose record and
workspace archive exist is *reused* unless the caller asks to rerun it, and a rerun first
moves the earlier attempt aside (`runs/<run_id>/attempts/<n>/`) instead of deleting it.

Per run, under `runs/<run_id>/agent_generation/`:

    prompt.md            the exact prompt the agent got
    transcript.jsonl     the raw transcript (stream-json / JSONL), as streamed
    workspace/           what the agent wrote (left in place for people to open)
    workspace.tar.gz     the same, archived: what every later stage starts from

and the warehouse row in `records/agent_generation/<run_id>.json`, written last, so a
crash halfway leaves the previous complete record (or none), never half of one.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import stat
import tarfile
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench_pipeline import stages
from bench_pipeline.agents.base import (
    AgentAdapter,
    AgentOutcome,
    AgentSetupError,
    AgentTask,
    Usage,
    is_transient,
)
from bench_pipeline.agents.bounds import outcome_problems
from bench_pipeline.agents.prompts import PROMPT_VERSION, build_prompt, context_file_for
from bench_pipeline.sandbox import fdtree
from bench_pipeline.sandbox.base import Sandbox
from bench_pipeline.warehouse.artifacts import ArtifactStore, RecordError, atomic_write_bytes
from bench_pipeline.warehouse.budget import ArtifactBudget

STAGE = stages.AGENT_GENERATION.name
ARCHIVE = "workspace.tar.gz"
# A run's workspace may not grow past this many bytes in the archive: an agent that
# writes gigabytes is recorded, not archived whole (see archive_workspace).
ARCHIVE_MAX_FILE_BYTES = 50 * 1024 * 1024
# ... nor hold more than this in all (apparent sizes: what unpacking writes), nor more files
# than this (dependency folders are left out: a game's sources are a few dozen), nor paths
# deeper or longer than this (every later stage unpacks it on the host), nor take longer.
ARCHIVE_MAX_TOTAL_BYTES = 256 * 1024 * 1024
ARCHIVE_MAX_FILES = 20_000
ARCHIVE_MAX_DEPTH = 64
ARCHIVE_MAX_PATH = 1024
ARCHIVE_MAX_SECONDS = 120.0
# Skipped files named in the record; the rest are counted.
ARCHIVE_LISTED_SKIPS = 100
SKIP_DIRS = {"node_modules", ".git", ".cache"}


class NoGenerationRecord(LookupError):
    """The agent has not run for this run yet."""


class ArchiveTooBig(ValueError):
    """A workspace archive past the bounds every stage unpacks within (the message names it)."""


@dataclass(frozen=True)
class GenerationResult:
    record: dict[str, Any]
    reused: bool


def make_task(
    spec: Mapping[str, Any], prompt: str, run_dir: Path, budget_cap_usd: float | None = None
) -> AgentTask:
    """The adapter's task for one run; `budget_cap_usd` (a sweep's launch-time cap) lowers
    the cell's `budget_usd`, never raises it."""
    config = spec["config"]
    budget = float(config.get("budget_usd", 5))
    if budget_cap_usd is not None:
        budget = min(budget, budget_cap_usd)
    return AgentTask(
        run_id=spec["run_id"],
        cell_id=spec["cell_id"],
        repeat=int(spec["repeat"]),
        seed=int(spec.get("seed") or 0),
        agent=spec["agent"],
        model=spec["model"],
        config=dict(config),
        prompt=prompt,
        workspace=run_dir / "workspace",
        transcript_path=run_dir / "transcript.jsonl",
        budget_usd=budget,
        max_turns=int(config.get("max_turns", 50)),
        time_limit_s=float(config.get("time_limit_min", 30)) * 60,
        input_usd_per_mtok=spec.get("input_usd_per_mtok"),
        output_usd_per_mtok=spec.get("output_usd_per_mtok"),
        model_strength=spec.get("model_strength"),
    )


def archive_workspace(
    workspace: Path, archive: Path, budget: ArtifactBudget | None = None
) -> dict[str, Any]:
    """Archive what the agent wrote (gzip tar, sorted, fixed mtimes: same files, same bytes).

    Dependency folders are left out (they are reinstalled by the build). What every later
    stage would have to unpack is bounded here (ARCHIVE_MAX_*): files over the per-file or
    total size (apparent size: a sparse file counts its full length, which is what unpacking
    it writes), past the file count, too deep or with too long a path, or past the time
    limit are listed as skipped rather than stored, as are the files that would take the
    run's artifacts past their `budget` (with the reason). The walk is relative to directory
    descriptors and iterative: no depth or path length breaks it.
    """
    # Counted before compressing, with a tar header each: the archive is never bigger
    # than that (gzip adds a few bytes per 16 KiB block at worst, hence the slack).
    room = budget.room if budget is not None else None
    buffer = io.BytesIO()
    files = 0
    total = 0
    skipped = _Skipped()
    deadline = time.monotonic() + ARCHIVE_MAX_SECONDS
    # gzip stamps the current time in its header unless told not to.
    with (
        gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=6, mtime=0) as gz,
        tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        for rel, size in _workspace_files(workspace, skipped):
            if size > ARCHIVE_MAX_FILE_BYTES:
                skipped.add(f"{rel} ({size} bytes)")
                continue
            if files >= ARCHIVE_MAX_FILES:
                skipped.add(f"{rel} (past the {ARCHIVE_MAX_FILES} file limit)")
                continue
            if total + size > ARCHIVE_MAX_TOTAL_BYTES:
                skipped.add(f"{rel} ({size} bytes, past the {ARCHIVE_MAX_TOTAL_BYTES} byte limit)")
                continue
            if time.monotonic() > deadline:
                skipped.add(f"{rel} (past the {ARCHIVE_MAX_SECONDS:.0f} s limit)")
                continue
            if room is not None and (total + size + 512 * (files + 1)) * 1.01 + 1024 > room:
                assert budget is not None
                skipped.add(budget.refuse(f"{rel} (from the workspace archive)", size))
                continue
            info = tarfile.TarInfo(rel)
            info.size, info.mode = size, 0o644
            with os.fdopen(_open_below(workspace, rel), "rb") as fh:
                if os.fstat(fh.fileno()).st_mode & 0o111:
                    info.mode = 0o755
                tar.addfile(info, _Exactly(fh, size))
            files += 1
            total += size
    data = buffer.getvalue()
    atomic_write_bytes(archive, data)
    return {
        "files": files,
        "workspace_bytes": total,
        "archive_bytes": len(data),
        "archive_sha256": hashlib.sha256(data).hexdigest(),
        "skipped_files": skipped.listed(),
    }


class _Skipped:
    """What the archive left out: the first ARCHIVE_LISTED_SKIPS named, the rest counted
    (400,000 skipped files must not make a record too big to load)."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.count = 0

    def add(self, text: str) -> None:
        self.count += 1
        if len(self.names) < ARCHIVE_LISTED_SKIPS:
            self.names.append(text if len(text) <= 300 else text[:200] + "..." + text[-80:])

    def listed(self) -> list[str]:
        more = self.count - len(self.names)
        return self.names + ([f"... and {more} more files skipped"] if more else [])


class _Exactly(io.RawIOBase):
    """A file read as exactly `size` bytes (what was counted), zero-padded if it shrank."""

    def __init__(self, fh: io.BufferedReader, size: int) -> None:
        self.fh, self.left = fh, size

    def read(self, n: int = -1) -> bytes:
        n = self.left if n < 0 else min(n, self.left)
        data = self.fh.read(n)[:n]
        data += bytes(n - len(data))
        self.left -= n
        return data


def _workspace_files(root: Path, skipped: _Skipped) -> list[tuple[str, int]]:
    """(relative path, apparent size) of the regular files under `root`, sorted; folders in
    SKIP_DIRS, links and special files left out; past ARCHIVE_MAX_FILES, or too deep or too
    long a path, listed in `skipped` instead."""
    found: list[tuple[str, int]] = []
    parts: list[str] = []

    def visit(_fds: list[int], name: str, info: os.stat_result, depth: int) -> bool:
        del parts[depth - 1 :]
        parts.append(name)
        if stat.S_ISDIR(info.st_mode):
            if name in SKIP_DIRS:
                return False
            if depth >= ARCHIVE_MAX_DEPTH:
                # Never walked further: a 10,000-deep chain costs one line, not 10,000.
                skipped.add(f"{_shown(parts)}/ (deeper than {ARCHIVE_MAX_DEPTH} folders)")
                return False
            return True
        if stat.S_ISREG(info.st_mode):
            rel = "/".join(parts)
            if len(rel) > ARCHIVE_MAX_PATH:
                skipped.add(f"{rel} (path longer than {ARCHIVE_MAX_PATH} characters)")
            elif len(found) >= ARCHIVE_MAX_FILES:
                skipped.add(f"{rel} (past the {ARCHIVE_MAX_FILES} file limit)")
            else:
                found.append((rel, info.st_size))
        return False

    try:
        with fdtree.open_dir(root) as fd:
            fdtree.walk([fd], visit, errors=[])
    except FileNotFoundError:
        return []
    return sorted(found)


def _shown(parts: list[str]) -> str:
    path = "/".join(parts)
    return path if len(path) <= 200 else f"{path[:120]}...{path[-60:]}"


def _open_below(root: Path, rel: str) -> int:
    """A descriptor of the regular file `rel` under `root`, no link followed on the way."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    *folders, name = rel.split("/")
    fd = os.open(root, flags)
    try:
        for folder in folders:
            below = os.open(folder, flags, dir_fd=fd)
            os.close(fd)
            fd = below
        return os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
    finally:
        os.close(fd)


def extract_workspace(archive: Path, target: Path) -> None:
    """Unpack an archived workspace into an empty `target` (the data filter refuses
    absolute paths, `..` and links out of the folder, whatever the archive holds).

    Bounded like the archive itself (files, apparent bytes, time): an archive made
    elsewhere, or by an older version, cannot unpack without end on the host. Past a bound
    it raises ArchiveTooBig naming the archive; nothing more is unpacked."""
    if os.path.lexists(target):
        fdtree.remove_tree(target)
    target.mkdir(parents=True)
    deadline = time.monotonic() + ARCHIVE_MAX_SECONDS
    files = total = 0
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar:
            files += 1
            total += max(member.size, 0)
            problem = (
                f"more than {ARCHIVE_MAX_FILES} files" if files > ARCHIVE_MAX_FILES
                else f"more than {ARCHIVE_MAX_TOTAL_BYTES} bytes" if total > ARCHIVE_MAX_TOTAL_BYTES
                else f"more than {ARCHIVE_MAX_SECONDS:.0f} s to unpack"
                if time.monotonic() > deadline else None
            )  # fmt: skip
            if problem:
                raise ArchiveTooBig(f"{archive}: holds {problem}; nothing more was unpacked")
            if member.issparse():
                raise ArchiveTooBig(f"{archive}: {member.name} is a sparse member; refused")
            tar.extract(member, target, filter="data")


def _set_aside(store: ArtifactStore, run_id: str) -> Path | None:
    """Move an earlier attempt (complete or crashed) out of the way, keeping it."""
    run_dir = store.run_dir(run_id, STAGE)
    record = store.record_path(STAGE, run_id)
    if not run_dir.exists() and not record.exists():
        return None
    attempts = store.run_dir(run_id, "attempts")
    attempts.mkdir(parents=True, exist_ok=True)
    n = 1 + max((int(p.name) for p in attempts.iterdir() if p.name.isdigit()), default=0)
    target = attempts / str(n)
    if run_dir.exists():
        run_dir.rename(target)
    else:
        target.mkdir()
    if record.exists():
        record.rename(target / "record.json")
    return target


def _utc() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def run_generation(
    spec: Mapping[str, Any],
    store: ArtifactStore,
    adapter_for: Callable[[str], AgentAdapter],
    sandbox: Sandbox,
    *,
    rerun: bool = False,
    budget_cap_usd: float | None = None,
) -> GenerationResult:
    """Run (or reuse) the agent of one run and write its record.

    `adapter_for(harness)` returns the adapter for the cell's harness; it may raise
    AgentSetupError (not installed), which propagates: that is the machine's problem, not
    the run's result. Anything else the adapter does wrong becomes an `error` outcome.
    """
    run_id = spec["run_id"]
    existing = store.read_record(STAGE, run_id)
    run_dir = store.run_dir(run_id, STAGE)
    # A run stopped by a rate limit is kept as an attempt, not as the run's result.
    retry = existing is not None and bool(existing.get("retryable"))
    if existing is not None and (run_dir / ARCHIVE).is_file() and not rerun and not retry:
        return GenerationResult(existing, reused=True)
    previous = _set_aside(store, run_id)

    adapter = adapter_for(spec["agent"])
    config = spec["config"]
    prompt = build_prompt(config)
    run_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(run_dir / "prompt.md", prompt.encode())
    task = make_task(spec, prompt, run_dir, budget_cap_usd)
    task.workspace.mkdir(parents=True, exist_ok=True)
    context = context_file_for(config)
    if context is not None:
        (task.workspace / context[0]).write_text(context[1], encoding="utf-8")

    started_at = _utc()
    started = time.monotonic()
    try:
        outcome = adapter.run(task, sandbox)
    except AgentSetupError:
        raise
    except Exception as exc:  # an adapter bug must not lose the run's other output
        outcome = AgentOutcome(
            status="error",
            message=f"the {adapter.name} adapter failed: {type(exc).__name__}: {exc}",
            details={"traceback": traceback.format_exc(limit=8)},
        )
    wall_s = time.monotonic() - started
    outcome = checked_outcome(outcome, task)
    archive = archive_workspace(
        task.workspace, run_dir / ARCHIVE, ArtifactBudget(store.run_dir(run_id))
    )

    outcome_record = outcome.to_record()
    details = outcome_record.pop("details")
    record = {
        "run_id": run_id,
        "experiment": spec["experiment"],
        "cell_id": spec["cell_id"],
        "repeat": spec["repeat"],
        "agent": spec["agent"],
        "adapter": adapter.name,
        "model": spec["model"],
        **outcome_record,
        "budget_usd": task.budget_usd,
        "max_turns": task.max_turns,
        "time_limit_s": task.time_limit_s,
        "wall_s": round(wall_s, 3),
        "started_at": started_at,
        "finished_at": _utc(),
        "prompt_version": PROMPT_VERSION,
        "prompt_chars": len(prompt),
        "context_file": context[0] if context else None,
        **archive,
        "transcript_path": str(task.transcript_path) if task.transcript_path.exists() else None,
        "archive_path": str(run_dir / ARCHIVE),
        "previous_attempt": str(previous) if previous else None,
        "retryable": is_transient(outcome.status, outcome.message),
        # A JSON string, not a nested object: each adapter has its own shape, and the
        # warehouse loads every record with one schema.
        "details": json.dumps(details, sort_keys=True, default=str),
    }
    try:
        store.write_record(STAGE, run_id, record)
    except RecordError as exc:
        # A number no record can hold (checked_outcome should have caught it): the run is
        # recorded as an error saying which field, never left without a record.
        record = {**record, **_error_fields(str(exc))}
        store.write_record(STAGE, run_id, record)
    return GenerationResult(record, reused=False)


def _error_fields(message: str) -> dict[str, Any]:
    """The record fields of an `error` run whose own numbers cannot be trusted."""
    return {
        **AgentOutcome(status="error", message=message).to_record(),
        "details": json.dumps({"rejected": message}),
        "retryable": False,
    }


def checked_outcome(outcome: AgentOutcome, task: AgentTask) -> AgentOutcome:
    """The outcome, or an `error` outcome naming the run and the transcript when a number
    the agent reported is not sane (bounds.py): a transcript line the meter refused, or a
    total out of range. Such numbers never reach a record."""
    meter = outcome.details.get("meter")
    problems = list(meter.get("invalid_numbers") or []) if isinstance(meter, dict) else []
    problems += outcome_problems(
        usage=outcome.usage, duration_s=outcome.duration_s, exit_code=outcome.exit_code
    )
    if not problems:
        return outcome
    shown = "; ".join(problems[:3]) + (f" (and {len(problems) - 3} more)" if problems[3:] else "")
    return AgentOutcome(
        status="error",
        message=f"run {task.run_id}: transcript {task.transcript_path}: {shown}",
        usage=Usage(),
        details={"rejected_numbers": problems, "previous_status": outcome.status},
    )


def record_failure(spec: Mapping[str, Any], store: ArtifactStore, message: str) -> dict[str, Any]:
    """Record a run the stage itself failed on (not the agent) as an `error` run, with an
    empty workspace archive when there is none, so the later stages and the warehouse see
    the run and its reason instead of a failed chunk."""
    run_id = spec["run_id"]
    run_dir = store.run_dir(run_id, STAGE)
    if not (run_dir / ARCHIVE).is_file():
        empty = run_dir / "workspace.empty"
        empty.mkdir(parents=True, exist_ok=True)
        archive_workspace(empty, run_dir / ARCHIVE)
        empty.rmdir()
    record = {
        "run_id": run_id,
        "experiment": spec["experiment"],
        "cell_id": spec["cell_id"],
        "repeat": spec["repeat"],
        "agent": spec["agent"],
        "adapter": None,
        "model": spec["model"],
        **_error_fields(message),
        "files": 0,
        "workspace_bytes": 0,
        "started_at": _utc(),
        "finished_at": _utc(),
        "prompt_version": PROMPT_VERSION,
        "transcript_path": None,
        "archive_path": str(run_dir / ARCHIVE),
    }
    store.write_record(STAGE, run_id, record)
    return record

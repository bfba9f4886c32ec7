"""Import agent runs recorded elsewhere (another machine, a CI job, a hand-run CLI).

A source folder holds one folder per run:

    <source_root>/<run_id>/
        metadata.json     {"run_id"?, "agent", "model", "exit_code", "duration_s",
                           "cost_usd"?, "status"?, ...}
        transcript.jsonl  Claude Code stream-json or Codex JSONL (optional)
        workspace/        the project the agent wrote

The run's folder is `<source_root>/<run_id>/`, or else any folder whose metadata.json names
that run_id. Replaying copies the workspace and the transcript into the task's places and
derives the outcome from the metadata and the parsed transcript, so an imported run is
recorded exactly like one run here. A broken recording is an `error` outcome naming the
path, never an exception.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, get_args

from bench_pipeline.agents.base import (
    AgentAdapter,
    AgentOutcome,
    AgentStatus,
    AgentTask,
    Usage,
)
from bench_pipeline.agents.transcripts import Prices, meter_lines, read_transcript
from bench_pipeline.sandbox.base import Sandbox

METADATA = "metadata.json"
TRANSCRIPT = "transcript.jsonl"
WORKSPACE = "workspace"
STATUSES: tuple[str, ...] = get_args(AgentStatus)


class MetadataError(ValueError):
    """metadata.json is missing or does not have the documented shape."""


def _safe_name(run_id: str) -> bool:
    return bool(run_id) and Path(run_id).name == run_id and run_id not in (".", "..")


def _read_json_object(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MetadataError(f"{path}: missing") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise MetadataError(f"{path}: cannot read: {exc}") from None
    except ValueError as exc:
        raise MetadataError(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise MetadataError(f"{path}: must be a JSON object, got {type(data).__name__}")
    return data


def load_metadata(path: Path) -> dict[str, Any]:
    """metadata.json checked against the documented shape; MetadataError says what is wrong."""
    meta = _read_json_object(path)

    def bad(key: str, expected: str) -> MetadataError:
        return MetadataError(f"{path}: {key} must be {expected}, got {meta.get(key)!r}")

    for key in ("agent", "model"):
        if not isinstance(meta.get(key), str) or not meta[key].strip():
            raise bad(key, "a non-empty string")
    if "exit_code" not in meta:
        raise MetadataError(f"{path}: exit_code is missing (null when the run was killed)")
    exit_code = meta["exit_code"]
    if exit_code is not None and (isinstance(exit_code, bool) or not isinstance(exit_code, int)):
        raise bad("exit_code", "an integer or null")
    if not _non_negative(meta.get("duration_s")):
        raise bad("duration_s", "a number >= 0")
    if meta.get("cost_usd") is not None and not _non_negative(meta["cost_usd"]):
        raise bad("cost_usd", "a number >= 0 or null")
    if "run_id" in meta and not isinstance(meta["run_id"], str):
        raise bad("run_id", "a string")
    if "status" in meta and meta["status"] not in STATUSES:
        raise bad("status", "one of " + ", ".join(STATUSES))
    return meta


def _non_negative(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | float) and value >= 0


def _recorded_runs(source_root: Path) -> list[tuple[str, Path]]:
    """(run id, folder) of every folder whose metadata.json is a JSON object."""
    if not source_root.is_dir():
        return []
    runs = []
    for folder in sorted(p for p in source_root.iterdir() if p.is_dir()):
        try:
            meta = _read_json_object(folder / METADATA)
        except MetadataError:
            continue
        run_id = meta.get("run_id")
        runs.append((run_id if isinstance(run_id, str) and run_id else folder.name, folder))
    return runs


def find_run_folder(source_root: Path, run_id: str) -> Path | None:
    """`source_root/<run_id>/` when it exists, else the folder whose metadata names run_id."""
    if _safe_name(run_id) and (source_root / run_id).is_dir():
        return source_root / run_id
    return next((folder for rid, folder in _recorded_runs(source_root) if rid == run_id), None)


def import_runs(source_root: Path) -> list[str]:
    """The run ids recorded under `source_root` (folders with a readable metadata.json)."""
    return sorted(dict.fromkeys(rid for rid, _ in _recorded_runs(source_root)))


class ReplayAdapter(AgentAdapter):
    name = "replay"

    def __init__(self, source_root: Path) -> None:
        self.source_root = Path(source_root)

    def run(self, task: AgentTask, sandbox: Sandbox) -> AgentOutcome:
        """Import the recorded run; nothing is executed, so `sandbox` is not used."""
        folder = find_run_folder(self.source_root, task.run_id)
        if folder is None:
            return _error(
                f"no recorded run {task.run_id} under {self.source_root} (looked for "
                f"{self.source_root / task.run_id}/ and for a {METADATA} naming it)"
            )
        try:
            meta = load_metadata(folder / METADATA)
        except MetadataError as exc:
            return _error(f"cannot import {task.run_id}: {exc}", folder)
        workspace = folder / WORKSPACE
        if not workspace.is_dir():
            return _error(f"cannot import {task.run_id}: {workspace} is missing", folder)

        task.workspace.mkdir(parents=True, exist_ok=True)
        # Merged into the task's workspace, which may already hold the context file; links
        # are copied as links, never followed out of the recording.
        shutil.copytree(workspace, task.workspace, symlinks=True, dirs_exist_ok=True)
        return _outcome(task, folder, meta)


def _error(message: str, folder: Path | None = None) -> AgentOutcome:
    details = {"source": str(folder)} if folder is not None else {}
    return AgentOutcome(status="error", message=message, details=details)


def _outcome(task: AgentTask, folder: Path, meta: dict[str, Any]) -> AgentOutcome:
    transcript = folder / TRANSCRIPT
    details: dict[str, Any] = {"source": str(folder), "metadata": meta}
    if transcript.is_file():
        task.transcript_path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(transcript, task.transcript_path)
        meter = meter_lines(read_transcript(transcript))
        usage = meter.usage(Prices.of(task))
        lines, is_error, errors = meter.lines, meter.is_error, meter.errors
        details["meter"] = meter.summary()
        limit_hit = meter.limit_hit
    else:
        usage, lines, is_error, errors, limit_hit = Usage(), 0, False, [], None
        details["transcript"] = f"{transcript} missing: tokens unknown"
    if meta.get("cost_usd") is not None:
        # What the recording harness measured beats our pricing of its tokens.
        usage.cost_usd, usage.cost_source = float(meta["cost_usd"]), "reported"

    exit_code = meta["exit_code"]
    status: str
    if "status" in meta:
        status = meta["status"]
    elif limit_hit == "max_turns":
        status = "max_turns"
    elif limit_hit == "budget":
        status = "budget_exceeded"
    elif exit_code == 0 and not is_error:
        status = "completed"
    else:
        status = "failed"
    budget_hit = status == "budget_exceeded"
    if status == "completed" and usage.cost_usd is not None and usage.cost_usd > task.budget_usd:
        status, budget_hit = "budget_exceeded", True

    # A recording of another model filed under this cell would skew its results: say so.
    mismatch = meta["model"] != task.model
    if mismatch:
        details["mismatches"] = {"model": {"recorded": meta["model"], "task": task.model}}
    cost = f"${usage.cost_usd:.2f}" if usage.cost_usd is not None else "cost unknown"
    message = (
        f"replayed {task.run_id} from {folder}: {meta['agent']} {meta['model']} "
        f"exit {exit_code}, {status}, {usage.turns} turns, {cost}"
    )
    if status == "failed" and errors:
        message += f": {'; '.join(errors[-2:])}"
    if mismatch:
        message += f" (recorded model {meta['model']!r}, the cell's is {task.model!r})"
    return AgentOutcome(
        status=status,  # type: ignore[arg-type]
        message=message,
        usage=usage,
        exit_code=exit_code,
        duration_s=float(meta["duration_s"]),
        budget_hit=budget_hit,
        transcript_lines=lines,
        details=details,
    )

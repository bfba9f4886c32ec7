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
run, the recording and the file, never an exception.

A recording is untrusted input. Nothing in it is followed out of it: the recording folder,
its workspace, metadata or transcript being a link, a link inside the workspace whose target
resolves outside it, a file hard-linked to one outside it, or a FIFO, socket or device are
refused before anything is copied. Every number (tokens, cost, duration, turns, exit code)
must be finite and in its sane range (bounds.py).
"""

from __future__ import annotations

import errno
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

from bench_pipeline.agents.base import (
    AgentAdapter,
    AgentOutcome,
    AgentStatus,
    AgentTask,
    Usage,
)
from bench_pipeline.agents.bounds import (
    MAX_COST_USD,
    MAX_DURATION_S,
    MAX_EXIT_CODE,
    number_problem,
    outcome_problems,
)
from bench_pipeline.agents.transcripts import Prices, UsageMeter, meter_lines
from bench_pipeline.sandbox.base import Sandbox, default_disk_quota_files, default_disk_quota_mb

METADATA = "metadata.json"
TRANSCRIPT = "transcript.jsonl"
WORKSPACE = "workspace"
STATUSES: tuple[str, ...] = get_args(AgentStatus)
MAX_METADATA_BYTES = 1_000_000
MAX_TRANSCRIPT_BYTES = 256 * 1024 * 1024
MAX_WORKSPACE_ENTRIES = 500_000
_COPY_CHUNK = 1024 * 1024


class RecordingError(ValueError):
    """The recording cannot be imported as it is; the message names the file and why."""


class MetadataError(RecordingError):
    """metadata.json is missing or does not have the documented shape."""


def _safe_name(run_id: str) -> bool:
    return bool(run_id) and Path(run_id).name == run_id and run_id not in (".", "..")


def _read_regular(path: Path, label: str, max_bytes: int) -> bytes:
    """The bytes of `path`, a regular file of the recording and nothing else.

    The recording was made elsewhere and may be hostile: a link would let it import any
    host file we can read (we run as root), a FIFO or device would block or never end, a
    hard link may share its bytes with a file outside the recording. All are refused.
    """
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise RecordingError(f"{label}: missing") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise RecordingError(
                f"{label} is a link (to {os.readlink(path)}); links are not followed"
            ) from None
        raise RecordingError(f"{label}: cannot read: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise RecordingError(f"{label} is a {_kind(info.st_mode)}, not a regular file")
        if info.st_nlink > 1:
            raise RecordingError(
                f"{label} is a hard link shared with {info.st_nlink - 1} other path(s), "
                "maybe outside the recording"
            )
        if info.st_size > max_bytes:
            raise RecordingError(f"{label} is {info.st_size:,} bytes, over {max_bytes:,}")
        return handle.read(max_bytes + 1)[:max_bytes]


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "folder"),
        (stat.S_ISLNK, "link"),
        (stat.S_ISFIFO, "FIFO"),
        (stat.S_ISSOCK, "socket"),
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
    ):
        if test(mode):
            return name
    return "special file"


def _read_json_object(path: Path) -> dict[str, Any]:
    data_bytes = _read_regular_as_metadata(path)
    try:
        data = json.loads(data_bytes.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise MetadataError(f"{path.name}: cannot read: {exc}") from None
    except ValueError as exc:
        raise MetadataError(f"{path.name}: not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise MetadataError(f"{path.name}: must be a JSON object, got {type(data).__name__}")
    return data


def _read_regular_as_metadata(path: Path) -> bytes:
    try:
        return _read_regular(path, path.name, MAX_METADATA_BYTES)
    except MetadataError:
        raise
    except RecordingError as exc:
        raise MetadataError(str(exc)) from None


def load_metadata(path: Path) -> dict[str, Any]:
    """metadata.json checked against the documented shape; MetadataError says what is wrong
    (its message starts with the file's name; the caller adds the run and the folder)."""
    meta = _read_json_object(path)
    name = path.name

    def bad(key: str, expected: str) -> MetadataError:
        return MetadataError(f"{name}: {key} must be {expected}, got {meta.get(key)!r}")

    for key in ("agent", "model"):
        if not isinstance(meta.get(key), str) or not meta[key].strip():
            raise bad(key, "a non-empty string")
    if "exit_code" not in meta:
        raise MetadataError(f"{name}: exit_code is missing (null when the run was killed)")
    exit_code = meta["exit_code"]
    if exit_code is not None and (isinstance(exit_code, bool) or not isinstance(exit_code, int)):
        raise bad("exit_code", "an integer or null")
    # Python's json reads NaN, Infinity and 1e309 (as inf) without complaint: every number
    # is checked against its sane range (bounds.py), not just its type.
    problems = [
        number_problem("duration_s", meta.get("duration_s"), MAX_DURATION_S),
        number_problem("exit_code", exit_code, MAX_EXIT_CODE, integer=True, lower=-MAX_EXIT_CODE)
        if exit_code is not None
        else None,
        number_problem("cost_usd", meta["cost_usd"], MAX_COST_USD)
        if meta.get("cost_usd") is not None
        else None,
    ]
    for problem in problems:
        if problem is not None:
            raise MetadataError(f"{name}: {problem}")
    if "run_id" in meta and not isinstance(meta["run_id"], str):
        raise bad("run_id", "a string")
    if "status" in meta and meta["status"] not in STATUSES:
        raise bad("status", "one of " + ", ".join(STATUSES))
    return meta


def _recorded_runs(source_root: Path) -> list[tuple[str, Path]]:
    """(run id, folder) of every folder whose metadata.json is a JSON object."""
    if not source_root.is_dir():
        return []
    runs = []
    for folder in sorted(p for p in source_root.iterdir() if p.is_dir()):
        try:
            meta = _read_json_object(folder / METADATA)
        except RecordingError:
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


@dataclass(frozen=True)
class _Entry:
    relative: str  # POSIX path under the workspace
    kind: str  # "dir" | "file" | "link"
    inode: tuple[int, int] = (0, 0)  # (device, inode) of a file, checked again when copied
    link_target: str = ""  # a link's target, relative and inside the workspace


def scan_workspace(workspace: Path) -> list[_Entry]:
    """Every entry of a recording's workspace, or RecordingError for the first one that
    could bring in anything from outside: the workspace itself a link, a link whose target
    resolves outside it, a hard link shared with a file outside it, a FIFO, socket or device.
    Nothing is followed or read here."""
    label = f"{WORKSPACE}/"
    try:
        info = os.lstat(workspace)
    except FileNotFoundError:
        raise RecordingError(f"{WORKSPACE}/ is missing") from None
    if stat.S_ISLNK(info.st_mode):
        raise RecordingError(
            f"{WORKSPACE} is a link to outside the recording (-> {os.readlink(workspace)}); "
            "a recording's workspace must be a real folder"
        )
    if not stat.S_ISDIR(info.st_mode):
        raise RecordingError(f"{WORKSPACE} is a {_kind(info.st_mode)}, not a folder")
    root = os.path.realpath(workspace)
    # The same disk quota as a sandboxed agent's workspace (sandbox/quota.py), by apparent
    # size: a 2 GiB sparse file holding 16 KB on the recording's disk is 2 GiB once copied.
    quota_mb = default_disk_quota_mb()
    max_bytes = quota_mb * 1024 * 1024 if quota_mb else None
    max_entries = min(MAX_WORKSPACE_ENTRIES, default_disk_quota_files())
    total = 0
    entries: list[_Entry] = []
    links_seen: dict[tuple[int, int], int] = {}
    nlinks: dict[tuple[int, int], tuple[int, str]] = {}
    pending = [""]
    while pending:
        folder = pending.pop()
        with os.scandir(workspace / folder if folder else workspace) as listing:
            children = sorted(listing, key=lambda e: e.name)
        for child in children:
            if len(entries) >= max_entries:
                raise RecordingError(
                    f"{label} holds more than {max_entries:,} entries (the sandbox's file quota, "
                    "BENCH_SANDBOX_DISK_FILES)"
                )
            relative = f"{folder}/{child.name}" if folder else child.name
            shown = f"{WORKSPACE}/{relative}"
            mode = child.stat(follow_symlinks=False).st_mode
            if stat.S_ISDIR(mode):
                entries.append(_Entry(relative, "dir"))
                pending.append(relative)
            elif stat.S_ISLNK(mode):
                target = os.readlink(child.path)
                resolved = os.path.realpath(child.path)
                if resolved != root and not resolved.startswith(root + os.sep):
                    raise RecordingError(
                        f"{shown} is a link to outside the recording (-> {target})"
                    )
                # Re-made relative to where it sits: an absolute target would point back
                # into the recording's folder once copied.
                here = os.path.dirname(os.path.join(root, relative))
                entries.append(
                    _Entry(relative, "link", link_target=os.path.relpath(resolved, here))
                )
            elif stat.S_ISREG(mode):
                st = child.stat(follow_symlinks=False)
                total += st.st_size
                if max_bytes is not None and total > max_bytes:
                    raise RecordingError(
                        f"{label} holds more than the {quota_mb} MiB disk quota "
                        f"(BENCH_SANDBOX_DISK_MB) by apparent size: {shown} is "
                        f"{st.st_size:,} bytes, {st.st_blocks * 512:,} of them on disk "
                        "(a sparse file counts its full length: that is what copying it writes)"
                    )
                key = (st.st_dev, st.st_ino)
                links_seen[key] = links_seen.get(key, 0) + 1
                nlinks[key] = (st.st_nlink, shown)
                entries.append(_Entry(relative, "file", inode=key))
            else:
                raise RecordingError(
                    f"{shown} is a {_kind(mode)}; a recording holds folders, files and links"
                )
    for key, (nlink, shown) in nlinks.items():
        if nlink > links_seen[key]:
            raise RecordingError(
                f"{shown} is a hard link to a file outside the recording "
                f"({nlink} links, {links_seen[key]} inside the workspace)"
            )
    return entries


def copy_workspace(workspace: Path, target: Path, entries: list[_Entry]) -> None:
    """Copy the scanned entries into `target` (merged with what is there), re-checking each
    file as it is opened: never through a link, only the very file that was scanned."""
    target.mkdir(parents=True, exist_ok=True)
    for entry in entries:
        destination = target / entry.relative
        if entry.kind == "dir":
            destination.mkdir(exist_ok=True)
            continue
        if destination.is_symlink() or destination.is_file():
            destination.unlink()
        if entry.kind == "link":
            destination.symlink_to(entry.link_target)
            continue
        source = workspace / entry.relative
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        try:
            fd = os.open(source, flags)
        except OSError as exc:
            raise RecordingError(
                f"{WORKSPACE}/{entry.relative} changed while it was imported: {exc.strerror}"
            ) from None
        with os.fdopen(fd, "rb") as src:
            info = os.fstat(src.fileno())
            if not stat.S_ISREG(info.st_mode) or (info.st_dev, info.st_ino) != entry.inode:
                raise RecordingError(f"{WORKSPACE}/{entry.relative} changed while it was imported")
            out = os.open(destination, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
            with os.fdopen(out, "wb") as dst:
                while chunk := src.read(_COPY_CHUNK):
                    dst.write(chunk)
                os.fchmod(dst.fileno(), stat.S_IMODE(info.st_mode) & 0o755)


class ReplayAdapter(AgentAdapter):
    name = "replay"

    def __init__(self, source_root: Path) -> None:
        self.source_root = Path(source_root)

    def run(self, task: AgentTask, sandbox: Sandbox) -> AgentOutcome:
        """Import the recorded run; nothing is executed, so `sandbox` is not used.

        Everything is checked before anything is copied: a refused recording leaves the
        task's workspace as it was and becomes an `error` outcome naming the run, the
        recording and the file.
        """
        folder = find_run_folder(self.source_root, task.run_id)
        if folder is None:
            return _error(
                f"no recorded run {task.run_id} under {self.source_root} (looked for "
                f"{self.source_root / task.run_id}/ and for a {METADATA} naming it)"
            )
        try:
            if folder.is_symlink():
                raise RecordingError(
                    f"the recording folder is a link (to {os.readlink(folder)}); "
                    "links are not followed"
                )
            meta = load_metadata(folder / METADATA)
            entries = scan_workspace(folder / WORKSPACE)
            transcript, meter = _read_transcript(folder)
            outcome = _outcome(task, folder, meta, meter)
            problems = outcome_problems(
                usage=outcome.usage, duration_s=outcome.duration_s, exit_code=outcome.exit_code
            )
            if problems:
                raise RecordingError(f"{METADATA} / {TRANSCRIPT}: " + "; ".join(problems))
            copy_workspace(folder / WORKSPACE, task.workspace, entries)
        except RecordingError as exc:
            return _error(f"run {task.run_id}: recording {folder}: {exc}", folder)
        if transcript is not None:
            task.transcript_path.parent.mkdir(parents=True, exist_ok=True)
            task.transcript_path.write_bytes(transcript)
        return outcome


def _read_transcript(folder: Path) -> tuple[bytes | None, UsageMeter | None]:
    """The transcript's bytes and its meter (None, None when the recording has none)."""
    path = folder / TRANSCRIPT
    if not os.path.lexists(path):
        return None, None
    data = _read_regular(path, TRANSCRIPT, MAX_TRANSCRIPT_BYTES)
    # As read_transcript does: a final line cut mid-way (or mid-UTF-8) is kept as garbage.
    meter = meter_lines(data.decode("utf-8", errors="replace").splitlines())
    if meter.invalid_numbers:
        shown = "; ".join(meter.invalid_numbers[:3])
        more = len(meter.invalid_numbers) - 3
        raise RecordingError(f"{TRANSCRIPT}: {shown}" + (f" (and {more} more)" if more > 0 else ""))
    return data, meter


def _error(message: str, folder: Path | None = None) -> AgentOutcome:
    details = {"source": str(folder)} if folder is not None else {}
    return AgentOutcome(status="error", message=message, details=details)


def _outcome(
    task: AgentTask, folder: Path, meta: dict[str, Any], meter: UsageMeter | None
) -> AgentOutcome:
    transcript = folder / TRANSCRIPT
    details: dict[str, Any] = {"source": str(folder), "metadata": meta}
    if meter is not None:
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

"""Corrupt records: find them, move them aside with the reason, and say which stage to redo.

A per-run record (`records/<stage>/<run_id>.json`) is one warehouse row. One that is not
valid JSON, has a column of the wrong type, holds NaN or Infinity, is a symlink or is not
a regular file would otherwise fail the whole warehouse build (or, worse, load: a symlink
can point anywhere on the host). Such a record is moved to

    quarantine/<stage>/<run_id>.<UTC time>.json          the file as it was (a symlink stays one)
    quarantine/<stage>/<run_id>.<UTC time>.reason.json   run id, stage, path, why, when

and the record is then missing from the store, which is what the runner's resume logic
looks for: a stage whose record was quarantined and not written since is computed again
for that run (`pending_repairs`). The other runs load as usual.
"""

from __future__ import annotations

import functools
import io
import json
import math
import os
import re
import stat
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench_pipeline.records import RECORDS, Bound, bound_problem, value_bounds
from bench_pipeline.warehouse.artifacts import MAX_RECORD_BYTES, ArtifactStore, atomic_write_json

QUARANTINE = "quarantine"
EVENTS_FILE = "transcript_events.json"  # the quality stage's events: a table of their own
# Far larger than any stage writes (a few kB); a bigger file is not a record (the store's
# write_record moves a bigger record's bulky fields to a file of their own).
# The warehouse infers an integer column's width from the data, so INTEGER takes what
# BIGINT takes: only what no 64-bit column can hold is refused.
_INT_BOUNDS = {"INTEGER": 2**63, "BIGINT": 2**63}


class BadRecord(ValueError):
    """Why a record cannot be loaded (the message is the reason, one line)."""


@dataclass(frozen=True)
class QuarantinedRecord:
    run_id: str
    stage: str
    path: str  # where the record was
    reason: str
    moved_to: str  # where it is now

    def describe(self) -> str:
        return (
            f"run {self.run_id}, stage {self.stage}: {self.path}: {self.reason} "
            f"(moved to {self.moved_to})"
        )


def _reject_constant(token: str) -> Any:
    raise BadRecord(f"non-finite number {token}")


def _finite_float(token: str) -> float:
    # Checked as it is parsed (no second walk over the record): 1e400 parses to inf.
    value = float(token)
    if not math.isfinite(value):
        raise BadRecord(f"non-finite number {token}")
    return value


# One decoder for every record (json.loads with hooks would build one per call).
_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float)


def type_problem(value: Any, sql_type: str) -> str | None:
    """Why `value` cannot be a `sql_type` column (None: it can). NULL always can."""
    if value is None:
        return None
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if sql_type == "VARCHAR":
        return None if isinstance(value, str | int | float) else "an object or list"
    if sql_type == "DOUBLE":
        return None if number else "not a number"
    if sql_type in _INT_BOUNDS:
        if not number or (isinstance(value, float) and not value.is_integer()):
            return "not an integer"
        bound = _INT_BOUNDS[sql_type]
        return None if -bound <= value < bound else f"out of the {sql_type} range"
    if sql_type == "BOOLEAN":
        return None if isinstance(value, bool) else "not true/false"
    if sql_type == "VARCHAR[]":
        ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
        return None if ok else "not a list of strings"
    if sql_type.startswith("STRUCT("):
        ok = isinstance(value, dict) and all(
            v is None or isinstance(v, str) for v in value.values()
        )
        return None if ok else "not an object of strings"
    return None


@functools.cache
def stage_bounds(stage: str) -> dict[str, Bound]:
    """The bounds of a stage's numbers (bench_pipeline/records.py); none for other tables."""
    model = RECORDS.get(stage)
    return value_bounds(model) if model is not None else {}


def read_checked(
    path: Path,
    columns: Mapping[str, str] | None = None,
    run_id: str | None = None,
    bounds: Mapping[str, Bound] | None = None,
) -> Any:
    """The parsed record at `path`, or BadRecord saying why it cannot be loaded.

    Never follows a symlink and never opens what is not a regular file (a FIFO would
    block the build). `columns` (column -> SQL type) are the types the models rely on;
    `run_id`, when given, must match the record's own.
    """
    info = _regular_file_info(path)
    if info.st_size > MAX_RECORD_BYTES:
        raise BadRecord(f"is {info.st_size} bytes, more than a record can be")
    try:
        # O_NOFOLLOW: the file cannot become a symlink between the check and the open.
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as fh:
            raw = fh.read(info.st_size + 1)  # not a 16 MB buffer per small file
    except OSError as err:
        raise BadRecord(f"cannot read: {err.strerror}") from None
    try:
        data = _DECODER.decode(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise BadRecord("is not UTF-8 text") from None
    except json.JSONDecodeError as err:
        raise BadRecord(f"bad JSON: {err.msg} at line {err.lineno} column {err.colno}") from None
    except RecursionError:
        raise BadRecord("bad JSON: nested too deeply") from None
    if columns is None:
        return data
    if not isinstance(data, dict):
        raise BadRecord(f"is a JSON {type(data).__name__}, not an object")
    if run_id is not None and data.get("run_id") != run_id:
        raise BadRecord(f"its run_id {data.get('run_id')!r} is not its file name's {run_id!r}")
    for column, sql_type in columns.items():
        value = data.get(column)
        if value is None or (sql_type == "VARCHAR" and isinstance(value, str)):
            continue  # the common cases, without a call
        problem = type_problem(value, sql_type)
        if problem:
            raise BadRecord(f"column {column} ({sql_type}) is {problem}: {data[column]!r:.80}")
    if bounds:
        problem = bound_problem(dict(bounds), data)
        if problem:
            raise BadRecord(f"column {problem}")
    return data


# A run's transcript events are read as a stream (`iter_checked_array`), one event at a
# time: the file may be far bigger than a record (a long agent session gives hundreds of
# thousands of events) and only each event is bounded like a record. The quality stage
# writes at most MAX_EVENT_ROWS events (quality/stage.py), well inside this.
MAX_EVENTS_BYTES = 1024 * 1024 * 1024
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_CHUNK_CHARS = 1 << 20


def iter_checked_array(path: Path, max_bytes: int = MAX_EVENTS_BYTES) -> Iterator[Any]:
    """The items of the JSON array in `path`, parsed one at a time (memory: one item and a
    chunk), checked as `read_checked` checks a record: never through a symlink, nothing but
    a regular file, no NaN or Infinity, valid UTF-8. Raises BadRecord saying why, possibly
    after some items were yielded (callers that must not load half a file read it twice)."""
    info = _regular_file_info(path)
    if info.st_size > max_bytes:
        raise BadRecord(f"is {info.st_size} bytes, more than {max_bytes} can be loaded")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as err:
        raise BadRecord(f"cannot read: {err.strerror}") from None
    with os.fdopen(fd, "rb") as raw, io.TextIOWrapper(raw, encoding="utf-8") as text:
        try:
            yield from _array_items(text)
        except UnicodeDecodeError:
            raise BadRecord("is not UTF-8 text") from None
        except RecursionError:
            raise BadRecord("bad JSON: nested too deeply") from None


def _array_items(text: io.TextIOBase) -> Iterator[Any]:
    buf, pos, eof = "", 0, False

    def more() -> bool:
        nonlocal buf, pos, eof
        chunk = text.read(_CHUNK_CHARS)
        buf, pos, eof = buf[pos:] + chunk, 0, not chunk
        return bool(chunk)

    def next_char() -> str:
        nonlocal pos
        while True:
            pos = _WHITESPACE.match(buf, pos).end()  # type: ignore[union-attr]
            if pos < len(buf):
                return buf[pos]
            if not more():
                return ""

    if next_char() != "[":
        raise BadRecord("bad JSON: not a list (no '[' first)")
    pos += 1
    first = True
    while True:
        char = next_char()
        if char == "]" and first:
            break
        if not first:
            if char == "]":
                break
            if not char:
                raise BadRecord("bad JSON: the list is cut short")
            if char != ",":
                raise BadRecord("bad JSON: expected ',' or ']' between items")
            pos += 1
            char = next_char()
        if not char:
            raise BadRecord("bad JSON: the list is cut short")
        while True:
            try:
                item, end = _DECODER.raw_decode(buf, pos)
            except json.JSONDecodeError as err:
                if len(buf) - pos > MAX_RECORD_BYTES:
                    raise BadRecord(f"an item is larger than {MAX_RECORD_BYTES} bytes") from None
                if more():
                    continue
                raise BadRecord(f"bad JSON: {err.msg}") from None
            if end == len(buf) and not eof and more():
                continue  # a number may go on in the next chunk: parse it whole
            break
        pos = end
        first = False
        yield item
    pos += 1
    if next_char():
        raise BadRecord("bad JSON: extra data after the list")


def _regular_file_info(path: Path) -> os.stat_result:
    try:
        info = path.lstat()
    except OSError as err:
        raise BadRecord(f"cannot stat: {err.strerror}") from None
    if stat.S_ISLNK(info.st_mode):
        raise BadRecord(f"is a symlink (to {os.readlink(path)}), not a regular file")
    if not stat.S_ISREG(info.st_mode):
        raise BadRecord("is not a regular file")
    return info


def quarantine(
    store: ArtifactStore, stage: str, run_id: str, path: Path, reason: str
) -> QuarantinedRecord:
    """Move `path` (the file itself, never what a symlink points to) aside with its reason."""
    folder = store.root / QUARANTINE / stage
    folder.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    # A record keeps its name's suffix; another file of the run (its transcript events)
    # keeps its whole name, so the two never collide.
    tail = path.suffix if path.stem == run_id else f".{path.name}"
    target = folder / f"{run_id}.{stamp}{tail}"
    os.replace(path, target)  # same file system: a rename, atomic
    # The warehouse's next update drops the run's rows (the events file is its own table).
    store.note_change("transcript_events" if path.name == EVENTS_FILE else stage, run_id)
    entry = QuarantinedRecord(run_id, stage, str(path), reason, str(target))
    reason_file = target.with_name(target.name + ".reason.json")
    atomic_write_json(reason_file, {**asdict(entry), "quarantined_at": stamp})
    return entry


def quarantined(store: ArtifactStore) -> list[QuarantinedRecord]:
    """Every quarantine entry, oldest first."""
    entries = []
    for reason in sorted((store.root / QUARANTINE).glob("*/*.reason.json")):
        try:
            data = json.loads(reason.read_text())
            entries.append(
                QuarantinedRecord(**{k: data[k] for k in QuarantinedRecord.__annotations__})
            )
        except (OSError, ValueError, KeyError, TypeError):
            continue  # a broken reason file says nothing about what to redo
    return entries


def pending_repairs(
    store: ArtifactStore, run_ids: Iterable[str] | None = None
) -> dict[str, set[str]]:
    """stage -> runs whose record of that stage was quarantined and has not been written
    since: the stages to compute again (`run_ids` limits it to some runs)."""
    wanted = None if run_ids is None else set(run_ids)
    out: dict[str, set[str]] = {}
    for entry in quarantined(store):
        if wanted is not None and entry.run_id not in wanted:
            continue
        if not os.path.lexists(store.record_path(entry.stage, entry.run_id)):
            out.setdefault(entry.stage, set()).add(entry.run_id)
    return out


def scan_records(
    store: ArtifactStore,
    stage_columns: Mapping[str, Mapping[str, str] | None],
    run_ids: Iterable[str],
) -> list[QuarantinedRecord]:
    """Check the records of `run_ids` in each stage and quarantine the bad ones."""
    moved = []
    for run_id in run_ids:
        for stage, columns in stage_columns.items():
            path = store.record_path(stage, run_id)
            if not os.path.lexists(path):
                continue
            try:
                read_checked(path, columns or {}, run_id, stage_bounds(stage))
            except BadRecord as bad:
                moved.append(quarantine(store, stage, run_id, path, str(bad)))
    return moved

"""The columnar mirror: every per-run JSON record, also in Parquet parts DuckDB reads directly.

Why: the JSON records stay the source of truth a person can open, but reading 400,000
small JSON files (100,000 runs × 4 stages) costs about a minute, and the warehouse used to
re-read all of them after every chunk of runs. Here each change is read once, when it is
compacted into a Parquet part, and the warehouse loads parts:

    columnar/<table>/part-<first seq>-<last seq>.parquet   rows of raw_<table>
    journal/<table>/<run_id>~<token>                        "this run's file changed"

A writer notes each record it writes in the journal (ArtifactStore.write_record, the
quality stage for transcript events, the quarantine when it moves a record away).
`compact` turns the noted records into one new part per table: the cost of a chunk is the
runs it changed, not the store. Each row carries `_seq` (the compaction that wrote it),
`_deleted` (the file is gone: a tombstone) and the source file's `_mtime_ns` and `_size`;
a run's current rows are those of its highest `_seq`. Small parts are merged now and then
so that the number of files stays small.

A store of JSON records only (written before the mirror existed, or by hand) still builds:
`compact(scan=True)` lists every record file and compacts those the mirror does not hold
as they are (new, changed size or time, or deleted). Listing is cheap next to reading.

One compactor at a time (a file lock beside the mirror); readers only ever see whole
parts (written under a temporary name, then renamed).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import tempfile
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
from filelock import FileLock

from bench_pipeline import stages
from bench_pipeline.warehouse.artifacts import JOURNAL, MARKER_SEP, ArtifactStore
from bench_pipeline.warehouse.integrity import (
    BadRecord,
    QuarantinedRecord,
    quarantine,
    read_checked,
    type_problem,
)

MIRROR = "columnar"
EVENTS = "transcript_events"  # the table of the quality stage's normalised transcript events
EVENTS_STAGE = (
    stages.QUALITY_METRICS.name
)  # the stage that writes them (a bad events file sends it back)
EVENTS_FILE = "transcript_events.json"
# Columns the mirror adds to every row; never part of a warehouse table.
META_COLUMNS = ("_seq", "_deleted", "_mtime_ns", "_size")
# Merge the small parts of a table once it has more than this many: few files to open,
# and the big old part is not rewritten for every chunk.
MAX_SMALL_PARTS = 16
PART_NAME = re.compile(r"^part-(\d{12})-(\d{12})\.parquet$")


@dataclass(frozen=True)
class Part:
    path: Path
    first_seq: int
    last_seq: int


@dataclass
class Compaction:
    """What one `compact` call did."""

    # table -> runs whose rows the new parts replace (tombstones included)
    changed: dict[str, set[str]] = field(default_factory=dict)
    new_parts: dict[str, list[Part]] = field(default_factory=dict)
    merged: dict[str, int] = field(default_factory=dict)  # table -> parts merged into one
    scanned: bool = False
    duration_s: float = 0.0

    @property
    def rows(self) -> int:
        return sum(len(v) for v in self.changed.values())


def parts(root: Path, table: str) -> list[Part]:
    folder = root / MIRROR / table
    found = []
    if folder.is_dir():
        for entry in os.scandir(folder):
            match = PART_NAME.match(entry.name)
            if match:
                found.append(Part(Path(entry.path), int(match[1]), int(match[2])))
    return sorted(found, key=lambda p: p.first_seq)


def tables(root: Path) -> list[str]:
    """Tables the mirror holds parts of."""
    folder = root / MIRROR
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if p.is_dir() and parts(root, p.name))


def mirror_id(root: Path) -> str:
    """An id that changes when the mirror is made anew (so a warehouse that loaded another
    mirror's parts reloads everything instead of trusting sequence numbers)."""
    path = root / MIRROR / "_id"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"._id.{secrets.token_hex(4)}")
        tmp.write_text(secrets.token_hex(8))
        try:
            os.link(tmp, path)  # first writer wins; a second keeps the first's id
        except FileExistsError:
            pass
        finally:
            tmp.unlink()
    return path.read_text().strip()


def part_glob_sql(items: Iterable[Part]) -> str:
    """A DuckDB list literal of the parts' paths."""
    return "[" + ", ".join("'" + str(p.path).replace("'", "''") + "'" for p in items) + "]"


def current_rows_sql(items: Iterable[Part], after_seq: int = 0, columns: str = "*") -> str:
    """SELECT of each run's current rows (tombstones included) among `items`: the rows of
    the run's highest `_seq`, and only rows newer than `after_seq`."""
    where = f"WHERE _seq > {int(after_seq)}" if after_seq else ""
    return (
        f"SELECT {columns} FROM read_parquet({part_glob_sql(items)}, union_by_name = true) "
        f"{where} "
        "QUALIFY _seq = max(_seq) OVER (PARTITION BY run_id)"
    )


def _journal(root: Path, table: str) -> dict[str, list[Path]]:
    """run_id -> its markers, for the runs noted in `table`'s journal."""
    folder = root / JOURNAL / table
    noted: dict[str, list[Path]] = {}
    if folder.is_dir():
        for entry in os.scandir(folder):
            run_id, sep, _ = entry.name.rpartition(MARKER_SEP)
            if sep:
                noted.setdefault(run_id, []).append(Path(entry.path))
    return noted


def _known(con: duckdb.DuckDBPyConnection, items: list[Part]) -> dict[str, tuple[int, int]]:
    """run_id -> (mtime_ns, size) of the file behind its current rows (-1, -1: deleted)."""
    if not items:
        return {}
    rows = con.execute(
        "SELECT run_id, any_value(CASE WHEN _deleted THEN -1 ELSE _mtime_ns END), "
        "any_value(CASE WHEN _deleted THEN -1 ELSE _size END) "
        f"FROM ({current_rows_sql(items, columns='run_id, _seq, _deleted, _mtime_ns, _size')}) "
        "GROUP BY run_id"
    ).fetchall()
    return {run_id: (mtime, size) for run_id, mtime, size in rows}


def _scan(files: Mapping[str, Path], known: Mapping[str, tuple[int, int]]) -> set[str]:
    """Runs whose file differs from what the mirror holds: new, changed or deleted."""
    changed = set()
    for run_id, path in files.items():
        try:
            info = path.lstat()
        except OSError:
            continue  # gone since the listing: a later scan sees it
        if known.get(run_id) != (info.st_mtime_ns, info.st_size):
            changed.add(run_id)
    changed |= {r for r, (mtime, _) in known.items() if mtime != -1 and r not in files}
    return changed


def _next_seq(root: Path) -> int:
    last = 0
    for table in (root / MIRROR).iterdir() if (root / MIRROR).is_dir() else ():
        if table.is_dir():
            last = max([last, *(p.last_seq for p in parts(root, table.name))])
    return last + 1


class PartWriter:
    """Writes one table's rows as a Parquet part, the columns typed as the warehouse wants.

    Known columns (`schema`) are cast to their SQL type and always present; other nested
    values (objects, lists) become JSON, so that parts written months apart, whose
    objects have other keys, still read as one table; a column that is NULL in every row
    of the part is left out (union_by_name gives it back as NULL).
    """

    def __init__(self, con: duckdb.DuckDBPyConnection, scratch: Path) -> None:
        self.con = con
        self.scratch = scratch

    def write(
        self,
        folder: Path,
        seq: int,
        rows: Iterable[dict[str, Any]],
        schema: Mapping[str, str],
    ) -> Part:
        # Streamed to disk as they come: 100,000 records held as dicts took ~0.5 GB.
        ndjson = self.scratch / f"{folder.name}-{seq}.ndjson"
        with ndjson.open("w") as out:
            for row in rows:
                out.write(json.dumps(row, separators=(",", ":"), default=str))
                out.write("\n")
        source = (
            f"read_json('{_quote(ndjson)}', format = 'newline_delimited', sample_size = -1, "
            "maximum_object_size = 67108864)"
        )
        inferred = self.con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()
        select = []
        present = set()
        for name, sql_type, *_ in inferred:
            present.add(name)
            quoted = '"' + name.replace('"', '""') + '"'
            if name in schema:
                select.append(f"CAST({quoted} AS {schema[name]}) AS {quoted}")
            elif name in META_COLUMNS:
                select.append(quoted)
            elif sql_type == '"NULL"':
                continue
            elif sql_type.startswith(("STRUCT", "MAP", "UNION")) or sql_type.endswith("]"):
                select.append(f"CAST({quoted} AS JSON) AS {quoted}")
            else:
                select.append(quoted)
        for name, sql_type in schema.items():
            if name not in present:
                select.append(f'CAST(NULL AS {sql_type}) AS "{name}"')
        folder.mkdir(parents=True, exist_ok=True)
        final = folder / f"part-{seq:012d}-{seq:012d}.parquet"
        tmp = folder / f".{final.name}.{secrets.token_hex(4)}.tmp"
        self.con.execute(
            f"COPY (SELECT {', '.join(select)} FROM {source}) TO '{_quote(tmp)}' "
            "(FORMAT parquet, COMPRESSION zstd)"
        )
        os.replace(tmp, final)
        ndjson.unlink()
        return Part(final, seq, seq)


def _quote(path: Path) -> str:
    return str(path).replace("'", "''")


def merge_small_parts(
    con: duckdb.DuckDBPyConnection, root: Path, table: str, force: bool = False
) -> int:
    """Merge a table's parts when it has more than MAX_SMALL_PARTS + 1; returns how many
    were merged (0: nothing to do). Rows keep their `_seq`; superseded rows are dropped.

    `force` merges every part (a full rebuild's compaction): one file per table.
    """
    items = parts(root, table)
    if len(items) < 2 or (not force and len(items) <= MAX_SMALL_PARTS + 1):
        return 0
    # The oldest part is the big one; the newer ones are merged among themselves, and
    # into it once they weigh as much: each row is rewritten about log2(runs) times.
    rest = sum(p.path.stat().st_size for p in items[1:])
    chosen = items if force or rest >= items[0].path.stat().st_size else items[1:]
    first, last = chosen[0].first_seq, chosen[-1].last_seq
    final = root / MIRROR / table / f"part-{first:012d}-{last:012d}.parquet"
    tmp = final.with_name(f".{final.name}.{secrets.token_hex(4)}.tmp")
    con.execute(
        f"COPY ({current_rows_sql(chosen)}) TO '{_quote(tmp)}' (FORMAT parquet, COMPRESSION zstd)"
    )
    # The merged part first, then the old ones away: a reader between the two sees each
    # row twice with the same _seq, which current_rows_sql keeps as one run's rows twice:
    # readers take the compaction lock (see `locked`), so none is between.
    os.replace(tmp, final)
    for item in chosen:
        if item.path != final:
            item.path.unlink(missing_ok=True)
    return len(chosen)


def locked(root: Path) -> FileLock:
    """The mirror's lock: one compactor, and no reader of parts while a merge swaps them."""
    (root / MIRROR).mkdir(parents=True, exist_ok=True)
    return FileLock(str(root / MIRROR / ".lock"))


def with_scratch(prefix: str = "bench-columnar-") -> tempfile.TemporaryDirectory[str]:
    return tempfile.TemporaryDirectory(prefix=prefix)


def _files(store: ArtifactStore, table: str) -> dict[str, Path]:
    """run_id -> the file behind its rows, for every such file in the store."""
    if table == EVENTS:
        runs = store.root / "runs"
        found = {}
        if runs.is_dir():
            for entry in os.scandir(runs):
                path = Path(entry.path) / EVENTS_STAGE / EVENTS_FILE
                if os.path.lexists(path):
                    found[entry.name] = path
        return found
    folder = store.root / "records" / table
    if not folder.is_dir():
        return {}
    return {
        e.name[: -len(".json")]: Path(e.path)
        for e in os.scandir(folder)
        if e.name.endswith(".json") and not e.name.startswith(".")
    }


def source_path(store: ArtifactStore, table: str, run_id: str) -> Path:
    if table == EVENTS:
        return store.run_dir(run_id, EVENTS_STAGE) / EVENTS_FILE
    return store.record_path(table, run_id)


def _tombstone(run_id: str, seq: int) -> dict[str, Any]:
    return {"run_id": run_id, "_seq": seq, "_deleted": True, "_mtime_ns": -1, "_size": -1}


def _check_event(row: Any, columns: Mapping[str, str], run_id: str) -> None:
    if not isinstance(row, dict):
        raise BadRecord("an event is not a JSON object")
    if row.get("run_id") != run_id:
        raise BadRecord(f"an event's run_id {row.get('run_id')!r} is not the run's {run_id!r}")
    for column, sql_type in columns.items():
        problem = type_problem(row.get(column), sql_type)
        if problem:
            raise BadRecord(f"an event's {column} ({sql_type}) is {problem}")


def _read_rows(
    store: ArtifactStore,
    table: str,
    run_id: str,
    columns: Mapping[str, str],
    seq: int,
    quarantined: list[QuarantinedRecord],
    send_back: dict[str, set[str]],
) -> list[dict[str, Any]]:
    """The run's rows of `table` as its file holds them now; a tombstone when the file is
    gone, empty (events) or bad (then it is quarantined, with what depends on it)."""
    path = source_path(store, table, run_id)
    try:
        info = path.lstat()
    except OSError:
        return [_tombstone(run_id, seq)]
    meta = {"_seq": seq, "_deleted": False, "_mtime_ns": info.st_mtime_ns, "_size": info.st_size}
    try:
        if table != EVENTS:
            data = read_checked(path, columns, run_id=run_id)
            return [{**data, "filename": str(path), **meta}]
        events = read_checked(path)
        if not isinstance(events, list):
            raise BadRecord(f"is a JSON {type(events).__name__}, not a list of events")
        for event in events:  # each event row is checked like a record, its run_id included
            _check_event(event, columns, run_id)
    except BadRecord as bad:
        stage = EVENTS_STAGE if table == EVENTS else table
        quarantined.append(quarantine(store, stage, run_id, path, str(bad)))
        if table == EVENTS:
            # The quality record was made from these events: both are made again.
            record = store.record_path(EVENTS_STAGE, run_id)
            if os.path.lexists(record):
                why = f"its {EVENTS_FILE} was quarantined ({bad})"
                quarantined.append(quarantine(store, EVENTS_STAGE, run_id, record, why))
                send_back.setdefault(EVENTS_STAGE, set()).add(run_id)
        return [_tombstone(run_id, seq)]
    return [{**event, **meta} for event in events] or [_tombstone(run_id, seq)]


def _noted_tables(root: Path) -> set[str]:
    folder = root / JOURNAL
    return {p.name for p in folder.iterdir() if p.is_dir()} if folder.is_dir() else set()


def compact(
    store: ArtifactStore,
    schemas: Mapping[str, Mapping[str, str]],
    *,
    scan: bool = False,
    merge_all: bool = False,
    quarantined: list[QuarantinedRecord] | None = None,
) -> Compaction:
    """Bring the mirror up to date with the JSON files; returns what changed.

    Without `scan`, only the runs the journal names are read (a table the mirror does not
    hold yet is scanned in full: a JSON-only store). With `scan`, every file is listed and
    compared with the mirror, which catches files written without a journal note.
    `schemas` maps a warehouse table (raw_<table>) to the column types the models rely on.
    `merge_all` leaves one part per table. Bad files are quarantined and listed in
    `quarantined`.
    """
    started = time.monotonic()
    quarantined = [] if quarantined is None else quarantined
    result = Compaction(scanned=scan)
    root = store.root
    names = set(store.stages()) | set(tables(root)) | _noted_tables(root)
    names.discard(EVENTS)
    # The events first: a bad events file sends its run's quality record back too.
    ordered = [EVENTS, *sorted(names)]
    send_back: dict[str, set[str]] = {}
    with locked(root), duckdb.connect() as con, with_scratch() as scratch:
        con.execute("SET preserve_insertion_order = false")
        writer = PartWriter(con, Path(scratch))
        seq = _next_seq(root)
        for table in ordered:
            columns = dict(schemas.get(f"raw_{table}", {}))
            existing = parts(root, table)
            noted = _journal(root, table)
            todo = set(noted) | send_back.get(table, set())
            if scan or not existing:
                todo |= _scan(_files(store, table), _known(con, existing))
            if todo:
                rows = (
                    row
                    for run_id in sorted(todo)
                    for row in _read_rows(
                        store, table, run_id, columns, seq, quarantined, send_back
                    )
                )
                part = writer.write(root / MIRROR / table, seq, rows, _part_schema(columns))
                seq += 1
                result.changed[table] = todo
                result.new_parts[table] = [part]
            for markers in noted.values():
                for marker in markers:
                    marker.unlink(missing_ok=True)
            merged = merge_small_parts(con, root, table, force=merge_all)
            if merged:
                result.merged[table] = merged
    result.duration_s = time.monotonic() - started
    return result


def _part_schema(columns: Mapping[str, str]) -> dict[str, str]:
    # The warehouse reads a record's integers as BIGINT whatever their declared width
    # (read_checked lets any 64-bit integer through): a part must not narrow them.
    schema = {c: ("BIGINT" if t == "INTEGER" else t) for c, t in columns.items()}
    return {"run_id": "VARCHAR", **schema}

"""Build the DuckDB warehouse from the artifact store.

One builder at a time (a file lock) changes a copy of the live database and swaps it
in with an atomic rename (writer.py). Why: DuckDB locks a file per process, so an
analyst holding `warehouse.duckdb` open (read-only) would otherwise block the
pipeline, and a reader must never see a half-built warehouse. Readers keep the old
file until they reconnect.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections.abc import Collection, Iterable, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

from bench_pipeline.records import RECORDS, source_schema
from bench_pipeline.warehouse import columnar
from bench_pipeline.warehouse.accuracy import GROUPS_TABLE as ACCURACY_GROUPS_TABLE
from bench_pipeline.warehouse.accuracy import TABLE as ACCURACY_TABLE
from bench_pipeline.warehouse.accuracy import load_bot_accuracy
from bench_pipeline.warehouse.artifacts import ArtifactStore
from bench_pipeline.warehouse.catalog import apply_comments, table_docs
from bench_pipeline.warehouse.datatests import DataTest, DataTestResult, run_data_tests
from bench_pipeline.warehouse.integrity import QuarantinedRecord
from bench_pipeline.warehouse.marts import MART_SCHEMAS
from bench_pipeline.warehouse.models import SqlModel, load_models
from bench_pipeline.warehouse.reference import reference_tables
from bench_pipeline.warehouse.writer import updating

# Sources that exist even before any run wrote them, so that the SQL models always
# compile. A stage adds its own columns; these are the ones the models rely on.
SOURCE_SCHEMAS: dict[str, dict[str, str]] = {
    "raw_design_cells": {
        "experiment": "VARCHAR",
        "cell_id": "VARCHAR",
        "designs": "VARCHAR[]",
        "config_json": "VARCHAR",
        "current": "BOOLEAN",
    },
    "raw_design_runs": {
        "experiment": "VARCHAR",
        "run_id": "VARCHAR",
        "cell_id": "VARCHAR",
        "repeat": "INTEGER",
        "seed": "BIGINT",
        "current": "BOOLEAN",
    },
}

# Which parts of the columnar mirror (columnar.py) the warehouse holds: what an update reads.
LOADED_PARTS = "meta_loaded_parts"

# The per-run stages' records: the columns the SQL models read, so that they compile
# before any run reached that stage (a stage writes more columns than these). Each stage's
# columns come from the model of its record (bench_pipeline/records.py).
SOURCE_SCHEMAS.update({f"raw_{stage}": source_schema(model) for stage, model in RECORDS.items()})
# The normalised transcript events, one row per event (agents/events.py).
SOURCE_SCHEMAS.update(
    {
        "raw_transcript_events": {
            "run_id": "VARCHAR",
            "position": "INTEGER",
            "index": "INTEGER",
            "kind": "VARCHAR",
            "tool": "VARCHAR",
            "tool_input": "VARCHAR",
            "is_error": "BOOLEAN",
            "text": "VARCHAR",
            "wasted": "VARCHAR",
        },
    }
)


@dataclass(frozen=True)
class TableSummary:
    name: str
    kind: str  # "source" | "table" | "view"
    rows: int


@dataclass
class WarehouseBuild:
    path: Path
    tables: list[TableSummary] = field(default_factory=list)
    duration_s: float = 0.0
    # Records moved aside because they could not be loaded (integrity.py); their runs
    # load without them and the next `bench run` computes those stages again.
    quarantined: list[QuarantinedRecord] = field(default_factory=list)
    # What the build skipped or repaired, one line each: journal entries no writer makes,
    # mirror parts that could not be read, runs whose rows were missing (columnar.py).
    notices: list[str] = field(default_factory=list)
    # The data tests run on the new copy before it was swapped in (see build_warehouse).
    test_results: list[DataTestResult] = field(default_factory=list)
    # Runs whose source rows changed (None: a full load) and the models updated for just them.
    changed_runs: int | None = None
    incremental: list[str] = field(default_factory=list)
    # `table.column` left without a comment (a SQL model whose header misses a column).
    undocumented: list[str] = field(default_factory=list)

    def rows(self, name: str) -> int:
        return next(t.rows for t in self.tables if t.name == name)


def _design_frames(designs: Iterable[Mapping[str, Any]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    cells: list[dict[str, Any]] = []
    runs: list[dict[str, Any]] = []
    for design in designs:
        name = design["experiment"]
        for cell in design["cells"]:
            cells.append(
                {
                    "experiment": name,
                    "cell_id": cell["cell_id"],
                    "designs": list(cell["designs"]),
                    "config_json": json.dumps(cell["config"], sort_keys=True),
                    "current": cell.get("current", True),
                    **cell["config"],
                }
            )
        for run in design["runs"]:
            runs.append({"experiment": name, "seed": None, **run})
    return pd.DataFrame(cells), pd.DataFrame(runs)


def _create_source(con: duckdb.DuckDBPyConnection, name: str, frame: pd.DataFrame) -> None:
    if frame.empty:
        cols = ", ".join(f'"{c}" {t}' for c, t in SOURCE_SCHEMAS[name].items())
        con.execute(f"CREATE OR REPLACE TABLE {name} ({cols})")
    else:
        con.register("_frame", frame)
        con.execute(f"CREATE OR REPLACE TABLE {name} AS SELECT * FROM _frame")
        con.unregister("_frame")


def _loaded_parts(con: duckdb.DuckDBPyConnection) -> dict[str, tuple[str, int]]:
    """raw table -> (mirror id, last part sequence number) this warehouse has loaded."""
    con.execute(
        f"CREATE TABLE IF NOT EXISTS {LOADED_PARTS} "
        "(source VARCHAR PRIMARY KEY, mirror_id VARCHAR, loaded_seq BIGINT)"
    )
    rows = con.execute(f"SELECT source, mirror_id, loaded_seq FROM {LOADED_PARTS}").fetchall()
    return {source: (mirror, seq) for source, mirror, seq in rows}


def _columns(con: duckdb.DuckDBPyConnection, relation: str) -> dict[str, str]:
    return {r[0]: r[1] for r in con.execute(f"DESCRIBE {relation}").fetchall()}


_META = ", ".join(columnar.META_COLUMNS)


def _reload(con: duckdb.DuckDBPyConnection, table: str, items: list[columnar.Part]) -> None:
    """raw_<table> made anew from every part: each run's current rows."""
    con.execute(
        f"CREATE OR REPLACE TABLE raw_{table} AS SELECT * EXCLUDE ({_META}) "
        f"FROM ({columnar.current_rows_sql(items)}) WHERE NOT _deleted"
    )


def _append(
    con: duckdb.DuckDBPyConnection, table: str, items: list[columnar.Part], after: int
) -> bool:
    """Replace the rows of the runs the parts newer than `after` hold; False (nothing
    changed) when a column's type differs from the table's: a full reload must decide it."""
    newer = [p for p in items if p.last_seq > after]
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE _new_rows AS {columnar.current_rows_sql(newer, after)}"
    )
    have = _columns(con, f"raw_{table}")
    new = {c: t for c, t in _columns(con, "_new_rows").items() if c not in columnar.META_COLUMNS}
    if any(c in have and have[c] != t for c, t in new.items()):
        return False
    for column, sql_type in new.items():
        if column not in have:
            quoted = '"' + column.replace('"', '""') + '"'
            con.execute(f"ALTER TABLE raw_{table} ADD COLUMN {quoted} {sql_type}")
    con.execute(f"DELETE FROM raw_{table} WHERE run_id IN (SELECT run_id FROM _new_rows)")
    con.execute(
        f"INSERT INTO raw_{table} BY NAME SELECT * EXCLUDE ({_META}) FROM _new_rows "
        "WHERE NOT _deleted"
    )
    con.execute("CREATE OR REPLACE TEMP TABLE _new_runs AS SELECT DISTINCT run_id FROM _new_rows")
    con.execute("DROP TABLE _new_rows")
    return True


def _load_records(
    con: duckdb.DuckDBPyConnection,
    store: ArtifactStore,
    quarantined: list[QuarantinedRecord],
    full: bool,
    scan: bool = False,
    notices: list[str] | None = None,
) -> tuple[list[str], set[str] | None]:
    """Compact what changed into the columnar mirror, then bring the raw_* tables of the
    per-run records up to date from its parts: only the newer parts' rows, unless `full`
    (or this warehouse loaded another mirror, or none yet).

    Returns the tables loaded and the runs whose rows changed (None: any may have, as
    after a reload).
    """
    columnar.compact(
        store,
        SOURCE_SCHEMAS,
        scan=scan,
        quarantined=quarantined,
        check=full,
        notices=notices,
    )
    mirror = columnar.mirror_id(store.root)
    loaded = _loaded_parts(con)
    existing = _objects(con)
    names = []
    changed: set[str] | None = set()
    with columnar.locked(store.root):  # no merge swaps parts while they are read
        for table in columnar.tables(store.root):
            items = columnar.parts(store.root, table)
            last = items[-1].last_seq
            mirror_was, seq_was = loaded.get(table, ("", 0))
            fresh = full or mirror_was != mirror or f"raw_{table}" not in existing
            if not fresh and last > seq_was and _append(con, table, items, seq_was):
                if changed is not None:
                    rows = con.execute("SELECT run_id FROM _new_runs").fetchall()
                    changed |= {r[0] for r in rows}
            elif fresh or last > seq_was:
                _reload(con, table, items)
                changed = None
            con.execute(
                f"INSERT OR REPLACE INTO {LOADED_PARTS} VALUES (?, ?, ?)", [table, mirror, last]
            )
            names.append(f"raw_{table}")
    return names, changed


@dataclass
class SourceLoad:
    names: list[str]
    # Runs whose source rows changed; None when any may have (a reload, a new design).
    changed_runs: set[str] | None


def _designs_fingerprint(store: ArtifactStore) -> str:
    """Changes when a design file is added, removed or rewritten."""
    folder = store.root / "designs"
    files = sorted(folder.glob("*.json")) if folder.is_dir() else []
    stamp = [(p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in files]
    return hashlib.sha256(json.dumps(stamp).encode()).hexdigest()[:16]


def _load_sources(
    con: duckdb.DuckDBPyConnection,
    store: ArtifactStore,
    quarantined: list[QuarantinedRecord] | None = None,
    full: bool = False,
    scan: bool = False,
    notices: list[str] | None = None,
) -> SourceLoad:
    """Load the designs, reference tables and records; bad records are moved to the
    quarantine and appended to `quarantined`."""
    quarantined = [] if quarantined is None else quarantined
    names = ["raw_design_cells", "raw_design_runs"]
    fingerprint = _designs_fingerprint(store)
    loaded = _loaded_parts(con)
    same_designs = not full and loaded.get("designs", ("", 0))[0] == fingerprint
    if not same_designs or not set(names) <= set(_objects(con)):
        cells, runs = _design_frames(store.designs())
        _create_source(con, "raw_design_cells", cells)
        _create_source(con, "raw_design_runs", runs)
        con.execute(
            f"INSERT OR REPLACE INTO {LOADED_PARTS} VALUES ('designs', ?, 0)", [fingerprint]
        )
        same_designs = False
    # Constants the models join to (t quantiles, the axis catalogue): see reference.py.
    for ref_name, ref_frame in reference_tables().items():
        con.register("_ref_frame", ref_frame)
        con.execute(f"CREATE OR REPLACE TABLE {ref_name} AS SELECT * FROM _ref_frame")
        con.unregister("_ref_frame")
        names.append(ref_name)
    # The bot accuracy benchmark's published files (not per-run records): accuracy.py.
    load_bot_accuracy(con, store.root)
    names += [ACCURACY_TABLE, ACCURACY_GROUPS_TABLE]
    records, changed = _load_records(con, store, quarantined, full, scan, notices)
    names += records
    for table, columns in SOURCE_SCHEMAS.items():
        if table not in names:  # a stage no run has reached yet: an empty table
            cols = ", ".join(f'"{c}" {t}' for c, t in columns.items())
            con.execute(f"CREATE OR REPLACE TABLE {table} ({cols})")
            names.append(table)
    return SourceLoad(names, changed if same_designs else None)


def _objects(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """Tables and views of the main schema: name -> 'table' | 'view'."""
    rows = con.execute(
        "select table_name, table_type from information_schema.tables where table_schema = 'main'"
    ).fetchall()
    return {name: "view" if kind == "VIEW" else "table" for name, kind in rows}


def _model_hash(model: SqlModel) -> str:
    return hashlib.sha256(f"{model.materialized}\n{model.sql}".encode()).hexdigest()[:16]


def _create_model(
    con: duckdb.DuckDBPyConnection,
    model: SqlModel,
    existing: str | None,
    changed_runs: set[str] | None,
    per_run: set[str],
) -> str:
    """Create the model, or for an incremental one whose SQL is the one that built it,
    recompute just the changed runs' rows. Returns "full" or "incremental"."""
    built_by = _loaded_parts(con).get(f"model:{model.name}", ("", 0))[0]
    if (
        model.incremental
        and changed_runs is not None
        and existing == "table"
        and built_by == _model_hash(model)
    ):
        try:
            _update_runs(con, model, changed_runs, per_run)
            return "incremental"
        except duckdb.Error:
            pass  # its columns changed with its sources': built in full below
    kind = "VIEW" if model.materialized == "view" else "TABLE"
    if existing and existing != model.materialized:  # its header switched table <-> view
        con.execute(f'DROP {"VIEW" if existing == "view" else "TABLE"} "{model.name}"')
    con.execute(f"CREATE OR REPLACE {kind} {model.name} AS {model.sql}")
    con.execute(
        f"INSERT OR REPLACE INTO {LOADED_PARTS} VALUES (?, ?, 0)",
        [f"model:{model.name}", _model_hash(model)],
    )
    return "full"


def _per_run_tables(con: duckdb.DuckDBPyConnection) -> set[str]:
    """The sources that hold rows of runs (a run_id column): what an incremental model's
    slice is cut from. The design's cells are shared by runs, so never sliced."""
    rows = con.execute(
        "SELECT DISTINCT table_name FROM information_schema.columns WHERE table_schema = 'main' "
        "AND column_name = 'run_id' AND table_name LIKE 'raw\\_%' ESCAPE '\\'"
    ).fetchall()
    return {r[0] for r in rows}


@contextmanager
def _sliced(con: duckdb.DuckDBPyConnection, tables: Collection[str], runs: Collection[str]):
    """Within the block, each of `tables` reads as just the rows of `runs`: a temporary view
    of the same name shadows it (DuckDB finds temporary objects first), so every view and
    query that names the table sees the slice."""
    database = con.execute("SELECT current_database()").fetchone()[0]
    con.execute("CREATE OR REPLACE TEMP TABLE _changed_runs (run_id VARCHAR)")
    if runs:
        con.executemany("INSERT INTO _changed_runs VALUES (?)", [[r] for r in sorted(runs)])
    shadowed = []
    try:
        for table in sorted(tables):
            con.execute(
                f'CREATE TEMP VIEW "{table}" AS SELECT * FROM "{database}".main."{table}" '
                "WHERE run_id IN (SELECT run_id FROM _changed_runs)"
            )
            shadowed.append(table)
        yield
    finally:
        for table in shadowed:
            con.execute(f'DROP VIEW temp.main."{table}"')


def _update_runs(
    con: duckdb.DuckDBPyConnection, model: SqlModel, runs: set[str], per_run: set[str]
) -> None:
    """Recompute `model`'s rows of `runs`: its own SQL over those runs' slice of the per-run
    tables (see _sliced), then those rows replace the model's rows of the same runs."""
    with _sliced(con, per_run, runs):
        con.execute(f"CREATE OR REPLACE TEMP TABLE _model_rows AS {model.sql}")
    con.execute(f"DELETE FROM {model.name} WHERE run_id IN (SELECT run_id FROM _changed_runs)")
    con.execute(f"INSERT INTO {model.name} BY NAME SELECT * FROM _model_rows")
    con.execute("DROP TABLE _model_rows")


def build_warehouse(
    store: ArtifactStore,
    db_path: Path,
    models_dir: Path,
    models: Collection[str] | None = None,
    sources: bool = True,
    tests: Collection[DataTest] = (),
    full: bool = False,
    scan: bool = False,
) -> WarehouseBuild:
    """Reload the sources and rebuild the SQL models, test them, then swap the file in.

    `models` names the models to rebuild (default: all, in dependency order);
    `sources=False` keeps the loaded sources (a model-only change). The change is made
    in a copy of the live file (see writer.py), so what was not asked for, the effects
    analysis marts included, is kept as it was.

    Like `dbt build`, the blocking data tests of what changed (the rebuilt models and every
    view, which reads what changed at query time) run on the copy before the swap: one that
    fails raises BlockingTestFailure and the old warehouse stays live, every table of it.
    `tests` are more tests to run on the copy (their results are in `test_results`).

    Records are read through the columnar mirror (columnar.py): an update reads the files
    the stages noted as changed and loads only their rows, and recomputes only those runs'
    rows of the incremental models. `full=True` (`bench warehouse rebuild`) reloads every
    raw table from all parts and builds every model in full; `scan=True` also lists every
    record file to catch ones written without a note (by hand, by an older version).
    """
    started = time.monotonic()
    every = load_models(models_dir)
    unknown = set(models or ()) - {m.name for m in every}
    if unknown:
        raise ValueError(f"no SQL model named {', '.join(sorted(unknown))} in {models_dir}")
    chosen = every if models is None else [m for m in every if m.name in models]
    summary = WarehouseBuild(path=db_path)
    with updating(db_path) as con:
        existing = _objects(con)
        # Views read what changed at query time, so theirs gate too, but only views that
        # exist: a partial first build (sources and one model) has not created the rest.
        views = {m.name for m in every if m.materialized == "view" and m.name in existing}
        rebuilt = {m.name for m in chosen} | views
        gate = [t for m in every if m.name in rebuilt for t in m.tests if t.blocking]
        to_run = list({(t.model, t.name): t for t in [*gate, *tests]}.values())
        if sources or "raw_design_runs" not in existing:  # a first build needs its sources
            load = _load_sources(
                con, store, summary.quarantined, full=full, scan=scan, notices=summary.notices
            )
            changed_runs = load.changed_runs
            for name in load.names:
                rows = con.execute(f"SELECT count(*) FROM {name}").fetchone()[0]
                summary.tables.append(TableSummary(name, "source", rows))
            summary.changed_runs = None if changed_runs is None else len(changed_runs)
        else:
            changed_runs = None  # the models' code changed: every row may
        for name, schema in MART_SCHEMAS.items():
            if name not in existing:  # analysts' queries work before the first analysis
                cols = ", ".join(f'"{c}" {t}' for c, t in schema.items())
                con.execute(f'CREATE TABLE "{name}" ({cols})')
            else:
                _add_missing_columns(con, name, schema)
        if models is None:
            _drop_orphans(con, existing, {m.name for m in every})
        per_run = _per_run_tables(con)
        for model in chosen:
            how = _create_model(con, model, existing.get(model.name), changed_runs, per_run)
            if how == "incremental":
                summary.incremental.append(model.name)
            rows = con.execute(f"SELECT count(*) FROM {model.name}").fetchone()[0]
            summary.tables.append(TableSummary(model.name, model.materialized, rows))
        # The tests of a model updated for some runs look at those runs' rows: the rest
        # passed them when it was built. A full build tests every row.
        sliced = [t for t in to_run if t.model in summary.incremental]
        summary.test_results = run_data_tests(con, [t for t in to_run if t not in sliced])
        if sliced:
            with _sliced(con, per_run | set(summary.incremental), changed_runs or ()):
                summary.test_results += run_data_tests(con, sliced)
        failed = [r for r in summary.test_results if r.test.blocking and not r.passed]
        if failed:  # raised inside `updating`: the copy is thrown away, nothing is swapped
            raise BlockingTestFailure(failed, summary)
        # Every table and column documents itself (catalog.py): rebuilt tables and views
        # lose their comments, so all are written again on each build (0.2 s for ~550
        # columns here, in one transaction).
        summary.undocumented = apply_comments(con, table_docs(every))
    summary.duration_s = time.monotonic() - started
    return summary


def _add_missing_columns(
    con: duckdb.DuckDBPyConnection, name: str, schema: Mapping[str, str]
) -> None:
    """A mart the analysis wrote before a column existed (instrument_suspect, ...) gets it,
    NULL, so that queries naming it work until the analysis next writes the whole table."""
    have = {
        column
        for (column,) in con.execute(
            "select column_name from information_schema.columns "
            "where table_schema = 'main' and table_name = ?",
            [name],
        ).fetchall()
    }
    for column, sql_type in schema.items():
        if column not in have:
            con.execute(f'ALTER TABLE "{name}" ADD COLUMN "{column}" {sql_type}')


class BlockingTestFailure(RuntimeError):
    """Blocking data tests failed on the rebuilt copy; the live warehouse was not replaced."""

    def __init__(self, failed: list[DataTestResult], build: WarehouseBuild) -> None:
        self.failed = failed
        self.build = build  # what was built and tested (in the discarded copy)
        shown = "; ".join(_describe_failure(r) for r in failed)
        super().__init__(
            f"blocking data tests failed, so the warehouse was not replaced (the old one "
            f"stays live): {shown}"
        )


def _describe_failure(result: DataTestResult) -> str:
    name = f"{result.test.model}.{result.test.name}"
    if result.error is not None:
        return f"{name} could not run: {result.error.splitlines()[0]}"
    sample = json.dumps(result.sample[:2], default=str, separators=(", ", ": "))
    return f"{name}: {result.failing_rows} failing rows, e.g. {sample}"


# Models a full rebuild may drop when no .sql file defines them any more. Sources
# (raw_*, ref_*) are reloaded, never dropped: their records still exist.
_MODEL_PREFIXES = ("stg_", "fct_", "dim_", "mart_")


def _drop_orphans(
    con: duckdb.DuckDBPyConnection, existing: dict[str, str], models: set[str]
) -> None:
    """A full rebuild drops what a deleted .sql file left behind."""
    keep = models | set(MART_SCHEMAS)
    for name, kind in existing.items():
        if name.startswith(_MODEL_PREFIXES) and name not in keep:
            con.execute(f'DROP {"VIEW" if kind == "view" else "TABLE"} IF EXISTS "{name}"')


# What an analyst's SQL may do: read the warehouse and nothing else. Read-only keeps the
# warehouse whole; these keep the host whole (COPY TO, ATTACH, read_text('/etc/...'),
# INSTALL httpfs all need file or network access), and the lock stops `SET` from undoing
# them. Nothing in the warehouse reads files at query time: sources are tables.
SANDBOXED_READ_CONFIG: dict[str, str | bool] = {
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "allow_community_extensions": False,
    "lock_configuration": True,
}


class WarehouseLockedError(RuntimeError):
    """Another process holds the warehouse file open read-write, which DuckDB lets no other
    process, reader or writer, share. The message says who and what to do about it."""

    def __init__(self, db_path: Path, pid: int | None, command: str | None) -> None:
        self.db_path, self.pid, self.command = db_path, pid, command
        if pid is None:
            who = "another process"
        else:
            who = f"process {pid}" + (f" ({command})" if command else "")
        super().__init__(
            f"the warehouse {db_path} is locked: {who} has it open read-write, and DuckDB then "
            "lets no other process read it. That is usually an analyst's notebook or shell that opened it with a plain "
            "duckdb.connect(path): the pipeline's own writers never hold the live file (they "
            "build a copy and swap it in). What to do: in that process, close the connection and reconnect read-only, "
            f'duckdb.connect("{db_path.resolve()}", read_only=True), or use `bench shell` or '
            "`bench sql`, which never lock anyone out; then try again."
        )


def _lock_holder_command(pid: int) -> str | None:
    """The command line of `pid` when /proc shows it (not in another PID namespace)."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    # One line whatever the arguments hold (a `python -c` script has newlines): the
    # message is one line of the CLI's stderr.
    command = " ".join(raw.decode(errors="replace").replace("\0", " ").split())
    return command if len(command) <= 200 else command[:199] + "…"


def _connect_read_only(
    db_path: Path, config: Mapping[str, str | bool] = SANDBOXED_READ_CONFIG
) -> duckdb.DuckDBPyConnection:
    try:
        return duckdb.connect(str(db_path), read_only=True, config=dict(config))
    except duckdb.IOException as err:
        text = str(err)
        if "Conflicting lock" not in text:
            raise
        # DuckDB says: 'Conflicting lock is held in /usr/bin/python3.11 (PID 1234)'.
        holder = re.search(r"held in (.*?) \(PID (\d+)\)", text)
        if holder is None:
            raise WarehouseLockedError(db_path, None, None) from None
        pid = int(holder.group(2))
        command = _lock_holder_command(pid) or holder.group(1)
        raise WarehouseLockedError(db_path, pid, command) from None


def connect_read_only(db_path: Path, *, sandboxed: bool = True) -> duckdb.DuckDBPyConnection:
    """Open the warehouse read-only, which never locks out another reader nor the pipeline
    (it swaps in a new file). `sandboxed` also refuses file, network and extension access
    (for SQL from elsewhere); an analyst's own prompt does without. Raises
    WarehouseLockedError, with advice, when a process holds the file read-write."""
    return _connect_read_only(db_path, SANDBOXED_READ_CONFIG if sandboxed else {})


class QueryTimeout(TimeoutError):
    """A query ran past its time limit and was interrupted (the message says so, one line)."""


def query(
    db_path: Path,
    sql: str,
    parameters: list[Any] | None = None,
    *,
    timeout_s: float | None = None,
) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Run read-only SQL on the warehouse; returns column names and rows.

    The connection can read the warehouse only: no file, network or extension access and
    no configuration change (SANDBOXED_READ_CONFIG), so untrusted SQL cannot touch the host.
    `timeout_s` (None or 0: no limit) bounds the query and the fetching of its rows: DuckDB
    has no statement timeout, so a timer thread interrupts the connection, and QueryTimeout
    is raised.
    """
    if not sql.strip():
        raise ValueError('empty query: give the SQL to run, e.g. "select * from fct_runs"')
    if not db_path.is_file():
        raise FileNotFoundError(f"no warehouse at {db_path}: run `make run` (or `bench run`) first")
    with _connect_read_only(db_path) as con:
        fired = threading.Event()

        def stop() -> None:
            fired.set()
            con.interrupt()

        timer = threading.Timer(timeout_s, stop) if timeout_s else None
        if timer is not None:
            timer.daemon = True
            timer.start()
        try:
            cur = con.execute(sql, parameters)
            if cur is None:  # only comments, or only semicolons: nothing ran
                raise ValueError("the query has no statement to run")
            columns = [d[0] for d in cur.description] if cur.description else []
            return columns, cur.fetchall()
        except duckdb.Error as error:
            # An interrupt surfaces as InterruptException, or as another error raised from
            # inside the interrupted operator: the timer having fired is what tells.
            if fired.is_set():
                raise QueryTimeout(
                    f"the query ran longer than {timeout_s:g} s and was stopped (raise the "
                    "limit with --timeout SECONDS, 0 for none)"
                ) from None
            raise error from None
        finally:
            if timer is not None:
                timer.cancel()

"""Build the DuckDB warehouse from the artifact store.

One builder at a time (a file lock) changes a copy of the live database and swaps it
in with an atomic rename (writer.py). Why: DuckDB locks a file per process, so an
analyst holding `warehouse.duckdb` open (read-only) would otherwise block the
pipeline, and a reader must never see a half-built warehouse. Readers keep the old
file until they reconnect.
"""

from __future__ import annotations

import glob
import json
import os
import re
import tempfile
import time
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

from bench_pipeline.bot.contract import TEST_IDS
from bench_pipeline.warehouse.accuracy import TABLE as ACCURACY_TABLE
from bench_pipeline.warehouse.accuracy import load_bot_accuracy
from bench_pipeline.warehouse.artifacts import ArtifactStore
from bench_pipeline.warehouse.datatests import DataTest, DataTestResult, run_data_tests
from bench_pipeline.warehouse.integrity import (
    BadRecord,
    QuarantinedRecord,
    quarantine,
    read_checked,
    type_problem,
)
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

_QUALITY = "quality_metrics"  # the stage that writes the transcript events

# The per-run stages' records: the columns the SQL models read, so that they compile
# before any run reached that stage (a stage writes more columns than these).
_TESTS_STRUCT = "STRUCT(" + ", ".join(f"{t} VARCHAR" for t in TEST_IDS) + ")"
SOURCE_SCHEMAS.update(
    {
        "raw_agent_generation": {
            "run_id": "VARCHAR",
            "agent": "VARCHAR",
            "adapter": "VARCHAR",
            "model": "VARCHAR",
            "status": "VARCHAR",
            "message": "VARCHAR",
            "exit_code": "INTEGER",
            "input_tokens": "BIGINT",
            "output_tokens": "BIGINT",
            "cache_read_tokens": "BIGINT",
            "cache_creation_tokens": "BIGINT",
            "cost_usd": "DOUBLE",
            "cost_source": "VARCHAR",
            "turns": "INTEGER",
            "tool_calls": "INTEGER",
            "duration_s": "DOUBLE",
            "wall_s": "DOUBLE",
            "budget_usd": "DOUBLE",
            "budget_hit": "BOOLEAN",
            "files": "INTEGER",
            "workspace_bytes": "BIGINT",
            "started_at": "VARCHAR",
            "finished_at": "VARCHAR",
            "prompt_version": "VARCHAR",
            "transcript_path": "VARCHAR",
            "archive_path": "VARCHAR",
            "details": "VARCHAR",
        },
        "raw_sandboxed_build": {
            "run_id": "VARCHAR",
            "build_ok": "BOOLEAN",
            "kind": "VARCHAR",
            "message": "VARCHAR",
            "duration_s": "DOUBLE",
            "served_dir": "VARCHAR",
            "entry_point": "VARCHAR",
            "output_bytes": "BIGINT",
            "sandbox": "VARCHAR",
            "log_path": "VARCHAR",
        },
        "raw_quality_metrics": {
            "run_id": "VARCHAR",
            "quality_score": "DOUBLE",
            "eslint_errors": "INTEGER",
            "eslint_warnings": "INTEGER",
            "ts_compiles": "BOOLEAN",
            "bundle_bytes": "BIGINT",
            "function_length_max": "INTEGER",
            "nesting_depth_max": "INTEGER",
            "naming_consistency": "DOUBLE",
            "file_count": "INTEGER",
            "duplication_pct": "DOUBLE",
            "html_errors": "INTEGER",
            "magic_numbers": "INTEGER",
            "transcript_tool_calls": "INTEGER",
            "transcript_wasted_turns": "INTEGER",
            "transcript_productivity_ratio": "DOUBLE",
            "transcript_self_tested": "BOOLEAN",
            "sonar_cognitive_complexity": "INTEGER",
            "sonar_bugs": "INTEGER",
            "sonar_code_smells": "INTEGER",
            "unavailable": "VARCHAR",
        },
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
        "raw_bot_evaluation": {
            "run_id": "VARCHAR",
            "bot_version": "VARCHAR",
            "gameplay_score": "DOUBLE",
            "duration_s": "DOUBLE",
            "renderer": "VARCHAR",
            "passed": "INTEGER",
            "failed": "INTEGER",
            "inconclusive": "INTEGER",
            "tests": _TESTS_STRUCT,
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
    # The data tests run on the new copy before it was swapped in (see build_warehouse).
    test_results: list[DataTestResult] = field(default_factory=list)

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


def _load_json_files(
    con: duckdb.DuckDBPyConnection,
    table: str,
    rows_of: Iterable[list[dict[str, Any]]],
    scratch: Path,
) -> int:
    """Load one JSON file per run into `table`, through one newline-delimited file.

    Why not `read_json` over the glob: DuckDB opens, infers and buffers every small file
    on its own (about 1 ms and some memory each: 100,000 runs took minutes and many GB),
    while Python reads about 12,000 a second; one file then lets DuckDB infer the types (structs
    included) once, over every row.
    """
    # Serial on purpose: parsing holds the GIL, and threads measured slower (page cache).
    written = 0
    with scratch.open("w") as out:
        for rows in rows_of:
            for row in rows:
                out.write(json.dumps(row, separators=(",", ":")))
                out.write("\n")
                written += 1
    if not written:
        return 0
    con.execute(
        f"CREATE OR REPLACE TABLE {table} AS SELECT * FROM read_json(?, "
        "format = 'newline_delimited', sample_size = -1)",
        [str(scratch)],
    )
    return written


def _checked_records(
    store: ArtifactStore, stage: str, quarantined: list[QuarantinedRecord]
) -> Iterator[list[dict[str, Any]]]:
    """Each loadable record of `stage` as a row; a bad one is quarantined instead."""
    columns = SOURCE_SCHEMAS.get(f"raw_{stage}", {})
    for path in sorted(Path(p) for p in glob.glob(store.record_glob(stage))):
        try:
            data = read_checked(path, columns, run_id=path.stem)
        except BadRecord as bad:
            quarantined.append(quarantine(store, stage, path.stem, path, str(bad)))
            continue
        yield [{**data, "filename": str(path)}]


def _checked_events(store: ArtifactStore, quarantined: list[QuarantinedRecord]) -> list[Path]:
    """The runs' transcript event files that can be loaded. A bad one is quarantined with its
    run's quality_metrics record, the stage that writes it, so that both are made again."""
    columns = SOURCE_SCHEMAS["raw_transcript_events"]
    good = []
    for path in sorted((store.root / "runs").glob(f"*/{_QUALITY}/transcript_events.json")):
        run_id = path.parents[1].name
        try:
            rows = read_checked(path)
            if not isinstance(rows, list):
                raise BadRecord(f"is a JSON {type(rows).__name__}, not a list of events")
            for row in rows:
                # Each event row is checked like a record (its run_id included).
                if not isinstance(row, dict):
                    raise BadRecord("an event is not a JSON object")
                _check_event(row, columns, run_id)
        except BadRecord as bad:
            quarantined.append(quarantine(store, _QUALITY, run_id, path, str(bad)))
            record = store.record_path(_QUALITY, run_id)
            if os.path.lexists(record):
                why = f"its transcript_events.json was quarantined ({bad})"
                quarantined.append(quarantine(store, _QUALITY, run_id, record, why))
            continue
        good.append(path)
    return good


def _check_event(row: dict[str, Any], columns: dict[str, str], run_id: str) -> None:
    if row.get("run_id") != run_id:
        raise BadRecord(f"an event's run_id {row.get('run_id')!r} is not the run's {run_id!r}")
    for column, sql_type in columns.items():
        problem = type_problem(row.get(column), sql_type)
        if problem:
            raise BadRecord(f"an event's {column} ({sql_type}) is {problem}")


def _load_sources(
    con: duckdb.DuckDBPyConnection,
    store: ArtifactStore,
    quarantined: list[QuarantinedRecord] | None = None,
) -> list[str]:
    """Load the designs, reference tables and records; bad records are moved to the
    quarantine and appended to `quarantined`. Returns the tables made."""
    quarantined = [] if quarantined is None else quarantined
    cells, runs = _design_frames(store.designs())
    _create_source(con, "raw_design_cells", cells)
    _create_source(con, "raw_design_runs", runs)
    names = ["raw_design_cells", "raw_design_runs"]
    # Constants the models join to (t quantiles, the axis catalogue): see reference.py.
    for ref_name, ref_frame in reference_tables().items():
        con.register("_ref_frame", ref_frame)
        con.execute(f"CREATE OR REPLACE TABLE {ref_name} AS SELECT * FROM _ref_frame")
        con.unregister("_ref_frame")
        names.append(ref_name)
    # The bot accuracy benchmark's published files (not per-run records): accuracy.py.
    load_bot_accuracy(con, store.root)
    names.append(ACCURACY_TABLE)
    with tempfile.TemporaryDirectory(prefix="bench-sources-") as scratch:
        # Per-run tables of many rows (not one record): the transcripts' normalized events.
        # Checked first: a bad one sends its run's quality record to quarantine too.
        events = _checked_events(store, quarantined)
        if any(p.stat().st_size > 3 for p in events):  # "[]\n" is an empty table
            scratch_file = Path(scratch) / "raw_transcript_events.ndjson"
            rows = (json.loads(p.read_bytes()) for p in events)
            if _load_json_files(con, "raw_transcript_events", rows, scratch_file):
                names.append("raw_transcript_events")
        for stage in store.stages():
            table = f"raw_{stage}"
            scratch_file = Path(scratch) / f"{table}.ndjson"
            records = _checked_records(store, stage, quarantined)
            if _load_json_files(con, table, records, scratch_file):
                names.append(table)  # else every record was bad: as if none existed
    for table, columns in SOURCE_SCHEMAS.items():
        if table not in names:  # a stage no run has reached yet: an empty table
            cols = ", ".join(f'"{c}" {t}' for c, t in columns.items())
            con.execute(f"CREATE OR REPLACE TABLE {table} ({cols})")
            names.append(table)
    return names


def _objects(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """Tables and views of the main schema: name -> 'table' | 'view'."""
    rows = con.execute(
        "select table_name, table_type from information_schema.tables where table_schema = 'main'"
    ).fetchall()
    return {name: "view" if kind == "VIEW" else "table" for name, kind in rows}


def _create_model(con: duckdb.DuckDBPyConnection, model: SqlModel, existing: str | None) -> None:
    kind = "VIEW" if model.materialized == "view" else "TABLE"
    if existing and existing != model.materialized:  # its header switched table <-> view
        con.execute(f'DROP {"VIEW" if existing == "view" else "TABLE"} "{model.name}"')
    con.execute(f"CREATE OR REPLACE {kind} {model.name} AS {model.sql}")


def build_warehouse(
    store: ArtifactStore,
    db_path: Path,
    models_dir: Path,
    models: Collection[str] | None = None,
    sources: bool = True,
    tests: Collection[DataTest] = (),
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
            for name in _load_sources(con, store, summary.quarantined):
                rows = con.execute(f"SELECT count(*) FROM {name}").fetchone()[0]
                summary.tables.append(TableSummary(name, "source", rows))
        for name, schema in MART_SCHEMAS.items():
            if name not in existing:  # analysts' queries work before the first analysis
                cols = ", ".join(f'"{c}" {t}' for c, t in schema.items())
                con.execute(f'CREATE TABLE "{name}" ({cols})')
        if models is None:
            _drop_orphans(con, existing, {m.name for m in every})
        for model in chosen:
            _create_model(con, model, existing.get(model.name))
            rows = con.execute(f"SELECT count(*) FROM {model.name}").fetchone()[0]
            summary.tables.append(TableSummary(model.name, model.materialized, rows))
        summary.test_results = run_data_tests(con, to_run)
        failed = [r for r in summary.test_results if r.test.blocking and not r.passed]
        if failed:  # raised inside `updating`: the copy is thrown away, nothing is swapped
            raise BlockingTestFailure(failed, summary)
    summary.duration_s = time.monotonic() - started
    return summary


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
    """Another process holds the warehouse file open for writing."""


def _connect_read_only(db_path: Path) -> duckdb.DuckDBPyConnection:
    try:
        return duckdb.connect(str(db_path), read_only=True, config=SANDBOXED_READ_CONFIG)
    except duckdb.IOException as err:
        text = str(err)
        if "Conflicting lock" not in text:
            raise
        holder = re.search(r"\(PID (\d+)\)", text)
        who = f"process {holder.group(1)}" if holder else "another process"
        raise WarehouseLockedError(
            f"the warehouse {db_path} is locked: {who} has it open for writing; "
            "try again when it is done"
        ) from None


def query(
    db_path: Path, sql: str, parameters: list[Any] | None = None
) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Run read-only SQL on the warehouse; returns column names and rows.

    The connection can read the warehouse only: no file, network or extension access and
    no configuration change (SANDBOXED_READ_CONFIG), so untrusted SQL cannot touch the host.
    """
    if not sql.strip():
        raise ValueError('empty query: give the SQL to run, e.g. "select * from fct_runs"')
    if not db_path.is_file():
        raise FileNotFoundError(f"no warehouse at {db_path}: run `make run` (or `bench run`) first")
    with _connect_read_only(db_path) as con:
        cur = con.execute(sql, parameters)
        if cur is None:  # only comments, or only semicolons: nothing ran
            raise ValueError("the query has no statement to run")
        columns = [d[0] for d in cur.description] if cur.description else []
        return columns, cur.fetchall()

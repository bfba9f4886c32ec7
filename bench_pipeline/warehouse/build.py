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
import tempfile
import time
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

from bench_pipeline.bot.contract import TEST_IDS
from bench_pipeline.warehouse.artifacts import ArtifactStore
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


def _read_json_file(path: Path) -> Any:
    with path.open("rb") as fh:
        return json.load(fh)


def _load_json_files(
    con: duckdb.DuckDBPyConnection, table: str, paths: list[Path], scratch: Path, array: bool
) -> None:
    """Load one JSON file per run into `table`, through one newline-delimited file.

    Why not `read_json` over the glob: DuckDB opens, infers and buffers every small file
    on its own (about 1 ms and some memory each: 100,000 runs took minutes and many GB),
    while Python reads about 12,000 a second; one file then lets DuckDB infer the types (structs
    included) once, over every row.
    """
    # Serial on purpose: parsing holds the GIL, and threads measured slower (page cache).
    with scratch.open("w") as out:
        for path in paths:
            data = _read_json_file(path)
            for row in data if array else [{**data, "filename": str(path)}]:
                out.write(json.dumps(row, separators=(",", ":")))
                out.write("\n")
    con.execute(
        f"CREATE OR REPLACE TABLE {table} AS SELECT * FROM read_json(?, "
        "format = 'newline_delimited', sample_size = -1)",
        [str(scratch)],
    )


def _load_sources(con: duckdb.DuckDBPyConnection, store: ArtifactStore) -> list[str]:
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
    with tempfile.TemporaryDirectory(prefix="bench-sources-") as scratch:
        for stage in store.stages():
            table = f"raw_{stage}"
            paths = sorted(Path(p) for p in glob.glob(store.record_glob(stage)))
            _load_json_files(con, table, paths, Path(scratch) / f"{table}.ndjson", array=False)
            names.append(table)
        # Per-run tables of many rows (not one record): the transcripts' normalized events.
        events = sorted((store.root / "runs").glob("*/quality_metrics/transcript_events.json"))
        if any(p.stat().st_size > 3 for p in events):  # "[]\n" is an empty table
            scratch_file = Path(scratch) / "raw_transcript_events.ndjson"
            _load_json_files(con, "raw_transcript_events", events, scratch_file, array=True)
            names.append("raw_transcript_events")
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
) -> WarehouseBuild:
    """Reload the sources and rebuild the SQL models, then swap the file in.

    `models` names the models to rebuild (default: all, in dependency order);
    `sources=False` keeps the loaded sources (a model-only change). The change is made
    in a copy of the live file (see writer.py), so what was not asked for, the effects
    analysis marts included, is kept as it was.
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
        if sources or "raw_design_runs" not in existing:  # a first build needs its sources
            for name in _load_sources(con, store):
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
    summary.duration_s = time.monotonic() - started
    return summary


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


def query(
    db_path: Path, sql: str, parameters: list[Any] | None = None
) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Run read-only SQL on the warehouse; returns column names and rows."""
    if not db_path.is_file():
        raise FileNotFoundError(f"no warehouse at {db_path}: run `make run` (or `bench run`) first")
    with duckdb.connect(str(db_path), read_only=True) as con:
        cur = con.execute(sql, parameters)
        columns = [d[0] for d in cur.description] if cur.description else []
        return columns, cur.fetchall()

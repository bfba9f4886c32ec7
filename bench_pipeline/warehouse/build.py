"""Build the DuckDB warehouse from the artifact store.

One builder at a time (a file lock) writes a fresh database beside the live one and
swaps it in with an atomic rename. Why: DuckDB locks a file per process, so an
analyst holding `warehouse.duckdb` open (read-only) would otherwise block the
pipeline, and a reader must never see a half-built warehouse. Readers keep the old
file until they reconnect.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
from filelock import FileLock

from bench_pipeline.bot.contract import TEST_IDS
from bench_pipeline.warehouse.artifacts import ArtifactStore
from bench_pipeline.warehouse.models import SqlModel, load_models

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
        con.execute(f"CREATE TABLE {name} ({cols})")
    else:
        con.register("_frame", frame)
        con.execute(f"CREATE TABLE {name} AS SELECT * FROM _frame")
        con.unregister("_frame")


def _load_sources(con: duckdb.DuckDBPyConnection, store: ArtifactStore) -> list[str]:
    cells, runs = _design_frames(store.designs())
    _create_source(con, "raw_design_cells", cells)
    _create_source(con, "raw_design_runs", runs)
    names = ["raw_design_cells", "raw_design_runs"]
    for stage in store.stages():
        table = f"raw_{stage}"
        con.execute(
            f"CREATE TABLE {table} AS SELECT * FROM read_json(?, union_by_name = true, "
            "format = 'auto', filename = true)",
            [store.record_glob(stage)],
        )
        names.append(table)
    # Per-run tables of many rows (not one record): the transcripts' normalized events.
    events = list((store.root / "runs").glob("*/quality_metrics/transcript_events.json"))
    if any(p.stat().st_size > 3 for p in events):  # "[]\n" is an empty table
        con.execute(
            "CREATE TABLE raw_transcript_events AS SELECT * FROM read_json(?, "
            "union_by_name = true, format = 'array')",
            [str(store.root / "runs" / "*" / "quality_metrics" / "transcript_events.json")],
        )
        names.append("raw_transcript_events")
    for table, columns in SOURCE_SCHEMAS.items():
        if table not in names:  # a stage no run has reached yet: an empty table
            cols = ", ".join(f'"{c}" {t}' for c, t in columns.items())
            con.execute(f"CREATE TABLE {table} ({cols})")
            names.append(table)
    return names


def _create_model(con: duckdb.DuckDBPyConnection, model: SqlModel) -> None:
    kind = "VIEW" if model.materialized == "view" else "TABLE"
    con.execute(f"CREATE OR REPLACE {kind} {model.name} AS {model.sql}")


def build_warehouse(store: ArtifactStore, db_path: Path, models_dir: Path) -> WarehouseBuild:
    """Rebuild every source and model from the artifact store, then swap the file in."""
    started = time.monotonic()
    models = load_models(models_dir)
    db_path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(db_path) + ".lock"):
        tmp = db_path.with_name(f".{db_path.name}.building-{os.getpid()}")
        for leftover in (tmp, tmp.with_name(tmp.name + ".wal")):
            leftover.unlink(missing_ok=True)
        summary = WarehouseBuild(path=db_path)
        try:
            with duckdb.connect(str(tmp)) as con:
                for name in _load_sources(con, store):
                    rows = con.execute(f"SELECT count(*) FROM {name}").fetchone()[0]
                    summary.tables.append(TableSummary(name, "source", rows))
                for model in models:
                    _create_model(con, model)
                    rows = con.execute(f"SELECT count(*) FROM {model.name}").fetchone()[0]
                    summary.tables.append(TableSummary(model.name, model.materialized, rows))
                con.execute("CHECKPOINT")
            os.replace(tmp, db_path)
        finally:
            tmp.unlink(missing_ok=True)
    summary.duration_s = time.monotonic() - started
    return summary


def query(db_path: Path, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Run read-only SQL on the warehouse; returns column names and rows."""
    if not db_path.is_file():
        raise FileNotFoundError(f"no warehouse at {db_path}: run `make run` (or `bench run`) first")
    with duckdb.connect(str(db_path), read_only=True) as con:
        cur = con.execute(sql)
        columns = [d[0] for d in cur.description] if cur.description else []
        return columns, cur.fetchall()

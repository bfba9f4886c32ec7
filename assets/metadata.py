"""Small helpers for asset metadata that a person reads in the UI.

The per-run stages materialize several `runs` partitions in one step (their
`BackfillPolicy.multi_run`). Dagster copies a step's `MaterializeResult` metadata onto every
partition of the step, so each stage gives each run its own metadata instead
(`run_result`), logs the step's summary in the run's log, and sets a data version made from
the hashes of the records the step wrote: that is what makes the warehouse and the marts
show as stale in the UI when a run's record changed.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from typing import Any

import dagster as dg
import numpy as np

from bench_pipeline.warehouse.artifacts import ArtifactStore

# What a missing record hashes as: a run whose record is gone has changed too.
_NO_RECORD = "none"


def markdown_lines(rows: Sequence[Mapping[str, Any]], limit: int = 30) -> str:
    """Rows as a Markdown table (first `limit` rows), for a log line."""
    if not rows:
        return "_(no rows)_"
    columns = list(rows[0])
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for row in rows[:limit]:
        lines.append("| " + " | ".join(str(row.get(c, "")) for c in columns) + " |")
    if len(rows) > limit:
        lines.append(f"\n_{len(rows) - limit} more rows_")
    return "\n".join(lines)


Cell = str | int | float | bool | None


def _cell(value: Any) -> Cell:
    """A value as `TableRecord` accepts it (str, int, float, bool or None)."""
    if isinstance(value, np.generic):  # pandas' and duckdb's numbers come as numpy scalars
        value = value.item()
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return None
        # The UI parses each record as JSON, which has no Infinity: the record would not show.
        return value if math.isfinite(value) else str(value)
    return str(value)


def _column_type(values: Sequence[Cell]) -> str:
    """The narrowest of bool, int, float and string that holds every value (None aside)."""
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return "bool"
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return "int"
    if present and all(isinstance(v, int | float) and not isinstance(v, bool) for v in present):
        return "float"
    return "string"


def _as_type(value: Cell, kind: str) -> Cell:
    if value is None:
        return None
    if kind == "float":
        return float(value)
    if kind == "string":
        return str(value)
    return value


def table_preview(
    rows: Sequence[Mapping[str, Any]],
    limit: int = 30,
    *,
    columns: Sequence[str] = (),
    total: int | None = None,
) -> dg.TableMetadataValue:
    """The first `limit` rows as a table the UI renders, with each column's type inferred.

    Columns are `columns`, else every key of the kept rows in order of appearance (a row
    without one shows it empty); give `columns` so that an empty table keeps its header.
    Values that are not str, int, float, bool or None are shown as text, and a column that
    mixes types is text. `total` is how many rows `rows` was cut from, when the caller cut
    it already (a SQL `limit`). When rows are left out, the schema says so as a table-level
    note ("first 5 of 120 rows", under "Show schema" in the UI); the asset's row count says
    how many there are in all.
    """
    kept = [{k: _cell(v) for k, v in row.items()} for row in rows[:limit]]
    names = list(columns) or list(dict.fromkeys(k for row in kept for k in row))
    types = {name: _column_type([row.get(name) for row in kept]) for name in names}
    records = [
        dg.TableRecord({name: _as_type(row.get(name), types[name]) for name in names})
        for row in kept
    ]
    in_all = max(len(rows), total or 0)
    notes = [f"first {len(kept)} of {in_all} rows"] if in_all > len(kept) else []
    return dg.MetadataValue.table(
        records=records,
        schema=dg.TableSchema(
            columns=[dg.TableColumn(name, types[name]) for name in names],
            constraints=dg.TableConstraints(other=notes),
        ),
    )


def record_hash(store: ArtifactStore, stage: str, run_id: str) -> str:
    """sha256 of the stage's record file of the run (the bytes the warehouse loads)."""
    path = store.record_path(stage, run_id)
    if not path.is_file():
        return _NO_RECORD
    return hashlib.sha256(path.read_bytes()).hexdigest()


def step_data_version(hashes: Mapping[str, str]) -> dg.DataVersion:
    """The data version of a step's runs, from their record hashes.

    Dagster 1.13 records one data version per step for every partition it materialized
    (dagster-io/dagster#34013), so runs materialized together share a hash of all their
    records: a change to any of them marks all of them changed, never the reverse. A step
    of one run (the usual re-materialization) has exactly its record's hash.
    """
    if len(hashes) == 1:
        return dg.DataVersion(next(iter(hashes.values())))
    digest = hashlib.sha256()
    for run_id in sorted(hashes):
        digest.update(f"{run_id}\0{hashes[run_id]}\n".encode())
    return dg.DataVersion(digest.hexdigest())


def run_result(
    context: dg.AssetExecutionContext,
    store: ArtifactStore,
    stage: str,
    per_run: Mapping[str, Mapping[str, Any]],
    *,
    common: Mapping[str, Any] | None = None,
    check_results: Sequence[dg.AssetCheckResult] = (),
) -> dg.MaterializeResult:
    """The step's result: each run's own metadata on its own partition, the record hashes'
    data version, and `common` (true of every run of the step) on all of them.

    Each partition also shows its record's hash and how many runs its step materialized
    (those share the data version).
    """
    hashes = {run_id: record_hash(store, stage, run_id) for run_id in per_run}
    shown = {
        run_id: {
            **metadata,
            "record_sha256": hashes[run_id][:16],
            "runs_in_step": len(per_run),
        }
        for run_id, metadata in per_run.items()
    }
    version = step_data_version(hashes) if hashes else None
    if len(shown) == 1:
        # One run: the result's metadata is that run's. (Same events as below; it also
        # works when a test calls the asset directly, where 1.13 has no add_asset_metadata.)
        (only,) = shown.values()
        return dg.MaterializeResult(
            metadata={**(common or {}), **only},
            data_version=version,
            check_results=check_results,
        )
    for run_id, metadata in shown.items():
        context.add_asset_metadata(metadata, partition_key=run_id)
    return dg.MaterializeResult(
        metadata=dict(common or {}), data_version=version, check_results=check_results
    )


def log_step_summary(
    context: dg.AssetExecutionContext, headline: str, rows: Sequence[Mapping[str, Any]]
) -> None:
    """The step's summary (what every partition page used to show) in the run's log."""
    context.log.info(f"{headline}\n{markdown_lines(rows, 100)}")


def verdicts_table(
    tests: Mapping[str, str], why: Mapping[str, str | None], order: Sequence[str]
) -> dg.MetadataValue:
    """The sixteen verdicts of one run as a table the UI renders (test, verdict, why)."""
    return dg.MetadataValue.table(
        records=[
            dg.TableRecord({"test": t, "verdict": tests.get(t), "why": why.get(t)}) for t in order
        ],
        schema=dg.TableSchema(
            columns=[
                dg.TableColumn("test", "string"),
                dg.TableColumn("verdict", "string", description="PASS, FAIL or INCONCLUSIVE"),
                dg.TableColumn("why", "string"),
            ]
        ),
    )

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
from collections.abc import Mapping, Sequence
from typing import Any

import dagster as dg

from bench_pipeline.warehouse.artifacts import ArtifactStore

# What a missing record hashes as: a run whose record is gone has changed too.
_NO_RECORD = "none"


def markdown_lines(rows: Sequence[Mapping[str, Any]], limit: int = 30) -> str:
    """Rows as a Markdown table (first `limit` rows), for metadata or a log line."""
    if not rows:
        return "_(no rows)_"
    columns = list(rows[0])
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for row in rows[:limit]:
        lines.append("| " + " | ".join(str(row.get(c, "")) for c in columns) + " |")
    if len(rows) > limit:
        lines.append(f"\n_{len(rows) - limit} more rows_")
    return "\n".join(lines)


def markdown_table(rows: Sequence[Mapping[str, Any]], limit: int = 30) -> dg.MetadataValue:
    """A preview table (first `limit` rows) as Markdown, without extra dependencies."""
    return dg.MetadataValue.md(markdown_lines(rows, limit))


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

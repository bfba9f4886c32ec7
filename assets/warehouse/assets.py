"""Stage 7: the DuckDB warehouse: its sources, one asset per SQL model, data tests as checks.

Every `.sql` file of `dbt_like_sql/` is an asset of its own, with the dependencies its
SQL reads (parsed with sqlglot), a code version that is the hash of its SQL (edit a
model and it alone, with what reads it, becomes stale), and its header's data tests
as asset checks. They are built by one subsettable step: one writer copies the live
file, rebuilds what was selected and swaps it in, so a reader is never blocked and
never sees half a rebuild.
"""

import hashlib
import json
from collections.abc import Iterator

import dagster as dg
import duckdb

from assets.automation import whole_warehouse
from assets.metadata import table_preview
from bench_pipeline import settings, stages
from bench_pipeline.warehouse.build import BlockingTestFailure
from bench_pipeline.warehouse.datatests import DataTest, DataTestResult
from bench_pipeline.warehouse.integrity import QuarantinedRecord
from bench_pipeline.warehouse.models import SqlModel, load_models
from resources import ArtifactStoreResource, WarehouseResource

# Bump when the loading of sources changes (not for SQL models: they hash their SQL).
# 3: raw_bot_accuracy; 4: records read through the columnar mirror, updated incrementally;
# 5: raw_bot_accuracy_groups (the accuracy per renderer and per author group)
WAREHOUSE_SOURCES_CODE_VERSION = "5"
SOURCES = dg.AssetKey("warehouse_sources")

MODELS: list[SqlModel] = load_models(settings.sql_models_dir())
_MODEL_NAMES = {m.name for m in MODELS}
_TESTS: dict[dg.AssetCheckKey, DataTest] = {
    dg.AssetCheckKey(dg.AssetKey(m.name), t.name): t for m in MODELS for t in m.tests
}


def _code_version(model: SqlModel) -> str:
    header = f"{model.materialized}\n"
    return hashlib.sha256((header + model.sql).encode()).hexdigest()[:12]


def _model_spec(model: SqlModel) -> dg.AssetSpec:
    deps = [dg.AssetKey(name) for name in sorted(model.deps(_MODEL_NAMES))]
    if model.references - _MODEL_NAMES:  # it reads raw_* or ref_* tables: the sources
        deps.append(SOURCES)
    return dg.AssetSpec(
        key=model.name,
        deps=deps,
        description=model.description or None,
        group_name=stages.WAREHOUSE.group_name,
        kinds={"duckdb", "sql"},
        code_version=_code_version(model),
        skippable=True,
        automation_condition=whole_warehouse,
        metadata={
            "materialized": model.materialized,
            "sql": dg.MetadataValue.md(f"```sql\n{model.sql}\n```"),
            "file": dg.MetadataValue.path(str(model.path)),
        },
    )


_SPECS = [
    dg.AssetSpec(
        key=SOURCES,
        # Every stage that writes records: the design and each per-run stage
        # (bench_pipeline/stages.py); keys, so this module needs none of their code.
        deps=[dg.AssetKey(stage) for stage in (stages.DESIGN, *stages.PER_RUN)],
        description="The stages' per-run records, designs and reference tables loaded from "
        "the artifact store into raw_* and ref_* tables.",
        group_name=stages.WAREHOUSE.group_name,
        kinds={"duckdb"},
        code_version=WAREHOUSE_SOURCES_CODE_VERSION,
        skippable=True,
        automation_condition=whole_warehouse,
    ),
    *(_model_spec(m) for m in MODELS),
]
_CHECKS = [
    dg.AssetCheckSpec(
        name=key.name, asset=key.asset_key, description=test.description, blocking=test.blocking
    )
    for key, test in _TESTS.items()
]


@dg.multi_asset(
    name="warehouse",
    specs=_SPECS,
    check_specs=_CHECKS,
    can_subset=True,
    # One writer at a time: the build holds a file lock; the pool keeps runs from queueing on it.
    pool=stages.WAREHOUSE.pool,
    description="Sources and every SQL model of dbt_like_sql/, rebuilt in a copy of the "
    "warehouse and swapped in atomically, so open readers are never blocked.",
)
def warehouse(
    context: dg.AssetExecutionContext,
    artifact_store: ArtifactStoreResource,
    warehouse: WarehouseResource,
):
    selected = {key.to_user_string() for key in context.selected_asset_keys}
    checks = list(context.selected_asset_check_keys)
    try:
        # The selected checks run on the new copy, with the blocking tests of everything
        # rebuilt: a blocking failure leaves the live warehouse as it was (no swap).
        build = warehouse.build(
            artifact_store.store(),
            models=selected & _MODEL_NAMES,
            sources=SOURCES.to_user_string() in selected,
            tests=[_TESTS[key] for key in checks],
        )
    except BlockingTestFailure as failure:
        _log_quarantined(context, failure.build.quarantined)
        yield from _check_results(checks, failure.build.test_results)
        raise dg.Failure(
            description=str(failure),
            metadata={"quarantined": _quarantine_table(failure.build.quarantined)},
            allow_retries=False,
        ) from None
    context.log.info(f"warehouse updated at {build.path} in {build.duration_s:.2f}s")
    _log_quarantined(context, build.quarantined)
    path = dg.MetadataValue.path(str(build.path))
    if SOURCES.to_user_string() in selected:
        sources = [t for t in build.tables if t.kind == "source"]
        yield dg.MaterializeResult(
            asset_key=SOURCES,
            metadata={
                "path": path,
                "duration_s": round(build.duration_s, 3),
                # What this update read: the runs whose records changed since the last one
                # ("all" after a full load), and the models recomputed for just those runs.
                "changed_runs": "all" if build.changed_runs is None else build.changed_runs,
                "incremental_models": ", ".join(build.incremental) or "none",
                "tables": table_preview([{"table": t.name, "rows": t.rows} for t in sources], 100),
                **{f"rows/{t.name}": t.rows for t in sources},
                # Records that could not be loaded, moved aside: their stages are redone
                # by the next `bench run` (docs/warehouse.md, "Corrupt records").
                "quarantined_count": len(build.quarantined),
                "quarantined": _quarantine_table(build.quarantined),
            },
        )
    with duckdb.connect(str(build.path), read_only=True) as con:
        for table in build.tables:
            if table.kind == "source":
                continue
            columns = con.execute(f'describe "{table.name}"').fetchall()
            preview = con.execute(f'select * from "{table.name}" limit 5').df()
            rows = json.loads(preview.to_json(orient="records", date_format="iso"))
            yield dg.MaterializeResult(
                asset_key=table.name,
                metadata={
                    "dagster/row_count": table.rows,
                    "path": path,
                    "materialized": table.kind,
                    "dagster/column_schema": dg.TableSchema(
                        columns=[dg.TableColumn(name=c[0], type=c[1]) for c in columns]
                    ),
                    "preview": table_preview(rows, 5, total=table.rows),
                },
            )
    yield from _check_results(checks, build.test_results)


def _check_results(
    checks: list[dg.AssetCheckKey], results: list[DataTestResult]
) -> Iterator[dg.AssetCheckResult]:
    """The selected checks' results, as run on the new copy before the swap."""
    by_test = {(r.test.model, r.test.name): r for r in results}
    for key in checks:
        test = _TESTS[key]
        result = by_test.get((test.model, test.name))
        if result is None:  # not run: the build stopped before it
            continue
        yield dg.AssetCheckResult(
            asset_key=key.asset_key,
            check_name=key.name,
            passed=result.passed,
            severity=dg.AssetCheckSeverity.ERROR if test.blocking else dg.AssetCheckSeverity.WARN,
            description=result.error or test.description,
            metadata={
                "failing_rows": result.failing_rows,
                "sample": dg.MetadataValue.json(json.loads(json.dumps(result.sample, default=str))),
                "sql": dg.MetadataValue.md(f"```sql\n{test.sql}\n```"),
            },
        )


def _quarantine_table(entries: list[QuarantinedRecord]) -> dg.MetadataValue:
    rows = [
        {"run": e.run_id, "stage": e.stage, "why": e.reason, "moved to": e.moved_to}
        for e in entries
    ]
    return table_preview(rows, 100, columns=["run", "stage", "why", "moved to"])


def _log_quarantined(context: dg.AssetExecutionContext, entries: list[QuarantinedRecord]) -> None:
    for entry in entries:
        context.log.warning(f"quarantined a bad record: {entry.describe()}")

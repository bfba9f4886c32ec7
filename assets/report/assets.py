"""The results site: static HTML built from the warehouse after every sweep."""

import dagster as dg

from assets.sweeps.automation import whole_warehouse
from bench_pipeline import settings
from bench_pipeline.report import ReportError, build_site
from resources import ArtifactStoreResource, WarehouseResource

# Bump when the pages change: the site is rebuilt, nothing upstream is.
REPORT_CODE_VERSION = "1"
# What the pages read: the marts, the leaderboards and the per-run facts.
READS = [
    "fct_runs",
    "fct_test_results",
    "dim_cells",
    "mart_leaderboard_models",
    "mart_leaderboard_cells",
    "mart_cost_per_point",
    "mart_main_effects",
    "mart_interactions",
    "mart_effect_noise",
    "mart_not_estimable",
]


@dg.asset(
    deps=READS,
    group_name="results_site",
    kinds={"html"},
    code_version=REPORT_CODE_VERSION,
    automation_condition=whole_warehouse,
    description="A static site (leaderboard, compare, run detail, methodology) built from "
    "the warehouse; it opens from disk or any static host, with no network requests. "
    "Same as `bench report --out DIR`.",
)
def results_site(
    context: dg.AssetExecutionContext,
    artifact_store: ArtifactStoreResource,
    warehouse: WarehouseResource,
) -> dg.MaterializeResult:
    out = settings.data_dir() / "site"
    try:
        summary = build_site(warehouse.db_path(), artifact_store.store().root, out)
    except ReportError as exc:
        raise dg.Failure(description=str(exc), allow_retries=False) from exc
    for warning in summary.warnings:
        context.log.warning(warning)
    return dg.MaterializeResult(
        metadata={
            "index": dg.MetadataValue.path(str(summary.index)),
            "open": dg.MetadataValue.url(summary.index.as_uri()),
            "pages": summary.pages,
            "runs": summary.runs,
            "models": summary.models,
            "bytes": summary.bytes,
            "seconds": round(summary.seconds, 2),
            "warnings": dg.MetadataValue.json(list(summary.warnings)),
        }
    )

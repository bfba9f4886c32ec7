"""The results site: static HTML built from the warehouse after every sweep."""

import dagster as dg

from assets.automation import whole_warehouse
from bench_pipeline import settings, stages
from bench_pipeline.report import ReportError, build_site
from bench_pipeline.report.data import TABLES
from resources import ArtifactStoreResource, WarehouseResource

# Bump when the pages change: the site is rebuilt, nothing upstream is.
# 2: the Bot accuracy page; 3: its tables per renderer and author group, and the compare
# pages' instrument marks
REPORT_CODE_VERSION = "3"
# What the pages read (bench_pipeline.report.data.TABLES): the models by name, the raw_*
# records through the warehouse's sources asset.
READS = sorted({"warehouse_sources" if t.startswith("raw_") else t for t in TABLES})


@dg.asset(
    deps=READS,
    group_name=stages.RESULTS_SITE.group_name,
    kinds={"html"},
    code_version=REPORT_CODE_VERSION,
    automation_condition=whole_warehouse,
    description="A static site (leaderboard, compare, run detail, methodology, bot accuracy) "
    "built from the warehouse; it opens from disk or any static host, with no network requests. "
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

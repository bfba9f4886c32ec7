"""Stage 7: the DuckDB warehouse, rebuilt from the artifact store by a single writer."""

import dagster as dg

from assets.build import sandboxed_build
from assets.design import experiment_design, run_spec
from assets.evaluation import bot_evaluation
from assets.generation import agent_generation
from assets.metadata import markdown_table
from assets.quality import quality_metrics
from resources import ArtifactStoreResource, WarehouseResource

WAREHOUSE_CODE_VERSION = "1"


@dg.asset(
    deps=[
        experiment_design,
        run_spec,
        agent_generation,
        sandboxed_build,
        bot_evaluation,
        quality_metrics,
    ],
    group_name="warehouse",
    kinds={"duckdb", "sql"},
    code_version=WAREHOUSE_CODE_VERSION,
    # One writer at a time: the build holds a file lock; the pool keeps runs from queueing on it.
    pool="warehouse",
    description="Sources loaded from the artifact store plus every SQL model of dbt_like_sql/, "
    "built in a fresh file and swapped in atomically, so open readers are never blocked.",
)
def warehouse(
    context: dg.AssetExecutionContext,
    artifact_store: ArtifactStoreResource,
    warehouse: WarehouseResource,
) -> dg.MaterializeResult:
    build = warehouse.build(artifact_store.store())
    context.log.info(f"warehouse rebuilt at {build.path} in {build.duration_s:.2f}s")
    return dg.MaterializeResult(
        metadata={
            "path": dg.MetadataValue.path(str(build.path)),
            "duration_s": round(build.duration_s, 3),
            "tables": markdown_table(
                [{"table": t.name, "kind": t.kind, "rows": t.rows} for t in build.tables], 200
            ),
            **{f"rows/{t.name}": t.rows for t in build.tables},
        }
    )

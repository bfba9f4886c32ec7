from collections.abc import Collection
from pathlib import Path

import dagster as dg

from bench_pipeline import settings
from bench_pipeline.warehouse.artifacts import ArtifactStore
from bench_pipeline.warehouse.build import WarehouseBuild, build_warehouse
from bench_pipeline.warehouse.datatests import DataTest


class WarehouseResource(dg.ConfigurableResource):
    """The DuckDB warehouse analysts query; rebuilt from the artifact store by one writer."""

    path: str = ""  # empty: BENCH_WAREHOUSE, else ./data/warehouse.duckdb

    def db_path(self) -> Path:
        return Path(self.path) if self.path else settings.warehouse_path()

    def build(
        self,
        store: ArtifactStore,
        models: Collection[str] | None = None,
        sources: bool = True,
        tests: Collection[DataTest] = (),
    ) -> WarehouseBuild:
        """Reload the sources (if asked) and rebuild `models` (default: every model); the
        blocking tests and `tests` run on the new copy before it is swapped in.

        The models are always the project's dbt_like_sql/: the asset graph has one asset
        per file there, read when the code loads, so no setting may build another folder.
        """
        return build_warehouse(
            store,
            self.db_path(),
            settings.sql_models_dir(),
            models=models,
            sources=sources,
            tests=tests,
        )

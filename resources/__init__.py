"""Dagster resources: thin typed wrappers around `bench_pipeline` objects."""

from resources.artifact_store import ArtifactStoreResource
from resources.warehouse import WarehouseResource

__all__ = ["ArtifactStoreResource", "WarehouseResource"]

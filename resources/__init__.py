"""Dagster resources: thin typed wrappers around `bench_pipeline` objects."""

from resources.agent import AgentResource
from resources.artifact_store import ArtifactStoreResource
from resources.sandbox import SandboxResource
from resources.sonar import SonarQubeResource
from resources.warehouse import WarehouseResource

__all__ = [
    "AgentResource",
    "ArtifactStoreResource",
    "SandboxResource",
    "SonarQubeResource",
    "WarehouseResource",
]

from pathlib import Path

import dagster as dg

from bench_pipeline import settings
from bench_pipeline.warehouse.artifacts import ArtifactStore


class ArtifactStoreResource(dg.ConfigurableResource):
    """Where every stage writes its per-run files (see bench_pipeline.warehouse.artifacts)."""

    root: str = ""  # empty: BENCH_ARTIFACTS_DIR, else ./data/artifacts

    def store(self) -> ArtifactStore:
        return ArtifactStore(Path(self.root) if self.root else settings.artifacts_dir())

from pathlib import Path

import dagster as dg

from bench_pipeline import settings
from bench_pipeline.warehouse.artifacts import ArtifactStore


class ArtifactStoreResource(dg.ConfigurableResource):
    """Where every stage writes its per-run files (see bench_pipeline.warehouse.artifacts).

    Always a local folder: with an object store (BENCH_ARTIFACTS_URL, `bench worker`) it is
    the worker's scratch, which bench_pipeline/sharing/remote.py syncs with the bucket
    around each stage; the stages never talk to the bucket themselves.
    """

    root: str = ""  # empty: BENCH_ARTIFACTS_DIR, else ./data/artifacts

    def store(self) -> ArtifactStore:
        return ArtifactStore(Path(self.root) if self.root else settings.artifacts_dir())

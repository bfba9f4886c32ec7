"""warehouse_sources shows Unsynced after a run's record changed, however many runs there are.

Dagster 1.13 compares an unpartitioned asset with a partitioned parent partition by
partition only below 100 partitions; the `run_records` observation each stage step reports
(assets/metadata.py) is the unpartitioned parent that carries the change beyond that.
Real instance, real stage (run_spec writes each run's record), real DuckDB warehouse.
"""

from __future__ import annotations

import dagster as dg
import pytest
from dagster._core.definitions.data_version import CachingStaleStatusResolver
from dagster._core.loader import LoadingContextForTest

from assets.warehouse import warehouse as warehouse_asset
from bench_pipeline import settings
from bench_pipeline.definitions import ALL_ASSETS, defs
from bench_pipeline.warehouse.artifacts import ArtifactStore
from resources import ArtifactStoreResource, WarehouseResource

DEFAULT = settings.experiments_dir() / "default.yaml"  # 51 cells x 3 repeats: 153 runs


def _stale(instance: dg.DagsterInstance, key: str) -> tuple[str, list[str]]:
    resolver = CachingStaleStatusResolver(
        instance, defs.resolve_asset_graph(), LoadingContextForTest(instance)
    )
    causes = resolver.get_stale_causes(dg.AssetKey(key))
    named = [c.dependency.asset_key.to_user_string() for c in causes if c.dependency]
    return resolver.get_status(dg.AssetKey(key)).value, named


@pytest.mark.slow
def test_a_changed_run_marks_the_warehouse_unsynced_beyond_100_runs(tmp_path) -> None:
    resources = {
        **defs.resources,
        "artifact_store": ArtifactStoreResource(root=str(tmp_path / "artifacts")),
        "warehouse": WarehouseResource(path=str(tmp_path / "warehouse.duckdb")),
    }
    with dg.instance_for_test() as instance:
        dg.materialize(
            ALL_ASSETS,
            selection=["experiment_design"],
            instance=instance,
            resources=resources,
            run_config={"ops": {"experiment_design": {"config": {"experiment": str(DEFAULT)}}}},
        )
        runs = sorted(instance.get_dynamic_partitions("runs"))
        assert len(runs) > 100  # the case Dagster no longer compares partition by partition
        one_step = {
            "dagster/asset_partition_range_start": runs[0],
            "dagster/asset_partition_range_end": runs[-1],
        }
        specs = dg.materialize(
            ALL_ASSETS,
            selection=["run_spec"],
            instance=instance,
            resources=resources,
            tags=one_step,
        )
        assert specs.success
        warehouse = dg.materialize(
            ALL_ASSETS,
            selection=[key.to_user_string() for key in warehouse_asset.keys],
            instance=instance,
            resources=resources,
        )
        assert warehouse.success
        assert _stale(instance, "warehouse_sources")[0] == "FRESH"

        # One run's record written again (its stage run once more).
        again = dg.materialize(
            ALL_ASSETS,
            selection=["run_spec"],
            instance=instance,
            resources=resources,
            partition_key=runs[7],
        )
        assert again.success
        status, named = _stale(instance, "warehouse_sources")
        assert status == "STALE"
        assert "run_records" in named
        observed = instance.fetch_observations(dg.AssetKey("run_records"), limit=5).records
        assert observed and observed[0].asset_observation.metadata["runs"].value == 1
        assert ArtifactStore(tmp_path / "artifacts").read_record("run_spec", runs[7])

"""The experiment design and run spec assets, called directly and through materialize()."""

from __future__ import annotations

import dagster as dg
import pytest

from assets.experiment_design import experiment_design, run_spec
from assets.experiment_design.assets import ExperimentDesignConfig
from assets.partitions import run_partitions
from bench_pipeline import settings
from bench_pipeline.runner import contiguous_ranges
from bench_pipeline.warehouse.artifacts import ArtifactStore
from resources import ArtifactStoreResource

SMOKE = settings.experiments_dir() / "smoke.yaml"


def test_design_asset_registers_one_partition_per_run(
    instance: dg.DagsterInstance, store: ArtifactStore
) -> None:
    context = dg.build_asset_context(instance=instance)
    result = experiment_design(
        context=context,
        config=ExperimentDesignConfig(experiment=str(SMOKE)),
        artifact_store=ArtifactStoreResource(root=str(store.root)),
    )
    keys = instance.get_dynamic_partitions(run_partitions.name)
    assert result.metadata["runs"] == len(keys) == result.metadata["new_runs"]
    design = store.read_design(result.metadata["experiment"])
    assert sorted(r["run_id"] for r in design["runs"]) == sorted(keys)


def test_run_spec_freezes_the_cell_and_prices(
    instance: dg.DagsterInstance, store: ArtifactStore, resources: dict
) -> None:
    dg.materialize(
        [experiment_design, run_spec],
        selection=[experiment_design],
        instance=instance,
        resources=resources,
        run_config={"ops": {"experiment_design": {"config": {"experiment": str(SMOKE)}}}},
    )
    key = instance.get_dynamic_partitions(run_partitions.name)[0]
    context = dg.build_asset_context(partition_key=key, instance=instance)
    run_spec(context=context, artifact_store=resources["artifact_store"])
    spec = store.read_record("run_spec", key)
    assert spec is not None and spec["run_id"] == key
    assert spec["model"] == spec["config"]["model"]
    assert spec["input_usd_per_mtok"] is not None and spec["input_usd_per_mtok"] >= 0
    assert len(spec["config"]) == 16


def test_run_spec_of_an_unknown_run_says_why(instance: dg.DagsterInstance, resources: dict) -> None:
    instance.add_dynamic_partitions(run_partitions.name, ["ghost.c0.r0"])
    context = dg.build_asset_context(partition_key="ghost.c0.r0", instance=instance)
    with pytest.raises(LookupError, match="no design stored for experiment 'ghost'"):
        run_spec(context=context, artifact_store=resources["artifact_store"])


def test_contiguous_ranges() -> None:
    order = ["a1", "b1", "a2", "a3", "b2", "a4"]
    assert contiguous_ranges(order, {"a1", "a2", "a3", "a4"}) == [
        ("a1", "a1"),
        ("a2", "a3"),
        ("a4", "a4"),
    ]
    assert contiguous_ranges(order, set()) == []

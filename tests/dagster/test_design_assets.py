"""The experiment design and run spec assets, called directly and through materialize()."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest
import yaml

from assets.design import experiment_design, run_spec
from assets.design.assets import ExperimentDesignConfig
from assets.partitions import run_partitions
from bench_pipeline import settings
from bench_pipeline.runner import contiguous_ranges, run_main
from bench_pipeline.warehouse.artifacts import ArtifactStore
from bench_pipeline.warehouse.build import query
from resources import ArtifactStoreResource

SMOKE = settings.experiments_dir() / "smoke.yaml"


def test_design_asset_registers_one_partition_per_run(
    instance: dg.DagsterInstance, store: ArtifactStore
) -> None:
    context = dg.build_asset_context(instance=instance)
    result = experiment_design(
        context=context,
        config=ExperimentDesignConfig(experiment_file=str(SMOKE)),
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
        run_config={"ops": {"experiment_design": {"config": {"experiment_file": str(SMOKE)}}}},
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


@pytest.mark.slow
def test_main_run_then_redesign_adds_only_new_runs(
    instance: dg.DagsterInstance, data_dir: Path, tmp_path: Path
) -> None:
    first = run_main(SMOKE, instance, progress=lambda _: None, endurance_s=4.0)
    assert first.runs == first.new_runs > 0
    assert first.tables["stg_runs"] == first.runs
    assert first.tables["raw_run_spec"] == first.runs
    assert first.failed == []
    store = ArtifactStore(data_dir / "artifacts")
    stamps = {p.name: p.stat().st_mtime_ns for p in (store.root / "records" / "run_spec").iterdir()}
    agent_stamps = {
        p.name: p.stat().st_mtime_ns
        for p in (store.root / "records" / "agent_generation").iterdir()
    }
    # Every run reached the warehouse with what the agent, the build and the bot said.
    columns, rows = query(
        data_dir / "warehouse.duckdb",
        "select agent, model, status, build_ok, input_tokens, output_tokens, cost_usd, "
        "duration_s, gameplay_score, quality_score, score from fct_runs",
    )
    assert len(rows) == first.runs
    for row in rows:
        run = dict(zip(columns, row, strict=True))
        assert run["agent"] == "synthetic" and run["status"] == "completed", run
        assert run["build_ok"] is True
        assert run["input_tokens"] > 0 and run["output_tokens"] > 0 and run["cost_usd"] > 0
        assert run["duration_s"] > 0 and 0 <= run["gameplay_score"] <= 100
        assert 0 <= run["quality_score"] <= 100
        assert run["score"] == pytest.approx(
            0.5 * run["gameplay_score"] + 0.5 * run["quality_score"], abs=0.01
        )
    _, verdicts = query(data_dir / "warehouse.duckdb", "select count(*) from fct_test_results")
    assert verdicts == [(16 * first.runs,)]

    # Same file again: nothing new, nothing re-executed.
    again = run_main(SMOKE, instance, progress=lambda _: None, endurance_s=4.0)
    assert (again.new_runs, again.executed_runs) == (0, 0)

    # The same experiment with one more level on an axis: only the new cells' runs are added.
    grown = yaml.safe_load(SMOKE.read_text())
    levels = grown["axes"]["model"]["levels"]
    assert "claude-opus-4-6" not in levels
    levels.append("claude-opus-4-6")
    grown_file = tmp_path / "smoke.yaml"
    grown_file.write_text(yaml.safe_dump(grown))
    (tmp_path / "models.yaml").write_text((settings.experiments_dir() / "models.yaml").read_text())
    second = run_main(grown_file, instance, progress=lambda _: None, endurance_s=4.0)
    assert second.new_runs == grown.get("repeats", 3)
    assert second.runs == first.runs + second.new_runs
    assert second.executed_runs == second.new_runs
    _, rows = query(data_dir / "warehouse.duckdb", "select count(*) from stg_runs")
    assert rows == [(second.runs,)]
    # Existing runs and their results stay, untouched.
    after = {p.name: p.stat().st_mtime_ns for p in (store.root / "records" / "run_spec").iterdir()}
    assert {k: after[k] for k in stamps} == stamps
    agents_after = {
        p.name: p.stat().st_mtime_ns
        for p in (store.root / "records" / "agent_generation").iterdir()
    }
    assert {k: agents_after[k] for k in agent_stamps} == agent_stamps  # never run twice
    assert len(after) == second.runs

"""Launching sweeps: sweep_job's backfill, and the new-model schedule's idempotence."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest
import yaml

from assets.partitions import run_partitions
from assets.sweeps.launch import RUN_STAGE_KEYS
from assets.sweeps.schedules import new_model_backfill_schedule
from bench_pipeline import settings
from bench_pipeline.definitions import defs

SMOKE = settings.experiments_dir() / "smoke.yaml"


def _sweep(
    instance: dg.DagsterInstance, resources: dict, run_config: dict
) -> dg.ExecuteInProcessResult:
    job = defs.resolve_job_def("sweep_job")
    return job.execute_in_process(
        run_config=run_config, instance=instance, resources=resources, raise_on_error=False
    )


def _config(experiment: str, launch: bool = True) -> dict:
    return {"ops": {"experiment_design": {"config": {"experiment": experiment, "launch": launch}}}}


def _design_metadata(result: dg.ExecuteInProcessResult) -> dict:
    [event] = result.get_asset_materialization_events()
    return {k: v.value for k, v in event.materialization.metadata.items()}


def test_sweep_job_registers_the_runs_and_launches_one_backfill(
    instance: dg.DagsterInstance, resources: dict
) -> None:
    result = _sweep(instance, resources, _config("smoke"))  # a name, not a path
    assert result.success
    runs = instance.get_dynamic_partitions(run_partitions.name)
    assert len(runs) == 4
    [backfill] = instance.get_backfills()
    assert _design_metadata(result)["backfill_id"] == backfill.backfill_id
    assert backfill.tags["bench/experiment"] == "smoke"
    assert int(backfill.tags["dagster/max_runtime"]) > 0
    target = backfill.asset_backfill_data.target_subset
    for key in RUN_STAGE_KEYS:
        assert set(target.partitions_subsets_by_asset_key[key].get_partition_keys()) == set(runs)
    # After the runs: the warehouse and the analysis, once.
    unpartitioned = {k.to_user_string() for k in target.non_partitioned_asset_keys}
    assert {"warehouse_sources", "fct_runs", "mart_main_effects"} <= unpartitioned

    # Launching again while the backfill is in flight launches nothing: an agent must
    # never run twice at once for the same run.
    again = _sweep(instance, resources, _config("smoke"))
    assert again.success and _design_metadata(again)["launched_runs"] == 0
    assert len(instance.get_backfills()) == 1


def test_sweep_job_without_launch_only_designs(
    instance: dg.DagsterInstance, resources: dict
) -> None:
    result = _sweep(instance, resources, _config(str(SMOKE), launch=False))
    assert result.success
    assert len(instance.get_dynamic_partitions(run_partitions.name)) == 4
    assert instance.get_backfills() == []


def test_an_unknown_experiment_fails_with_the_names_on_offer(
    instance: dg.DagsterInstance, resources: dict
) -> None:
    result = _sweep(instance, resources, _config("no-such-sweep"))
    assert not result.success
    failure = next(e for e in result.all_events if e.is_step_failure)
    text = failure.step_failure_data.error.message  # type: ignore[union-attr]
    assert "no experiment named 'no-such-sweep'" in text and "smoke" in text
    assert instance.get_dynamic_partitions(run_partitions.name) == []


@pytest.fixture
def standard(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A standard sweep over a registry of two models, in a temporary folder."""
    registry = yaml.safe_load((settings.experiments_dir() / "models.yaml").read_text())
    registry["models"] = [
        m for m in registry["models"] if m["id"] in ("claude-sonnet-4-6", "gpt-5")
    ]
    (tmp_path / "models.yaml").write_text(yaml.safe_dump(registry))
    sweep = {
        "name": "standard",
        "repeats": 2,
        "axes": {
            "agent": {"levels": ["synthetic"]},
            "model": {"levels": "registry", "baseline": "claude-sonnet-4-6"},
        },
        "designs": [{"type": "main_effects"}],
    }
    path = tmp_path / "standard.yaml"
    path.write_text(yaml.safe_dump(sweep))
    monkeypatch.setenv("BENCH_STANDARD_SWEEP", str(path))
    return path


def _tick(instance: dg.DagsterInstance):
    return new_model_backfill_schedule(dg.build_schedule_context(instance=instance))


def test_new_model_schedule_launches_each_model_once(
    instance: dg.DagsterInstance, resources: dict, standard: Path
) -> None:
    first = _tick(instance)
    assert isinstance(first, dg.RunRequest)
    assert first.tags["bench/new_models"] == "claude-sonnet-4-6,gpt-5"
    # The tick hands sweep_job its config; the job registers the runs and launches them.
    assert _sweep(instance, resources, first.run_config).success
    assert len(instance.get_dynamic_partitions(run_partitions.name)) == 4
    assert len(instance.get_backfills()) == 1

    # Idempotent: the next tick finds every model with its runs and launches nothing.
    second = _tick(instance)
    assert isinstance(second, dg.SkipReason)
    assert "all 4 runs are registered" in (second.skip_message or "")

    # The registry gains a model: only its runs are registered and launched.
    registry_file = standard.parent / "models.yaml"
    registry = yaml.safe_load(registry_file.read_text())
    newcomer = dict(registry["models"][0], id="claude-next-5", display_name="Claude Next 5")
    registry["models"].append(newcomer)
    registry_file.write_text(yaml.safe_dump(registry))
    third = _tick(instance)
    assert isinstance(third, dg.RunRequest)
    assert third.tags["bench/new_models"] == "claude-next-5"
    assert third.run_key != first.run_key
    before = set(instance.get_dynamic_partitions(run_partitions.name))
    assert _sweep(instance, resources, third.run_config).success
    added = set(instance.get_dynamic_partitions(run_partitions.name)) - before
    assert len(added) == 2
    newest = max(instance.get_backfills(), key=lambda b: b.backfill_timestamp)
    target = newest.asset_backfill_data.target_subset.partitions_subsets_by_asset_key
    assert set(target[dg.AssetKey("agent_generation")].get_partition_keys()) == added
    assert isinstance(_tick(instance), dg.SkipReason)


def test_a_broken_standard_sweep_skips_with_the_reason(
    instance: dg.DagsterInstance, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = tmp_path / "standard.yaml"
    broken.write_text("name: standard\naxes: [oops]\n")
    monkeypatch.setenv("BENCH_STANDARD_SWEEP", str(broken))
    result = _tick(instance)
    assert isinstance(result, dg.SkipReason)
    assert "cannot be designed" in (result.skip_message or "") and "axes" in (
        result.skip_message or ""
    )

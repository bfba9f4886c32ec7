"""End to end in process, then a new bot version, then a grown experiment: what recomputes by
itself, what is added, and what is never redone.

A sweep of four runs goes through every stage (synthetic agent, real sandboxed builds, the
real bot in Chromium, quality, warehouse, analysis). Then the bot's code version changes:
the automation sensor's conditions must request the evaluations of the existing runs, and
after them the warehouse and the marts, and never an agent run.
"""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest
import yaml

from bench_pipeline import settings
from bench_pipeline.definitions import ALL_ASSETS, defs
from bench_pipeline.records import RECORDS
from bench_pipeline.runner import run_main
from bench_pipeline.warehouse.artifacts import ArtifactStore
from bench_pipeline.warehouse.build import query
from resources import AgentResource

# The bot plays in process here: these tests open Chromium (tests/needs.py).
pytestmark = pytest.mark.usefixtures("chromium")

SMOKE = settings.experiments_dir() / "smoke.yaml"
PER_RUN = ("run_spec", "agent_generation", "sandboxed_build", "bot_evaluation", "quality_metrics")


def _with_bot_version(version: str) -> dg.Definitions:
    """The project's definitions as they load after the bot's code version changed."""
    assets = [
        a.map_asset_specs(lambda spec: spec.replace_attributes(code_version=version))
        if a.keys == {dg.AssetKey("bot_evaluation")}
        else a
        for a in ALL_ASSETS
    ]
    return dg.Definitions(
        assets=assets, sensors=defs.sensors, resources=defs.resources, jobs=defs.jobs
    )


def _requested(result) -> dict[str, int]:
    graph = defs.resolve_asset_graph()
    counts = {k.to_user_string(): result.get_num_requested(k) for k in graph.get_all_asset_keys()}
    return {k: n for k, n in counts.items() if n}


class _NoAgents(AgentResource):
    def adapter(self, harness: str, run_id: str):  # type: ignore[override]
        raise AssertionError(f"an agent was invoked for {run_id}")


@pytest.mark.slow
def test_sweep_end_to_end_then_a_new_bot_recomputes_without_agents(
    instance: dg.DagsterInstance,
    data_dir: Path,
    tmp_path: Path,
    resources: dict,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("BENCH_BOT_ENDURANCE_S", "4")
    summary = run_main(SMOKE, instance, progress=lambda _: None, endurance_s=4.0)
    assert summary.failed == [] and summary.runs == 4
    db = data_dir / "warehouse.duckdb"
    _, rows = query(db, "select count(*), count(score), min(score) >= 0 from fct_runs")
    assert rows == [(4, 4, True)]
    store = ArtifactStore(data_dir / "artifacts")
    stamps = {p.name: p.stat().st_mtime_ns for p in (store.root / "records" / "run_spec").iterdir()}
    agent_stamps = {
        p.name: p.stat().st_mtime_ns
        for p in (store.root / "records" / "agent_generation").iterdir()
    }
    # Every run reached the warehouse with what the agent, the build and the bot said.
    columns, rows = query(
        db,
        "select agent, model, status, build_ok, input_tokens, output_tokens, cost_usd, "
        "duration_s, gameplay_score, quality_score, score from fct_runs",
    )
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
    _, rows = query(db, "select count(*) from fct_test_results")
    assert rows == [(64,)]
    _, rows = query(db, "select count(*) from mart_main_effects where experiment = 'smoke'")
    assert rows[0][0] > 0
    # The stage checks ran with every stage and passed, and every record the stages wrote
    # is what its model says (bench_pipeline/records.py).
    for stage, model in RECORDS.items():
        key = dg.AssetCheckKey(dg.AssetKey(stage), "one_record")
        record = instance.event_log_storage.get_latest_asset_check_execution_by_key([key])[key]
        assert record.status.value == "SUCCEEDED", stage
        for path in (store.root / "records" / stage).iterdir():
            model.model_validate_json(path.read_text())

    materialized = {
        name: len(instance.fetch_materializations(dg.AssetKey(name), limit=100).records)
        for name in PER_RUN
    }
    evaluated_at = {
        p.name: p.stat().st_mtime_ns
        for p in (data_dir / "artifacts" / "records" / "bot_evaluation").iterdir()
    }

    # The sensor's previous tick saw the current code: nothing is stale.
    before = dg.evaluate_automation_conditions(defs=defs, instance=instance)
    assert not {k for k in _requested(before) if k in PER_RUN}

    # A new bot: only the evaluations of the four runs are requested.
    new_defs = _with_bot_version("bot-next")
    changed = dg.evaluate_automation_conditions(
        defs=new_defs, instance=instance, cursor=before.cursor
    )
    assert _requested(changed) == {"bot_evaluation": 4}
    no_agents = {**resources, "agent": _NoAgents()}
    keys = instance.get_dynamic_partitions("runs")
    result = dg.materialize(
        list(new_defs.assets or []),
        selection=["bot_evaluation"],
        instance=instance,
        resources=no_agents,
        tags={
            "dagster/asset_partition_range_start": keys[0],
            "dagster/asset_partition_range_end": keys[-1],
        },
    )
    assert result.success
    events = result.get_asset_materialization_events()
    assert len(events) == 4
    for event in events:
        assert event.materialization.tags["dagster/code_version"] == "bot-next"

    # Then the warehouse and the marts, because the evaluations they read are new.
    downstream = dg.evaluate_automation_conditions(
        defs=new_defs, instance=instance, cursor=changed.cursor
    )
    requested = _requested(downstream)
    assert {"warehouse_sources", "fct_runs", "fct_test_results", "mart_main_effects"} <= set(
        requested
    )
    assert not set(requested) & set(PER_RUN)
    graph = new_defs.resolve_asset_graph()
    result = dg.materialize(
        list(new_defs.assets or []),
        selection=[dg.AssetKey.from_user_string(k) for k in requested],
        instance=instance,
        resources=no_agents,
    )
    assert result.success
    assert graph.get(dg.AssetKey("fct_runs")).automation_condition is not None

    # Every evaluation was redone; no agent ran, no build or quality step was repeated.
    after = {
        p.name: p.stat().st_mtime_ns
        for p in (data_dir / "artifacts" / "records" / "bot_evaluation").iterdir()
    }
    assert all(after[name] > stamp for name, stamp in evaluated_at.items())
    for name in ("run_spec", "agent_generation", "sandboxed_build", "quality_metrics"):
        count = len(instance.fetch_materializations(dg.AssetKey(name), limit=100).records)
        assert count == materialized[name], name
    _, rows = query(data_dir / "warehouse.duckdb", "select count(*) from fct_test_results")
    assert rows == [(64,)]
    # Settled: nothing more to do.
    settled = dg.evaluate_automation_conditions(
        defs=new_defs, instance=instance, cursor=downstream.cursor
    )
    assert _requested(settled) == {}

    # The same file again through `bench run`: nothing new, nothing re-executed.
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
    assert second.runs == summary.runs + second.new_runs
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

"""agent_generation and sandboxed_build as Dagster assets: called directly with a partition
context, and materialized with the bot into the warehouse (synthetic agent and the fake
`claude` CLI on PATH)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import dagster as dg
import pytest
import yaml

from assets.agent_generation import agent_generation
from assets.agent_generation.assets import AgentGenerationConfig
from assets.bot_evaluation import bot_evaluation
from assets.experiment_design import experiment_design, run_spec
from assets.partitions import run_partitions
from assets.quality_metrics import quality_metrics
from assets.sandboxed_build import sandboxed_build
from assets.warehouse import warehouse
from bench_pipeline import settings
from bench_pipeline.definitions import ALL_ASSETS
from bench_pipeline.warehouse.artifacts import ArtifactStore
from bench_pipeline.warehouse.build import query

# The bot plays in process here: these tests open Chromium (tests/needs.py).
pytestmark = pytest.mark.usefixtures("chromium")

SMOKE = settings.experiments_dir() / "smoke.yaml"
FAKE_CLI = settings.project_root() / "tests" / "agents" / "fake_cli"
ALL = ALL_ASSETS


def design(instance: dg.DagsterInstance, resources: dict, experiment: Path = SMOKE) -> list[str]:
    """Design the experiment and freeze every run spec; returns the run partitions."""
    dg.materialize(
        ALL,
        selection=[experiment_design],
        instance=instance,
        resources=resources,
        run_config={"ops": {"experiment_design": {"config": {"experiment": str(experiment)}}}},
    )
    keys = instance.get_dynamic_partitions(run_partitions.name)
    for key in keys:
        dg.materialize(
            ALL, selection=[run_spec], partition_key=key, instance=instance, resources=resources
        )
    return keys


def claude_code_experiment(folder: Path) -> Path:
    """A one-run experiment whose agent is the claude-code harness (registry beside it)."""
    experiment = folder / "cc.yaml"
    experiment.write_text(
        yaml.safe_dump(
            {
                "name": "cc",
                "repeats": 1,
                "axes": {"agent": {"levels": ["claude-code"]}},
                "designs": [{"type": "main_effects"}],
            }
        )
    )
    (folder / "models.yaml").write_text((settings.experiments_dir() / "models.yaml").read_text())
    return experiment


def test_generation_then_build_called_directly(
    instance: dg.DagsterInstance, store: ArtifactStore, resources: dict
) -> None:
    key = design(instance, resources)[0]
    context = dg.build_asset_context(partition_key=key, instance=instance)
    result = agent_generation(
        context=context,
        config=AgentGenerationConfig(),
        artifact_store=resources["artifact_store"],
        agent=resources["agent"],
        sandbox=resources["sandbox"],
    )
    # The run's own metadata (a step of one run): its status, reuse and cost.
    assert result.metadata["status"] == "completed" and result.metadata["reused"] is False
    assert result.metadata["cost_usd"] > 0
    generation = store.read_record("agent_generation", key)
    assert generation is not None and generation["status"] == "completed"

    # Materializing again reuses the stored run: the agent does not run twice.
    again = agent_generation(
        context=dg.build_asset_context(partition_key=key, instance=instance),
        config=AgentGenerationConfig(),
        artifact_store=resources["artifact_store"],
        agent=resources["agent"],
        sandbox=resources["sandbox"],
    )
    assert again.metadata["reused"] == 1

    built = sandboxed_build(
        context=dg.build_asset_context(partition_key=key, instance=instance),
        artifact_store=resources["artifact_store"],
        sandbox=resources["sandbox"],
    )
    assert built.metadata["build_ok"] == 1
    record = store.read_record("sandboxed_build", key)
    assert record is not None and record["build_ok"] and record["served_dir"]
    assert (Path(record["served_dir"]) / "index.html").is_file()
    assert record["sandbox"] == "bubblewrap" and Path(record["log_path"]).is_file()


def test_build_without_an_agent_run_fails_clearly(
    instance: dg.DagsterInstance, resources: dict
) -> None:
    key = design(instance, resources)[0]
    with pytest.raises(dg.Failure, match="materialize agent_generation"):
        sandboxed_build(
            context=dg.build_asset_context(partition_key=key, instance=instance),
            artifact_store=resources["artifact_store"],
            sandbox=resources["sandbox"],
        )


def test_a_missing_agent_cli_fails_the_step_with_how_to_fix_it(
    instance: dg.DagsterInstance, resources: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = design(instance, resources, claude_code_experiment(tmp_path))[0]
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.setenv("BENCH_AGENT_CLI_BIN", str(tmp_path))  # no pinned CLI either
    with pytest.raises(dg.Failure, match="`claude` not found on PATH"):
        agent_generation(
            context=dg.build_asset_context(partition_key=key, instance=instance),
            config=AgentGenerationConfig(),
            artifact_store=resources["artifact_store"],
            agent=resources["agent"],
            sandbox=resources["sandbox"],
        )


@pytest.mark.slow
def test_claude_code_run_through_every_stage_into_fct_runs(
    instance: dg.DagsterInstance,
    store: ArtifactStore,
    resources: dict,
    data_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The real adapter, subprocess, sandbox and parser; only the model is a recording.
    for name in ("claude", "codex"):
        path = FAKE_CLI / name
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    monkeypatch.setenv("PATH", f"{FAKE_CLI}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("BENCH_AGENT_CLI_BIN", str(FAKE_CLI))  # before the pinned real CLIs
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    key = design(instance, resources, claude_code_experiment(tmp_path))[0]
    result = dg.materialize(
        ALL,
        selection=[agent_generation, sandboxed_build, bot_evaluation, quality_metrics],
        partition_key=key,
        instance=instance,
        resources=resources,
        run_config={"ops": {"bot_evaluation": {"config": {"endurance_seconds": 5.0}}}},
    )
    assert result.success
    dg.materialize(ALL, selection=[warehouse], instance=instance, resources=resources)
    columns, rows = query(
        data_dir / "warehouse.duckdb",
        "select agent, model, status, build_ok, input_tokens, output_tokens, cost_usd, "
        "duration_s, gameplay_score, quality_score, score, wasted_turns from fct_runs",
    )
    row = dict(zip(columns, rows[0], strict=True))
    assert row["agent"] == "claude-code" and row["model"] == "claude-sonnet-4-6"
    assert row["status"] == "completed" and row["build_ok"] is True
    recorded = store.read_record("agent_generation", key)
    assert recorded is not None
    assert row["input_tokens"] == recorded["input_tokens"] > 0
    assert row["cost_usd"] == pytest.approx(recorded["cost_usd"]) and row["cost_usd"] > 0
    assert row["gameplay_score"] is not None
    assert row["quality_score"] is not None and row["score"] is not None
    assert row["wasted_turns"] is not None  # the recorded transcript was analysed
    _, verdicts = query(
        data_dir / "warehouse.duckdb",
        f"select count(*) from fct_test_results where run_id = '{key}'",
    )
    assert verdicts == [(16,)]
    # The transcript, normalized: one row per event, tool calls named.
    _, events = query(
        data_dir / "warehouse.duckdb",
        f"select count(*), count(*) filter (where kind = 'tool_call') "
        f"from stg_transcript_events where run_id = '{key}'",
    )
    assert events[0][0] > 0 and events[0][1] > 0


def test_quality_without_a_build_fails_clearly(
    instance: dg.DagsterInstance, resources: dict
) -> None:
    key = design(instance, resources)[0]
    agent_generation(
        context=dg.build_asset_context(partition_key=key, instance=instance),
        config=AgentGenerationConfig(),
        artifact_store=resources["artifact_store"],
        agent=resources["agent"],
        sandbox=resources["sandbox"],
    )
    with pytest.raises(dg.Failure, match="materialize sandboxed_build"):
        quality_metrics(
            context=dg.build_asset_context(partition_key=key, instance=instance),
            artifact_store=resources["artifact_store"],
            sandbox=resources["sandbox"],
            sonar=resources["sonar"],
        )


def test_a_sweeps_budget_cap_reaches_its_agent_runs(
    instance: dg.DagsterInstance, store: ArtifactStore, resources: dict
) -> None:
    """The sweep's launch-time cap (a tag its backfill gives every run) lowers the run's
    budget: the synthetic agent is stopped at it as a real agent would be."""
    key = design(instance, resources)[0]
    result = dg.materialize(
        ALL,
        selection=[agent_generation],
        partition_key=key,
        instance=instance,
        resources=resources,
        tags={"bench/budget_cap_usd": "0.001"},
        raise_on_error=False,
    )
    assert result.success
    record = store.read_record("agent_generation", key)
    assert record is not None and record["budget_usd"] == pytest.approx(0.001)
    assert record["status"] == "budget_exceeded" and record["budget_hit"] is True


def test_the_sweeps_bot_window_is_read_from_its_runs_tags() -> None:
    from assets.bot_evaluation.assets import endurance_for

    assert endurance_for({"bench/bot_endurance_s": "2.5"}, 30.0) == 2.5
    assert endurance_for({}, 30.0) == 30.0
    with pytest.raises(dg.Failure, match="is not a number of seconds"):
        endurance_for({"bench/bot_endurance_s": "soon"}, 30.0)

"""experiments/real-cli-demo.yaml through every stage: the real Claude Code and Codex CLIs
(pinned, make setup) against the scripted model API, then the build, the bot, the quality
stage and the warehouse. The records must carry exactly what the script played."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import pytest

from assets.agent_generation import agent_generation
from assets.bot_evaluation import bot_evaluation
from assets.quality_metrics import quality_metrics
from assets.sandboxed_build import sandboxed_build
from assets.warehouse import warehouse
from bench_pipeline import settings
from bench_pipeline.agents.scripted_server import scenario
from bench_pipeline.definitions import ALL_ASSETS
from bench_pipeline.warehouse.artifacts import ArtifactStore
from bench_pipeline.warehouse.build import query
from tests.dagster.test_generation_and_build_assets import design

# The bot plays in process here: these tests open Chromium (tests/needs.py).
pytestmark = pytest.mark.usefixtures("chromium")

DEMO = settings.experiments_dir() / "real-cli-demo.yaml"


@pytest.mark.agent_cli
@pytest.mark.slow
@pytest.mark.browser
def test_the_real_cli_demo_records_the_scripts_figures(
    instance: dg.DagsterInstance,
    store: ArtifactStore,
    resources: dict,
    data_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("BENCH_AGENT_CLI_BIN", raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # the pinned CLIs, not PATH's
    keys = design(instance, resources, DEMO)
    assert len(keys) == 2
    for key in keys:
        result = dg.materialize(
            ALL_ASSETS,
            selection=[agent_generation, sandboxed_build, bot_evaluation, quality_metrics],
            partition_key=key,
            instance=instance,
            resources=resources,
            run_config={"ops": {"bot_evaluation": {"config": {"endurance_seconds": 5.0}}}},
        )
        assert result.success
    dg.materialize(ALL_ASSETS, selection=[warehouse], instance=instance, resources=resources)

    script = scenario("success")
    usage = script.usage
    db = data_dir / "warehouse.duckdb"
    columns, rows = query(
        db,
        "select run_id, agent, model, status, input_tokens, output_tokens, cache_read_tokens, "
        "cost_usd, turns, tool_calls, build_ok, gameplay_score from fct_runs order by agent",
    )
    runs = [dict(zip(columns, row, strict=True)) for row in rows]
    assert [r["agent"] for r in runs] == ["claude-code", "codex"]
    # Claude Code prices the session itself (Anthropic's cache prices); Codex is priced here
    # from the tokens (its cache writes are plain input on the Responses API).
    costs = {"claude-code": 0.202125, "codex": 0.1908}
    for run in runs:
        assert run["model"] == "scripted-success" and run["status"] == "completed"
        assert run["input_tokens"] == usage.gross_input and run["output_tokens"] == usage.output
        assert run["cache_read_tokens"] == usage.cache_read
        assert (run["turns"], run["tool_calls"]) == (script.turns, script.tool_calls)
        assert run["cost_usd"] == pytest.approx(costs[run["agent"]])
        # The game the script wrote builds and the bot plays it.
        assert run["build_ok"] is True and run["gameplay_score"] is not None
        assert run["gameplay_score"] > 50
        record = store.read_record("agent_generation", run["run_id"])
        assert record is not None
        details = json.loads(record["details"])
        assert details["egress"]["refused_total"] == 0
        assert details["scripted_api"]["answers"] == {"final": 1, "reply": 4}
        # The transcript analysis counts exactly the script's tool calls.
        _, calls = query(
            db,
            "select count(*) from stg_transcript_events "
            f"where run_id = '{run['run_id']}' and kind = 'tool_call'",
        )
        assert calls == [(script.tool_calls,)]

"""agent_generation retries a rate-limited run with back-off, and only that."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import pytest

from assets.agent_generation import agent_generation
from assets.experiment_design import experiment_design, run_spec
from assets.partitions import run_partitions
from bench_pipeline import settings
from bench_pipeline.agents.base import AgentAdapter, AgentOutcome, AgentTask
from bench_pipeline.sandbox.base import Sandbox
from resources import AgentResource

ASSETS = [experiment_design, run_spec, agent_generation]
SMOKE = settings.experiments_dir() / "smoke.yaml"


class Busy(AgentAdapter):
    """Rate-limited for the first `busy_for` calls of a run, then a finished game."""

    name = "busy"

    def __init__(self, calls_file: Path, busy_for: int) -> None:
        self.calls_file, self.busy_for = calls_file, busy_for

    def run(self, task: AgentTask, sandbox: Sandbox) -> AgentOutcome:
        calls = json.loads(self.calls_file.read_text()) if self.calls_file.exists() else {}
        calls[task.run_id] = calls.get(task.run_id, 0) + 1
        self.calls_file.write_text(json.dumps(calls))
        (task.workspace / "index.html").write_text("<canvas></canvas>")
        if calls[task.run_id] <= self.busy_for:
            return AgentOutcome(
                status="failed",
                message='claude exited with code 1: API Error: 429 {"type":"rate_limit_error"}',
            )
        return AgentOutcome(status="completed", message="claude finished")


class BusyAgent(AgentResource):
    calls_file: str
    busy_for: int

    def adapter(self, harness: str, run_id: str) -> AgentAdapter:  # type: ignore[override]
        return Busy(Path(self.calls_file), self.busy_for)


def _generate(instance, resources, agent: BusyAgent, key: str) -> dg.ExecuteInProcessResult:
    config = {"retry_base_delay_s": 0.05, "max_retries": 2}
    return dg.materialize(
        ASSETS,
        selection=[agent_generation],
        partition_key=key,
        instance=instance,
        resources={**resources, "agent": agent},
        run_config={"ops": {"agent_generation": {"config": config}}},
        raise_on_error=False,
    )


def _design(instance, resources) -> str:
    dg.materialize(
        ASSETS,
        selection=[experiment_design],
        instance=instance,
        resources=resources,
        run_config={"ops": {"experiment_design": {"config": {"experiment": str(SMOKE)}}}},
    )
    key = instance.get_dynamic_partitions(run_partitions.name)[0]
    dg.materialize(
        ASSETS, selection=[run_spec], partition_key=key, instance=instance, resources=resources
    )
    return key


def _retries(result: dg.ExecuteInProcessResult) -> int:
    return sum(1 for e in result.all_events if e.event_type_value == "STEP_UP_FOR_RETRY")


@pytest.mark.parametrize("busy_for", [2, 99])
def test_a_rate_limited_run_is_retried_with_back_off_then_fails_readably(
    instance: dg.DagsterInstance, resources: dict, tmp_path: Path, busy_for: int
) -> None:
    key = _design(instance, resources)
    calls = tmp_path / "calls.json"
    agent = BusyAgent(calls_file=str(calls), busy_for=busy_for)
    result = _generate(instance, resources, agent, key)
    # Two retries at most (max_retries), each run of the agent counted.
    assert _retries(result) == 2
    assert json.loads(calls.read_text()) == {key: 3}
    if busy_for == 2:  # the third attempt went through
        assert result.success and len(result.get_asset_materialization_events()) == 1
        return
    assert not result.success
    failure = next(e for e in result.all_events if e.is_step_failure)
    text = failure.step_failure_data.error.message  # type: ignore[union-attr]
    assert "still failing after 2 retries (rate limit or provider outage)" in text
    assert "rate_limit_error" in text

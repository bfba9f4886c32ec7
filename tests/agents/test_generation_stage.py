"""Stage 2 logic with the synthetic agent: records, archives, reuse, reruns, limits."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path
from typing import Any

import pytest

from bench_pipeline.agents import adapter_for
from bench_pipeline.agents.base import AgentAdapter, AgentOutcome, AgentSetupError, AgentTask
from bench_pipeline.agents.stage import (
    ARCHIVE,
    STAGE,
    extract_workspace,
    record_failure,
    run_generation,
)
from bench_pipeline.agents.transcripts import ClaudeStreamMeter
from bench_pipeline.design.axes import default_config
from bench_pipeline.sandbox import get_sandbox
from bench_pipeline.sandbox.base import Sandbox
from bench_pipeline.warehouse.artifacts import ArtifactStore, RecordError


def spec(run_id: str = "t.c1.r0", **axes: Any) -> dict[str, Any]:
    config = {**default_config(), "agent": "synthetic", **axes}
    return {
        "run_id": run_id,
        "experiment": run_id.split(".")[0],
        "cell_id": run_id.split(".")[1],
        "repeat": 0,
        "seed": 11,
        "agent": "synthetic",
        "model": config["model"],
        "input_usd_per_mtok": 3.0,
        "output_usd_per_mtok": 15.0,
        "model_strength": 0.75,
        "config": config,
    }


@pytest.fixture
def store(tmp_path: Path) -> ArtifactStore:
    return ArtifactStore(tmp_path / "artifacts")


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return get_sandbox("bubblewrap")


def synthetic(harness: str) -> AgentAdapter:
    return adapter_for(harness)


def test_a_synthetic_run_leaves_a_complete_record(store: ArtifactStore, sandbox: Sandbox) -> None:
    result = run_generation(spec(language="typescript"), store, synthetic, sandbox)
    record = result.record
    assert not result.reused
    assert record["status"] == "completed", record["message"]
    assert record["agent"] == "synthetic" and record["model"] == "claude-sonnet-4-6"
    assert record["input_tokens"] > record["output_tokens"] > 1000
    assert record["cost_usd"] > 0 and record["cost_source"] == "reported"
    assert record["turns"] >= record["files"] > 3
    assert record["duration_s"] > 0
    assert not record["budget_hit"]
    # The transcript's own numbers agree with the record.
    meter = ClaudeStreamMeter(3.0, 15.0)
    lines = Path(record["transcript_path"]).read_text().splitlines()
    for line in lines:
        meter.feed(line)
    assert meter.usage().output_tokens == record["output_tokens"]
    assert json.loads(lines[-1])["type"] == "result"
    # The archive holds exactly what the agent wrote.
    archive = store.run_dir("t.c1.r0", STAGE) / ARCHIVE
    with tarfile.open(archive) as tar:
        names = sorted(tar.getnames())
    assert "tsconfig.json" in names and "index.html" in names
    assert len(names) == record["files"]
    assert store.read_record(STAGE, "t.c1.r0") == record
    assert (store.run_dir("t.c1.r0", STAGE) / "prompt.md").read_text().strip()


def test_same_run_same_project_and_archive_bytes(tmp_path: Path, sandbox: Sandbox) -> None:
    a = run_generation(spec(), ArtifactStore(tmp_path / "a"), synthetic, sandbox).record
    b = run_generation(spec(), ArtifactStore(tmp_path / "b"), synthetic, sandbox).record
    assert a["archive_sha256"] == b["archive_sha256"]
    assert a["cost_usd"] == b["cost_usd"]
    c = run_generation(spec("t.c2.r0"), ArtifactStore(tmp_path / "c"), synthetic, sandbox).record
    assert c["archive_sha256"] != a["archive_sha256"]


def test_an_existing_run_is_reused_and_a_rerun_keeps_the_old_attempt(
    store: ArtifactStore, sandbox: Sandbox
) -> None:
    first = run_generation(spec(), store, synthetic, sandbox)
    record_file = store.record_path(STAGE, "t.c1.r0")
    stamp = record_file.stat().st_mtime_ns

    def never(harness: str) -> AgentAdapter:
        raise AssertionError("a stored agent run must not run again")

    again = run_generation(spec(), store, never, sandbox)
    assert again.reused and again.record == first.record
    assert record_file.stat().st_mtime_ns == stamp

    rerun = run_generation(spec(), store, synthetic, sandbox, rerun=True)
    assert not rerun.reused
    kept = store.run_dir("t.c1.r0", "attempts") / "1"
    assert json.loads((kept / "record.json").read_text()) == first.record
    assert (kept / ARCHIVE).is_file() and (kept / "transcript.jsonl").is_file()
    assert rerun.record["previous_attempt"] == str(kept)


class Exploding(AgentAdapter):
    name = "exploding"

    def run(self, task: AgentTask, sandbox: Sandbox) -> AgentOutcome:
        (task.workspace / "half.js").write_text("let x =")
        raise ValueError("adapter bug")


def test_an_adapter_bug_is_an_error_outcome_with_its_output_kept(
    store: ArtifactStore, sandbox: Sandbox
) -> None:
    record = run_generation(spec(), store, lambda _: Exploding(), sandbox).record
    assert record["status"] == "error"
    assert "ValueError: adapter bug" in record["message"]
    assert record["files"] == 1
    assert "adapter bug" in json.loads(record["details"])["traceback"]


def test_a_missing_cli_is_a_setup_error_and_writes_no_record(
    store: ArtifactStore, sandbox: Sandbox
) -> None:
    def missing(harness: str) -> AgentAdapter:
        raise AgentSetupError("`claude` not found on PATH")

    with pytest.raises(AgentSetupError, match="not found"):
        run_generation(spec(), store, missing, sandbox)
    assert store.read_record(STAGE, "t.c1.r0") is None


def test_a_budget_below_the_cost_stops_the_run_midway(
    store: ArtifactStore, sandbox: Sandbox
) -> None:
    full = run_generation(spec("t.full.r0"), store, synthetic, sandbox).record
    cut = run_generation(
        spec("t.cut.r0", budget_usd=full["cost_usd"] / 3), store, synthetic, sandbox
    )
    record = cut.record
    assert record["status"] == "budget_exceeded" and record["budget_hit"]
    assert "budget exceeded" in record["message"]
    assert record["files"] < full["files"]
    assert record["cost_usd"] < full["cost_usd"]
    last = json.loads(Path(record["transcript_path"]).read_text().splitlines()[-1])
    assert last["type"] != "result"  # like a killed CLI


def test_turn_and_time_limits_stop_the_run(store: ArtifactStore, sandbox: Sandbox) -> None:
    turns = run_generation(spec("t.turns.r0", max_turns=3), store, synthetic, sandbox).record
    assert turns["status"] == "max_turns"
    assert turns["files"] <= 3
    timed = run_generation(spec("t.time.r0", time_limit_min=0.5), store, synthetic, sandbox).record
    assert timed["status"] == "timed_out"


def test_the_context_file_is_placed_before_the_agent_starts(
    store: ArtifactStore, sandbox: Sandbox
) -> None:
    record = run_generation(spec(context_file=True), store, synthetic, sandbox).record
    assert record["context_file"] == "AGENTS.md"  # the synthetic harness is not Claude Code
    with tarfile.open(store.run_dir("t.c1.r0", STAGE) / ARCHIVE) as tar:
        assert "AGENTS.md" in tar.getnames()


def test_extract_refuses_paths_out_of_the_folder(tmp_path: Path) -> None:
    evil = tmp_path / "evil.tar.gz"
    with tarfile.open(evil, "w:gz") as tar:
        payload = tmp_path / "p.txt"
        payload.write_text("x")
        tar.add(payload, arcname="../escaped.txt")
    with pytest.raises(tarfile.TarError):
        extract_workspace(evil, tmp_path / "out")
    assert not (tmp_path / "escaped.txt").exists()


def test_a_run_recorded_elsewhere_is_imported_like_one_run_here(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    # "Elsewhere": a synthetic run in another store, exported as the documented folder.
    other = ArtifactStore(tmp_path / "other")
    original = run_generation(spec(), other, synthetic, sandbox).record
    folder = tmp_path / "recorded" / "t.c1.r0"
    extract_workspace(other.run_dir("t.c1.r0", STAGE) / ARCHIVE, folder / "workspace")
    (folder / "transcript.jsonl").write_text(Path(original["transcript_path"]).read_text())
    (folder / "metadata.json").write_text(
        json.dumps(
            {
                "agent": "synthetic",
                "model": original["model"],
                "exit_code": 0,
                "duration_s": original["duration_s"],
                "status": "completed",
            }
        )
    )

    here = ArtifactStore(tmp_path / "here")
    replayed = run_generation(
        spec(),
        here,
        lambda h: adapter_for(h, replay_dir=tmp_path / "recorded", run_id="t.c1.r0"),
        sandbox,
    ).record
    assert replayed["adapter"] == "replay" and replayed["status"] == "completed"
    assert replayed["archive_sha256"] == original["archive_sha256"]
    assert replayed["output_tokens"] == original["output_tokens"]
    assert replayed["cost_usd"] == pytest.approx(original["cost_usd"])

    # A run with no recording there runs its own harness as usual.
    fresh = run_generation(
        spec("t.c9.r0"),
        here,
        lambda h: adapter_for(h, replay_dir=tmp_path / "recorded", run_id="t.c9.r0"),
        sandbox,
    ).record
    assert fresh["adapter"] == "synthetic"


class Scripted(AgentAdapter):
    """Says what a CLI said, without running one: for classifying the outcome."""

    name = "scripted"

    def __init__(self, status: str, message: str) -> None:
        self.status, self.message = status, message
        self.calls = 0

    def run(self, task: AgentTask, sandbox: Sandbox) -> AgentOutcome:
        self.calls += 1
        (task.workspace / "index.html").write_text("<canvas></canvas>")
        return AgentOutcome(status=self.status, message=self.message)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("status", "message", "retryable"),
    [
        ("failed", 'claude exited with code 1: API Error: 429 {"type":"rate_limit_error"}', True),
        ("failed", "codex reported an error: stream error: 503 Service Unavailable", True),
        ("error", "claude reported an error: Overloaded (529)", True),
        ("failed", "claude exited with code 1: TypeError: cannot read 'x' of undefined", False),
        ("budget_exceeded", "claude stopped: budget exceeded: $5.02 of $5.00", False),
        ("completed", "claude finished in 12 turns; rate limits were discussed", False),
    ],
)
def test_only_a_busy_provider_makes_a_run_worth_retrying(
    store: ArtifactStore, sandbox: Sandbox, status: str, message: str, retryable: bool
) -> None:
    agent = Scripted(status, message)
    record = run_generation(spec(), store, lambda _: agent, sandbox).record
    assert record["retryable"] is retryable
    # A retryable attempt is set aside and the agent runs again; any other result stays.
    again = run_generation(spec(), store, lambda _: agent, sandbox)
    assert again.reused is not retryable
    assert agent.calls == (2 if retryable else 1)
    if retryable:
        kept = store.run_dir("t.c1.r0", "attempts") / "1"
        assert json.loads((kept / "record.json").read_text())["message"] == message


class _Reporting(AgentAdapter):
    """An adapter that reports whatever numbers it is given (as a broken CLI meter might)."""

    name = "reporting"

    def __init__(self, **numbers: Any) -> None:
        self.numbers = numbers

    def run(self, task: AgentTask, sandbox: Sandbox) -> AgentOutcome:
        (task.workspace / "index.html").write_text("<canvas></canvas>")
        outcome = AgentOutcome(status="completed", message="done")
        for key, value in self.numbers.items():
            if hasattr(outcome.usage, key):
                setattr(outcome.usage, key, value)
            else:
                setattr(outcome, key, value)
        return outcome


@pytest.mark.parametrize(
    ("numbers", "problem"),
    [
        ({"input_tokens": 10**30}, "input_tokens is 1000000000000000000000000000000, outside"),
        ({"duration_s": float("inf")}, "duration_s is inf, not a finite number"),
        ({"cost_usd": float("nan")}, "cost_usd is nan, not a finite number"),
        ({"cost_usd": -1.0}, "cost_usd is -1.0, outside the sane range"),
    ],
)
def test_absurd_agent_numbers_make_an_error_run_naming_the_transcript(
    store: ArtifactStore, sandbox: Sandbox, numbers: dict[str, Any], problem: str
) -> None:
    record = run_generation(spec(), store, lambda h: _Reporting(**numbers), sandbox).record
    assert record["status"] == "error"
    transcript = store.run_dir("t.c1.r0", STAGE) / "transcript.jsonl"
    assert record["message"].startswith(f"run t.c1.r0: transcript {transcript}: ")
    assert problem in record["message"]
    assert (record["input_tokens"], record["cost_usd"], record["duration_s"]) == (0, None, 0.0)
    # What is on disk is the same, finite record.
    assert store.read_record(STAGE, "t.c1.r0") == record


def test_the_record_writer_refuses_numbers_no_row_can_hold(store: ArtifactStore) -> None:
    for value, shown in ((float("inf"), "inf"), (float("nan"), "nan"), (2**70, str(2**70))):
        with pytest.raises(RecordError) as caught:
            store.write_record(STAGE, "t.c1.r0", {"nested": {"duration_s": [1, value]}})
        path = store.record_path(STAGE, "t.c1.r0")
        assert str(caught.value) == (
            f"run t.c1.r0: record {path}: nested.duration_s.1 is {shown}, which a record "
            "cannot hold (not finite, or beyond 64 bits)"
        )
        assert not path.exists()


def test_a_stage_failure_still_records_the_run_as_an_error(store: ArtifactStore) -> None:
    record = record_failure(spec(), store, "run t.c1.r0: agent_generation failed: OSError: x")
    assert store.read_record(STAGE, "t.c1.r0") == record
    assert record["status"] == "error" and record["message"].endswith("OSError: x")
    archive = store.run_dir("t.c1.r0", STAGE) / ARCHIVE
    with tarfile.open(archive) as tar:
        assert tar.getnames() == []  # an empty workspace: later stages build nothing


class _Broken(AgentAdapter):
    """An adapter bug the stage cannot catch around `run`: it returns no outcome at all."""

    name = "broken"

    def run(self, task: AgentTask, sandbox: Sandbox) -> AgentOutcome:
        return None  # type: ignore[return-value]


@pytest.mark.slow
def test_one_broken_run_does_not_fail_the_others_of_its_chunk(
    instance: Any, resources: dict[str, Any], data_dir: Path
) -> None:
    import dagster as dg

    from assets.agent_generation import agent_generation
    from bench_pipeline.definitions import ALL_ASSETS
    from bench_pipeline.runner import RANGE_END, RANGE_START
    from resources import AgentResource
    from tests.dagster.test_generation_and_build_assets import design

    keys = design(instance, resources)
    broken = keys[1]

    class _OneBroken(AgentResource):
        def adapter(self, harness: str, run_id: str) -> AgentAdapter:
            return _Broken() if run_id == broken else super().adapter(harness, run_id)

    result = dg.materialize(
        ALL_ASSETS,
        selection=[agent_generation],
        instance=instance,
        resources={**resources, "agent": _OneBroken()},
        tags={RANGE_START: keys[0], RANGE_END: keys[-1]},
        raise_on_error=False,
    )
    assert result.success
    store = ArtifactStore(data_dir / "artifacts")
    for key in keys:
        record = store.read_record(STAGE, key)
        assert record is not None and (store.run_dir(key, STAGE) / ARCHIVE).is_file()
        if key == broken:
            assert record["status"] == "error"
            assert record["message"].startswith(f"run {key}: agent_generation failed: ")
        else:
            assert record["status"] == "completed", record["message"]

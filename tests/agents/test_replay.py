"""Importing runs recorded elsewhere: folder lookup, metadata checks, the derived outcome."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from bench_pipeline.agents import adapter_for
from bench_pipeline.agents.replay import ReplayAdapter, find_run_folder, import_runs
from tests.agents.conftest import GPT5_CODEX, TRANSCRIPTS, MakeTask, ScriptedSandbox

RUN_ID = "test.c0a1b2c3d4e5.r0"


def record_run(
    root: Path,
    folder: str = RUN_ID,
    *,
    transcript: str | None = "claude_success",
    metadata: dict[str, Any] | str | None = None,
    workspace: bool = True,
) -> Path:
    """A recorded run as another machine would leave it."""
    run = root / folder
    run.mkdir(parents=True)
    if workspace:
        (run / "workspace" / "src").mkdir(parents=True)
        (run / "workspace" / "index.html").write_text("<canvas></canvas>")
        (run / "workspace" / "src" / "game.js").write_text("// game")
    if transcript is not None:
        shutil.copyfile(TRANSCRIPTS / f"{transcript}.jsonl", run / "transcript.jsonl")
    if metadata is None:
        metadata = {
            "agent": "claude-code",
            "model": "claude-sonnet-4-6",
            "exit_code": 0,
            "duration_s": 48.2,
        }
    if isinstance(metadata, dict):
        metadata = json.dumps(metadata)
    (run / "metadata.json").write_text(metadata)
    return run


def test_replay_imports_workspace_transcript_and_numbers(
    tmp_path: Path, make_task: MakeTask
) -> None:
    source = tmp_path / "recorded"
    record_run(source)
    task = make_task(agent="replay")
    (task.workspace / "CLAUDE.md").write_text("context written by the caller")
    outcome = ReplayAdapter(source).run(task, ScriptedSandbox([]))

    assert outcome.status == "completed", outcome.message
    assert outcome.exit_code == 0 and outcome.duration_s == 48.2
    assert outcome.usage.cost_usd == pytest.approx(0.08807955)  # the transcript's own
    assert (outcome.usage.turns, outcome.usage.tool_calls) == (5, 3)
    assert outcome.transcript_lines == 12
    assert (task.workspace / "src" / "game.js").read_text() == "// game"
    assert (task.workspace / "CLAUDE.md").exists()  # merged, not wiped
    assert task.transcript_path.read_bytes() == (TRANSCRIPTS / "claude_success.jsonl").read_bytes()
    assert outcome.message.startswith(f"replayed {RUN_ID} from {source / RUN_ID}: claude-code")
    assert outcome.details["source"] == str(source / RUN_ID)


def test_replay_finds_a_run_by_its_metadata_and_reads_codex(
    tmp_path: Path, make_task: MakeTask
) -> None:
    source = tmp_path / "recorded"
    meta = {
        "run_id": RUN_ID,
        "agent": "codex",
        "model": "gpt-5-codex",
        "exit_code": 0,
        "duration_s": 30,
        "cost_usd": 0.25,
    }
    record_run(source, "2026-01-15-batch-7", transcript="codex_success", metadata=meta)
    assert find_run_folder(source, RUN_ID) == source / "2026-01-15-batch-7"
    task = make_task(agent="replay", prices=GPT5_CODEX, axes={"model": "gpt-5-codex"})
    outcome = ReplayAdapter(source).run(task, ScriptedSandbox([]))
    assert outcome.status == "completed"
    # The recording harness's measured cost beats our pricing of its tokens.
    assert outcome.usage.cost_usd == 0.25 and outcome.usage.cost_source == "reported"
    assert outcome.usage.output_tokens == 5120 and outcome.usage.tool_calls == 4


@pytest.mark.parametrize(
    ("metadata", "problem"),
    [
        (None, "metadata.json: missing"),
        ("{not json", "metadata.json: not valid JSON"),
        ("[1, 2]", "metadata.json: must be a JSON object, got list"),
        ({"model": "m", "exit_code": 0, "duration_s": 1}, "agent must be a non-empty string"),
        ({"agent": "a", "model": "m", "duration_s": 1}, "exit_code is missing"),
        ({"agent": "a", "model": "m", "exit_code": "0", "duration_s": 1}, "exit_code must be"),
        (
            {"agent": "a", "model": "m", "exit_code": 0, "duration_s": -1},
            "duration_s is -1, outside the sane range 0 to",
        ),
        (
            {"agent": "a", "model": "m", "exit_code": 0, "duration_s": 1, "cost_usd": "free"},
            "cost_usd must be a number, got 'free'",
        ),
        # Python's json reads these literals; none of them is a measurement.
        (
            '{"agent": "a", "model": "m", "exit_code": 0, "duration_s": 1e309}',
            "duration_s is inf, not a finite number",
        ),
        (
            '{"agent": "a", "model": "m", "exit_code": 0, "duration_s": NaN}',
            "duration_s is nan, not a finite number",
        ),
        (
            '{"agent": "a", "model": "m", "exit_code": 0, "duration_s": 1, "cost_usd": -0.5}',
            "cost_usd is -0.5, outside the sane range",
        ),
        (
            '{"agent": "a", "model": "m", "exit_code": 0, "duration_s": 1, "cost_usd": "NaN"}',
            "cost_usd must be a number, got 'NaN'",
        ),
        (
            '{"agent": "a", "model": "m", "exit_code": 1e300, "duration_s": 1}',
            "exit_code must be an integer or null",
        ),
        (
            {"agent": "a", "model": "m", "exit_code": 0, "duration_s": 1, "status": "great"},
            "status must be one of completed, failed",
        ),
    ],
)
def test_malformed_metadata_is_an_error_outcome_naming_the_file(
    tmp_path: Path, make_task: MakeTask, metadata: Any, problem: str
) -> None:
    source = tmp_path / "recorded"
    run = record_run(source, metadata=metadata if metadata is not None else "")
    if metadata is None:
        (run / "metadata.json").unlink()
    task = make_task(agent="replay")
    outcome = ReplayAdapter(source).run(task, ScriptedSandbox([]))
    assert outcome.status == "error"
    assert outcome.message.startswith(f"run {RUN_ID}: recording {run}: metadata.json")
    assert problem in outcome.message
    assert list(task.workspace.iterdir()) == []  # nothing half-imported


def test_missing_run_or_workspace_is_an_error_outcome(tmp_path: Path, make_task: MakeTask) -> None:
    source = tmp_path / "recorded"
    outcome = ReplayAdapter(source).run(make_task(agent="replay"), ScriptedSandbox([]))
    assert outcome.status == "error"
    assert outcome.message.startswith(f"no recorded run {RUN_ID} under {source}")
    run = record_run(source, workspace=False)
    outcome = ReplayAdapter(source).run(make_task(agent="replay"), ScriptedSandbox([]))
    assert outcome.status == "error"
    assert outcome.message == f"run {RUN_ID}: recording {run}: workspace/ is missing"


def test_status_from_exit_code_metadata_and_budget(tmp_path: Path, make_task: MakeTask) -> None:
    base = {"agent": "claude-code", "model": "claude-sonnet-4-6", "duration_s": 3}
    cases = [
        ({**base, "exit_code": 2}, "claude_success", "failed"),
        ({**base, "exit_code": None, "status": "timed_out"}, "claude_success", "timed_out"),
        ({**base, "exit_code": 0}, None, "completed"),
        ({**base, "exit_code": 0, "cost_usd": 9.5}, None, "budget_exceeded"),
    ]
    for n, (meta, transcript, status) in enumerate(cases):
        source = tmp_path / f"recorded{n}"
        record_run(source, metadata=meta, transcript=transcript)
        task = make_task(agent="replay")
        outcome = ReplayAdapter(source).run(task, ScriptedSandbox([]))
        assert outcome.status == status, (meta, outcome.message)
        assert outcome.budget_hit == (status == "budget_exceeded")
        if transcript is None:
            assert outcome.usage.output_tokens == 0 and not task.transcript_path.exists()
            assert "missing" in outcome.details["transcript"]


def test_a_different_model_is_flagged(tmp_path: Path, make_task: MakeTask) -> None:
    source = tmp_path / "recorded"
    meta = {"agent": "claude-code", "model": "claude-opus-4-6", "exit_code": 0, "duration_s": 1}
    record_run(source, metadata=meta)
    outcome = ReplayAdapter(source).run(make_task(agent="replay"), ScriptedSandbox([]))
    assert outcome.status == "completed"
    assert "recorded model 'claude-opus-4-6', the cell's is 'claude-sonnet-4-6'" in outcome.message
    assert outcome.details["mismatches"]["model"]["recorded"] == "claude-opus-4-6"


def test_import_runs_lists_what_can_be_imported(tmp_path: Path) -> None:
    source = tmp_path / "recorded"
    record_run(source, "exp.c1.r0")
    record_run(source, "folder-b", metadata={"run_id": "exp.c2.r1", "agent": "a"})
    record_run(source, "broken", metadata="{oops")
    (source / "not-a-run").mkdir()
    (source / "notes.txt").write_text("hello")
    assert import_runs(source) == ["exp.c1.r0", "exp.c2.r1"]
    assert import_runs(tmp_path / "absent") == []
    assert find_run_folder(source, "../recorded") is None


def test_the_stage_picks_the_replay_adapter_for_a_recorded_run(tmp_path: Path) -> None:
    source = tmp_path / "recorded"
    record_run(source)
    adapter = adapter_for("claude-code", replay_dir=source, run_id=RUN_ID)
    assert isinstance(adapter, ReplayAdapter)
    other = adapter_for("command", command=["agent"], replay_dir=source, run_id="exp.c9.r0")
    assert other.name == "command"


# --- hostile recordings: nothing outside the recording may come in -----------------------

SECRET = b"TOP-SECRET-replay-9f2c1e"


@pytest.fixture
def secret_dir(tmp_path: Path) -> Path:
    """A throw-away host folder holding a secret, outside every recording."""
    folder = tmp_path / "host-secrets"
    folder.mkdir()
    (folder / "id_rsa").write_bytes(SECRET)
    (folder / "index.html").write_bytes(b"<canvas></canvas>" + SECRET)
    return folder


def _assert_refused(outcome: Any, task: Any, run: Path, problem: str) -> None:
    assert outcome.status == "error"
    assert outcome.message.startswith(f"run {RUN_ID}: recording {run}: "), outcome.message
    assert problem in outcome.message, outcome.message
    assert list(task.workspace.iterdir()) == []  # nothing imported, not even the safe files
    assert not task.transcript_path.exists()
    for path in task.transcript_path.parent.rglob("*"):
        assert path.is_symlink() or not path.is_file() or SECRET not in path.read_bytes()


def test_a_workspace_that_is_a_link_is_refused(
    tmp_path: Path, make_task: MakeTask, secret_dir: Path
) -> None:
    source = tmp_path / "recorded"
    run = record_run(source, workspace=False)
    (run / "workspace").symlink_to(secret_dir)
    task = make_task(agent="replay")
    outcome = ReplayAdapter(source).run(task, ScriptedSandbox([]))
    _assert_refused(outcome, task, run, "workspace is a link to outside the recording")


def test_a_file_link_to_a_host_secret_is_refused(
    tmp_path: Path, make_task: MakeTask, secret_dir: Path
) -> None:
    source = tmp_path / "recorded"
    run = record_run(source)
    (run / "workspace" / "src" / "key.txt").symlink_to(secret_dir / "id_rsa")
    task = make_task(agent="replay")
    outcome = ReplayAdapter(source).run(task, ScriptedSandbox([]))
    _assert_refused(outcome, task, run, "workspace/src/key.txt is a link to outside the recording")


def test_a_folder_link_and_a_relative_escape_are_refused(
    tmp_path: Path, make_task: MakeTask, secret_dir: Path
) -> None:
    for n, target in enumerate([secret_dir, Path("../../../host-secrets/id_rsa")]):
        source = tmp_path / f"recorded{n}"
        run = record_run(source)
        (run / "workspace" / "assets").symlink_to(target)
        task = make_task(agent="replay")
        outcome = ReplayAdapter(source).run(task, ScriptedSandbox([]))
        _assert_refused(outcome, task, run, "workspace/assets is a link to outside the recording")


def test_links_inside_the_workspace_are_kept_as_relative_links(
    tmp_path: Path, make_task: MakeTask
) -> None:
    source = tmp_path / "recorded"
    run = record_run(source)
    (run / "workspace" / "main.js").symlink_to("src/game.js")
    (run / "workspace" / "abs.js").symlink_to(run / "workspace" / "src" / "game.js")
    task = make_task(agent="replay")
    outcome = ReplayAdapter(source).run(task, ScriptedSandbox([]))
    assert outcome.status == "completed", outcome.message
    for name in ("main.js", "abs.js"):
        link = task.workspace / name
        assert link.is_symlink() and not Path(link.readlink()).is_absolute()
        assert link.resolve() == (task.workspace / "src" / "game.js").resolve()


def test_a_hard_link_to_a_host_file_is_refused(
    tmp_path: Path, make_task: MakeTask, secret_dir: Path
) -> None:
    source = tmp_path / "recorded"
    run = record_run(source)
    (run / "workspace" / "notes.txt").hardlink_to(secret_dir / "id_rsa")
    task = make_task(agent="replay")
    outcome = ReplayAdapter(source).run(task, ScriptedSandbox([]))
    _assert_refused(outcome, task, run, "workspace/notes.txt is a hard link to a file outside")


def test_two_hard_links_inside_the_workspace_are_fine(tmp_path: Path, make_task: MakeTask) -> None:
    source = tmp_path / "recorded"
    run = record_run(source)
    (run / "workspace" / "copy.js").hardlink_to(run / "workspace" / "src" / "game.js")
    task = make_task(agent="replay")
    outcome = ReplayAdapter(source).run(task, ScriptedSandbox([]))
    assert outcome.status == "completed", outcome.message
    assert (task.workspace / "copy.js").read_text() == "// game"


def test_a_fifo_in_the_workspace_is_refused_without_blocking(
    tmp_path: Path, make_task: MakeTask
) -> None:
    source = tmp_path / "recorded"
    run = record_run(source)
    os.mkfifo(run / "workspace" / "pipe.js")
    task = make_task(agent="replay")
    outcome = ReplayAdapter(source).run(task, ScriptedSandbox([]))
    _assert_refused(outcome, task, run, "workspace/pipe.js is a FIFO")


def test_linked_recording_folder_metadata_or_transcript_are_refused(
    tmp_path: Path, make_task: MakeTask, secret_dir: Path
) -> None:
    elsewhere = record_run(tmp_path / "elsewhere")
    source = tmp_path / "recorded"
    source.mkdir()
    (source / RUN_ID).symlink_to(elsewhere)
    task = make_task(agent="replay")
    outcome = ReplayAdapter(source).run(task, ScriptedSandbox([]))
    _assert_refused(outcome, task, source / RUN_ID, "the recording folder is a link")

    for name in ("transcript.jsonl", "metadata.json"):
        source = tmp_path / f"recorded-{name}"
        run = record_run(source)
        (run / name).unlink()
        (run / name).symlink_to(secret_dir / "id_rsa")
        task = make_task(agent="replay")
        outcome = ReplayAdapter(source).run(task, ScriptedSandbox([]))
        _assert_refused(outcome, task, run, f"{name} is a link")


@pytest.mark.parametrize(
    ("usage", "problem"),
    [
        ('"input_tokens": 1e30', "input_tokens is 1e+30, outside the sane range"),
        ('"output_tokens": -5', "output_tokens is -5, outside the sane range"),
        ('"input_tokens": NaN', "input_tokens is nan, not a finite number"),
        ('"output_tokens": "NaN"', "output_tokens must be an integer, got 'NaN'"),
        ('"output_tokens": 1e309', "output_tokens is inf, not a finite number"),
    ],
)
def test_a_transcript_with_absurd_numbers_is_refused(
    tmp_path: Path, make_task: MakeTask, usage: str, problem: str
) -> None:
    source = tmp_path / "recorded"
    run = record_run(source)
    line = (
        '{"type": "assistant", "session_id": "s", "message": {"id": "m1", "content": [], '
        f'"usage": {{{usage}}}}}}}\n'
    )
    with (run / "transcript.jsonl").open("a") as handle:
        handle.write(line)
    task = make_task(agent="replay")
    outcome = ReplayAdapter(source).run(task, ScriptedSandbox([]))
    _assert_refused(outcome, task, run, "transcript.jsonl: line 13: " + problem)

"""The real Claude Code and Codex CLIs (pinned in toolchain/agents, installed by make setup),
run by their adapters inside the bubblewrap sandbox against the scripted model API.

Every adapter path a real CLI can show is shown here: a whole session, the cell's budget,
max_turns and time limit, 429/529 answers retried, a stream cut mid-event, a reply that is
not JSON, and the egress record. What only a fake can show stays in test_cli_adapters.py
(the fake CLIs there): a CLI that prints no JSON at all, crashes, or is killed mid-line, and
how the user's credentials and Codex login are passed (a scripted run never gets them).
"""

from __future__ import annotations

import json
import os
import tarfile
from pathlib import Path

import pytest

from bench_pipeline.agents import adapter_for
from bench_pipeline.agents.base import AgentOutcome
from bench_pipeline.agents.claude_code import ClaudeCodeAdapter
from bench_pipeline.agents.cli_adapter import SCRIPTED_HOST, SCRIPTED_PORT
from bench_pipeline.agents.codex import CodexAdapter
from bench_pipeline.agents.meters import Prices
from bench_pipeline.agents.scripted_server import scenario, tetris_files
from bench_pipeline.agents.stage import ARCHIVE, STAGE, run_generation
from bench_pipeline.design.axes import default_config
from bench_pipeline.quality.transcript import analyze_transcript
from bench_pipeline.sandbox.base import Sandbox
from bench_pipeline.warehouse.artifacts import ArtifactStore
from tests.agents.conftest import MakeTask

pytestmark = [pytest.mark.agent_cli, pytest.mark.slow]

HARNESSES = ("claude-code", "codex")
SCRIPTED = f"{SCRIPTED_HOST}:{SCRIPTED_PORT}"
# The scripted models' prices (experiments/registries/scripted-models.yaml), Claude Sonnet's.
PRICES = Prices(3.0, 15.0)


@pytest.fixture(autouse=True)
def real_clis(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pinned CLIs, nothing from PATH, no credential of the machine's."""
    monkeypatch.delenv("BENCH_AGENT_CLI_BIN", raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "CODEX_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def run(
    harness: str,
    name: str,
    make_task: MakeTask,
    sandbox: Sandbox,
    *,
    codex_args: tuple[str, ...] = (),
    **fields: object,
) -> tuple[AgentOutcome, Path]:
    task = make_task(agent=harness, model=f"scripted-{name}", prices=(3.0, 15.0), **fields)
    adapter = (
        ClaudeCodeAdapter() if harness == "claude-code" else CodexAdapter(extra_args=codex_args)
    )
    return adapter.run(task, sandbox), task.workspace


def answers(outcome: AgentOutcome) -> list[tuple[int | None, int, str]]:
    """(reply, attempt, answer) of every request the scripted server saw."""
    log = outcome.details["scripted_api"]["log"]
    return [(entry["reply"], entry["attempt"], entry["answer"]) for entry in log]


def assert_only_the_scripted_api_was_reached(outcome: AgentOutcome) -> None:
    egress = outcome.details["egress"]
    assert egress["allowed_hosts"] == [] and egress["local_services"] == [SCRIPTED]
    assert list(egress["connections"]) == [SCRIPTED]
    assert egress["refused_total"] == 0, egress["refused"]


def expected_cost(harness: str, name: str, replies: int | None = None) -> float:
    script = scenario(name)
    usage = script.usage_until(replies if replies is not None else len(script.replies))
    if harness == "claude-code":
        # What Claude Code reports (total_cost_usd): Anthropic's cache prices.
        fresh, write, write_factor = usage.input, usage.cache_write, 1.25
    else:
        # Codex: the Responses API has no cache writes, they are plain input.
        fresh, write, write_factor = usage.input + usage.cache_write, 0, 0.0
    cost = PRICES.cost(
        fresh_input=fresh,
        cache_read=usage.cache_read,
        cache_write=write,
        output=usage.output,
        read_factor=0.1,
        write_factor=write_factor,
    )
    assert cost is not None
    return cost


@pytest.mark.parametrize("harness", HARNESSES)
@pytest.mark.parametrize("name", ["success", "retry"])
def test_a_whole_session_is_recorded_with_the_scripts_figures(
    harness: str, name: str, make_task: MakeTask, bubblewrap: Sandbox
) -> None:
    outcome, workspace = run(harness, name, make_task, bubblewrap)
    script = scenario(name)

    assert outcome.status == "completed", outcome.message
    assert outcome.exit_code == 0 and not outcome.budget_hit
    usage = outcome.usage
    want = script.usage
    assert usage.input_tokens == want.gross_input
    assert usage.output_tokens == want.output
    assert usage.cache_read_tokens == want.cache_read
    # Anthropic reports cache writes; the Responses API has none (they are plain input).
    assert usage.cache_creation_tokens == (want.cache_write if harness == "claude-code" else 0)
    assert (usage.turns, usage.tool_calls) == (script.turns, script.tool_calls)
    assert usage.cost_source == ("reported" if harness == "claude-code" else "priced")
    assert usage.cost_usd == pytest.approx(expected_cost(harness, name))

    # The CLI itself carried out the script's tool calls in the workspace: the Tetris files
    # byte for byte, and the check command ran and passed.
    for path, text in tetris_files().items():
        assert (workspace / path).read_text() == text
    report = analyze_transcript(Path(outcome.details["transcript"]))
    assert report.tool_calls == script.tool_calls
    # Codex prints a retry as an `error` event ("Reconnecting... 1/3"); the session had no other.
    assert report.errors == (1 if name == "retry" and harness == "codex" else 0)
    assert "check ok" in Path(outcome.details["transcript"]).read_text()

    faults = [("429",), ("529",)] if name == "retry" else []
    played = answers(outcome)
    assert [(a,) for _, _, a in played if a in ("429", "529")] == faults
    assert [r for r, _, a in played if a in ("reply", "final")] == list(range(len(script.replies)))
    assert_only_the_scripted_api_was_reached(outcome)


@pytest.mark.parametrize("harness", HARNESSES)
def test_the_budget_stops_a_real_cli_and_keeps_what_it_wrote(
    harness: str, make_task: MakeTask, bubblewrap: Sandbox
) -> None:
    outcome, workspace = run(harness, "budget", make_task, bubblewrap, budget_usd=0.50)
    assert outcome.status == "budget_exceeded" and outcome.budget_hit, outcome.message
    assert outcome.message.startswith(f"{'claude' if harness == 'claude-code' else 'codex'} ")
    assert outcome.exit_code is None  # killed, not exited
    # $0.20 a reply: over $0.50 on the third; on a loaded machine the CLI may get a reply or
    # two further before the kill lands, never near the $3.00 of the whole script.
    assert 0.50 < outcome.usage.cost_usd < 1.50  # type: ignore[operator]
    served = outcome.details["scripted_api"]["replies_served"]
    assert 3 <= served < len(scenario("budget").replies)
    assert (workspace / "step-01.txt").read_text() == "step 1\n"
    assert not (workspace / "step-15.txt").exists()
    assert_only_the_scripted_api_was_reached(outcome)


@pytest.mark.parametrize("harness", HARNESSES)
def test_max_turns_stops_a_real_cli(harness: str, make_task: MakeTask, bubblewrap: Sandbox) -> None:
    outcome, workspace = run(harness, "turns", make_task, bubblewrap, max_turns=5)
    assert outcome.status == "max_turns", outcome.message
    if harness == "claude-code":
        # Claude Code enforces --max-turns itself and says so in its result event.
        assert outcome.message == "claude stopped itself at the 5 turn limit"
        assert outcome.exit_code == 1 and outcome.usage.turns == 6
    else:
        # Codex has no such switch: the harness counts its turns and stops it.
        assert outcome.message == "codex stopped: max turns exceeded: 6 of 5"
    assert (workspace / "step-05.txt").is_file() and not (workspace / "step-12.txt").exists()


@pytest.mark.parametrize("harness", HARNESSES)
def test_a_stalled_model_api_ends_at_the_time_limit(
    harness: str, make_task: MakeTask, bubblewrap: Sandbox
) -> None:
    outcome, workspace = run(harness, "stall", make_task, bubblewrap, time_limit_s=10.0)
    assert outcome.status == "timed_out", outcome.message
    label = "claude" if harness == "claude-code" else "codex"
    assert outcome.message.startswith(f"{label} killed after the 10 s time limit")
    assert outcome.exit_code is None
    assert (workspace / "kept.txt").read_text() == "written before the fault\n"
    assert answers(outcome) == [(0, 0, "reply"), (1, 0, "stall")]
    # The sandbox killed the CLI's whole tree: nothing still runs in the workspace.
    assert not processes_in(workspace)


@pytest.mark.parametrize("harness", HARNESSES)
def test_a_stream_cut_once_is_retried_and_the_session_completes(
    harness: str, make_task: MakeTask, bubblewrap: Sandbox
) -> None:
    outcome, workspace = run(harness, "cut-once", make_task, bubblewrap)
    assert outcome.status == "completed", outcome.message
    assert answers(outcome) == [(0, 0, "reply"), (1, 0, "cut"), (1, 1, "reply"), (2, 0, "final")]
    assert outcome.usage.cost_usd == pytest.approx(expected_cost(harness, "cut-once"))
    assert (workspace / "kept.txt").is_file()


@pytest.mark.parametrize("harness", HARNESSES)
@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("cut", {"claude-code": "Connection to the API was lost", "codex": "stream disconnected"}),
        ("garbage", {"claude-code": "JSON Parse error", "codex": "stream disconnected"}),
    ],
)
def test_a_broken_model_api_fails_the_run_after_the_clis_retries(
    harness: str, name: str, says: dict[str, str], make_task: MakeTask, bubblewrap: Sandbox
) -> None:
    outcome, workspace = run(harness, name, make_task, bubblewrap)
    assert outcome.status == "failed", outcome.message
    assert outcome.exit_code == 1 and says[harness] in outcome.message
    # What the first reply cost is still recorded, and its file kept.
    assert outcome.usage.cost_usd == pytest.approx(expected_cost(harness, name, replies=1))
    assert (workspace / "kept.txt").read_text() == "written before the fault\n"
    attempts = [attempt for reply, attempt, answer in answers(outcome) if answer == name]
    assert len(attempts) >= 2  # the CLI tried again before it gave up
    assert_only_the_scripted_api_was_reached(outcome)


def test_destinations_beyond_the_scripted_api_are_refused_listed_and_harmless(
    make_task: MakeTask, bubblewrap: Sandbox
) -> None:
    # Codex with its plugin sync switched back on tries three hosts of its own at start-up.
    outcome, _ = run(
        "codex", "cut-once", make_task, bubblewrap, codex_args=("-c", "features.plugins=true")
    )
    assert outcome.status == "completed", outcome.message
    egress = outcome.details["egress"]
    refused = {entry["target"] for entry in egress["refused"]}
    # Its sync tries git, then GitHub's API, then an archive on chatgpt.com, each refused at
    # once; how far it gets before the session ends is the CLI's affair.
    assert refused & {"github.com:443", "api.github.com:443", "chatgpt.com:443"}, refused
    assert all(entry["reason"] == "not on the allow-list" for entry in egress["refused"])
    assert list(egress["connections"]) == [SCRIPTED]  # none of them was reached


@pytest.mark.parametrize("harness", HARNESSES)
def test_a_scripted_run_gets_no_credential_of_the_machine(
    harness: str,
    make_task: MakeTask,
    bubblewrap: Sandbox,
    host_home: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-real-key")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-key")
    (host_home / ".codex").mkdir()
    (host_home / ".codex" / "auth.json").write_text('{"tokens": "real-login"}')
    outcome, _ = run(harness, "cut-once", make_task, bubblewrap)
    assert outcome.status == "completed", outcome.message
    # Every request carried the placeholder key, none the machine's; no login was copied.
    log = outcome.details["scripted_api"]["log"]
    assert log and {entry["credential"] for entry in log} == {"placeholder"}
    assert "sk-real-key" not in json.dumps(outcome.details)
    assert not outcome.details.get("login_copied")


def processes_in(folder: Path) -> list[str]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            continue
        if cwd.startswith(str(folder)):
            found.append(pid)
    return found


def test_a_stopped_real_cli_run_is_recorded_and_the_next_run_goes_on(
    tmp_path: Path, bubblewrap: Sandbox
) -> None:
    """Through the generation stage, as a sweep runs it: a scripted model without a script is
    an error run, a run stopped by its budget leaves its record and its archive (what it
    wrote so far), and each next run is played."""
    store = ArtifactStore(tmp_path / "artifacts")

    def spec(run_id: str, agent: str, model: str, budget: float) -> dict[str, object]:
        config = {**default_config(), "agent": agent, "model": model, "budget_usd": budget}
        return {
            "run_id": run_id,
            "experiment": "t",
            "cell_id": run_id.split(".")[1],
            "repeat": 0,
            "seed": 0,
            "agent": agent,
            "model": model,
            "input_usd_per_mtok": 3.0,
            "output_usd_per_mtok": 15.0,
            "config": config,
        }

    unknown = run_generation(
        spec("t.c0.r0", "codex", "scripted-nope", 5.0), store, adapter_for, bubblewrap
    ).record
    assert unknown["status"] == "error"
    assert unknown["message"].startswith(
        "model 'scripted-nope': unknown scripted scenario 'nope'; known: success, budget"
    )
    stopped = run_generation(
        spec("t.c1.r0", "claude-code", "scripted-budget", 0.5), store, adapter_for, bubblewrap
    ).record
    after = run_generation(
        spec("t.c2.r0", "codex", "scripted-success", 5.0), store, adapter_for, bubblewrap
    ).record
    assert stopped["status"] == "budget_exceeded" and stopped["budget_hit"]
    with tarfile.open(store.run_dir("t.c1.r0", STAGE) / ARCHIVE) as archive:
        names = archive.getnames()
    assert any(name.endswith("step-01.txt") for name in names)
    assert after["status"] == "completed" and after["tool_calls"] == scenario("success").tool_calls

"""The CLI adapters with fake `claude`/`codex` (tests/agents/fake_cli), run under real bubblewrap.

The real CLIs are tested in test_real_cli.py against the scripted model API: a whole
session, budget, max_turns, time limit, retries, a cut stream and a reply that is not JSON.
The fakes stay only for what a real CLI cannot be made to show:

- the user's credentials and Codex login passed into the run (`*_end_to_end`): a scripted
  run never gets them, and no real key exists offline;
- a CLI whose stdout is not JSON at all, that crashes, or whose transcript is cut mid-line
  (the real CLIs print JSON whatever their model API answers, and exit cleanly);
- the `command` harness, which runs any program.

The others check argv building and the judging of outcomes without a process.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from bench_pipeline.agents.base import AgentOutcome, AgentSetupError, AgentTask
from bench_pipeline.agents.claude_code import ClaudeCodeAdapter
from bench_pipeline.agents.cli_adapter import CliAdapter, agent_home
from bench_pipeline.agents.codex import QUIET_CONFIG, CodexAdapter, SessionLogReader
from bench_pipeline.agents.command import CommandAdapter
from bench_pipeline.agents.transcripts import CodexJsonMeter
from bench_pipeline.sandbox.base import Sandbox
from tests.agents.conftest import FAKE_CLI, GPT5_CODEX, MakeTask, Recorded, ScriptedSandbox

CODEX_AXES = {"agent": "codex", "model": "gpt-5-codex"}


def invocation(task: AgentTask) -> dict[str, Any]:
    """What the fake CLI logged about how it was started (argv, environment, uid)."""
    return json.loads(
        (task.transcript_path.parent / "home" / "fake_cli_invocation.json").read_text()
    )


def codex_task(make_task: MakeTask, axes: dict[str, Any] | None = None, **kwargs: Any) -> AgentTask:
    return make_task(
        agent="codex", prices=GPT5_CODEX, axes={**CODEX_AXES, **(axes or {})}, **kwargs
    )


# ---------------------------------------------------------------- argv (no process)


def test_claude_argv_follows_the_cell(fake_path: Path, make_task: MakeTask) -> None:
    task = make_task(
        axes={"effort": "high", "tool_web_search": True, "tool_browser": False}, max_turns=12
    )
    plan = ClaudeCodeAdapter().build(task, agent_home(task))
    argv = plan.argv
    assert argv[0] == str(FAKE_CLI / "claude")  # absolute: the sandbox PATH is clean
    assert argv[1:3] == ["-p", task.prompt]
    for flag, value in (
        ("--output-format", "stream-json"),
        ("--model", "claude-sonnet-4-6"),
        ("--max-turns", "12"),
        ("--permission-mode", "bypassPermissions"),
    ):
        assert argv[argv.index(flag) + 1] == value
    assert "--verbose" in argv
    allowed = argv[argv.index("--allowedTools") + 1].split(",")
    disallowed = argv[argv.index("--disallowedTools") + 1].split(",")
    assert {"Bash", "Write", "Edit", "WebSearch", "WebFetch"} <= set(allowed)
    assert {"Task", "Bash(chromium:*)", "Bash(npx playwright:*)"} <= set(disallowed)
    assert not set(allowed) & set(disallowed)
    assert plan.env["MAX_THINKING_TOKENS"] == "32000"
    assert plan.env["IS_SANDBOX"] == "1"


@pytest.mark.parametrize(
    ("effort", "thinking", "reasoning"),
    [("low", "0", "low"), ("medium", "8000", "medium"), ("max", "63999", "xhigh")],
)
def test_effort_mapping(
    fake_path: Path, make_task: MakeTask, effort: str, thinking: str, reasoning: str
) -> None:
    task = make_task(axes={"effort": effort})
    assert ClaudeCodeAdapter().build(task, agent_home(task)).env["MAX_THINKING_TOKENS"] == thinking
    task = codex_task(make_task, axes={"effort": effort})
    argv = CodexAdapter().build(task, agent_home(task)).argv
    assert f"model_reasoning_effort={reasoning}" in argv


def test_claude_accept_edits_mode_needs_no_root_override(
    fake_path: Path, make_task: MakeTask
) -> None:
    task = make_task(axes={"tool_subagents": True, "tool_browser": True, "tool_web_search": True})
    plan = ClaudeCodeAdapter(permission_mode="acceptEdits").build(task, agent_home(task))
    assert "IS_SANDBOX" not in plan.env
    assert "--disallowedTools" not in plan.argv  # every tool axis on
    allowed = plan.argv[plan.argv.index("--allowedTools") + 1]
    assert "Task" in allowed and "Bash(chromium:*)" in allowed
    with pytest.raises(AgentSetupError, match="unattended"):
        ClaudeCodeAdapter(permission_mode="default")


def test_codex_argv(fake_path: Path, make_task: MakeTask) -> None:
    task = codex_task(make_task, axes={"tool_web_search": True})
    plan = CodexAdapter().build(task, agent_home(task))
    assert plan.argv[:9] == [
        str(FAKE_CLI / "codex"),
        "exec",
        "--json",
        "--model",
        "gpt-5-codex",
        "--sandbox",
        "workspace-write",
        "--skip-git-repo-check",
        "-c",
    ]
    assert 'web_search="live"' in plan.argv and "tools.web_search=true" in plan.argv
    assert plan.argv[-1] == task.prompt
    off = codex_task(make_task)
    argv = CodexAdapter(sandbox_mode="danger-full-access").build(off, agent_home(off)).argv
    assert 'web_search="disabled"' in argv and "danger-full-access" in argv


def test_prompt_starting_with_a_dash_is_not_an_option(fake_path: Path, make_task: MakeTask) -> None:
    task = make_task(prompt="- build Tetris\n- in JavaScript")
    argv = ClaudeCodeAdapter().build(task, agent_home(task)).argv
    assert argv[2] == "\n- build Tetris\n- in JavaScript"


@pytest.mark.parametrize(
    ("adapter", "message"),
    [
        (
            ClaudeCodeAdapter,
            "`claude` not found on PATH nor in {bin}: run `make setup` (installs the pinned "
            "Claude Code into toolchain/agents) or use agent: synthetic",
        ),
        (CodexAdapter, "`codex` not found on PATH nor in {bin}: run `make setup`"),
    ],
)
def test_missing_cli_is_a_setup_error(
    adapter: type[CliAdapter],
    make_task: MakeTask,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    message: str,
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # a folder without any CLI
    monkeypatch.setenv("BENCH_AGENT_CLI_BIN", str(tmp_path))  # nor the pinned ones
    sandbox = ScriptedSandbox([])
    with pytest.raises(AgentSetupError) as error:
        adapter().run(make_task(), sandbox)
    assert str(error.value).startswith(message.format(bin=tmp_path))
    assert sandbox.calls == []  # nothing was started


def test_command_template_placeholders_are_checked_up_front() -> None:
    with pytest.raises(AgentSetupError, match=r"unknown placeholder \{modle\}"):
        CommandAdapter(["agent", "--model", "{modle}"])
    for bad in (["agent", "{}"], ["agent", "{0}"], ["agent", "{workspace.name}"]):
        with pytest.raises(AgentSetupError, match="unknown placeholder"):
            CommandAdapter(bad)
    with pytest.raises(AgentSetupError, match=re.escape("argument 'a{b'")):
        CommandAdapter(["agent", "a{b"])
    with pytest.raises(AgentSetupError, match="empty"):
        CommandAdapter([])
    CommandAdapter(["agent", "--json={{}}", "{prompt}", "{run_id}", "{budget_usd}"])


def test_agent_home_is_fresh_and_beside_the_workspace(make_task: MakeTask) -> None:
    task = make_task()
    home = agent_home(task)
    assert home.parent == task.workspace.parent and home != task.workspace
    (home / "leftover").write_text("from an earlier attempt")
    assert not (agent_home(task) / "leftover").exists()
    foreign = task.transcript_path.parent / "home"
    (foreign / ".bench-agent-home").unlink()
    (foreign / "mine").write_text("not the harness's")
    with pytest.raises(AgentSetupError, match="not created by the harness"):
        agent_home(task)


def test_session_log_reader(tmp_path: Path) -> None:
    meter = CodexJsonMeter(1.25, 10.0)
    day = tmp_path / ".codex" / "sessions" / "2026" / "01" / "15"
    day.mkdir(parents=True)
    log = day / "rollout-2026-01-15T10-00-00-thread.jsonl"
    total = {"input_tokens": 20000, "cached_input_tokens": 16000, "output_tokens": 1000}
    line = json.dumps(
        {
            "type": "event_msg",
            "payload": {"type": "token_count", "info": {"total_token_usage": total}},
        }
    )
    log.write_text('{"type": "session_meta"}\n' + line[:40])  # Codex is mid-write
    reader = SessionLogReader(tmp_path / ".codex", meter)
    reader.poll()
    assert meter.usage().cost_usd is None
    with log.open("a") as out:
        out.write(line[40:] + "\n")
    reader.poll(force=True)
    assert meter.usage().input_tokens == 20000
    # A FIFO planted by the agent must not block the harness, a link must not be followed.
    planted = tmp_path / "planted" / ".codex" / "sessions"
    planted.mkdir(parents=True)
    os.mkfifo(planted / "rollout-a.jsonl")
    (planted / "rollout-b.jsonl").symlink_to(log)
    for name in ("rollout-a.jsonl", "rollout-b.jsonl"):
        other = CodexJsonMeter()
        fooled = SessionLogReader(tmp_path / "planted" / ".codex", other)
        fooled.path = planted / name
        fooled.poll(force=True)
        assert other.usage().input_tokens == 0


# ------------------------------------------------------ judging (scripted, no process)


def test_unknown_prices_cannot_stop_mid_run_but_the_overspend_is_recorded(
    fake_path: Path, make_task: MakeTask, recorded: Recorded
) -> None:
    task = make_task(prices=None, budget_usd=0.05)
    outcome = ClaudeCodeAdapter().run(task, ScriptedSandbox(recorded("claude_success")))
    assert outcome.status == "budget_exceeded" and outcome.budget_hit
    assert outcome.message == "claude finished but spent $0.09 of its $0.05 budget"
    assert outcome.usage.cost_source == "reported"


def test_sandbox_errors_and_limits(
    fake_path: Path, make_task: MakeTask, recorded: Recorded
) -> None:
    outcome = ClaudeCodeAdapter().run(make_task(), ScriptedSandbox([], error="no bwrap"))
    assert outcome.status == "error"
    assert outcome.message == "claude could not be started: no bwrap"
    killed = ScriptedSandbox(recorded("claude_success")[:4], exit_code=None, limit_hit="output")
    outcome = ClaudeCodeAdapter().run(make_task(), killed)
    assert outcome.status == "failed"
    assert outcome.message.startswith("claude was killed by the sandbox (output limit)")
    oom = ScriptedSandbox(recorded("claude_success")[:4], exit_code=137, limit_hit="memory")
    outcome = ClaudeCodeAdapter().run(make_task(), oom)
    assert outcome.status == "failed" and "(memory limit hit)" in outcome.message


def test_an_error_reported_in_the_stream_leads_the_failure_message(
    fake_path: Path, make_task: MakeTask, recorded: Recorded
) -> None:
    error = {
        "type": "result",
        "subtype": "success",
        "is_error": True,
        "result": "Invalid API key · Please run /login",
        "num_turns": 1,
        "total_cost_usd": 0,
    }
    lines = [recorded("claude_success")[0], json.dumps(error)]
    sandbox = ScriptedSandbox(lines, exit_code=1, stderr="(node:12) Warning: something\n")
    outcome = ClaudeCodeAdapter().run(make_task(), sandbox)
    assert outcome.status == "failed"
    assert outcome.message == (
        "claude exited with code 1: Invalid API key · Please run /login | stderr: "
        "(node:12) Warning: something (note: neither ANTHROPIC_API_KEY nor "
        "CLAUDE_CODE_OAUTH_TOKEN was set)"
    )
    assert outcome.usage.cost_usd == 0 and outcome.usage.cost_source == "reported"


def test_policy_given_to_the_sandbox(
    fake_path: Path, make_task: MakeTask, recorded: Recorded, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("UNRELATED_SECRET", "must-not-leak")
    task = make_task(time_limit_s=123.0)
    sandbox = ScriptedSandbox(recorded("claude_success"))
    outcome = ClaudeCodeAdapter().run(task, sandbox)
    policy = sandbox.calls[0]["policy"]
    home = task.transcript_path.parent / "home"
    assert policy.network and policy.timeout_s == 123.0
    assert list(policy.writable) == [home]
    assert policy.env["HOME"] == str(home) and policy.env["ANTHROPIC_API_KEY"] == "sk-ant-test"
    assert "UNRELATED_SECRET" not in policy.env
    assert policy.env["PATH"].split(os.pathsep)[0] == str(FAKE_CLI)
    assert sandbox.calls[0]["cwd"] == task.workspace
    assert "sk-ant-test" not in json.dumps(outcome.details)  # names only in the record
    assert "ANTHROPIC_API_KEY" in outcome.details["env_keys"]


# ------------------------------------------------------------ end to end (bubblewrap)


def assert_recorded_files(workspace: Path) -> None:
    from tests.agents.fake_cli.make_transcripts import GAME_JS, INDEX_HTML

    assert (workspace / "index.html").read_text() == INDEX_HTML
    assert (workspace / "game.js").read_text() == GAME_JS


@pytest.mark.slow
@pytest.mark.usefixtures("no_leftover_processes")
def test_claude_end_to_end(
    fake_path: Path,
    make_task: MakeTask,
    bubblewrap: Sandbox,
    recorded: Recorded,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("UNRELATED_SECRET", "must-not-leak")
    task = make_task()
    outcome = ClaudeCodeAdapter().run(task, bubblewrap)

    assert outcome.status == "completed", outcome.message
    assert outcome.exit_code == 0 and not outcome.budget_hit
    usage = outcome.usage
    assert (usage.input_tokens, usage.output_tokens) == (72632, 2570)
    assert (usage.cache_read_tokens, usage.cache_creation_tokens) == (63341, 7931)
    assert usage.cost_usd == pytest.approx(0.08807955) and usage.cost_source == "reported"
    assert (usage.turns, usage.tool_calls) == (5, 3)
    assert outcome.message.startswith("claude finished: 5 turns, 3 tool calls")
    assert task.transcript_path.read_text().splitlines() == recorded("claude_success")
    assert outcome.transcript_lines == 12
    assert_recorded_files(task.workspace)  # the fake's Write tool calls landed
    assert not (task.workspace / "fake_cli_invocation.json").exists()  # HOME is not in it

    seen = invocation(task)
    assert [outcome.details["executable"], *seen["argv"]] == outcome.details["argv"]
    assert seen["cwd"] == str(task.workspace)
    assert seen["uid"] != 0  # the sandbox runs it as a throw-away user
    assert seen["env"]["HOME"] == str(task.transcript_path.parent / "home")
    assert seen["env"]["MAX_THINKING_TOKENS"] == "8000"  # effort: medium
    assert seen["env"]["IS_SANDBOX"] == "1"
    assert seen["secrets_present"] == ["ANTHROPIC_API_KEY"]
    assert "UNRELATED_SECRET" not in seen["env_names"]


@pytest.mark.slow
def test_claude_transcript_cut_mid_line(
    fake_path: Path, make_task: MakeTask, bubblewrap: Sandbox, recorded: Recorded
) -> None:
    task = make_task(scenario="truncated")
    outcome = ClaudeCodeAdapter().run(task, bubblewrap)
    assert outcome.status == "completed"
    assert "no result event" in outcome.message
    assert outcome.usage.cost_source == "priced"
    assert outcome.usage.cost_usd == pytest.approx(0.08643255)  # tokens of the 4 messages
    assert outcome.usage.turns == 4
    last = task.transcript_path.read_text().splitlines()[-1]
    assert recorded("claude_success")[-1].startswith(last) and len(last) > 100


@pytest.mark.slow
@pytest.mark.usefixtures("no_leftover_processes")
def test_codex_end_to_end(
    fake_path: Path,
    make_task: MakeTask,
    bubblewrap: Sandbox,
    host_home: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-test")
    login = host_home / "codex-login"
    login.mkdir()
    (login / "auth.json").write_text('{"tokens": "test"}')
    (login / "config.toml").write_text('model = "not-this-one"\n')
    monkeypatch.setenv("CODEX_HOME", str(login))
    task = codex_task(make_task)
    outcome = CodexAdapter().run(task, bubblewrap)

    assert outcome.status == "completed", outcome.message
    usage = outcome.usage
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens) == (
        48210,
        36864,
        5120,
    )
    assert usage.cost_usd == pytest.approx(0.0699905) and usage.cost_source == "priced"
    assert (usage.turns, usage.tool_calls) == (5, 4)
    assert_recorded_files(task.workspace)

    seen = invocation(task)
    codex_home = task.transcript_path.parent / "home" / ".codex"
    assert seen["argv"][:2] == ["exec", "--json"]
    assert seen["args"]["config"] == [
        "model_reasoning_effort=medium",
        "sandbox_workspace_write.network_access=true",
        'web_search="disabled"',
        "tools.web_search=false",
        *QUIET_CONFIG,  # Codex's own switches for non-essential traffic
    ]
    assert seen["env"]["CODEX_HOME"] == str(codex_home)
    assert seen["secrets_present"] == ["CODEX_API_KEY", "OPENAI_API_KEY"]
    # Only the login is copied into the run's private CODEX_HOME, not the user's config,
    # and the copy does not outlive the run.
    assert seen["codex_home_files"] == ["auth.json"]
    assert outcome.details["login_copied"]
    assert not (codex_home / "auth.json").exists()
    assert list((codex_home / "sessions").rglob("rollout-*.jsonl"))


@pytest.mark.slow
@pytest.mark.parametrize("cli", ["claude", "codex"])
def test_garbage_output_is_an_error(
    cli: str, fake_path: Path, make_task: MakeTask, bubblewrap: Sandbox
) -> None:
    outcome = run_fake(cli, make_task, bubblewrap, "garbage")
    assert outcome.status == "error"
    expected = {"claude": "stream-json", "codex": "codex exec --json"}[cli]
    assert outcome.message == (
        f"{cli} printed no {expected} events; first line: 'Welcome to the agent CLI v9.9!'"
    )
    assert outcome.usage.cost_usd is None and outcome.usage.cost_source == "unknown"
    assert outcome.transcript_lines == 3


@pytest.mark.slow
@pytest.mark.parametrize("cli", ["claude", "codex"])
def test_crash_is_a_failure_with_the_cli_error(
    cli: str, fake_path: Path, make_task: MakeTask, bubblewrap: Sandbox
) -> None:
    outcome = run_fake(cli, make_task, bubblewrap, "crash")
    assert outcome.status == "failed" and outcome.exit_code == 1
    assert outcome.message.startswith(f"{cli} exited with code 1: ")
    assert "overloaded_error" in outcome.message
    assert "overloaded_error" in outcome.details["stderr_tail"]
    assert outcome.transcript_lines == 3


def run_fake(
    cli: str, make_task: MakeTask, sandbox: Sandbox, scenario: str, **fields: Any
) -> AgentOutcome:
    if cli == "claude":
        return ClaudeCodeAdapter().run(make_task(scenario=scenario, **fields), sandbox)
    return CodexAdapter().run(codex_task(make_task, scenario=scenario, **fields), sandbox)


@pytest.mark.slow
def test_command_adapter_plain_text(make_task: MakeTask, bubblewrap: Sandbox) -> None:
    script = 'cp "$1" prompt-copy.md && echo "<canvas></canvas>" > index.html && echo built "$2"'
    adapter = CommandAdapter(["sh", "-c", script, "agent", "{prompt_file}", "{model}"])
    task = make_task(agent="command")
    outcome = adapter.run(task, bubblewrap)
    assert outcome.status == "completed", outcome.message
    assert outcome.message == "sh finished (exit 0); plain-text output: tokens and cost unknown"
    assert outcome.usage.cost_usd is None and outcome.usage.cost_source == "unknown"
    assert (task.workspace / "prompt-copy.md").read_text() == task.prompt
    assert (task.workspace / "index.html").exists()
    assert task.transcript_path.read_text() == "built claude-sonnet-4-6\n"


@pytest.mark.slow
def test_command_adapter_failure(make_task: MakeTask, bubblewrap: Sandbox) -> None:
    adapter = CommandAdapter(
        ["sh", "-c", "echo working; echo 'no model named {model}' >&2; exit 3"]
    )
    outcome = adapter.run(make_task(agent="command"), bubblewrap)
    assert outcome.status == "failed" and outcome.exit_code == 3
    assert outcome.message == "sh exited with code 3: no model named claude-sonnet-4-6"


@pytest.mark.slow
def test_command_adapter_detects_stream_json(
    fake_path: Path, make_task: MakeTask, bubblewrap: Sandbox
) -> None:
    template = [
        "claude",
        "-p",
        "{prompt}",
        "--output-format=stream-json",
        "--verbose",
        "--model",
        "{model}",
        "--max-turns",
        "{max_turns}",
    ]
    outcome = CommandAdapter(template).run(make_task(agent="command"), bubblewrap)
    assert outcome.status == "completed", outcome.message
    assert outcome.usage.cost_usd == pytest.approx(0.08807955)
    assert (outcome.usage.turns, outcome.usage.tool_calls) == (5, 3)
    assert outcome.details["meter"]["format"] == "claude_stream_json"


@pytest.mark.slow
def test_command_adapter_detects_codex_jsonl_and_enforces_the_budget(
    fake_path: Path, make_task: MakeTask, bubblewrap: Sandbox
) -> None:
    template = ["codex", "exec", "--json", "--skip-git-repo-check", "-m", "{model}", "{prompt}"]
    task = codex_task(make_task, scenario="success", budget_usd=0.05)
    outcome = CommandAdapter(template).run(task, bubblewrap)
    # No session log reader here: the cost is known at the turn's end, and over the budget.
    assert outcome.status == "budget_exceeded"
    assert outcome.usage.cost_usd == pytest.approx(0.0699905)

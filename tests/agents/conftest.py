"""Fixtures for the agent adapter tests: the fake CLIs on PATH, tasks, sandboxes."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from bench_pipeline.agents.base import AgentTask
from bench_pipeline.design.axes import default_config
from bench_pipeline.sandbox import get_sandbox
from bench_pipeline.sandbox.base import LineHook, Sandbox, SandboxPolicy, SandboxResult

FAKE_CLI = Path(__file__).parent / "fake_cli"
TRANSCRIPTS = FAKE_CLI / "transcripts"
# Prices of the models the recorded sessions used (USD per million tokens).
SONNET = (3.0, 15.0)
GPT5_CODEX = (1.25, 10.0)


@pytest.fixture
def fake_path(monkeypatch: pytest.MonkeyPatch) -> Path:
    """The fake `claude` and `codex` first on PATH; no real credentials in the environment."""
    for name in ("claude", "codex"):
        path = FAKE_CLI / name
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    monkeypatch.setenv("PATH", f"{FAKE_CLI}{os.pathsep}{os.environ.get('PATH', '')}")
    # The pinned real CLIs (make setup) come before PATH: point that lookup at the fakes too.
    monkeypatch.setenv("BENCH_AGENT_CLI_BIN", str(FAKE_CLI))
    for name in (
        "ANTHROPIC_API_KEY",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
        "OPENAI_API_KEY",
        "CODEX_API_KEY",
        "OPENAI_BASE_URL",
    ):
        monkeypatch.delenv(name, raising=False)
    return FAKE_CLI


@pytest.fixture
def host_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A throw-away HOME and CODEX_HOME for the harness, so no real login is ever read."""
    home = tmp_path / "host-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    return home


MakeTask = Callable[..., AgentTask]
Recorded = Callable[[str], list[str]]


@pytest.fixture
def make_task(tmp_path: Path, host_home: Path) -> MakeTask:
    """An AgentTask in a fresh run folder: `axes` override the cell's config, other keyword
    arguments the task's fields; the prompt carries the fake CLI's scenario marker."""
    counter = iter(range(1000))

    def make(
        *,
        agent: str = "claude-code",
        scenario: str = "success",
        prices: tuple[float, float] | None = SONNET,
        axes: dict[str, Any] | None = None,
        **overrides: Any,
    ) -> AgentTask:
        run_dir = tmp_path / f"run{next(counter)}"
        workspace = run_dir / "workspace"
        workspace.mkdir(parents=True)
        config = {**default_config(), "agent": agent, **(axes or {})}
        fields: dict[str, Any] = {
            "run_id": "test.c0a1b2c3d4e5.r0",
            "cell_id": "c0a1b2c3d4e5",
            "repeat": 0,
            "seed": 7,
            "agent": agent,
            "model": str(config["model"]),
            "config": config,
            "prompt": f"Build a Tetris game in the browser. FAKE_SCENARIO={scenario}",
            "workspace": workspace,
            "transcript_path": run_dir / "transcript.jsonl",
            "budget_usd": 5.0,
            "max_turns": 50,
            "time_limit_s": 60.0,
            "input_usd_per_mtok": prices[0] if prices else None,
            "output_usd_per_mtok": prices[1] if prices else None,
        }
        fields.update(overrides)
        return AgentTask(**fields)

    return make


@pytest.fixture(scope="session")
def bubblewrap() -> Sandbox:
    sandbox = get_sandbox("bubblewrap")
    reason = sandbox.unavailable_reason()
    if reason is not None:
        pytest.skip(f"bubblewrap sandbox unavailable: {reason}")
    return sandbox


class ScriptedSandbox(Sandbox):
    """Plays given stdout lines through the hook without running anything: for the judging
    logic, where spawning a process would only slow the test down. Honors the hook's stop
    (later lines are not played) and writes the transcript file like a real back end."""

    name = "scripted"

    def __init__(
        self,
        lines: Sequence[str],
        *,
        exit_code: int | None = 0,
        stderr: str = "",
        timed_out: bool = False,
        error: str | None = None,
        limit_hit: str | None = None,
    ) -> None:
        self.lines = list(lines)
        self.exit_code = exit_code
        self.limit_hit = limit_hit
        self.stderr = stderr
        self.timed_out = timed_out
        self.error = error
        self.calls: list[dict[str, Any]] = []

    def unavailable_reason(self) -> str | None:
        return None

    def run(
        self,
        argv: Sequence[str],
        workspace: Path,
        policy: SandboxPolicy,
        *,
        cwd: Path | None = None,
        on_stdout_line: LineHook | None = None,
        stdout_file: Path | None = None,
    ) -> SandboxResult:
        self.calls.append({"argv": list(argv), "policy": policy, "cwd": cwd})
        result = SandboxResult(
            self.name, list(argv), self.exit_code, 0.1, stderr=self.stderr, limit_hit=self.limit_hit
        )
        if self.error:
            result.exit_code, result.error = None, self.error
            return result
        played = []
        for line in self.lines:
            played.append(line)
            stop = on_stdout_line(line) if on_stdout_line else None
            if stop:
                result.exit_code, result.stopped = None, stop
                break
        if stdout_file is not None:
            with stdout_file.open("a", encoding="utf-8") as out:
                out.writelines(line + "\n" for line in played)
        if self.timed_out:
            result.exit_code, result.timed_out = None, True
        return result


@pytest.fixture
def recorded() -> Recorded:
    """The lines of a recorded session in `fake_cli/transcripts/`."""

    def read(name: str) -> list[str]:
        return (TRANSCRIPTS / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()

    return read


@pytest.fixture
def no_leftover_processes(tmp_path: Path) -> Iterator[None]:
    """Fails a test that leaves its fake CLI running (the sandbox must kill the whole tree).

    Only this test's processes count (by their folders), so parallel workers do not mix."""
    yield
    mine = str(tmp_path).encode()
    leftovers = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        proc = Path("/proc") / pid
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ")
            cwd = os.readlink(proc / "cwd").encode()
        except OSError:
            continue
        if str(FAKE_CLI).encode() in cmdline and (mine in cmdline or cwd.startswith(mine)):
            leftovers.append(cmdline.decode(errors="replace")[-200:])
    assert not leftovers, f"fake CLI processes still running: {leftovers}"

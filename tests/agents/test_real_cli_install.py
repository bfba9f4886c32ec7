"""The pinned agent CLIs that `make setup` installs, found without any PATH change."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from bench_pipeline import settings
from bench_pipeline.agents.claude_code import ClaudeCodeAdapter
from bench_pipeline.agents.cli_adapter import CliAdapter, agent_home
from bench_pipeline.agents.codex import CodexAdapter
from tests.agents.conftest import MakeTask

pytestmark = pytest.mark.agent_cli

PINS = Path(settings.project_root()) / "toolchain" / "agents" / "package.json"
VERSION_PACKAGES = {"claude": "@anthropic-ai/claude-code", "codex": "@openai/codex"}


@pytest.mark.parametrize(
    ("adapter", "name"), [(ClaudeCodeAdapter, "claude"), (CodexAdapter, "codex")]
)
def test_the_pinned_cli_is_found_without_path_and_runs_its_pinned_version(
    adapter: type[CliAdapter],
    name: str,
    make_task: MakeTask,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("BENCH_AGENT_CLI_BIN", raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no node_modules/.bin of any kind
    task = make_task()
    argv = adapter().build(task, agent_home(task)).argv
    assert argv[0] == str(settings.agent_cli_bin() / name)
    pinned = json.loads(PINS.read_text())["dependencies"][VERSION_PACKAGES[name]]
    shown = subprocess.run(
        [argv[0], "--version"], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    assert pinned in shown

"""Claude Code (`claude -p ... --output-format stream-json`) as an agent adapter.

The argv, for a cell with model M, max_turns N and the tool axes:

    <abs path of claude> -p PROMPT --output-format stream-json --verbose --model M
        --max-turns N --permission-mode bypassPermissions
        --allowedTools Bash,Read,Write,...  [--disallowedTools WebSearch,WebFetch,...]

Mapping of the cell's axes (Claude Code flags as of 2.x; `--verbose` is required with
stream-json in print mode):

- `tool_web_search` -> the WebSearch and WebFetch tools allowed or disallowed.
- `tool_subagents` -> the sub-agent tool (`Task`, named `Agent` in newer versions: both
  names are listed) allowed or disallowed.
- `tool_browser` -> no MCP browser server is installed for the agent, so the axis maps to
  Bash permission rules for running a headless browser (chromium, google-chrome, playwright,
  puppeteer). Off: those rules are disallowed; deny rules are prefix matches, so this stops
  the obvious commands, not a determined agent (e.g. a script that launches a browser).
- `effort` -> `MAX_THINKING_TOKENS` (extended-thinking budget per response): low 0 (thinking
  off), medium 8000, high 32000, max 63999 (the budget must stay below the response's
  max_tokens, and 64000 is the output cap of the Sonnet 4 models).
- `context_file` needs nothing here: the caller already wrote CLAUDE.md into the workspace.

Scripted model API (a `scripted-<scenario>` model, see scripted_server.py): the CLI gets
ANTHROPIC_BASE_URL=http://model-api.scripted.invalid (mapped by the egress proxy to the
harness's own server), a placeholder key instead of the user's credentials, and
`--model claude-sonnet-4-6`. Non-essential traffic is off on every run (`QUIET_ENV`).

Permission mode: `bypassPermissions` by default (the sandbox is the safety boundary, and an
unattended run cannot answer prompts). Claude Code refuses that mode for uid 0 unless
`IS_SANDBOX=1`, which is set because the run is sandboxed. `acceptEdits` also works: Bash is
then allowed through `--allowedTools`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from bench_pipeline.agents.base import AgentSetupError, AgentTask
from bench_pipeline.agents.cli_adapter import (
    SCRIPTED_MAX_RETRIES,
    CliAdapter,
    CliPlan,
    ScriptedApi,
    allowed_hosts,
    host_env,
    prompt_arg,
    resolve_executable,
)
from bench_pipeline.agents.scripted_server import SCRIPTED_API_KEY
from bench_pipeline.agents.transcripts import ClaudeStreamMeter

INSTALL_HINT = (
    "run `make setup` (installs the pinned Claude Code into toolchain/agents) "
    "or use agent: synthetic"
)
# Credentials and endpoint the CLI reads, copied from the harness's environment when set.
CREDENTIAL_VARS = ("ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN")
PASSTHROUGH_VARS = (*CREDENTIAL_VARS, "ANTHROPIC_BASE_URL")
PERMISSION_MODES = ("bypassPermissions", "acceptEdits")

THINKING_TOKENS = {"low": 0, "medium": 8000, "high": 32000, "max": 63999}
# What Claude Code is told it runs when the model API is the scripted one: a model it knows,
# so that it prices the session itself (total_cost_usd) as it would that model's; the
# scripted models of experiments/registries/scripted-models.yaml carry the same prices.
SCRIPTED_API_MODEL = "claude-sonnet-4-6"
# Claude Code's own switches for traffic a benchmark run does not need: the privacy level
# "essential traffic only" (no telemetry, auto-update, release notes, feedback, model
# capability look-ups), and each of its parts by name for versions that read only those.
QUIET_ENV = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_BUG_COMMAND": "1",
    "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1",
}

BASE_TOOLS = (
    "Bash",
    "Read",
    "Write",
    "Edit",
    "MultiEdit",
    "Glob",
    "Grep",
    "LS",
    "TodoWrite",
    "NotebookEdit",
)
WEB_TOOLS = ("WebSearch", "WebFetch")
SUBAGENT_TOOLS = ("Task", "Agent")
BROWSER_RULES = (
    "Bash(chromium:*)",
    "Bash(chromium-browser:*)",
    "Bash(google-chrome:*)",
    "Bash(npx playwright:*)",
    "Bash(playwright:*)",
    "Bash(npx puppeteer:*)",
)


def tool_lists(config: dict[str, object]) -> tuple[list[str], list[str]]:
    """(allowed, disallowed) tool rules for the cell's tool axes."""
    allowed = list(BASE_TOOLS)
    disallowed: list[str] = []
    for axis, tools in (
        ("tool_web_search", WEB_TOOLS),
        ("tool_subagents", SUBAGENT_TOOLS),
        ("tool_browser", BROWSER_RULES),
    ):
        (allowed if config.get(axis) else disallowed).extend(tools)
    return allowed, disallowed


class ClaudeCodeAdapter(CliAdapter):
    name = "claude-code"

    def __init__(
        self,
        executable: str = "claude",
        *,
        permission_mode: str = "bypassPermissions",
        extra_args: Sequence[str] = (),
    ) -> None:
        if permission_mode not in PERMISSION_MODES:
            raise AgentSetupError(
                f"permission mode {permission_mode!r} would make an unattended run wait for "
                f"approvals; use one of {', '.join(PERMISSION_MODES)}"
            )
        self.executable = executable
        self.permission_mode = permission_mode
        self.extra_args = list(extra_args)

    def build(self, task: AgentTask, home: Path, scripted: ScriptedApi | None = None) -> CliPlan:
        exe = resolve_executable(self.executable, INSTALL_HINT)
        effort = str(task.config.get("effort", "medium"))
        if effort not in THINKING_TOKENS:
            raise AgentSetupError(
                f"effort {effort!r} has no Claude Code thinking budget; "
                f"known: {', '.join(THINKING_TOKENS)}"
            )
        allowed, disallowed = tool_lists(task.config)
        argv = [
            str(exe),
            "-p",
            prompt_arg(task.prompt),
            "--output-format",
            "stream-json",
            "--verbose",
            "--model",
            SCRIPTED_API_MODEL if scripted else task.model,
            "--max-turns",
            str(task.max_turns),
            "--permission-mode",
            self.permission_mode,
            "--allowedTools",
            ",".join(allowed),
        ]
        if disallowed:
            argv += ["--disallowedTools", ",".join(disallowed)]
        argv += self.extra_args
        # The scripted API gets no credential of the user's: a placeholder key instead.
        env = (
            {
                "ANTHROPIC_BASE_URL": scripted.base_url,
                "ANTHROPIC_API_KEY": SCRIPTED_API_KEY,
                # A persistent scripted fault ends in seconds, not after 10 growing waits.
                "CLAUDE_CODE_MAX_RETRIES": str(SCRIPTED_MAX_RETRIES),
            }
            if scripted
            else host_env(PASSTHROUGH_VARS)
        )
        env |= {"MAX_THINKING_TOKENS": str(THINKING_TOKENS[effort]), **QUIET_ENV}
        if self.permission_mode == "bypassPermissions":
            env["IS_SANDBOX"] = "1"
        hint = ""
        if not scripted and not host_env(CREDENTIAL_VARS):
            hint = "note: neither ANTHROPIC_API_KEY nor CLAUDE_CODE_OAUTH_TOKEN was set"
        return CliPlan(
            label="claude",
            argv=argv,
            meter=ClaudeStreamMeter(),
            env=env,
            structured="stream-json",
            details={
                "permission_mode": self.permission_mode,
                "allowed_tools": allowed,
                "disallowed_tools": disallowed,
                "max_thinking_tokens": THINKING_TOKENS[effort],
            },
            failure_hint=hint,
            # A scripted run reaches its local model API only (a local service of the proxy).
            allowed_hosts=() if scripted else allowed_hosts(self.name, "ANTHROPIC_BASE_URL"),
        )

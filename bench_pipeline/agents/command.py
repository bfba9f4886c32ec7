"""Any agent with a command line: an argv template filled per run.

    CommandAdapter(["my-agent", "--model", "{model}", "--prompt-file", "{prompt_file}",
                    "--out", "{workspace}"])

Placeholders: {prompt}, {prompt_file} (the prompt written to a file in the run's private
HOME), {model}, {workspace}, {effort}, {max_turns}, {budget_usd}, {run_id}. An unknown one is
refused when the adapter is made, not when a run has started.

The transcript is the command's stdout. Its format is detected from the first line that
identifies one: Claude Code stream-json and Codex JSONL are metered (tokens, cost, budget
and turn limits enforced while it runs); anything else is plain text, where tokens and cost
are unknown and the status comes from the exit code alone.
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from pathlib import Path

from bench_pipeline.agents.base import AgentSetupError, AgentTask
from bench_pipeline.agents.cli_adapter import (
    CliAdapter,
    CliPlan,
    ScriptedApi,
    allowed_hosts,
    host_env,
    resolve_executable,
)
from bench_pipeline.agents.transcripts import AutoMeter

PLACEHOLDERS = (
    "prompt",
    "prompt_file",
    "model",
    "workspace",
    "effort",
    "max_turns",
    "budget_usd",
    "run_id",
)
INSTALL_HINT = "install it, put it on PATH, or give its absolute path in the command template"


def check_template(template: Sequence[str]) -> None:
    """AgentSetupError unless every `{name}` of the template is a known placeholder."""
    if not template or not str(template[0]).strip():
        raise AgentSetupError("the command template is empty: give at least the executable")
    formatter = string.Formatter()
    for arg in template:
        try:
            names = [name for _, name, _, _ in formatter.parse(arg) if name is not None]
        except ValueError as exc:  # a lone "{" or "}"; literal braces are written {{ }}
            raise AgentSetupError(f"command template argument {arg!r}: {exc}") from None
        for name in names:
            if name not in PLACEHOLDERS:
                known = ", ".join("{" + p + "}" for p in PLACEHOLDERS)
                raise AgentSetupError(
                    f"unknown placeholder {{{name}}} in command template argument {arg!r}; "
                    f"known: {known}"
                )


class CommandAdapter(CliAdapter):
    name = "command"

    def __init__(
        self,
        template: Sequence[str],
        *,
        env_passthrough: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        allow_hosts: Sequence[str] | None = None,
    ) -> None:
        """`env_passthrough` names harness variables copied when set (API keys); `env` adds
        fixed ones. The sandbox gives the command nothing else but HOME and PATH.
        `allow_hosts`: where it may connect (None: $BENCH_ALLOW_HOSTS_COMMAND, else nowhere)."""
        template = [str(arg) for arg in template]
        check_template(template)
        self.template = template
        self.env_passthrough = tuple(env_passthrough)
        self.env = dict(env or {})
        self.allow_hosts = tuple(allow_hosts) if allow_hosts is not None else None

    def build(self, task: AgentTask, home: Path, scripted: ScriptedApi | None = None) -> CliPlan:
        if scripted is not None:
            raise AgentSetupError(
                f"model {task.model!r} is played by the scripted model API, which only the "
                "claude-code and codex harnesses know how to point their CLI at"
            )
        exe = resolve_executable(self.template[0], INSTALL_HINT)
        prompt_file = home / "prompt.md"
        if any("{prompt_file}" in arg for arg in self.template):
            prompt_file.write_text(task.prompt, encoding="utf-8")
        values = {
            "prompt": task.prompt,
            "prompt_file": str(prompt_file),
            "model": task.model,
            "workspace": str(task.workspace),
            "effort": str(task.config.get("effort", "")),
            "max_turns": str(task.max_turns),
            "budget_usd": f"{task.budget_usd:g}",
            "run_id": task.run_id,
        }
        argv = [str(exe)] + [arg.format(**values) for arg in self.template[1:]]
        return CliPlan(
            label=Path(self.template[0]).name,
            argv=argv,
            meter=AutoMeter(),
            env={**host_env(self.env_passthrough), **self.env},
            structured=None,  # plain text is a valid transcript here
            details={"template": list(self.template)},
            allowed_hosts=(
                self.allow_hosts if self.allow_hosts is not None else allowed_hosts(self.name)
            ),
        )

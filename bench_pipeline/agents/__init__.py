"""Stage 2: agents build the game. One adapter per harness, one interface (`base.py`)."""

from __future__ import annotations

from pathlib import Path

from bench_pipeline.agents.base import AgentAdapter, AgentOutcome, AgentSetupError, AgentTask

HARNESSES = ("claude-code", "codex", "command", "synthetic")


def adapter_for(
    harness: str,
    *,
    command: list[str] | None = None,
    replay_dir: Path | None = None,
    run_id: str | None = None,
) -> AgentAdapter:
    """The adapter that plays `harness` for one run.

    A run recorded elsewhere and found under `replay_dir` is imported (replayed) instead
    of run again, whatever its harness.
    """
    # Imported lazily: each adapter pulls in only what it needs.
    if replay_dir is not None and run_id is not None:
        from bench_pipeline.agents.replay import ReplayAdapter, find_run_folder

        if find_run_folder(replay_dir, run_id) is not None:
            return ReplayAdapter(replay_dir)
    if harness == "synthetic":
        from bench_pipeline.agents.synthetic.agent import SyntheticAdapter

        return SyntheticAdapter()
    if harness == "claude-code":
        from bench_pipeline.agents.claude_code import ClaudeCodeAdapter

        return ClaudeCodeAdapter()
    if harness == "codex":
        from bench_pipeline.agents.codex import CodexAdapter

        return CodexAdapter()
    if harness == "command":
        from bench_pipeline.agents.command import CommandAdapter

        if not command:
            raise AgentSetupError(
                "the `command` harness needs a command line: set BENCH_AGENT_COMMAND "
                "(e.g. 'my-agent --model {model} --prompt-file {prompt_file}') or the "
                "agent resource's command_template"
            )
        return CommandAdapter(command)
    raise AgentSetupError(f"unknown agent harness {harness!r}; known: {', '.join(HARNESSES)}")


__all__ = [
    "HARNESSES",
    "AgentAdapter",
    "AgentOutcome",
    "AgentSetupError",
    "AgentTask",
    "adapter_for",
]

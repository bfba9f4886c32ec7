"""What every agent adapter promises: build the game for one run, and say what it cost.

An adapter runs an agent (a CLI, a replayed recording, or the offline synthetic agent)
in the run's workspace, streams its transcript to `task.transcript_path`, and returns an
`AgentOutcome`. A misbehaving agent (crash, garbage output, over budget, over time) is an
outcome with a readable `message`, never an exception; only a broken setup (the CLI is not
installed, an unknown harness) raises `AgentSetupError`.
"""

from __future__ import annotations

import abc
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from bench_pipeline.sandbox.base import Sandbox

# completed: the agent finished by itself; failed: it exited non-zero or reported an error;
# budget_exceeded / timed_out / max_turns: stopped by a limit of the cell;
# error: the harness could not run the agent at all (bad output, cannot start).
AgentStatus = Literal["completed", "failed", "budget_exceeded", "timed_out", "max_turns", "error"]


# What a provider says when the failure is its own and passes: a rate limit, an overloaded or
# unavailable API. Such a run is retried with back-off; every other failure is a result.
TRANSIENT_FAILURE = re.compile(
    r"rate[ _-]?limit|\b429\b|overloaded|\b529\b|\b503\b|temporarily unavailable",
    re.IGNORECASE,
)


def is_transient(status: str, message: str) -> bool:
    """True for a failed run whose message says the provider was busy, not the agent wrong."""
    return status in ("failed", "error") and bool(TRANSIENT_FAILURE.search(message))


class AgentSetupError(RuntimeError):
    """The adapter cannot run on this machine (CLI missing, unknown harness); fix the setup."""


@dataclass(frozen=True)
class AgentTask:
    run_id: str
    cell_id: str
    repeat: int
    seed: int
    agent: str  # the harness: claude-code | codex | command | synthetic | replay
    model: str
    config: dict[str, Any]  # all sixteen axes of the cell
    prompt: str
    workspace: Path  # the agent writes its project here (exists, may hold a context file)
    transcript_path: Path  # raw transcript (JSONL) goes here
    budget_usd: float
    max_turns: int
    time_limit_s: float
    input_usd_per_mtok: float | None = None
    output_usd_per_mtok: float | None = None
    model_strength: float | None = None  # registry `strength`; only the synthetic agent reads it

    def price(self, input_tokens: int, output_tokens: int) -> float | None:
        """Cost of the tokens at the prices frozen in the run spec (None: prices unknown)."""
        if self.input_usd_per_mtok is None or self.output_usd_per_mtok is None:
            return None
        return (
            input_tokens * self.input_usd_per_mtok + output_tokens * self.output_usd_per_mtok
        ) / 1e6


@dataclass
class Usage:
    """Tokens and cost as read from a transcript. Input is gross (cached tokens included)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0
    cost_usd: float | None = None
    cost_source: Literal["reported", "priced", "unknown"] = "unknown"
    turns: int = 0
    tool_calls: int = 0


@dataclass
class AgentOutcome:
    status: AgentStatus
    message: str  # one readable line: what happened
    usage: Usage = field(default_factory=Usage)
    exit_code: int | None = None
    duration_s: float = 0.0
    budget_hit: bool = False
    transcript_lines: int = 0
    details: dict[str, Any] = field(default_factory=dict)  # adapter specific, JSON-able

    def to_record(self) -> dict[str, Any]:
        usage = asdict(self.usage)
        return {
            "status": self.status,
            "message": self.message,
            "exit_code": self.exit_code,
            "duration_s": round(self.duration_s, 3),
            "budget_hit": self.budget_hit,
            "transcript_lines": self.transcript_lines,
            **usage,
            "details": self.details,
        }


class AgentAdapter(abc.ABC):
    name: str

    @abc.abstractmethod
    def run(self, task: AgentTask, sandbox: Sandbox) -> AgentOutcome:
        """Let the agent build the game in `task.workspace`, under `sandbox`."""

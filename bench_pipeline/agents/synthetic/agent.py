"""The offline synthetic agent: a deterministic stand-in for an LLM agent.

For one run it draws, from the planted-effects model, which faults its game has; writes
a real Tetris project (see `game/`) file by file into the workspace; and streams a
transcript in Claude Code's stream-json format with tool calls, per-message token usage
and a final result event. Tokens, cost and (simulated) agent time follow the cell too:
more effort, more thinking tokens; a pricier model, a higher bill.

The transcript goes through the same `ClaudeStreamMeter` a real Claude Code run goes
through, and the same budget rule stops it: a budget below the run's cost truncates the
transcript and the project where the money ran out, like a killed CLI.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bench_pipeline.agents.base import AgentAdapter, AgentOutcome, AgentTask
from bench_pipeline.agents.synthetic.effects import (
    MECHANIC_FAULTS,
    QUALITY_FAULTS,
    fault_probabilities,
)
from bench_pipeline.agents.synthetic.game import GameSpec, write_game
from bench_pipeline.agents.transcripts import ClaudeStreamMeter
from bench_pipeline.sandbox.base import Sandbox

RENDERERS = ("canvas", "dom", "svg")
CONTROLS = ("arrows", "wasd", "arrows_space")
STARTS = ("auto", "button", "key")
# Output tokens per written character, and the thinking multiplier per effort level.
TOKENS_PER_CHAR = 1 / 3.6
THINKING = {"low": 0.15, "medium": 0.6, "high": 1.2, "max": 1.8}
SYSTEM_PROMPT_TOKENS = 9_000
TOOL_LATENCY_S = 2.5


def run_rng(cell_id: str, repeat: int, seed: int) -> np.random.Generator:
    """The one random stream of a run: the same (cell, repeat, seed) always draws the same."""
    digest = hashlib.sha256(f"{cell_id}:{repeat}:{seed}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "big"))


@dataclass(frozen=True)
class SyntheticPlan:
    """What the synthetic agent will do for a run (drawn before anything is written)."""

    spec: GameSpec
    probabilities: dict[str, float]
    tokens_per_second: float
    noise: float  # multiplies tokens: runs of one cell differ in cost, as real ones do
    extra_turns: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "language": self.spec.language,
            "renderer": self.spec.renderer,
            "controls": self.spec.controls,
            "start": self.spec.start,
            "faults": sorted(self.spec.faults),
            "quality_faults": sorted(self.spec.quality_faults),
            "crash_after_s": self.spec.crash_after_s,
            "fault_probabilities": {k: round(v, 4) for k, v in self.probabilities.items()},
            "extra_turns": self.extra_turns,
        }


def plan_run(task: AgentTask) -> SyntheticPlan:
    rng = run_rng(task.cell_id, task.repeat, task.seed)
    config = task.config
    probabilities = fault_probabilities(config, task.model_strength)
    # One uniform per fault, always all of them in the same order: adding a planted
    # effect never reshuffles the other draws of a run.
    draws = rng.random(len(probabilities))
    drawn = {f for (f, p), u in zip(probabilities.items(), draws, strict=True) if u < p}
    language = "typescript" if config.get("language") == "typescript" else "javascript"
    spec = GameSpec(
        language=language,
        renderer=RENDERERS[int(rng.integers(len(RENDERERS)))],
        controls=CONTROLS[int(rng.integers(len(CONTROLS)))],
        start=STARTS[int(rng.integers(len(STARTS)))],
        faults=frozenset(f for f in MECHANIC_FAULTS if f in drawn),
        quality_faults=frozenset(f for f in QUALITY_FAULTS if f in drawn),
        seed=int(rng.integers(2**31)),
        crash_after_s=round(float(rng.uniform(15.0, 25.0)), 1),
    )
    strength = task.model_strength if task.model_strength is not None else 0.75
    extra = []
    if config.get("plan_first"):
        extra.append("plan")
    if config.get("tool_web_search"):
        extra.append("web_search")
    if config.get("tool_subagents"):
        extra.append("subagent")
    if config.get("self_test"):
        extra.append("self_test")
    return SyntheticPlan(
        spec=spec,
        probabilities=probabilities,
        tokens_per_second=120.0 - 80.0 * strength,
        noise=float(np.exp(rng.normal(0.0, 0.15))),
        extra_turns=extra,
    )


@dataclass
class _Step:
    """One assistant message (maybe with a tool call) and the tool's result."""

    text: str
    tool: str | None = None
    tool_input: dict[str, Any] = field(default_factory=dict)
    result: str = ""
    write: tuple[str, bytes] | None = None  # (relative path, content) written when the call runs
    output_chars: int = 0


class SyntheticAdapter(AgentAdapter):
    name = "synthetic"

    def run(self, task: AgentTask, sandbox: Sandbox) -> AgentOutcome:
        # Our own code writing only into the workspace: no process to confine, so the
        # sandbox is not used (the build and the bot still run the result sandboxed).
        del sandbox
        started = time.monotonic()
        plan = plan_run(task)
        with tempfile.TemporaryDirectory(prefix="synthetic-") as staging:
            written = write_game(plan.spec, Path(staging))
            files = [(rel, (Path(staging) / rel).read_bytes()) for rel in written]
        steps = list(self._steps(task, plan, files))
        return self._stream(task, plan, steps, started)

    def _steps(
        self, task: AgentTask, plan: SyntheticPlan, files: list[tuple[str, bytes]]
    ) -> Iterator[_Step]:
        ws = task.workspace
        yield _Step(
            "I'll start by looking at the workspace.", "Bash", {"command": "ls -la"}, "total 0"
        )
        if "plan" in plan.extra_turns:
            body = "# Plan\n\n1. Board and pieces\n2. Rendering\n3. Input\n4. Game loop\n"
            yield _Step(
                "Writing a short plan first.",
                "Write",
                {"file_path": str(ws / "PLAN.md"), "content": body},
                "File created successfully",
                ("PLAN.md", body.encode()),
                len(body),
            )
        if "web_search" in plan.extra_turns:
            yield _Step(
                "Checking the standard rotation system.",
                "WebSearch",
                {"query": "tetris super rotation system wall kicks"},
                "Results: tetris.wiki/Super_Rotation_System ...",
            )
        if "subagent" in plan.extra_turns:
            yield _Step(
                "Delegating a review of the piece definitions.",
                "Task",
                {"description": "review tetromino shapes", "prompt": "Check the 7 shapes."},
                "The shapes are correct.",
                output_chars=1500,
            )
        for rel, content in files:
            text = content.decode("utf-8", errors="replace")
            yield _Step(
                f"Now writing {rel}.",
                "Write",
                {"file_path": str(ws / rel), "content": text},
                "File created successfully",
                (rel, content),
                len(text),
            )
        if "self_test" in plan.extra_turns:
            check = (
                "npx tsc -p . --noEmit"
                if plan.spec.language == "typescript"
                else "node --check src/*.js"
            )
            yield _Step("Let me check that it compiles.", "Bash", {"command": check}, "")
            yield _Step(
                "Playing the game in a browser to test it.",
                "Bash",
                {"command": "npx playwright screenshot http://localhost:8000 shot.png"},
                "Screenshot saved",
            )
        yield _Step("The game is complete: open index.html to play.")

    def _stream(
        self, task: AgentTask, plan: SyntheticPlan, steps: list[_Step], started: float
    ) -> AgentOutcome:
        meter = ClaudeStreamMeter(task.input_usd_per_mtok, task.output_usd_per_mtok)
        session = str(uuid.UUID(int=int(hashlib.sha256(task.run_id.encode()).hexdigest()[:32], 16)))
        effort = str(task.config.get("effort", "medium"))
        thinking = THINKING.get(effort, 0.6)
        context_tokens = SYSTEM_PROMPT_TOKENS + len(task.prompt) // 3
        sim_seconds = 0.0
        status, message, stop = "completed", "the synthetic agent finished", None
        lines = 0
        task.transcript_path.parent.mkdir(parents=True, exist_ok=True)
        with task.transcript_path.open("w", encoding="utf-8") as out:

            def emit(event: dict[str, Any]) -> None:
                nonlocal lines
                line = json.dumps(event, ensure_ascii=False)
                out.write(line + "\n")
                meter.feed(line)
                lines += 1

            emit(
                {
                    "type": "system",
                    "subtype": "init",
                    "session_id": session,
                    "model": task.model,
                    "cwd": str(task.workspace),
                    "tools": ["Bash", "Read", "Write", "Edit", "WebSearch", "Task"],
                    "permissionMode": "bypassPermissions",
                    "apiKeySource": "none",
                }
            )
            for turn, step in enumerate(steps, start=1):
                if turn > task.max_turns:
                    status, stop = "max_turns", f"stopped at the {task.max_turns}-turn limit"
                    break
                out_tokens = int(
                    (200 + step.output_chars * TOKENS_PER_CHAR) * (1 + thinking) * plan.noise
                )
                new_input = 400 + len(step.result) // 3
                usage = {
                    "input_tokens": new_input,
                    "cache_read_input_tokens": context_tokens,
                    "cache_creation_input_tokens": 0,
                    "output_tokens": out_tokens,
                }
                context_tokens += new_input + out_tokens
                sim_seconds += out_tokens / plan.tokens_per_second
                message_id = f"msg_{session[:8]}_{turn:03d}"
                content: list[dict[str, Any]] = [
                    {"type": "thinking", "thinking": "Considering the next step.", "signature": ""},
                    {"type": "text", "text": step.text},
                ]
                tool_id = f"toolu_{session[:8]}_{turn:03d}"
                if step.tool:
                    content.append(
                        {
                            "type": "tool_use",
                            "id": tool_id,
                            "name": step.tool,
                            "input": step.tool_input,
                        }
                    )
                # Claude Code repeats a message's usage on each of its content events; the
                # meter must keep the last one per message id, so do the same here.
                for block in content:
                    emit(
                        {
                            "type": "assistant",
                            "message": {
                                "id": message_id,
                                "model": task.model,
                                "content": [block],
                                "usage": usage,
                                "stop_reason": "tool_use" if step.tool else "end_turn",
                            },
                            "parent_tool_use_id": None,
                            "session_id": session,
                        }
                    )
                stop = self._limit(task, meter, sim_seconds)
                if stop:
                    status = "budget_exceeded" if stop.startswith("budget") else "timed_out"
                    break
                if step.tool:
                    if step.write:
                        target = task.workspace / step.write[0]
                        target.parent.mkdir(parents=True, exist_ok=True)
                        target.write_bytes(step.write[1])
                    sim_seconds += TOOL_LATENCY_S
                    emit(
                        {
                            "type": "user",
                            "message": {
                                "role": "user",
                                "content": [
                                    {
                                        "type": "tool_result",
                                        "tool_use_id": tool_id,
                                        "content": step.result,
                                        "is_error": False,
                                    }
                                ],
                            },
                            "parent_tool_use_id": None,
                            "session_id": session,
                        }
                    )
            usage_now = meter.usage()
            if status == "completed" or status == "max_turns":
                emit(
                    {
                        "type": "result",
                        "subtype": "success" if status == "completed" else "error_max_turns",
                        "is_error": status != "completed",
                        "duration_ms": int(sim_seconds * 1000),
                        "duration_api_ms": int(sim_seconds * 900),
                        "num_turns": meter.turns,
                        "session_id": session,
                        "total_cost_usd": round(usage_now.cost_usd or 0.0, 6),
                        "usage": {
                            "input_tokens": usage_now.input_tokens
                            - usage_now.cache_read_tokens
                            - usage_now.cache_creation_tokens,
                            "cache_read_input_tokens": usage_now.cache_read_tokens,
                            "cache_creation_input_tokens": usage_now.cache_creation_tokens,
                            "output_tokens": usage_now.output_tokens,
                        },
                        "result": steps[-1].text,
                    }
                )
        usage = meter.usage()
        if stop:
            message = f"the synthetic agent was {stop}"
        return AgentOutcome(
            status=status,  # type: ignore[arg-type]
            message=message,
            usage=usage,
            exit_code=0 if status == "completed" else None,
            # Simulated agent time (what the transcript reports), not this function's
            # milliseconds: it is the quantity a real run's duration would measure.
            duration_s=round(sim_seconds, 3),
            budget_hit=status == "budget_exceeded",
            transcript_lines=lines,
            details={
                "plan": plan.to_json(),
                "wall_s": round(time.monotonic() - started, 3),
                "simulated": True,
            },
        )

    @staticmethod
    def _limit(task: AgentTask, meter: ClaudeStreamMeter, sim_seconds: float) -> str | None:
        cost = meter.usage().cost_usd or 0.0
        if cost > task.budget_usd:
            return f"budget exceeded: ${cost:.2f} of ${task.budget_usd:.2f}"
        if sim_seconds > task.time_limit_s:
            return (
                f"over the time limit: {sim_seconds / 60:.1f} of {task.time_limit_s / 60:.0f} min"
            )
        return None

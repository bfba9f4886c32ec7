"""Reading agent transcripts: usage meters (tokens, cost, turns) and one normalized event table.

Two formats are understood (facts and pitfalls in `/work/shared/notes/transcripts.md`):

- Claude Code `--output-format stream-json --verbose` ("claude_stream_json"),
- Codex `exec --json` ("codex_jsonl").

Everything here is defensive: a transcript is written by a program we do not control, may be
cut off mid-line (a killed run), may hold banner text or stack traces between events, and its
event vocabulary drifts between CLI versions. A line that is not JSON is counted as garbage and
an unknown event as unknown; neither is ever an exception.

Meters are fed one raw line at a time while the agent runs, so the running cost is known
*during* streaming and a budget can be enforced before the final event arrives.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from bench_pipeline.agents.base import AgentTask, Usage
from bench_pipeline.agents.bounds import MAX_COST_USD, MAX_TOKENS, MAX_TURNS, number_problem

TranscriptFormat = Literal["claude_stream_json", "codex_jsonl", "unknown"]
EventKind = Literal[
    "init",
    "assistant_text",
    "thinking",
    "tool_call",
    "tool_result",
    "result",
    "error",
    "unknown",
    "garbage",
]

TEXT_EXCERPT_CHARS = 500
# A format shows itself in the first lines (a banner at most before the first event).
DETECT_LINES = 200
MAX_REPORTED_PROBLEMS = 10
TOOL_INPUT_CHARS = 160

# Cache pricing relative to the model's input price. The run spec freezes only an input and
# an output price per model, so cached tokens are priced with the providers' published ratios:
# Anthropic bills cache reads at 0.1x and (5-minute) cache writes at 1.25x the input price;
# OpenAI bills cached input of the GPT-5 family at 0.1x. Pricing cached tokens at the full
# input price instead would overstate a typical Claude Code session several times over and
# stop runs long before their real spend reaches the budget.
ANTHROPIC_CACHE_READ_FACTOR = 0.1
ANTHROPIC_CACHE_WRITE_FACTOR = 1.25
OPENAI_CACHED_INPUT_FACTOR = 0.1

CLAUDE_EVENT_TYPES = frozenset(
    {"system", "assistant", "user", "result", "stream_event", "rate_limit_event"}
)
CODEX_EVENT_TYPES = frozenset(
    {
        "thread.started",
        "turn.started",
        "turn.completed",
        "turn.failed",
        "item.started",
        "item.updated",
        "item.completed",
    }
)
# Codex items that are the agent acting on the world (the equivalent of Claude's tool_use).
CODEX_TOOL_ITEMS = frozenset({"command_execution", "file_change", "mcp_tool_call", "web_search"})


@dataclass(frozen=True)
class Prices:
    """Per-million-token prices of one run (from the run spec); None when unknown."""

    input_usd_per_mtok: float | None = None
    output_usd_per_mtok: float | None = None

    @classmethod
    def of(cls, task: AgentTask) -> Prices:
        return cls(task.input_usd_per_mtok, task.output_usd_per_mtok)

    @property
    def known(self) -> bool:
        return self.input_usd_per_mtok is not None and self.output_usd_per_mtok is not None

    def cost(
        self,
        *,
        fresh_input: int,
        cache_read: int,
        cache_write: int,
        output: int,
        read_factor: float,
        write_factor: float,
    ) -> float | None:
        if self.input_usd_per_mtok is None or self.output_usd_per_mtok is None:
            return None
        weighted_input = fresh_input + cache_read * read_factor + cache_write * write_factor
        return (weighted_input * self.input_usd_per_mtok + output * self.output_usd_per_mtok) / 1e6


class UsageMeter(Protocol):
    """Reads a transcript one raw line at a time and keeps running totals."""

    format: TranscriptFormat
    lines: int  # every line fed, including garbage
    events: int  # lines that parsed as a JSON object of a known type
    garbage_lines: int
    unknown_events: int
    tool_calls: int
    reported_cost: float | None
    result_event: dict[str, Any] | None  # Claude's result event; Codex's last turn end
    errors: list[str]
    first_line: str | None  # the first non-blank line, for "printed no events" messages
    # Numbers outside the sane range (bounds.py), "line N: what"; the run is then an error.
    invalid_numbers: list[str]

    @property
    def turns(self) -> int: ...

    @property
    def finished(self) -> bool:
        """The CLI reported the end of its run (Claude's result event, Codex's turn end)."""
        ...

    @property
    def is_error(self) -> bool: ...

    @property
    def limit_hit(self) -> Literal["max_turns", "budget"] | None: ...

    def feed(self, line: str) -> None: ...

    def usage(self, prices: Prices | None = None) -> Usage:
        """Totals so far; priced with `prices`, else with the prices the meter was made with."""
        ...

    def running_cost(self, prices: Prices | None = None) -> float | None: ...

    def summary(self) -> dict[str, Any]: ...


def parse_line(line: str) -> dict[str, Any] | None:
    """One JSONL line as a dict, or None for anything else (banner text, half a line, `[1]`)."""
    text = line.strip()
    if not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _int(value: Any) -> int:
    """A token count from untrusted JSON for the event table: an integer in the sane range
    (bounds.py), anything else is 0. The meters are stricter: see `_MeterBase._count`."""
    if number_problem("count", value, MAX_TOKENS, integer=True) is not None:
        return 0
    return int(value)


def _number(value: Any) -> float | None:
    """A finite number from untrusted JSON, else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


# How a meter reads one count: (value, field name) -> the count (0 when unusable).
Counter = Callable[[Any, str], int]


def _excerpt(value: Any, limit: int = TEXT_EXCERPT_CHARS) -> str:
    """Readable text of a string or of nested content blocks, cut to `limit` characters."""
    if value is None:
        return ""
    if isinstance(value, str):
        text = value
    elif isinstance(value, list):
        parts = []
        for block in value:
            if isinstance(block, dict):
                parts.append(str(block.get("text") or block.get("content") or ""))
            else:
                parts.append(str(block))
        text = "\n".join(p for p in parts if p)
    else:
        text = json.dumps(value, ensure_ascii=False, default=str)
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


class _MeterBase:
    """Line bookkeeping shared by the meters; subclasses handle parsed events."""

    format: TranscriptFormat = "unknown"

    def __init__(
        self, input_usd_per_mtok: float | None = None, output_usd_per_mtok: float | None = None
    ) -> None:
        # The prices `usage()` uses when it is not given any (the run spec's, usually).
        self.prices = Prices(input_usd_per_mtok, output_usd_per_mtok)
        self.lines = 0
        self.events = 0
        self.garbage_lines = 0
        self.unknown_events = 0
        self.tool_calls = 0
        self.reported_cost: float | None = None
        self.result_event: dict[str, Any] | None = None
        self.errors: list[str] = []
        self.first_line: str | None = None
        self.invalid_numbers: list[str] = []

    def _bad_number(self, problem: str, where: str | None = None) -> None:
        if len(self.invalid_numbers) < MAX_REPORTED_PROBLEMS:
            self.invalid_numbers.append(f"{where or f'line {self.lines}'}: {problem}")

    def _count(
        self, value: Any, name: str, upper: int = MAX_TOKENS, where: str | None = None
    ) -> int:
        """A count from the transcript: absent is 0; anything but an integer in the sane
        range is recorded in `invalid_numbers` (the run becomes an error) and counts 0, so
        the running totals stay finite while the agent streams."""
        if value is None:
            return 0
        problem = number_problem(name, value, upper, integer=True)
        if problem is not None:
            self._bad_number(problem, where)
            return 0
        return int(value)

    def _cost(self, value: Any, name: str) -> float | None:
        """A reported cost: absent is None; out of range is recorded and unknown (None)."""
        if value is None:
            return None
        problem = number_problem(name, value, MAX_COST_USD)
        if problem is not None:
            self._bad_number(problem)
            return None
        return float(value)

    def feed(self, line: str) -> None:
        self.lines += 1
        if self.first_line is None and line.strip():
            self.first_line = line.strip()[:200]
        event = parse_line(line)
        if event is None:
            if line.strip():
                self.garbage_lines += 1
            return
        if self._handle(event):
            self.events += 1
        else:
            self.unknown_events += 1

    def _handle(self, event: dict[str, Any]) -> bool:
        """Take one parsed event; False when its type is not one of this format's."""
        raise NotImplementedError

    def _add_error(self, message: Any) -> None:
        text = _excerpt(message, 300)
        if text and text not in self.errors:
            self.errors.append(text)

    @property
    def limit_hit(self) -> Literal["max_turns", "budget"] | None:
        return None

    @property
    def finished(self) -> bool:
        return self.result_event is not None

    def running_cost(self, prices: Prices | None = None) -> float | None:
        return self.usage(prices).cost_usd

    def usage(self, prices: Prices | None = None) -> Usage:
        raise NotImplementedError

    def summary(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "lines": self.lines,
            "events": self.events,
            "garbage_lines": self.garbage_lines,
            "unknown_events": self.unknown_events,
            "has_result_event": self.result_event is not None,
            "errors": self.errors[:10],
            "invalid_numbers": list(self.invalid_numbers),
        }


@dataclass
class _ClaudeTokens:
    input: int = 0  # uncached input only, as the API reports it
    cache_read: int = 0
    cache_write: int = 0
    output: int = 0

    @classmethod
    def from_api(cls, usage: Mapping[str, Any], count: Counter) -> _ClaudeTokens:
        return cls(
            input=count(usage.get("input_tokens"), "input_tokens"),
            cache_read=count(usage.get("cache_read_input_tokens"), "cache_read_input_tokens"),
            cache_write=count(
                usage.get("cache_creation_input_tokens"), "cache_creation_input_tokens"
            ),
            output=count(usage.get("output_tokens"), "output_tokens"),
        )

    @classmethod
    def from_model_usage(
        cls, model_usage: Mapping[str, Any], count: Counter
    ) -> _ClaudeTokens | None:
        """Sum the result event's per-model totals (camelCase keys), None if there are none."""
        total = cls()
        seen = False
        for entry in model_usage.values():
            if not isinstance(entry, Mapping):
                continue
            seen = True
            for attr, key in (
                ("input", "inputTokens"),
                ("cache_read", "cacheReadInputTokens"),
                ("cache_write", "cacheCreationInputTokens"),
                ("output", "outputTokens"),
            ):
                setattr(total, attr, getattr(total, attr) + count(entry.get(key), key))
        return total if seen else None

    def __add__(self, other: _ClaudeTokens) -> _ClaudeTokens:
        return _ClaudeTokens(
            self.input + other.input,
            self.cache_read + other.cache_read,
            self.cache_write + other.cache_write,
            self.output + other.output,
        )

    @property
    def gross_input(self) -> int:
        return self.input + self.cache_read + self.cache_write


class ClaudeStreamMeter(_MeterBase):
    """Usage of a Claude Code stream-json transcript.

    Tokens while streaming: the last `usage` seen per assistant `message.id` (one API response
    arrives as several events that each repeat its usage), summed over messages, sub-agent
    messages included since they are spent too. Once the result event arrives its totals win:
    `modelUsage` also counts the small background calls (titles, command safety checks) that
    never appear as assistant events, and `total_cost_usd` is what Claude Code itself billed.
    """

    format: TranscriptFormat = "claude_stream_json"

    def __init__(
        self, input_usd_per_mtok: float | None = None, output_usd_per_mtok: float | None = None
    ) -> None:
        super().__init__(input_usd_per_mtok, output_usd_per_mtok)
        self._usage_by_message: dict[str, _ClaudeTokens] = {}
        self._anonymous_messages = 0
        self._top_level_messages: dict[str, None] = {}  # ordered set of main-loop message ids
        self._tool_use_ids: set[str] = set()
        self.turns_reported: int | None = None  # the result event's num_turns
        self.model: str | None = None
        self.session_id: str | None = None
        self.result_subtype: str | None = None
        self._result_is_error = False

    def _handle(self, event: dict[str, Any]) -> bool:
        kind = event.get("type")
        if kind not in CLAUDE_EVENT_TYPES:
            return False
        if kind == "system" and event.get("subtype") == "init":
            self.model = event.get("model") if isinstance(event.get("model"), str) else None
            self.session_id = str(event.get("session_id") or "") or None
        elif kind == "assistant":
            self._assistant(event)
        elif kind == "result":
            self._result(event)
        return True

    def _assistant(self, event: dict[str, Any]) -> None:
        message = event.get("message")
        if not isinstance(message, dict):
            return
        message_id = message.get("id")
        if not isinstance(message_id, str) or not message_id:
            # Without an id repeats cannot be told apart; count it as its own message.
            self._anonymous_messages += 1
            message_id = f"<anonymous {self._anonymous_messages}>"
        usage = message.get("usage")
        if isinstance(usage, dict):
            self._usage_by_message[message_id] = _ClaudeTokens.from_api(usage, self._count)
        if event.get("parent_tool_use_id") is None:
            self._top_level_messages[message_id] = None
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict) or block.get("type") not in (
                "tool_use",
                "server_tool_use",
            ):
                continue
            block_id = str(block.get("id") or f"{message_id}:{len(self._tool_use_ids)}")
            if block_id not in self._tool_use_ids:
                self._tool_use_ids.add(block_id)
                self.tool_calls += 1
        # API failures (bad key, overload) come as an assistant message with an `error` tag.
        if event.get("error"):
            self._add_error(f"{event['error']}: {_excerpt(content, 200)}")

    def _result(self, event: dict[str, Any]) -> None:
        self.result_event = event
        self.result_subtype = str(event.get("subtype") or "") or None
        self.reported_cost = self._cost(event.get("total_cost_usd"), "total_cost_usd")
        num_turns = event.get("num_turns")
        self.turns_reported = (
            self._count(num_turns, "num_turns", MAX_TURNS) if num_turns is not None else None
        )
        # The totals are read again by _final_tokens; their numbers are checked here, once.
        if isinstance(event.get("modelUsage"), dict):
            _ClaudeTokens.from_model_usage(event["modelUsage"], self._count)
        if isinstance(event.get("usage"), dict):
            _ClaudeTokens.from_api(event["usage"], self._count)
        self._result_is_error = bool(event.get("is_error")) or (
            self.result_subtype is not None and self.result_subtype != "success"
        )
        if self._result_is_error:
            errors = event.get("errors")
            if isinstance(errors, list) and errors:
                for error in errors:
                    self._add_error(error)
            else:
                self._add_error(event.get("result") or self.result_subtype or "error result")

    @property
    def turns(self) -> int:
        if self.turns_reported is not None:
            return self.turns_reported
        return len(self._top_level_messages)

    @property
    def is_error(self) -> bool:
        return self._result_is_error

    @property
    def limit_hit(self) -> Literal["max_turns", "budget"] | None:
        subtype = self.result_subtype or ""
        reason = str((self.result_event or {}).get("terminal_reason") or "")
        if subtype == "error_max_turns" or reason == "max_turns":
            return "max_turns"
        if subtype.startswith("error_max_budget") or "budget" in reason:
            return "budget"
        return None

    def streamed_tokens(self) -> _ClaudeTokens:
        total = _ClaudeTokens()
        for tokens in self._usage_by_message.values():
            total = total + tokens
        return total

    def _final_tokens(self) -> tuple[_ClaudeTokens, str]:
        streamed = self.streamed_tokens()
        result = self.result_event or {}
        candidates: list[tuple[_ClaudeTokens | None, str]] = []
        # Checked when the result event arrived (_result); read leniently here.
        count: Counter = lambda value, _name: _int(value)  # noqa: E731
        if isinstance(result.get("modelUsage"), dict):
            candidates.append(
                (_ClaudeTokens.from_model_usage(result["modelUsage"], count), "modelUsage")
            )
        if isinstance(result.get("usage"), dict):
            candidates.append((_ClaudeTokens.from_api(result["usage"], count), "result.usage"))
        for tokens, source in candidates:
            # A result total smaller than what streamed would be a CLI bug; trust the stream.
            if tokens is not None and tokens.gross_input >= streamed.gross_input:
                return tokens, source
        return streamed, "assistant_events"

    def usage(self, prices: Prices | None = None) -> Usage:
        tokens, _ = self._final_tokens()
        priced = self._priced(tokens, prices or self.prices)
        if not self._usage_by_message and self.result_event is None:
            priced = None  # nothing was metered: the spend is unknown, not $0
        if self.reported_cost is not None:
            cost, source = self.reported_cost, "reported"
        elif priced is not None:
            cost, source = priced, "priced"
        else:
            cost, source = None, "unknown"
        return Usage(
            input_tokens=tokens.gross_input,
            output_tokens=tokens.output,
            cache_read_tokens=tokens.cache_read,
            cache_creation_tokens=tokens.cache_write,
            cost_usd=cost,
            cost_source=source,  # type: ignore[arg-type]
            turns=self.turns,
            tool_calls=self.tool_calls,
        )

    @staticmethod
    def _priced(tokens: _ClaudeTokens, prices: Prices) -> float | None:
        return prices.cost(
            fresh_input=tokens.input,
            cache_read=tokens.cache_read,
            cache_write=tokens.cache_write,
            output=tokens.output,
            read_factor=ANTHROPIC_CACHE_READ_FACTOR,
            write_factor=ANTHROPIC_CACHE_WRITE_FACTOR,
        )

    def priced_cost(self, prices: Prices | None = None) -> float | None:
        """Cost priced from tokens, even when Claude reported its own (to compare the two)."""
        return self._priced(self._final_tokens()[0], prices or self.prices)

    def summary(self) -> dict[str, Any]:
        return {
            **super().summary(),
            "model": self.model,
            "session_id": self.session_id,
            "result_subtype": self.result_subtype,
            "assistant_messages": len(self._usage_by_message),
            "tokens_source": self._final_tokens()[1],
            "reported_cost_usd": self.reported_cost,
        }


@dataclass
class _CodexTokens:
    input: int = 0  # gross: OpenAI's input_tokens already include the cached ones
    cached: int = 0
    output: int = 0  # includes reasoning tokens, as OpenAI bills them

    @classmethod
    def from_api(cls, usage: Mapping[str, Any], count: Counter) -> _CodexTokens:
        return cls(
            input=count(usage.get("input_tokens"), "input_tokens"),
            cached=count(usage.get("cached_input_tokens"), "cached_input_tokens"),
            output=count(usage.get("output_tokens"), "output_tokens"),
        )

    def covers(self, other: _CodexTokens) -> bool:
        return (
            self.input >= other.input
            and self.cached >= other.cached
            and self.output >= other.output
        )


class CodexJsonMeter(_MeterBase):
    """Usage of a `codex exec --json` transcript.

    Tokens come from `turn.completed.usage`. Codex fills that from the thread's running
    total (`usage_from_last_total` in `codex-rs/exec/src/event_processor_with_jsonl_output.rs`),
    not the turn's own usage, so summing several turns would double-count: when the reported
    totals never decrease they are read as running totals (the last one counts), otherwise
    (an older CLI reporting per turn) they are summed. With one turn, the usual case for
    `codex exec`, both readings agree.

    Codex prints no usage until its turn ends, which for `codex exec` is the end of the run.
    To enforce a budget while it works, the adapter also feeds the cumulative `token_count`
    events of Codex's session log through `feed_session_totals`; the larger total wins.

    `turns` approximates model round trips, the unit of Claude's `num_turns`: each completed
    tool item or agent message needs one model response. `turn_events` counts Codex's own
    (prompt-level) turns.
    """

    format: TranscriptFormat = "codex_jsonl"

    def __init__(
        self, input_usd_per_mtok: float | None = None, output_usd_per_mtok: float | None = None
    ) -> None:
        super().__init__(input_usd_per_mtok, output_usd_per_mtok)
        self._turn_totals: list[_CodexTokens] = []
        self._session_totals: _CodexTokens | None = None
        self._completed_items: set[str] = set()
        self.agent_messages = 0
        self.turn_events = 0
        self.turn_failures = 0
        self.thread_id: str | None = None
        self._failed_since_last_turn = False
        self._in_turn = False

    def _handle(self, event: dict[str, Any]) -> bool:
        kind = event.get("type")
        if kind == "error":
            # Too generic a type to identify the format (detect_format ignores it), but in a
            # Codex stream it is a thread-level error; a later turn.completed clears it.
            self._add_error(event.get("message") or "error event")
            self._failed_since_last_turn = True
            return True
        if kind not in CODEX_EVENT_TYPES:
            return False
        if kind == "thread.started":
            self.thread_id = str(event.get("thread_id") or "") or None
        elif kind == "turn.started":
            self._in_turn = True
        elif kind == "turn.completed":
            self._in_turn = False
            self.result_event = event
            self.turn_events += 1
            usage = event.get("usage")
            self._turn_totals.append(
                _CodexTokens.from_api(usage, self._count)
                if isinstance(usage, dict)
                else _CodexTokens()
            )
            self._failed_since_last_turn = False
        elif kind == "turn.failed":
            self._in_turn = False
            self.result_event = event
            self.turn_failures += 1
            error = event.get("error")
            message = error.get("message") if isinstance(error, dict) else error
            self._add_error(message or "turn failed")
            self._failed_since_last_turn = True
        elif kind == "item.completed":
            self._item_completed(event.get("item"))
        return True

    def _item_completed(self, item: Any) -> None:
        if not isinstance(item, dict):
            return
        item_id = str(item.get("id") or f"<item {len(self._completed_items)}>")
        if item_id in self._completed_items:
            return
        self._completed_items.add(item_id)
        item_type = item.get("type")
        if item_type in CODEX_TOOL_ITEMS:
            self.tool_calls += 1
        elif item_type == "agent_message":
            self.agent_messages += 1
        elif item_type == "error":
            # Non-fatal notices (e.g. a config warning); the run goes on.
            self._add_error(item.get("message") or "error item")

    def feed_session_totals(self, usage: Mapping[str, Any]) -> None:
        """Take a running total from Codex's session log (`token_count.info.total_token_usage`)."""
        tokens = _CodexTokens.from_api(
            usage, lambda value, name: self._count(value, name, where="Codex session log")
        )
        if self._session_totals is None or tokens.covers(self._session_totals):
            self._session_totals = tokens

    @property
    def turns(self) -> int:
        return self.agent_messages + self.tool_calls

    @property
    def finished(self) -> bool:
        # A turn ended and no other began (`codex exec` runs one turn per prompt).
        return self.result_event is not None and not self._in_turn

    @property
    def is_error(self) -> bool:
        return self._failed_since_last_turn

    def _tokens(self) -> _CodexTokens:
        totals = self._turn_totals
        cumulative = all(b.covers(a) for a, b in itertools.pairwise(totals))
        if cumulative:
            from_turns = totals[-1] if totals else _CodexTokens()
        else:
            from_turns = _CodexTokens(
                sum(t.input for t in totals),
                sum(t.cached for t in totals),
                sum(t.output for t in totals),
            )
        session = self._session_totals
        if session is not None and session.covers(from_turns):
            return session
        return from_turns

    def usage(self, prices: Prices | None = None) -> Usage:
        tokens = self._tokens()
        metered = bool(self._turn_totals) or self._session_totals is not None
        cost = (prices or self.prices).cost(
            fresh_input=max(tokens.input - tokens.cached, 0),
            cache_read=tokens.cached,
            cache_write=0,
            output=tokens.output,
            read_factor=OPENAI_CACHED_INPUT_FACTOR,
            write_factor=1.0,
        )
        if not metered:
            cost = None  # killed before Codex reported any usage: unknown, not $0
        return Usage(
            input_tokens=tokens.input,
            output_tokens=tokens.output,
            cache_read_tokens=tokens.cached,
            cache_creation_tokens=0,
            cost_usd=cost,
            cost_source="priced" if cost is not None else "unknown",
            turns=self.turns,
            tool_calls=self.tool_calls,
        )

    def summary(self) -> dict[str, Any]:
        return {
            **super().summary(),
            "thread_id": self.thread_id,
            "turn_events": self.turn_events,
            "turn_failures": self.turn_failures,
            "agent_messages": self.agent_messages,
            "session_log_totals": self._session_totals is not None,
        }


class PlainTextMeter(_MeterBase):
    """Output that is not a known JSON format: only lines are counted, usage is unknown."""

    format: TranscriptFormat = "unknown"
    turns = 0

    def _handle(self, event: dict[str, Any]) -> bool:
        return False

    @property
    def is_error(self) -> bool:
        return False

    def usage(self, prices: Prices | None = None) -> Usage:
        return Usage()


class AutoMeter:
    """A meter that picks its format from the first line that identifies one.

    Lines seen before the format is known are kept and replayed into the chosen meter, so
    nothing is lost; until then it behaves like a `PlainTextMeter`. Output that has not shown
    a format within its first DETECT_LINES lines is plain text for good (and not buffered).
    """

    def __init__(
        self, input_usd_per_mtok: float | None = None, output_usd_per_mtok: float | None = None
    ) -> None:
        self._prices = (input_usd_per_mtok, output_usd_per_mtok)
        self._pending: list[str] | None = []  # None: detection given up
        self._delegate: ClaudeStreamMeter | CodexJsonMeter | PlainTextMeter = PlainTextMeter()

    @property
    def delegate(self) -> ClaudeStreamMeter | CodexJsonMeter | PlainTextMeter:
        return self._delegate

    def feed(self, line: str) -> None:
        if self._pending is None or not isinstance(self._delegate, PlainTextMeter):
            self._delegate.feed(line)
            return
        self._pending.append(line)
        self._delegate.feed(line)
        fmt = _line_format(line)
        if fmt == "unknown" and len(self._pending) >= DETECT_LINES:
            self._pending = None
        elif fmt != "unknown":
            self._delegate = new_meter(fmt, *self._prices)
            for pending in self._pending:
                self._delegate.feed(pending)
            self._pending = []

    def __getattr__(self, name: str) -> Any:
        # Everything else (usage, turns, errors, ...) is the chosen meter's.
        return getattr(self._delegate, name)


def new_meter(
    fmt: TranscriptFormat,
    input_usd_per_mtok: float | None = None,
    output_usd_per_mtok: float | None = None,
) -> ClaudeStreamMeter | CodexJsonMeter | PlainTextMeter:
    """The meter for a format (plain text for "unknown"), pricing with the given prices."""
    if fmt == "claude_stream_json":
        return ClaudeStreamMeter(input_usd_per_mtok, output_usd_per_mtok)
    if fmt == "codex_jsonl":
        return CodexJsonMeter(input_usd_per_mtok, output_usd_per_mtok)
    return PlainTextMeter(input_usd_per_mtok, output_usd_per_mtok)


def _line_format(line: str) -> TranscriptFormat:
    event = parse_line(line)
    if event is None:
        return "unknown"
    kind = event.get("type")
    if kind in CODEX_EVENT_TYPES:
        return "codex_jsonl"
    # Claude events carry a session id or a message; a bare {"type": "user"} is not evidence.
    if kind in CLAUDE_EVENT_TYPES and (
        "session_id" in event or "message" in event or kind == "result"
    ):
        return "claude_stream_json"
    return "unknown"


def detect_format(lines: Iterable[str], max_lines: int = DETECT_LINES) -> TranscriptFormat:
    """The format of the first line (among the first `max_lines`) that identifies one."""
    for count, line in enumerate(lines):
        if count >= max_lines:
            break
        fmt = _line_format(line)
        if fmt != "unknown":
            return fmt
    return "unknown"


def read_transcript(path: Path) -> list[str]:
    """The lines of a transcript file, tolerating a final line cut off mid-way (or mid-UTF-8).

    The cut line is returned as it is; parsing counts it as garbage.
    """
    data = path.read_bytes()
    return data.decode("utf-8", errors="replace").splitlines()


def meter_lines(
    lines: Iterable[str], fmt: TranscriptFormat | None = None, prices: Prices | None = None
) -> UsageMeter:
    """A meter fed with every line; the format is detected when not given."""
    lines = list(lines)
    prices = prices or Prices()
    meter = new_meter(
        fmt or detect_format(lines), prices.input_usd_per_mtok, prices.output_usd_per_mtok
    )
    for line in lines:
        meter.feed(line)
    return meter


# ---------------------------------------------------------------------------------------------
# The normalized event table


@dataclass
class TranscriptEvent:
    """One thing that happened in a run, the same shape for every agent format.

    One transcript line can give several events (a Claude message with text and a tool call);
    they share `index`, the 0-based line number. `tokens` is the output tokens of the model
    response the event belongs to, set on one event per response only, so the column sums
    to the run's output tokens. `ref` links a tool_result to its tool_call (tool use id /
    Codex item id).
    """

    index: int
    kind: EventKind
    raw_type: str = ""
    tool: str | None = None
    tool_input: str = ""
    is_error: bool = False
    text: str = ""
    tokens: int | None = None
    ref: str | None = None


def _summarize_input(tool: str, value: Any) -> str:
    """The gist of a tool call's input: the path, command, pattern, URL or query."""
    if isinstance(value, dict):
        for key in (
            "file_path",
            "path",
            "notebook_path",
            "command",
            "pattern",
            "url",
            "query",
            "description",
        ):
            if isinstance(value.get(key), str) and value[key]:
                text = value[key]
                break
        else:
            text = json.dumps(value, ensure_ascii=False, default=str)
    elif value is None:
        text = ""
    else:
        text = str(value)
    text = " ".join(text.split())
    return text if len(text) <= TOOL_INPUT_CHARS else text[: TOOL_INPUT_CHARS - 1] + "…"


def _claude_events(index: int, event: dict[str, Any]) -> list[TranscriptEvent]:
    kind = event.get("type")
    if kind == "system":
        subtype = str(event.get("subtype") or "")
        if subtype == "init":
            return [TranscriptEvent(index, "init", "system:init", text=str(event.get("model")))]
        return [TranscriptEvent(index, "unknown", f"system:{subtype}")]
    if kind == "result":
        is_error = bool(event.get("is_error")) or event.get("subtype") not in (None, "success")
        return [
            TranscriptEvent(
                index,
                "result",
                f"result:{event.get('subtype') or ''}",
                is_error=is_error,
                text=_excerpt(event.get("result") or event.get("errors")),
            )
        ]
    message = event.get("message")
    if kind not in ("assistant", "user") or not isinstance(message, dict):
        return [TranscriptEvent(index, "unknown", str(kind or ""))]
    content = message.get("content")
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
    out: list[TranscriptEvent] = []
    if kind == "assistant" and event.get("error"):
        out.append(
            TranscriptEvent(
                index, "error", "assistant:error", is_error=True, text=_excerpt(event["error"])
            )
        )
    for block in blocks:
        if not isinstance(block, dict):
            continue
        block_type = block.get("type")
        raw = f"{kind}:{block_type}"
        if kind == "assistant" and block_type == "text":
            out.append(TranscriptEvent(index, "assistant_text", raw, text=_excerpt(block["text"])))
        elif block_type in ("thinking", "redacted_thinking"):
            out.append(
                TranscriptEvent(index, "thinking", raw, text=_excerpt(block.get("thinking")))
            )
        elif block_type in ("tool_use", "server_tool_use"):
            name = str(block.get("name") or "?")
            out.append(
                TranscriptEvent(
                    index,
                    "tool_call",
                    raw,
                    tool=name,
                    tool_input=_summarize_input(name, block.get("input")),
                    ref=block.get("id"),
                )
            )
        elif block_type == "tool_result" or block_type == "web_search_tool_result":
            out.append(
                TranscriptEvent(
                    index,
                    "tool_result",
                    raw,
                    is_error=bool(block.get("is_error")),
                    text=_excerpt(block.get("content")),
                    ref=block.get("tool_use_id"),
                )
            )
        else:
            out.append(TranscriptEvent(index, "unknown", raw, text=_excerpt(block.get("text"))))
    return out or [TranscriptEvent(index, "unknown", str(kind))]


def _codex_tool(item: dict[str, Any]) -> tuple[str, str]:
    item_type = str(item.get("type"))
    if item_type == "command_execution":
        return "command_execution", _summarize_input("", item.get("command"))
    if item_type == "file_change":
        changes = item.get("changes") if isinstance(item.get("changes"), list) else []
        summary = ", ".join(
            f"{c.get('kind', '?')} {c.get('path', '?')}" for c in changes if isinstance(c, dict)
        )
        return "file_change", _summarize_input("", summary)
    if item_type == "mcp_tool_call":
        name = f"mcp:{item.get('server', '?')}/{item.get('tool', '?')}"
        return name, _summarize_input(name, item.get("arguments"))
    return item_type, _summarize_input(item_type, item.get("query"))


def _codex_tool_failed(item: dict[str, Any]) -> bool:
    if item.get("status") in ("failed", "declined"):
        return True
    exit_code = item.get("exit_code")
    return (isinstance(exit_code, int) and exit_code != 0) or bool(item.get("error"))


def _codex_events(
    index: int, event: dict[str, Any], started: set[str], previous_output: list[int]
) -> list[TranscriptEvent]:
    kind = str(event.get("type") or "")
    if kind == "thread.started":
        return [TranscriptEvent(index, "init", kind, text=str(event.get("thread_id") or ""))]
    if kind == "turn.completed":
        usage = event.get("usage") if isinstance(event.get("usage"), dict) else {}
        output = _int(usage.get("output_tokens"))
        # Codex reports running totals: the turn's own tokens are the difference.
        tokens = output - previous_output[0] if output >= previous_output[0] else output
        previous_output[0] = output
        return [TranscriptEvent(index, "result", kind, tokens=tokens)]
    if kind in ("turn.failed", "error"):
        error = event.get("error")
        message = error.get("message") if isinstance(error, dict) else event.get("message")
        return [TranscriptEvent(index, "error", kind, is_error=True, text=_excerpt(message))]
    item = event.get("item")
    if not kind.startswith("item.") or not isinstance(item, dict):
        return [TranscriptEvent(index, "unknown", kind)]
    item_type = str(item.get("type") or "")
    item_id = str(item.get("id") or "") or None
    raw = f"{kind}:{item_type}"
    if item_type in CODEX_TOOL_ITEMS:
        tool, tool_input = _codex_tool(item)
        out = []
        if kind == "item.started" or (kind == "item.completed" and item_id not in started):
            if item_id:
                started.add(item_id)
            out.append(TranscriptEvent(index, "tool_call", raw, tool, tool_input, ref=item_id))
        if kind == "item.completed":
            output = item.get("aggregated_output") or item.get("result") or item.get("error")
            out.append(
                TranscriptEvent(
                    index,
                    "tool_result",
                    raw,
                    tool,
                    tool_input,
                    is_error=_codex_tool_failed(item),
                    text=_excerpt(output),
                    ref=item_id,
                )
            )
        return out or [TranscriptEvent(index, "unknown", raw, ref=item_id)]
    if kind != "item.completed":
        return [TranscriptEvent(index, "unknown", raw, ref=item_id)]
    if item_type == "agent_message":
        return [TranscriptEvent(index, "assistant_text", raw, text=_excerpt(item.get("text")))]
    if item_type == "reasoning":
        return [TranscriptEvent(index, "thinking", raw, text=_excerpt(item.get("text")))]
    if item_type == "error":
        return [
            TranscriptEvent(index, "error", raw, is_error=True, text=_excerpt(item.get("message")))
        ]
    return [TranscriptEvent(index, "unknown", raw, text=_excerpt(item.get("text")), ref=item_id)]


def normalize_events(
    lines: Iterable[str], fmt: TranscriptFormat | None = None
) -> list[TranscriptEvent]:
    """One row per thing that happened, for either format (detected when `fmt` is None)."""
    lines = list(lines)
    fmt = fmt or detect_format(lines)
    events: list[TranscriptEvent] = []
    codex_started: set[str] = set()
    codex_output = [0]
    last_event_of_message: dict[str, tuple[int, int]] = {}  # message id -> (event, output)
    for index, line in enumerate(lines):
        parsed = parse_line(line)
        if parsed is None:
            if line.strip():
                events.append(TranscriptEvent(index, "garbage", text=_excerpt(line)))
            continue
        if fmt == "claude_stream_json" and parsed.get("type") in CLAUDE_EVENT_TYPES:
            new = _claude_events(index, parsed)
            message = parsed.get("message")
            if parsed.get("type") == "assistant" and isinstance(message, dict) and new:
                usage = message.get("usage") if isinstance(message.get("usage"), dict) else {}
                key = str(message.get("id") or f"<line {index}>")
                last_event_of_message[key] = (len(events), _int(usage.get("output_tokens")))
        elif fmt == "codex_jsonl" and (
            parsed.get("type") in CODEX_EVENT_TYPES or parsed.get("type") == "error"
        ):
            new = _codex_events(index, parsed, codex_started, codex_output)
        else:
            new = [TranscriptEvent(index, "unknown", str(parsed.get("type") or ""))]
        events.extend(new)
    # A Claude message's final usage is on its last event: put its output tokens there once.
    for position, output in last_event_of_message.values():
        events[position].tokens = output
    # Claude's tool results name only the tool use id: give them the tool's name too.
    tool_names = {e.ref: e.tool for e in events if e.kind == "tool_call" and e.ref}
    for event in events:
        if event.kind == "tool_result" and event.tool is None and event.ref in tool_names:
            event.tool = tool_names[event.ref]
    return events

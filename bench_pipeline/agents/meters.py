"""The meters: tokens, cost, turns and tool calls of a transcript, fed one raw line at a time.

Separate from the normalized event table (`events.py`) because the two read a transcript for
different ends: a meter keeps running totals while the agent streams, so a budget can be
enforced before the run ends, and answers what the run spent; the event table is built
afterwards and answers what the agent did.

Why one module of ~720 lines: the Claude Code and Codex meters share their base class, the
price arithmetic and the problem counters, and each vendor's part is the counterpart of the
other's; split per vendor, every change to the accounting would touch three files.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from bench_pipeline.agents.base import AgentTask, Usage
from bench_pipeline.agents.bounds import MAX_COST_USD, MAX_TOKENS, MAX_TURNS, number_problem
from bench_pipeline.agents.transcript_format import (
    CLAUDE_EVENT_TYPES,
    CODEX_EVENT_TYPES,
    CODEX_TOOL_ITEMS,
    DETECT_LINES,
    TranscriptFormat,
    _excerpt,
    _int,
    _line_format,
    detect_format,
    parse_line,
)

MAX_REPORTED_PROBLEMS = 10

# Cache pricing relative to the model's input price. The run spec freezes only an input and
# an output price per model, so cached tokens are priced with the providers' published ratios:
# Anthropic bills cache reads at 0.1x and (5-minute) cache writes at 1.25x the input price;
# OpenAI bills cached input of the GPT-5 family at 0.1x. Pricing cached tokens at the full
# input price instead would overstate a typical Claude Code session several times over and
# stop runs long before their real spend reaches the budget.
ANTHROPIC_CACHE_READ_FACTOR = 0.1
ANTHROPIC_CACHE_WRITE_FACTOR = 1.25
OPENAI_CACHED_INPUT_FACTOR = 0.1


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


# How a meter reads one count: (value, field name) -> the count (0 when unusable).
Counter = Callable[[Any, str], int]


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

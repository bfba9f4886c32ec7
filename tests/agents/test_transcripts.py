"""Transcript parsing on the recorded sessions: tokens, cost, turns, tool calls, the event table."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from bench_pipeline.agents.events import COMMAND_CHARS, TOOL_INPUT_CHARS
from bench_pipeline.agents.transcripts import (
    AutoMeter,
    ClaudeStreamMeter,
    CodexJsonMeter,
    Prices,
    detect_format,
    meter_lines,
    normalize_events,
    read_transcript,
)
from tests.agents.conftest import Recorded

SONNET = Prices(3.0, 15.0)
GPT5_CODEX = Prices(1.25, 10.0)


def claude_cost(fresh: int, read: int, write: int, out: int) -> float:
    """Sonnet prices: $3 in, $15 out; cache reads 0.1x, cache writes 1.25x the input price."""
    return (fresh * 3 + read * 0.3 + write * 3.75 + out * 15) / 1e6


def codex_cost(gross: int, cached: int, out: int) -> float:
    """gpt-5-codex prices: $1.25 in, $10 out; cached input 0.1x."""
    return ((gross - cached) * 1.25 + cached * 0.125 + out * 10) / 1e6


def without_result(lines: list[str]) -> list[str]:
    return [line for line in lines if json.loads(line)["type"] != "result"]


# -------------------------------------------------------------------------------- claude


def test_claude_success_takes_the_result_event_totals(recorded: Recorded) -> None:
    meter = meter_lines(recorded("claude_success"))
    usage = meter.usage(SONNET)
    # modelUsage counts the background haiku calls that never stream: 18 + 1342 uncached.
    assert usage.input_tokens == 18 + 1342 + 63341 + 7931
    assert usage.output_tokens == 2509 + 61
    assert (usage.cache_read_tokens, usage.cache_creation_tokens) == (63341, 7931)
    assert usage.cost_usd == pytest.approx(0.08807955)
    assert usage.cost_source == "reported"
    assert usage.turns == 5  # result.num_turns (the prompt counts as a turn in Claude Code 2.x)
    assert usage.tool_calls == 3  # Write, Write, Bash
    assert meter.reported_cost == pytest.approx(0.08807955)
    assert meter.result_event is not None and meter.result_event["subtype"] == "success"
    assert not meter.is_error and meter.errors == []
    assert (meter.garbage_lines, meter.unknown_events, meter.events) == (0, 0, 12)


def test_claude_usage_repeated_per_message_is_counted_once(recorded: Recorded) -> None:
    lines = without_result(recorded("claude_success"))
    # Message A arrives as three events, each repeating its usage (output 9, 9, then 412).
    naive_output = sum(
        json.loads(line)["message"]["usage"]["output_tokens"]
        for line in lines
        if json.loads(line)["type"] == "assistant"
    )
    usage = meter_lines(lines).usage(SONNET)
    assert naive_output == 2527
    assert usage.output_tokens == 412 + 1893 + 61 + 143 == 2509
    # Gross input: uncached + cache reads + cache writes of the four messages.
    assert usage.input_tokens == 18 + 63341 + 7931
    assert usage.cache_read_tokens == 11210 + 16330 + 16850 + 18951


def test_claude_without_result_event_prices_tokens(recorded: Recorded) -> None:
    meter = meter_lines(without_result(recorded("claude_success")))
    usage = meter.usage(SONNET)
    assert meter.result_event is None and meter.reported_cost is None
    assert usage.cost_source == "priced"
    assert usage.cost_usd == pytest.approx(claude_cost(18, 63341, 7931, 2509))
    assert usage.turns == 4  # distinct assistant message ids
    # Unknown prices: the cost is unknown, not zero.
    unknown = meter.usage(Prices())
    assert unknown.cost_usd is None and unknown.cost_source == "unknown"
    assert unknown.output_tokens == 2509


def test_claude_meter_prices_given_at_construction_are_the_default(recorded: Recorded) -> None:
    meter = ClaudeStreamMeter(3.0, 15.0)
    for line in without_result(recorded("claude_success")):
        meter.feed(line)
    assert meter.usage().cost_usd == pytest.approx(claude_cost(18, 63341, 7931, 2509))
    assert meter.usage(Prices(6.0, 30.0)).cost_usd == pytest.approx(
        2 * claude_cost(18, 63341, 7931, 2509)
    )


def test_claude_running_cost_grows_while_streaming(recorded: Recorded) -> None:
    meter = ClaudeStreamMeter()
    costs = []
    for line in recorded("claude_budget"):
        meter.feed(line)
        costs.append(meter.running_cost(SONNET))
    streamed = [c for c in costs[:-1] if c is not None]
    assert streamed == sorted(streamed) and streamed[-1] > 1.0
    # Known before the result arrives: after the first event of the third message.
    third = next(i for i, line in enumerate(recorded("claude_budget")) if "msg_0202" in line)
    assert costs[third] == pytest.approx(3 * 36765e-6 + 2700e-6)
    assert meter.usage().cost_source == "reported"


def test_claude_garbage_and_unknown_events_are_counted_not_fatal(recorded: Recorded) -> None:
    lines = recorded("claude_success")
    noisy = [
        "Welcome to Claude Code!",
        lines[0],
        "",
        "[1, 2, 3]",
        '{"type": "assistant", "message": "not a dict"}',
        '{"type": "brand_new_event", "data": 1}',
        *lines[1:6],
        '{"type": "assistant", "message": {"id": "m", "usage": {"output_tokens": "many"}}}',
        lines[6][: len(lines[6]) // 2],
    ]
    meter = meter_lines(noisy, "claude_stream_json")
    assert meter.garbage_lines == 3  # banner, JSON list, half line
    assert meter.unknown_events == 1
    assert meter.usage(SONNET).output_tokens == 412 + 1893  # "many" counts as 0


def test_claude_error_results_and_limits() -> None:
    max_turns = {
        "type": "result",
        "subtype": "error_max_turns",
        "is_error": True,
        "num_turns": 3,
        "errors": ["Reached maximum number of turns (2)"],
    }
    meter = meter_lines([json.dumps(max_turns)], "claude_stream_json")
    assert meter.is_error and meter.limit_hit == "max_turns"
    assert meter.errors == ["Reached maximum number of turns (2)"]
    api_error = {
        "type": "assistant",
        "error": "authentication_failed",
        "message": {
            "id": "m1",
            "content": [{"type": "text", "text": "Invalid API key · Please run /login"}],
            "usage": {"input_tokens": 0, "output_tokens": 0},
        },
        "session_id": "s",
    }
    failed = {"type": "result", "subtype": "success", "is_error": True, "result": "API Error"}
    meter = meter_lines([json.dumps(api_error), json.dumps(failed)], "claude_stream_json")
    assert meter.is_error and meter.limit_hit is None
    assert meter.errors[0].startswith("authentication_failed: Invalid API key")
    assert "API Error" in meter.errors


def test_subagent_messages_count_tokens_but_not_turns() -> None:
    def message(msg_id: str, parent: str | None, out: int) -> str:
        return json.dumps(
            {
                "type": "assistant",
                "message": {"id": msg_id, "content": [], "usage": {"output_tokens": out}},
                "parent_tool_use_id": parent,
                "session_id": "s",
            }
        )

    meter = meter_lines([message("a", None, 10), message("b", "toolu_1", 5)], "claude_stream_json")
    assert meter.turns == 1 and meter.usage().output_tokens == 15


# --------------------------------------------------------------------------------- codex


def test_codex_success(recorded: Recorded) -> None:
    meter = meter_lines(recorded("codex_success"))
    usage = meter.usage(GPT5_CODEX)
    # OpenAI's input_tokens already include the cached ones.
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens) == (
        48210,
        36864,
        5120,
    )
    assert usage.cost_usd == pytest.approx(codex_cost(48210, 36864, 5120))
    assert usage.cost_source == "priced"
    # command_execution x3 (one only completed, never started) + file_change.
    assert usage.tool_calls == 4
    assert usage.turns == 5  # four tool calls and one agent message
    assert not meter.is_error and meter.finished


def test_codex_turn_totals_are_running_totals_unless_they_shrink() -> None:
    def turn(inp: int, cached: int, out: int) -> str:
        usage = {"input_tokens": inp, "cached_input_tokens": cached, "output_tokens": out}
        return json.dumps({"type": "turn.completed", "usage": usage})

    running = meter_lines([turn(1000, 800, 100), turn(2500, 2000, 300)], "codex_jsonl")
    assert running.usage().input_tokens == 2500 and running.usage().output_tokens == 300
    per_turn = meter_lines([turn(1000, 800, 100), turn(700, 500, 50)], "codex_jsonl")
    assert per_turn.usage().input_tokens == 1700 and per_turn.usage().output_tokens == 150


def test_codex_session_log_totals_give_a_cost_before_the_turn_ends(recorded: Recorded) -> None:
    meter = CodexJsonMeter(1.25, 10.0)
    for line in recorded("codex_budget")[:20]:
        meter.feed(line)
    assert meter.usage().cost_usd is None  # nothing reported yet: unknown, not $0
    meter.feed_session_totals(
        {"input_tokens": 60000, "cached_input_tokens": 48000, "output_tokens": 6000}
    )
    assert meter.running_cost() == pytest.approx(codex_cost(60000, 48000, 6000))
    # An older (smaller) running total never lowers what was seen.
    meter.feed_session_totals({"input_tokens": 100, "cached_input_tokens": 0, "output_tokens": 1})
    assert meter.usage().input_tokens == 60000


def test_codex_errors() -> None:
    failed = [
        '{"type": "thread.started", "thread_id": "t"}',
        '{"type": "error", "message": "stream disconnected: retrying 1/5"}',
        '{"type": "turn.failed", "error": {"message": "model not found: gpt-9"}}',
    ]
    meter = meter_lines(failed)
    assert meter.is_error
    assert meter.errors == ["stream disconnected: retrying 1/5", "model not found: gpt-9"]
    # A transient error followed by a completed turn is not a failed run.
    recovered = [*failed[:2], '{"type": "turn.completed", "usage": {}}']
    assert not meter_lines(recovered).is_error


# ------------------------------------------------------------------------- formats, files


def test_detect_format(recorded: Recorded) -> None:
    assert detect_format(recorded("claude_success")) == "claude_stream_json"
    assert detect_format(recorded("codex_success")) == "codex_jsonl"
    assert detect_format(["hello", "not json", '{"type": "error", "message": "x"}']) == "unknown"
    assert detect_format([]) == "unknown"
    # A banner before the events does not hide them.
    assert detect_format(["Starting...", *recorded("codex_budget")]) == "codex_jsonl"


def test_auto_meter_replays_what_came_before_the_format_was_known(recorded: Recorded) -> None:
    meter = AutoMeter(3.0, 15.0)
    for line in ["agent v1 starting", *recorded("claude_success")]:
        meter.feed(line)
    assert meter.format == "claude_stream_json"
    assert meter.lines == 13 and meter.garbage_lines == 1
    assert meter.usage().cost_usd == pytest.approx(0.08807955)
    plain = AutoMeter()
    plain.feed("just text")
    assert plain.format == "unknown" and plain.usage().cost_usd is None
    # Plain text for long enough is plain text for good: events much later are not metered.
    for line in ["log line"] * 300 + recorded("claude_success"):
        plain.feed(line)
    assert plain.format == "unknown" and plain.lines == 313


def test_read_transcript_tolerates_a_line_cut_mid_character(
    tmp_path: Path, recorded: Recorded
) -> None:
    lines = recorded("claude_success")
    cut = json.dumps({"type": "result", "result": "Tetris – ünïcode"}, ensure_ascii=False)
    data = ("\n".join(lines[:-1]) + "\n" + cut).encode()
    data = data[: data.rindex("ü".encode()) + 1]  # ends inside a two-byte character
    path = tmp_path / "transcript.jsonl"
    path.write_bytes(data)
    read = read_transcript(path)
    assert read[:-1] == lines[:-1]
    meter = meter_lines(read)
    assert meter.garbage_lines == 1 and meter.result_event is None
    assert normalize_events(read)[-1].kind == "garbage"


# ---------------------------------------------------------------------------- event table


def test_normalized_claude_events(recorded: Recorded) -> None:
    events = normalize_events(recorded("claude_success"))
    assert [e.kind for e in events] == [
        "init",
        "thinking",
        "assistant_text",
        "tool_call",
        "tool_result",
        "tool_call",
        "tool_result",
        "tool_call",
        "tool_result",
        "unknown",  # rate_limit_event
        "assistant_text",
        "result",
    ]
    calls = [e for e in events if e.kind == "tool_call"]
    assert [(e.tool, e.tool_input) for e in calls] == [
        ("Write", "/home/bench/runs/demo.c0a1b2c3d4e5.r0/workspace/index.html"),
        ("Write", "/home/bench/runs/demo.c0a1b2c3d4e5.r0/workspace/game.js"),
        ("Bash", "node --check game.js && ls"),
    ]
    results = [e for e in events if e.kind == "tool_result"]
    assert [e.tool for e in results] == ["Write", "Write", "Bash"]  # linked by tool use id
    assert [e.ref for e in results] == [e.ref for e in calls]
    # One token count per model response, so the column sums to the output tokens.
    assert sum(e.tokens or 0 for e in events) == 2509
    assert sum(e.tokens is not None for e in events) == 4
    assert all(len(e.text) <= 500 for e in events)
    assert events[-1].text.startswith("Done: open index.html")


def test_normalized_codex_events(recorded: Recorded) -> None:
    events = normalize_events(recorded("codex_success"))
    calls = [e for e in events if e.kind == "tool_call"]
    results = [e for e in events if e.kind == "tool_result"]
    assert [e.tool for e in calls] == ["command_execution", "file_change"] + [
        "command_execution"
    ] * 2
    assert len(results) == 4 and [e.ref for e in results] == [e.ref for e in calls]
    assert [e.is_error for e in results] == [False, False, False, True]  # eslint exit 1
    assert "network unreachable" in results[-1].text
    assert calls[1].tool_input.startswith("add /home/bench/runs/")
    assert [e.kind for e in events if e.kind in ("thinking", "assistant_text", "result")] == [
        "thinking",
        "thinking",
        "assistant_text",
        "result",
    ]
    assert events[-1].tokens == 5120


def test_normalized_events_of_garbage_and_long_text() -> None:
    long_text = "x" * 5000
    line = json.dumps(
        {
            "type": "assistant",
            "message": {"id": "m", "content": [{"type": "text", "text": long_text}]},
            "session_id": "s",
        }
    )
    events = normalize_events(["oops", line, '{"type": "mystery"}'])
    assert [e.kind for e in events] == ["garbage", "assistant_text", "unknown"]
    assert len(events[1].text) == 500 and events[1].text.endswith("…")
    assert [e.index for e in events] == [0, 1, 2]


def test_tool_calls_carry_the_whole_command() -> None:
    """`tool_input` is a one-line summary; `command` keeps the command as the agent gave it
    (newlines included), cut only at COMMAND_CHARS, and `background` Claude's flag."""
    heredoc = "cat > game.js <<'EOF'\n" + "const x = 1;\n" * 40 + "EOF\nnpm test"
    huge = "echo " + "y" * COMMAND_CHARS

    def claude(tool_id: str, name: str, **tool_input: object) -> str:
        block = {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}
        message = {"id": tool_id, "content": [block]}
        return json.dumps({"type": "assistant", "message": message, "session_id": "s"})

    events = normalize_events(
        [
            claude("t1", "Bash", command=heredoc),
            claude("t2", "Bash", command="npx vite", run_in_background=True),
            claude("t3", "Bash", command="npx vite", run_in_background="yes"),
            claude("t4", "Read", file_path="/w/game.js"),
            claude("t5", "Bash", command=huge),
        ],
        "claude_stream_json",
    )
    assert [e.kind for e in events] == ["tool_call"] * 5
    assert events[0].command == heredoc and len(events[0].tool_input) == TOOL_INPUT_CHARS
    assert [e.background for e in events] == [False, True, False, False, False]
    assert events[3].command is None
    assert len(events[4].command or "") == COMMAND_CHARS and events[4].command.endswith("…")

    def codex(item_id: str, command: object) -> list[str]:
        item = {"id": item_id, "type": "command_execution", "command": command}
        done = {**item, "aggregated_output": "", "exit_code": 0, "status": "completed"}
        return [
            json.dumps({"type": "item.started", "item": item}),
            json.dumps({"type": "item.completed", "item": done}),
        ]

    lines = [
        *codex("i1", "bash -lc 'npm run build\nnpm test'"),
        *codex("i2", ["bash", "-lc", "npm test && echo it's done"]),
    ]
    change = {"id": "i3", "type": "file_change", "changes": [{"kind": "add", "path": "a.js"}]}
    lines.append(json.dumps({"type": "item.completed", "item": change}))
    events = normalize_events(lines, "codex_jsonl")
    calls = [e for e in events if e.kind == "tool_call"]
    assert [e.command for e in calls] == [
        "bash -lc 'npm run build\nnpm test'",
        "bash -lc 'npm test && echo it'\"'\"'s done'",
        None,
    ]
    assert not any(e.background for e in events)
    assert all(e.command is None for e in events if e.kind != "tool_call")


def test_absurd_numbers_are_recorded_not_counted() -> None:
    """1e30 tokens, negative or NaN counts, a negative cost: each is named with its line and
    counts nothing, so the running totals stay finite while the agent streams."""
    lines = [
        '{"type": "assistant", "session_id": "s", "message": {"id": "a", "content": [], '
        '"usage": {"input_tokens": 1e30, "output_tokens": 10}}}',
        '{"type": "assistant", "session_id": "s", "message": {"id": "b", "content": [], '
        '"usage": {"input_tokens": -3, "output_tokens": NaN}}}',
        '{"type": "result", "subtype": "success", "session_id": "s", "num_turns": 1e12, '
        '"total_cost_usd": -2.5, "usage": {"input_tokens": 7, "output_tokens": "NaN"}}',
    ]
    meter = meter_lines(lines)
    assert meter.invalid_numbers == [
        "line 1: input_tokens is 1e+30, outside the sane range 0 to 1e+11",
        "line 2: input_tokens is -3, outside the sane range 0 to 1e+11",
        "line 2: output_tokens is nan, not a finite number",
        "line 3: total_cost_usd is -2.5, outside the sane range 0 to 100000",
        "line 3: num_turns is 1000000000000.0, outside the sane range 0 to 1e+06",
        "line 3: output_tokens must be an integer, got 'NaN'",
    ]
    usage = meter.usage(Prices(3.0, 15.0))
    # The result event's totals win, with its unusable count as 0.
    assert (usage.input_tokens, usage.output_tokens, usage.turns) == (7, 0, 0)
    assert usage.cost_usd is not None and math.isfinite(usage.cost_usd)
    assert meter.summary()["invalid_numbers"] == meter.invalid_numbers


def test_codex_absurd_numbers_are_recorded() -> None:
    meter = meter_lines(
        [
            '{"type": "thread.started", "thread_id": "t"}',
            '{"type": "turn.completed", "usage": {"input_tokens": 1e30, "output_tokens": 5}}',
        ]
    )
    assert isinstance(meter, CodexJsonMeter)
    meter.feed_session_totals({"input_tokens": float("inf")})
    assert meter.invalid_numbers == [
        "line 2: input_tokens is 1e+30, outside the sane range 0 to 1e+11",
        "Codex session log: input_tokens is inf, not a finite number",
    ]
    assert meter.usage().input_tokens == 0

"""The normalized event table: Claude Code and Codex transcripts as one list of `TranscriptEvent`s.

Separate from the meters (`meters.py`) because it answers a different question: not what a run
spent but what the agent did (its messages, tool calls and their results), the same shape for
every vendor's format, for the quality analysis and the warehouse. It is built after the run
from the whole transcript, never while it streams.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from bench_pipeline.agents.transcript_format import (
    CLAUDE_EVENT_TYPES,
    CODEX_EVENT_TYPES,
    CODEX_TOOL_ITEMS,
    TranscriptFormat,
    _excerpt,
    _int,
    detect_format,
    parse_line,
)

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

TOOL_INPUT_CHARS = 160
# Linux refuses a single argument longer than 128 KiB (MAX_ARG_STRLEN) and both agents hand a
# command to the shell as one, so no command that ran is cut; the bound only stops a broken
# or hostile transcript from filling memory.
COMMAND_CHARS = 131_072


@dataclass
class TranscriptEvent:
    """One thing that happened in a run, the same shape for every agent format.

    One transcript line can give several events (a Claude message with text and a tool call);
    they share `index`, the 0-based line number. `tokens` is the output tokens of the model
    response the event belongs to, set on one event per response only, so the column sums
    to the run's output tokens. `ref` links a tool_result to its tool_call (tool use id /
    Codex item id).

    Two fields are set on tool_call events only, for the quality analysis, because
    `tool_input` is a one-line summary cut at `TOOL_INPUT_CHARS`: `command` is the call's
    whole command as the agent gave it (Claude's `command` input; Codex's command_execution
    command line, its `bash -lc '…'` wrapper kept, an argv list joined), cut only at
    `COMMAND_CHARS`, None for a call without one; `background` says the call was started
    detached (Claude's Bash `run_in_background`).
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
    command: str | None = None
    background: bool = False


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


def _full_command(value: Any) -> str | None:
    """A command as it was given (whitespace and newlines kept), cut at `COMMAND_CHARS`."""
    if not isinstance(value, str) or not value:
        return None
    return value if len(value) <= COMMAND_CHARS else value[: COMMAND_CHARS - 1] + "…"


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
            tool_input = block.get("input")
            arguments = tool_input if isinstance(tool_input, dict) else {}
            out.append(
                TranscriptEvent(
                    index,
                    "tool_call",
                    raw,
                    tool=name,
                    tool_input=_summarize_input(name, tool_input),
                    ref=block.get("id"),
                    command=_full_command(arguments.get("command")),
                    background=arguments.get("run_in_background") is True,
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


def _codex_command(item: dict[str, Any]) -> str | None:
    if item.get("type") != "command_execution":
        return None
    command = item.get("command")
    if isinstance(command, list):  # some versions send argv
        command = shlex.join(str(part) for part in command)
    return _full_command(command)


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
            out.append(
                TranscriptEvent(
                    index,
                    "tool_call",
                    raw,
                    tool,
                    tool_input,
                    ref=item_id,
                    command=_codex_command(item),
                )
            )
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

"""What a transcript line is: the formats, their event vocabularies, parsing and detection.

The ground both readers of a transcript stand on, the meters (`meters.py`) and the normalized
event table (`events.py`). It is a module of its own so that both can import it without
importing each other, and without the `transcripts` facade that re-exports them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any, Literal

from bench_pipeline.agents.bounds import MAX_TOKENS, number_problem

TranscriptFormat = Literal["claude_stream_json", "codex_jsonl", "unknown"]

TEXT_EXCERPT_CHARS = 500
# A format shows itself in the first lines (a banner at most before the first event).
DETECT_LINES = 200

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

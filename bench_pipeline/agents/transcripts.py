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

Where each part lives (this module re-exports the public names, so importers need only it):

- `transcript_format.py`: the formats, parsing one line, detecting the format;
- `meters.py`: the meters (usage, cost, turns, tool calls) and `meter_lines`;
- `events.py`: the normalized event table (`TranscriptEvent`, `normalize_events`).
"""

from __future__ import annotations

from pathlib import Path

from bench_pipeline.agents.events import EventKind, TranscriptEvent, normalize_events
from bench_pipeline.agents.meters import (
    AutoMeter,
    ClaudeStreamMeter,
    CodexJsonMeter,
    PlainTextMeter,
    Prices,
    UsageMeter,
    meter_lines,
    new_meter,
)
from bench_pipeline.agents.transcript_format import TranscriptFormat, detect_format, parse_line

__all__ = [
    "AutoMeter",
    "ClaudeStreamMeter",
    "CodexJsonMeter",
    "EventKind",
    "PlainTextMeter",
    "Prices",
    "TranscriptEvent",
    "TranscriptFormat",
    "UsageMeter",
    "detect_format",
    "meter_lines",
    "new_meter",
    "normalize_events",
    "parse_line",
    "read_transcript",
]


def read_transcript(path: Path) -> list[str]:
    """The lines of a transcript file, tolerating a final line cut off mid-way (or mid-UTF-8).

    The cut line is returned as it is; parsing counts it as garbage.
    """
    data = path.read_bytes()
    return data.decode("utf-8", errors="replace").splitlines()

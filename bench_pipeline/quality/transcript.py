"""Transcript analysis: what an agent spent its turns on, and whether it tested its own work.

Works on the normalized event table of `bench_pipeline.agents.transcripts`, so Claude Code
stream-json and Codex JSONL transcripts are judged by the same rules. Every rule is a small
function over the events, documented where it is defined; they are heuristics, meant to be
read next to the raw transcript, not a verdict.

Wasted turns (one label per event; the first classifier in `CLASSIFIERS` that claims an
event wins, so no event is counted twice):

- `reading_docs`: web searches and fetches, `curl`/`wget` of documentation pages, `man`,
  `--help`, and reading files under `node_modules`.
- `ascii_art`: an assistant message with a run of >= 5 lines that are mostly symbols.
- `blocking_dev_server`: a dev/static server started in the foreground (the call blocks
  until the tool's timeout), or one whose result says it timed out.
- `repeated_failures`: the same call failing again right after it failed (repeats only).

Nothing here raises on a bad transcript: a missing, empty or unrecognizable file gives a
report whose metrics are None with the reason in `unavailable`.
"""

from __future__ import annotations

import json
import re
import shlex
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from bench_pipeline.agents.transcripts import (
    TranscriptEvent,
    TranscriptFormat,
    detect_format,
    meter_lines,
    normalize_events,
    read_transcript,
)

# --------------------------------------------------------------------------------------------
# Tool calls, one per agent action, each paired with its result


@dataclass
class ToolCall:
    """One tool call and its outcome.

    `position` is the call's row in the event list (the row a wasted label goes on).
    `command` is the shell command of a Bash-like call, unwrapped from Codex's `bash -lc '…'`:
    the event's whole `command` when it has one (its `tool_input` is a truncated summary).
    """

    position: int
    tool: str  # canonical name: Claude's tool names; Codex items mapped onto them
    raw_tool: str
    input: str  # full input summary (command, path, URL, query)
    command: str | None = None
    background: bool = False  # Claude's Bash `run_in_background`
    failed: bool = False
    result_text: str = ""
    has_result: bool = False


# A Claude Bash result that failed says so in its text even when `is_error` is missing.
_EXIT_CODE = re.compile(r"^\s*(?:Error: )?Exit code (\d+)", re.IGNORECASE)
_SHELL_WRAPPER = re.compile(r"^(?:/\S*/)?(?:ba|z|da)?sh\s+-l?c\s+(.+)$", re.DOTALL)


def unwrap_shell(command: str) -> str:
    """`bash -lc 'npm test'` (how Codex reports its commands) as `npm test`."""
    text = command.strip()
    match = _SHELL_WRAPPER.match(text)
    if not match:
        return text
    inner = match.group(1).strip()
    try:
        parts = shlex.split(inner)
    except ValueError:
        # A truncated or unbalanced quote: drop the outer quote characters and keep the rest.
        return inner.strip("'\"")
    return parts[0] if len(parts) == 1 else inner


def _canonical_tool(raw: str, tool_input: str) -> str:
    """Codex items as the Claude tool doing the same thing; MCP tools of both as `mcp:<tool>`."""
    if raw == "command_execution":
        return "Bash"
    if raw == "file_change":
        # "add a, update b": only additions are Writes, anything touching an old file an Edit.
        kinds = {part.strip().split(" ", 1)[0] for part in tool_input.split(",") if part.strip()}
        return "Write" if kinds == {"add"} else "Edit"
    if raw == "web_search":
        return "WebSearch"
    if raw.startswith("mcp:"):  # Codex: mcp:<server>/<tool>
        return "mcp:" + raw[4:].split("/", 1)[-1]
    if raw.startswith("mcp__"):  # Claude: mcp__<server>__<tool>
        return "mcp:" + raw.split("__", 2)[-1]
    return raw


def _failed(result: TranscriptEvent) -> bool:
    if result.is_error:
        return True
    match = _EXIT_CODE.match(result.text)
    return bool(match and match.group(1) != "0")


def tool_calls(events: list[TranscriptEvent]) -> list[ToolCall]:
    """Every tool call in order, paired with its result (by tool use / item id)."""
    calls: list[ToolCall] = []
    by_ref: dict[str, ToolCall] = {}
    for position, event in enumerate(events):
        if event.kind == "tool_call":
            tool = _canonical_tool(event.tool or "?", event.tool_input)
            command = None
            if tool == "Bash":
                command = unwrap_shell(event.command or event.tool_input)
            call = ToolCall(
                position=position,
                tool=tool,
                raw_tool=event.tool or "?",
                input=command if command is not None else event.tool_input,
                command=command,
                background=event.background,
            )
            calls.append(call)
            if event.ref:
                by_ref[event.ref] = call
        elif event.kind == "tool_result":
            call = by_ref.get(event.ref or "")
            if call is None or call.has_result:
                continue
            call.has_result = True
            call.failed = _failed(event)
            call.result_text = event.text
    return calls


# --------------------------------------------------------------------------------------------
# Shell command parsing shared by the classifiers and the self-testing flags

# Split on `&&`, `||`, `;`, `|` and newlines; a lone `&` stays in its segment (it marks the
# segment as backgrounded).
_SEGMENT_SPLIT = re.compile(r"&&|\|\||;|\n|(?<![|>])\|(?!\|)")
_LONE_AMPERSAND = re.compile(r"(?<![&>])&(?![&>])")
_ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=\S*\s+")
# Wrappers in front of the real program: (pattern, effect) with effect "cap" (time-limited),
# "background" (detached) or None (transparent).
_WRAPPERS: tuple[tuple[re.Pattern[str], str | None], ...] = (
    (re.compile(r"^(?:g?timeout)\s+(?:-\S+\s+)*\d+[smhd]?\s+"), "cap"),
    (re.compile(r"^(?:nohup|setsid)\s+"), "background"),
    (re.compile(r"^(?:sudo|exec|env|command|time)\s+"), None),
    (re.compile(r"^(?:npx|bunx)\s+(?:(?:-y|--yes|--no-install|-p\s+\S+)\s+)*"), None),
    (re.compile(r"^(?:npm|pnpm)\s+exec\s+(?:--\s+)?"), None),
    (re.compile(r"^(?:pnpm|yarn)\s+dlx\s+"), None),
    (re.compile(r"^(?:\./)?node_modules/\.bin/"), None),
)


@dataclass(frozen=True)
class Segment:
    """One simple command of a shell line, wrappers stripped, with how it was run."""

    text: str  # the program and its arguments, e.g. "vite build"
    raw: str
    background: bool
    capped: bool


def segments(command: str) -> list[Segment]:
    out = []
    for part in _SEGMENT_SPLIT.split(command):
        raw = part.strip()
        text = raw.lstrip("( ").rstrip(") ")
        background = bool(_LONE_AMPERSAND.search(text))
        capped = False
        changed = True
        while changed:
            changed = False
            text = _ENV_ASSIGNMENT.sub("", text, count=1) if _ENV_ASSIGNMENT.match(text) else text
            for pattern, effect in _WRAPPERS:
                match = pattern.match(text)
                if match:
                    text = text[match.end() :]
                    capped = capped or effect == "cap"
                    background = background or effect == "background"
                    changed = True
        if text:
            out.append(Segment(text=text.strip(), raw=raw, background=background, capped=capped))
    return out


def _any_segment(command: str | None, pattern: re.Pattern[str]) -> bool:
    return command is not None and any(pattern.match(s.text) for s in segments(command))


# --------------------------------------------------------------------------------------------
# Wasted-turn classifiers. Each takes the events and the tool calls and returns the positions
# (rows of the event list) it labels.

Classifier = Callable[[list[TranscriptEvent], list[ToolCall]], set[int]]

# Sites whose pages are documentation or Q&A (a fetch of them is reading, not building).
DOC_HOSTS = (
    "developer.mozilla.org",
    "readthedocs.io",
    "readthedocs.org",
    "stackoverflow.com",
    "stackexchange.com",
    "w3schools.com",
    "wikipedia.org",
    "tetris.wiki",
    "tetris.fandom.com",
    "devdocs.io",
    "web.dev",
    "nodejs.org",
    "typescriptlang.org",
    "vitejs.dev",
    "vite.dev",
    "npmjs.com",
    "github.com",
    "playwright.dev",
    "pptr.dev",
)
_DOC_HOST_PREFIXES = ("docs.", "doc.", "developer.", "developers.", "wiki.")
_DOC_PATH = re.compile(
    r"/(?:docs?|api|reference|manual|guide|guides|wiki|tutorial)s?(?:/|$)|readme", re.I
)
_URL = re.compile(r"https?://[^\s'\"<>)]+", re.I)
_LOCAL_HOSTS = ("localhost", "127.0.0.1", "0.0.0.0", "::1", "[::1]")
_FETCHERS = re.compile(r"^(?:curl|wget|http|lynx|w3m)\b")
_MAN_OR_HELP = re.compile(r"^(?:man|info)\s+\S|.*\s--help\b")
_FILE_READERS = re.compile(r"^(?:cat|head|tail|less|more|sed|awk|grep|egrep|rg|bat|nl)\b")
_FILE_TOOLS = frozenset({"Read", "Grep", "Glob", "NotebookRead", "LS"})


def _is_local(url: str) -> bool:
    host = (urlparse(url).hostname or "").lower()
    return host in _LOCAL_HOSTS or host.startswith("127.")


def is_doc_url(url: str) -> bool:
    """A documentation page: a known docs/Q&A host, a docs.* host, or a docs-like path."""
    parsed = urlparse(url)
    host = (parsed.hostname or "").lower()
    if not host or _is_local(url):
        return False
    if host.startswith(_DOC_HOST_PREFIXES):
        return True
    if any(host == h or host.endswith("." + h) for h in DOC_HOSTS):
        return True
    return bool(_DOC_PATH.search(parsed.path))


def reads_docs(call: ToolCall) -> bool:
    """Reading documentation instead of building.

    - WebSearch (Codex web_search) always; WebFetch of anything but a local server (fetching
      localhost is testing the game, not reading);
    - a `curl`/`wget`-like command whose URL is a documentation page (`is_doc_url`);
    - `man X`, `info X`, `X --help`;
    - reading files under `node_modules` (Read/Grep/Glob there, or cat/head/grep/... of it).
    """
    if call.tool == "WebSearch":
        return True
    if call.tool == "WebFetch":
        urls = _URL.findall(call.input)
        return not urls or not all(_is_local(u) for u in urls)
    if call.tool in _FILE_TOOLS:
        return "node_modules" in call.input
    if call.command is None:
        return False
    for segment in segments(call.command):
        if _FETCHERS.match(segment.text) and any(is_doc_url(u) for u in _URL.findall(segment.text)):
            return True
        if _MAN_OR_HELP.match(segment.text):
            return True
        if _FILE_READERS.match(segment.text) and "node_modules" in segment.text:
            return True
    return False


def classify_reading_docs(events: list[TranscriptEvent], calls: list[ToolCall]) -> set[int]:
    return {c.position for c in calls if reads_docs(c)}


ART_MIN_LINES = 5
# A line is "art" when fewer than this share of its visible characters are letters/digits.
ART_MAX_ALNUM_SHARE = 0.3


def _art_line(line: str) -> bool:
    visible = [c for c in line if not c.isspace()]
    if len(visible) < 2 or set(visible) == {"`"}:  # a code fence marker is not a drawing
        return False
    alnum = sum(c.isalnum() for c in visible)
    return alnum / len(visible) < ART_MAX_ALNUM_SHARE


def has_ascii_art(text: str, min_lines: int = ART_MIN_LINES) -> bool:
    """A run of >= `min_lines` consecutive lines that are mostly symbols: box drawing
    (┌─┐│), a board drawn in `[#]`/`|..|`, banners of `=`/`*`. Code and prose are mostly
    letters; a markdown table has letters on every row but its separator."""
    run = 0
    for line in text.splitlines():
        run = run + 1 if _art_line(line) else 0
        if run >= min_lines:
            return True
    return False


def classify_ascii_art(events: list[TranscriptEvent], calls: list[ToolCall]) -> set[int]:
    """Assistant messages drawing ASCII art (output tokens spent on pictures, not code)."""
    return {i for i, e in enumerate(events) if e.kind == "assistant_text" and has_ascii_art(e.text)}


_SERVER = re.compile(
    r"""^(?:
        (?:npm|pnpm|yarn|bun)\s+(?:run\s+)?(?:dev|start|serve|preview)\b
      | vite(?:\s*$|\s+(?:dev|serve|preview)\b|\s+-)
      | python[\d.]*\s+-m\s+(?:http\.server|SimpleHTTPServer)\b
      | (?:serve|http-server|live-server|lite-server|browser-sync)\b
      | php\s+-S\b
    )""",
    re.X,
)
# `vite --help` prints and exits: not a server start.
_INFO_FLAG = re.compile(r"\s(?:--help|--version|-h|-v)(?:\s|$)")
_TIMED_OUT = re.compile(r"timed out|timeout|time limit exceeded", re.I)


def starts_server(command: str | None) -> bool:
    return _any_segment(command, _SERVER)


def blocks_on_server(call: ToolCall) -> bool:
    """A dev/static server run in the foreground: the shell call never returns, so the turn
    waits for the tool's timeout. Not blocking: `&`, `nohup`/`setsid`, a `timeout N` cap,
    Claude's `run_in_background`. Any server call whose result says it timed out blocked."""
    if call.command is None:
        return False
    servers = [
        s for s in segments(call.command) if _SERVER.match(s.text) and not _INFO_FLAG.search(s.text)
    ]
    if not servers:
        return False
    if call.has_result and _TIMED_OUT.search(call.result_text):
        return True
    if call.background:
        return False
    return any(not s.background and not s.capped for s in servers)


def classify_blocking_dev_server(events: list[TranscriptEvent], calls: list[ToolCall]) -> set[int]:
    return {c.position for c in calls if blocks_on_server(c)}


def _call_key(call: ToolCall) -> str:
    return f"{call.tool}\x00{' '.join(call.input.split())}"


def classify_repeated_failures(events: list[TranscriptEvent], calls: list[ToolCall]) -> set[int]:
    """The same call (tool and input) failing again right after it failed: in a run of n
    consecutive identical failing calls, the n-1 repeats are wasted (the first try was not:
    trying was reasonable, retrying unchanged was not). Failing = an error result or a
    non-zero exit code."""
    out: set[int] = set()
    previous: ToolCall | None = None
    for call in calls:
        if (
            call.failed
            and previous is not None
            and previous.failed
            and _call_key(call) == _call_key(previous)
        ):
            out.add(call.position)
        previous = call
    return out


CLASSIFIERS: dict[str, Classifier] = {
    "reading_docs": classify_reading_docs,
    "ascii_art": classify_ascii_art,
    "blocking_dev_server": classify_blocking_dev_server,
    "repeated_failures": classify_repeated_failures,
}


def wasted_labels(events: list[TranscriptEvent], calls: list[ToolCall]) -> dict[int, str]:
    """Event row -> classifier name; the first classifier (in CLASSIFIERS order) wins."""
    labels: dict[int, str] = {}
    for name, classify in CLASSIFIERS.items():
        for position in sorted(classify(events, calls)):
            labels.setdefault(position, name)
    return labels


# --------------------------------------------------------------------------------------------
# Self-testing

_TESTS = re.compile(
    r"""^(?:
        (?:npm|pnpm|yarn|bun)\s+(?:run\s+)?test\b
      | (?:vitest|jest|mocha|ava|pytest)\b
      | playwright\s+test\b
      | node\s+(?:\S+\s+)*?--test\b
      | python[\d.]*\s+-m\s+(?:pytest|unittest)\b
    )""",
    re.X,
)
# `node --check` and `tsc --noEmit` only compile; for a bundler-free browser game that is
# the build there is, so they count.
_BUILD = re.compile(
    r"""^(?:
        (?:npm|pnpm|yarn|bun)\s+(?:run\s+)?build\b
      | tsc\b
      | vite\s+build\b
      | (?:esbuild|webpack|rollup|parcel\s+build)\b
      | node\s+(?:-c|--check)\b
    )""",
    re.X,
)
_BROWSER = re.compile(
    r"\b(?:playwright|puppeteer|chromium(?:-browser)?|google-chrome(?:-stable)?|chrome|firefox"
    r"|headless|screenshot)\b",
    re.I,
)


# MCP tool names (mcp__playwright__browser_navigate, mcp:chrome-devtools/take_screenshot).
_BROWSER_TOOL = re.compile(r"browser|playwright|puppeteer|chrome|navigate|screenshot", re.I)


def ran_tests(calls: Iterable[ToolCall]) -> bool:
    """npm/yarn/pnpm test, vitest, jest, mocha, playwright test, node --test, pytest."""
    return any(_any_segment(c.command, _TESTS) for c in calls)


def ran_build(calls: Iterable[ToolCall]) -> bool:
    """npm run build, tsc, vite build, esbuild, webpack, rollup, parcel build, node --check."""
    return any(_any_segment(c.command, _BUILD) for c in calls)


def opened_browser(calls: Iterable[ToolCall]) -> bool:
    """A command naming a browser or a browser driver (playwright, puppeteer, chromium,
    chrome, firefox, headless) or taking a screenshot; or a browser MCP tool."""
    for call in calls:
        if call.command is not None and _BROWSER.search(call.command):
            return True
        if call.tool.startswith("mcp:") and _BROWSER_TOOL.search(call.raw_tool):
            return True
    return False


# --------------------------------------------------------------------------------------------
# The report


@dataclass
class TranscriptReport:
    """What one transcript says about how the agent worked. Metrics are None when the
    transcript could not be analyzed (`unavailable` says why), never a misleading zero."""

    format: TranscriptFormat = "unknown"
    events: int = 0  # normalized events, garbage lines excluded
    garbage_lines: int = 0
    turns: int | None = None
    tool_calls: int | None = None
    tool_breakdown: dict[str, int] = field(default_factory=dict)
    wasted_turns: int | None = None
    wasted_breakdown: dict[str, int] = field(default_factory=dict)
    productivity_ratio: float | None = None
    ran_tests: bool | None = None
    ran_build: bool | None = None
    opened_browser: bool | None = None
    self_tested: bool | None = None
    errors: int | None = None
    unavailable: str | None = None

    def to_record(self) -> dict[str, Any]:
        """Flat and JSON-able: the breakdowns as JSON text (their keys vary between runs)."""
        record = asdict(self)
        for key in ("tool_breakdown", "wasted_breakdown"):
            record[key] = json.dumps(record[key], sort_keys=True)
        return record


@dataclass
class _Analysis:
    lines: list[str]
    fmt: TranscriptFormat
    events: list[TranscriptEvent]
    calls: list[ToolCall]
    labels: dict[int, str]


def _load(path: Path) -> tuple[_Analysis | None, str | None]:
    try:
        lines = read_transcript(path)
    except FileNotFoundError:
        return None, f"transcript not found: {path}"
    except IsADirectoryError:
        return None, f"transcript path is a directory: {path}"
    except OSError as exc:
        return None, f"cannot read transcript {path}: {exc}"
    fmt = detect_format(lines)
    events = normalize_events(lines, fmt)
    calls = tool_calls(events)
    analysis = _Analysis(lines, fmt, events, calls, wasted_labels(events, calls))
    if not any(line.strip() for line in lines):
        return analysis, f"transcript is empty: {path}"
    if fmt == "unknown":
        first = next(line.strip() for line in lines if line.strip())[:120]
        return analysis, f"unknown transcript format ({len(lines)} lines); first line: {first!r}"
    return analysis, None


def analyze_transcript(path: Path) -> TranscriptReport:
    """The report of one transcript file. Never raises on a bad file."""
    path = Path(path)
    analysis, reason = _load(path)
    if analysis is None:
        return TranscriptReport(unavailable=reason)
    events, calls, labels = analysis.events, analysis.calls, analysis.labels
    garbage = sum(e.kind == "garbage" for e in events)
    report = TranscriptReport(
        format=analysis.fmt, events=len(events) - garbage, garbage_lines=garbage
    )
    if reason is not None:
        report.unavailable = reason
        return report
    report.turns = meter_lines(analysis.lines, analysis.fmt).turns
    report.tool_calls = len(calls)
    report.tool_breakdown = dict(sorted(Counter(c.tool for c in calls).items()))
    counts = Counter(labels.values())
    report.wasted_breakdown = {name: counts.get(name, 0) for name in CLASSIFIERS}
    report.wasted_turns = len(labels)
    if calls:
        useful = sum(1 for c in calls if c.position not in labels and not c.failed)
        report.productivity_ratio = round(useful / len(calls), 4)
    report.ran_tests = ran_tests(calls)
    report.ran_build = ran_build(calls)
    report.opened_browser = opened_browser(calls)
    report.self_tested = report.ran_tests or report.ran_build or report.opened_browser
    report.errors = sum(e.kind == "error" for e in events) + sum(c.failed for c in calls)
    return report


# Event fields the analysis reads but the warehouse rows leave out: a command can be a heredoc
# holding a whole source file, too big to keep for every call (`tool_input` has its summary).
_NOT_IN_TABLE = ("command", "background")


def events_table(path: Path) -> list[dict[str, Any]]:
    """The normalized events as warehouse rows, each with `wasted`: the classifier that
    labeled it, else None. `position` orders the rows (several events share a line `index`).
    A file that cannot be read gives no rows."""
    analysis, _ = _load(Path(path))
    if analysis is None:
        return []
    rows = []
    for position, event in enumerate(analysis.events):
        record = asdict(event)
        for name in _NOT_IN_TABLE:
            del record[name]
        rows.append({"position": position, **record, "wasted": analysis.labels.get(position)})
    return rows

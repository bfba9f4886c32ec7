"""The one observation log: everything the bot saw, timestamped, from which the verdicts
are derived and nothing else.

Both readers write here: the renderer reader (the field as the page shows it: one frame
per change, the numbers on the page, dialogs) and the state reader (the game's own board,
piece, score and game-over flag, re-read by reference: `state`). The players write what
they did (`actions`) and what each probe showed (`evidence`: per test, the renderer's
claim with the raw facts it rests on), and, once play ends, the facts of the play
(`facts`). `verdicts.judge(log)` is a pure function of this log: saved as
`observations.json` in the evidence, the same log is judged again offline by
`bench rejudge` in milliseconds, so a change to the verdict rules is checked on recorded
games without a browser.

Everything kept is bounded (`LIMITS`): a page that floods the console or changes every
frame for minutes fills the log up to the limits and is counted beyond them, with the
first and the last entries kept.
"""

from __future__ import annotations

import json
import math
import time
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

FORMAT_VERSION = 1


@dataclass(frozen=True)
class Limits:
    """How much of each kind of observation one log keeps (first half and last half of
    the limit when a page produces more; the total is counted)."""

    frames: int = 6000
    actions: int = 4000
    notes: int = 800
    console: int = 200  # console errors, page errors and ignored messages, each
    dialogs: int = 100
    numbers: int = 6000
    state_samples: int = 2000
    episodes: int = 400  # per test, in the probes' evidence
    text_chars: int = 300
    # Bytes of the saved files, whatever is inside them (a page's own state or texts that
    # are huge): past them the longest lists lose their middle, counted in `overflow`.
    log_bytes: int = 8 * 1024 * 1024  # observations.json
    console_bytes: int = 256 * 1024  # console.txt
    # Inside the page's own values kept in the log (its state, the probes' data): longer
    # strings are cut, longer lists keep their first and last halves, deeper nesting is cut.
    value_chars: int = 2000
    value_items: int = 400
    value_depth: int = 12


LIMITS = Limits()


@dataclass
class Frame:
    t: float  # seconds since the session started
    filled: np.ndarray  # (rows, cols) bool

    def key(self) -> bytes:
        return np.packbits(self.filled).tobytes()


class Episode(NamedTuple):
    """One thing a probe or the play showed about one test: the renderer reader's claim
    (`pass`/`fail`), its sentence, and the raw facts it rests on (keys, times, cells)."""

    t: float
    outcome: str
    detail: str
    data: dict[str, Any] | None = None


@dataclass
class Evidence:
    """Per test id, the episodes recorded for it, in order."""

    items: dict[str, list[Episode]] = field(default_factory=lambda: defaultdict(list))

    # Set by the log that holds this evidence: where episodes past the limit are counted.
    overflow: Overflow | None = None

    def add(
        self, t: float, test: str, outcome: str, detail: str, data: dict[str, Any] | None = None
    ) -> None:
        episodes = self.items[test]
        if len(episodes) >= LIMITS.episodes:
            # The first and the latest are what the verdicts read; the middle goes, counted.
            del episodes[LIMITS.episodes // 2]
            if self.overflow is not None:
                self.overflow.counts[f"evidence:{test}"] += 1
        episodes.append(Episode(round(t, 3), outcome, detail, data))

    def has(self, test: str, outcome: str) -> bool:
        return any(e.outcome == outcome for e in self.items.get(test, []))

    def judged(self, test: str) -> bool:
        """A PASS or FAIL was already recorded for `test`."""
        return self.has(test, "pass") or self.has(test, "fail")

    def first(self, test: str, outcome: str) -> str | None:
        return next((e.detail for e in self.items.get(test, []) if e.outcome == outcome), None)

    def episodes(self, test: str, outcome: str | None = None) -> list[Episode]:
        return [e for e in self.items.get(test, []) if outcome is None or e.outcome == outcome]


@dataclass
class FieldSeen:
    """The playfield the renderer reader settled on (BoardGeometry's facts)."""

    renderer: str
    x: float
    y: float
    width: float
    height: float
    cols: int
    rows: int
    locator: str
    by_shape: bool = False


@dataclass
class PlayFacts:
    """What the players did and saw, in the facts the verdicts need (set once play ends)."""

    start_mechanism: str | None = None
    started_at: float | None = None  # log time of the first piece
    controls: dict[str, str | None] = field(
        default_factory=lambda: dict.fromkeys(("left", "right", "down", "rotate", "hard_drop"))
    )
    loads: int = 1  # page loads it took to get a game that starts
    gravity_s_per_row: float | None = None
    locks: int = 0
    lock_times: list[float] = field(default_factory=list)
    rows_cleared: int = 0  # rows seen cleared, by the stack model or in the frames
    first_game_over_at: float | None = None
    top_out_began: float | None = None
    pauses: list[tuple[float, float]] = field(default_factory=list)  # game over -> restart


@dataclass
class Overflow:
    """How many entries of each kind went beyond the limits (kept: first and last)."""

    counts: dict[str, int] = field(default_factory=lambda: defaultdict(int))


class _Bounded(list):
    """A list that keeps its first `limit // 2` entries and a ring of the last ones, and
    counts what it dropped in between (the log of a flood stays small)."""

    def __init__(self, limit: int, name: str, overflow: Overflow) -> None:
        super().__init__()
        self.limit = max(2, limit)
        self.name = name
        self.overflow = overflow

    def append(self, item: Any) -> None:  # type: ignore[override]
        if len(self) >= self.limit:
            # Keep the head; drop the oldest of the tail.
            del self[self.limit // 2]
            self.overflow.counts[self.name] += 1
        super().append(item)


def _clip(text: str) -> str:
    return text[: LIMITS.text_chars]


def _finite(value: Any) -> Any:
    """JSON has no Infinity or NaN: such a number is kept as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


@dataclass
class ObservationLog:
    """Everything observed, timestamped: the only input of the verdicts."""

    t0: float = field(default_factory=time.monotonic)
    overflow: Overflow = field(default_factory=Overflow)
    frames: list[Frame] = field(default_factory=list)  # only frames that differ
    reads: list[float] = field(default_factory=list)  # every read's time (poll cadence)
    actions: list[tuple[float, str, str]] = field(default_factory=list)  # (t, key, purpose)
    notes: list[tuple[float, str]] = field(default_factory=list)
    console_errors: list[tuple[float, str]] = field(default_factory=list)
    page_errors: list[tuple[float, str]] = field(default_factory=list)
    ignored_console: list[tuple[float, str]] = field(default_factory=list)
    dialogs: list[tuple[float, str, str]] = field(default_factory=list)
    numbers: list[tuple[float, str, str, int]] = field(default_factory=list)  # (t, src, label, v)
    crashed_at: float | None = None
    frozen_at: float | None = None
    navigated_away_at: float | None = None
    # The page still answered but its screenshots kept timing out: the bot can no longer
    # see it. Not a fault of the game (a loaded machine, a stalled compositor): play ends,
    # and what was not observed yet stays INCONCLUSIVE.
    blind_at: float | None = None
    # The page flooded the console and the bot stopped listening to it then (evaluate.py):
    # console errors after this time were not heard.
    console_muted_at: float | None = None
    # Pages of the same site still to be followed before the game starts (a menu page
    # that opens the game's page); none once it started: a page leaving then is gone.
    follow_pages: int = 2
    # --- written by the players ----------------------------------------------------------
    evidence: Evidence = field(default_factory=Evidence)
    field_seen: FieldSeen | None = None
    facts: PlayFacts = field(default_factory=PlayFacts)
    # --- the evaluation's frame --------------------------------------------------------
    target: str = ""
    bot_version: str = ""  # the bot that observed (the rules that judge may be newer)
    duration_s: float = 0.0
    loaded: bool = False
    load_error: str | None = None
    endurance_s: float = 30.0
    # --- the state reader: what it found and its samples (t, sample) -------------------
    state: dict[str, Any] | None = None
    state_samples: list[tuple[float, dict[str, Any]]] = field(default_factory=list)
    blocked_requests: list[Any] = field(default_factory=list)

    def __post_init__(self) -> None:
        limits = {
            "frames": LIMITS.frames,
            "reads": LIMITS.frames * 2,
            "actions": LIMITS.actions,
            "notes": LIMITS.notes,
            "console_errors": LIMITS.console,
            "page_errors": LIMITS.console,
            "ignored_console": LIMITS.console,
            "dialogs": LIMITS.dialogs,
            "numbers": LIMITS.numbers,
            "state_samples": LIMITS.state_samples,
        }
        self.evidence.overflow = self.overflow
        for name, limit in limits.items():
            bounded = _Bounded(limit, name, self.overflow)
            for item in getattr(self, name):
                bounded.append(item)
            setattr(self, name, bounded)

    def now(self) -> float:
        return time.monotonic() - self.t0

    def note(self, text: str) -> None:
        self.notes.append((self.now(), _clip(text) if len(text) > 2000 else text))

    def read_intervals_ms(self) -> dict[str, float] | None:
        """Cadence of playfield reads: the bot reads continuously while it plays."""
        if len(self.reads) < 3:
            return None
        gaps = np.diff(np.array(self.reads)) * 1000
        return {
            "median": round(float(np.median(gaps)), 1),
            "p95": round(float(np.percentile(gaps, 95)), 1),
            "max": round(float(gaps.max()), 1),
        }

    # ---- JSON ---------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        r = _round
        return {
            "format": FORMAT_VERSION,
            "target": self.target,
            "bot_version": self.bot_version,
            "duration_s": round(self.duration_s, 2),
            "loaded": self.loaded,
            "load_error": self.load_error,
            "endurance_s": self.endurance_s,
            "field": asdict(self.field_seen) if self.field_seen else None,
            "facts": _facts_json(self.facts),
            "evidence": {
                test: [[e.t, e.outcome, e.detail, e.data] for e in episodes]
                for test, episodes in self.evidence.items.items()
            },
            "frames": [
                {"t": r(f.t), "grid": ["".join("#" if v else "." for v in row) for row in f.filled]}
                for f in self.frames
            ],
            "reads": [r(t) for t in self.reads],
            "read_interval_ms": self.read_intervals_ms(),
            "actions": [{"t": r(t), "key": k, "purpose": p} for t, k, p in self.actions],
            "notes": [{"t": r(t), "text": s} for t, s in self.notes],
            "console_errors": [{"t": r(t), "text": _clip(s)} for t, s in self.console_errors],
            "page_errors": [{"t": r(t), "text": _clip(s)} for t, s in self.page_errors],
            "ignored_console": [{"t": r(t), "text": _clip(s)} for t, s in self.ignored_console],
            "dialogs": [{"t": r(t), "type": k, "message": m} for t, k, m in self.dialogs],
            "numbers": [
                {"t": r(t), "source": s, "label": label, "value": _finite(v)}
                for t, s, label, v in self.numbers
            ],
            "crashed_at": self.crashed_at,
            "frozen_at": self.frozen_at,
            "navigated_away_at": self.navigated_away_at,
            "blind_at": self.blind_at,
            "console_muted_at": self.console_muted_at,
            "state": self.state,
            "state_samples": [[r(t), s] for t, s in self.state_samples],
            "blocked_requests": list(self.blocked_requests),
            "overflow": dict(self.overflow.counts),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ObservationLog:
        """The log as saved; a log of another format is refused with a ValueError."""
        if not isinstance(data, dict) or data.get("format") != FORMAT_VERSION:
            raise ValueError(
                f"not an observation log of format {FORMAT_VERSION} "
                f"(format: {data.get('format') if isinstance(data, dict) else type(data).__name__})"
            )
        log = cls(t0=0.0)
        log.target = str(data.get("target") or "")
        log.bot_version = str(data.get("bot_version") or "")
        log.duration_s = float(data.get("duration_s") or 0.0)
        log.loaded = bool(data.get("loaded"))
        log.load_error = data.get("load_error")
        log.endurance_s = float(data.get("endurance_s") or 30.0)
        if data.get("field"):
            log.field_seen = FieldSeen(**data["field"])
        log.facts = _facts_from_json(data.get("facts") or {})
        for test, episodes in (data.get("evidence") or {}).items():
            for t, outcome, detail, extra in episodes:
                log.evidence.add(t, test, outcome, detail, extra)
        for f in data.get("frames", []):
            grid = np.array([[ch == "#" for ch in row] for row in f["grid"]], dtype=bool)
            log.frames.append(Frame(f["t"], grid.reshape(len(f["grid"]), -1)))
        for t in data.get("reads", []):
            log.reads.append(t)
        for a in data.get("actions", []):
            log.actions.append((a["t"], a["key"], a["purpose"]))
        for n in data.get("notes", []):
            log.notes.append((n["t"], n["text"]))
        for name in ("console_errors", "page_errors", "ignored_console"):
            for item in data.get(name, []):
                getattr(log, name).append((item["t"], item["text"]))
        for d in data.get("dialogs", []):
            log.dialogs.append((d["t"], d["type"], d["message"]))
        for n in data.get("numbers", []):
            if n["value"] is not None:
                log.numbers.append((n["t"], n["source"], n["label"], n["value"]))
        for name in (
            "crashed_at",
            "frozen_at",
            "navigated_away_at",
            "blind_at",
            "console_muted_at",
        ):
            setattr(log, name, data.get(name))
        log.state = data.get("state")
        for t, sample in data.get("state_samples", []):
            log.state_samples.append((t, sample))
        log.blocked_requests = list(data.get("blocked_requests", []))
        for name, count in (data.get("overflow") or {}).items():
            log.overflow.counts[name] = int(count)
        return log

    def write(self, path: Path) -> None:
        path.write_text(self.bounded_json())

    def bounded_json(self, limit: int | None = None) -> str:
        """The log as compact JSON of at most `limit` bytes (`LIMITS.log_bytes`).

        Past the limit, the page's own values are cut to `value_*` first, then the list
        taking the most room loses its middle (first and last quarter kept) until the text
        fits; what went is counted in `overflow` under the list's name."""
        limit = LIMITS.log_bytes if limit is None else limit
        data = self.to_json()
        text = json.dumps(data, separators=(",", ":"))
        if len(text.encode()) <= limit:
            return text
        # Entry by entry: the lists themselves lose entries only below, where it is counted.
        for key in ("state_samples", "numbers", "notes", "dialogs"):
            data[key] = [_cut_value(item, 1) for item in data[key]]
        data["state"] = _cut_value(data["state"], 0)
        data["evidence"] = {
            str(test)[: LIMITS.value_chars]: [_cut_value(e, 1) for e in episodes]
            for test, episodes in data["evidence"].items()
        }
        overflow: dict[str, int] = dict(data["overflow"])
        while True:
            data["overflow"] = overflow
            text = json.dumps(data, separators=(",", ":"))
            if len(text.encode()) <= limit:
                return text
            name, items = _largest_list(data)
            if name is None or len(items) < 2:
                # Nothing left to halve: the frame of the log itself (never this big).
                return json.dumps({"format": FORMAT_VERSION, "overflow": overflow})
            keep = len(items) // 4
            dropped = len(items) - 2 * keep
            items[keep : len(items) - keep] = []
            overflow[name] = overflow.get(name, 0) + dropped

    @classmethod
    def read(cls, path: Path) -> ObservationLog:
        return cls.from_json(json.loads(path.read_text()))


def _cut_value(value: Any, depth: int) -> Any:
    """A page-given value made small: strings, lists and nesting cut to `LIMITS.value_*`."""
    if depth >= LIMITS.value_depth:
        return None
    if isinstance(value, str):
        return value[: LIMITS.value_chars]
    if isinstance(value, list):
        half = LIMITS.value_items // 2
        if len(value) > LIMITS.value_items:
            value = value[:half] + value[-half:]
        return [_cut_value(v, depth + 1) for v in value]
    if isinstance(value, dict):
        items = list(value.items())[: LIMITS.value_items]
        return {str(k)[: LIMITS.value_chars]: _cut_value(v, depth + 1) for k, v in items}
    return value


def _largest_list(data: dict[str, Any]) -> tuple[str | None, list[Any]]:
    """The list of the log's JSON that takes the most bytes (evidence counted per test)."""
    candidates: list[tuple[str, list[Any]]] = [
        (key, value) for key, value in data.items() if isinstance(value, list)
    ]
    for test, episodes in (data.get("evidence") or {}).items():
        if isinstance(episodes, list):
            candidates.append((f"evidence:{test}", episodes))
    best: tuple[str | None, list[Any]] = (None, [])
    best_size = -1
    for name, items in candidates:
        size = len(json.dumps(items, separators=(",", ":")))
        if size > best_size and len(items) >= 2:
            best, best_size = (name, items), size
    return best


def console_text(log: ObservationLog, limit: int | None = None) -> str:
    """console.txt: page errors, console errors and ignored messages, one line each, each
    kind bounded by `LIMITS.console` (first and last halves, with a line saying how many
    were dropped between them) and the whole by `limit` bytes (`LIMITS.console_bytes`)."""
    limit = LIMITS.console_bytes if limit is None else limit
    lines: list[str] = []
    kinds = (
        ("page_errors", "pageerror", log.page_errors),
        ("console_errors", "console.error", log.console_errors),
        ("ignored_console", "ignored", log.ignored_console),
    )
    for name, label, entries in kinds:
        dropped = log.overflow.counts.get(name, 0)
        for index, (t, text) in enumerate(entries):
            if dropped and index == len(entries) // 2 and len(entries) >= 2:
                lines.append(f"    ... {dropped} more {label} messages not kept")
            one_line = " ".join(str(text).split())[: LIMITS.text_chars]
            lines.append(f"{t:7.2f} {label} {one_line}")
    if log.console_muted_at is not None:
        lines.append(
            f"{log.console_muted_at:7.2f} the console flooded: the bot stopped listening here"
        )
    out: list[str] = []
    size = 0
    for line in lines:
        size += len(line.encode()) + 1
        if size > limit - 200:
            out.append(f"... cut at {limit} bytes: {len(lines) - len(out)} more lines not kept")
            break
        out.append(line)
    return "\n".join(out) + "\n"


def _round(t: float) -> float:
    return round(float(t), 3)


def _facts_json(facts: PlayFacts) -> dict[str, Any]:
    data = asdict(facts)
    data["pauses"] = [list(p) for p in facts.pauses]
    return data


def _facts_from_json(data: dict[str, Any]) -> PlayFacts:
    known = {f for f in PlayFacts.__dataclass_fields__}
    facts = PlayFacts(**{k: v for k, v in data.items() if k in known})
    facts.pauses = [(float(a), float(b)) for a, b in facts.pauses]
    return facts


# The name the bot's modules used before the log held everything.
EventLog = ObservationLog

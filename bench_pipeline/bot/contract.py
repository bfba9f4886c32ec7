"""The sixteen gameplay tests and the evaluation result (docs/bot.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

BOT_VERSION = "1.0.0"


class Verdict(StrEnum):
    PASS = "PASS"
    FAIL = "FAIL"
    INCONCLUSIVE = "INCONCLUSIVE"


# In the contract's order; each passes when...
TESTS: dict[str, str] = {
    "loads": "the page loads over http without a fatal error and a 10x20 playfield is located",
    "starts": "the game starts (automatically, via a button, or via a key) and a first piece appears",
    "gravity": "the active piece moves down with no input",
    "move_left": "a left input moves the active piece one or more columns left",
    "move_right": "a right input moves the active piece right",
    "soft_drop": "a down input moves the active piece down sooner than gravity alone would",
    "rotate": "a rotate input changes the shape/orientation of the active piece (O pieces skipped)",
    "hard_drop": "one input drops the active piece straight to its landing row at once",
    "walls": "repeated left/right inputs stop at the walls: the piece never leaves the 10 columns",
    "lock": "a landed piece stays fixed in place after the next piece appears",
    "spawn": "after a lock, a new piece appears near the top",
    "line_clear": "a completely filled row disappears and the rows above move down",
    "score": "a visible score (DOM text, SVG text or canvas-drawn digits) increases during play",
    "game_over": "when the stack reaches the top, the game ends: no more spawning and/or a "
    "game-over state is shown",
    "endurance": "30 seconds of continuous play: the page keeps responding and the playfield "
    "keeps changing; no crash or freeze",
    "no_errors": "no uncaught exception and no console.error from the page's scripts",
}
TEST_IDS: tuple[str, ...] = tuple(TESTS)
CONTROL_NAMES: tuple[str, ...] = ("left", "right", "down", "rotate", "hard_drop")


@dataclass
class TestResult:
    verdict: Verdict = Verdict.INCONCLUSIVE
    reason: str = "not observed"
    # What the verdict found its evidence in, where that is a fact of its own (the score's
    # source: `calibration.score_source`); not part of the contract's JSON.
    found: str | None = None


@dataclass
class Calibration:
    renderer: str = "none"  # canvas | dom | svg | none
    cols: int | None = None
    rows: int | None = None
    start: str | None = None  # auto | click:<selector or text> | key:<key>
    controls: dict[str, str | None] = field(default_factory=lambda: dict.fromkeys(CONTROL_NAMES))
    score_source: str | None = None
    board_rect: dict[str, float] | None = None  # CSS px in the page
    locator: str | None = None  # how the board was found

    def to_json(self) -> dict[str, Any]:
        grid = {"cols": self.cols, "rows": self.rows} if self.cols else None
        return {
            "renderer": self.renderer,
            "grid": grid,
            "start": self.start,
            "controls": dict(self.controls),
            "score_source": self.score_source,
            "board_rect": self.board_rect,
            "locator": self.locator,
        }


@dataclass
class Evaluation:
    target: str
    calibration: Calibration
    results: dict[str, TestResult]
    duration_s: float
    notes: list[str] = field(default_factory=list)
    bot_version: str = BOT_VERSION
    # How the browser was contained and what the page tried to reach (bot/contain.py).
    containment: dict[str, Any] | None = None

    @property
    def gameplay_score(self) -> float:
        passed = sum(1 for r in self.results.values() if r.verdict is Verdict.PASS)
        return round(100.0 * passed / len(TEST_IDS), 2)

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "bot_version": self.bot_version,
            "calibration": self.calibration.to_json(),
            "tests": {t: self.results[t].verdict.value for t in TEST_IDS},
            "reasons": {t: self.results[t].reason for t in TEST_IDS},
            "gameplay_score": self.gameplay_score,
            "duration_s": round(self.duration_s, 2),
            "notes": list(self.notes),
            "containment": self.containment,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Evaluation:
        """The evaluation `to_json` wrote (how an isolated evaluation's result comes back)."""
        cal = data.get("calibration") or {}
        grid = cal.get("grid") or {}
        calibration = Calibration(
            renderer=cal.get("renderer") or "none",
            cols=grid.get("cols"),
            rows=grid.get("rows"),
            start=cal.get("start"),
            controls=dict(cal.get("controls") or dict.fromkeys(CONTROL_NAMES)),
            score_source=cal.get("score_source"),
            board_rect=cal.get("board_rect"),
            locator=cal.get("locator"),
        )
        return cls(
            target=str(data.get("target", "")),
            calibration=calibration,
            results=result_from_json(data),
            duration_s=float(data.get("duration_s") or 0.0),
            notes=list(data.get("notes") or []),
            bot_version=str(data.get("bot_version") or BOT_VERSION),
            containment=data.get("containment"),
        )


def result_from_json(data: dict[str, Any]) -> dict[str, TestResult]:
    reasons = data.get("reasons", {})
    return {t: TestResult(Verdict(data["tests"][t]), reasons.get(t, "")) for t in TEST_IDS}


__all__ = [
    "BOT_VERSION",
    "CONTROL_NAMES",
    "TESTS",
    "TEST_IDS",
    "Calibration",
    "Evaluation",
    "TestResult",
    "Verdict",
]


def contract_start(mechanism: str | None) -> str | None:
    """The start mechanism in the contract's form (`auto`, `click:...`, `key:...`).

    A game started through a mode menu is recorded as `menu:<item>` or `menu:<item> then
    click:<button>`; the contract names only the last step (choosing the item is a click).
    The whole path stays in the evaluation's notes."""
    if mechanism is None or not mechanism.startswith("menu:"):
        return mechanism
    item, _, last = mechanism.removeprefix("menu:").partition(" then ")
    return last or f"click:{item}"

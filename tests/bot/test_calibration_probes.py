"""Calibration decisions that must not turn into wrong verdicts: a hard-drop key that could
not be tried is no FAIL, and a change on the page that brings no piece is no start.

Scripted bots stand in for the browser: each overrides only the moves the decision rests on.
"""

from __future__ import annotations

from types import SimpleNamespace

from bench_pipeline.bot import board as B
from bench_pipeline.bot.play import HARD_DROP_KEYS, Bot
from bench_pipeline.bot.session import EventLog

T_PIECE = {(0, 4), (1, 3), (1, 4), (1, 5)}


class CrowdedBot(Bot):
    """Every piece arrives with too little room below it to tell a hard drop."""

    def fresh_piece(self, timeout: float = 7.0) -> set[B.Cell]:
        return set(T_PIECE)

    def try_hard_drop(self, key: str, cells: set[B.Cell]) -> bool | None:
        self.tried.append(key)
        return None

    def drop_or_wait(self, cells: set[B.Cell], hurry: bool = False) -> None:
        self.set_aside += 1


class NoHardDropBot(CrowdedBot):
    """Every key is tried on a piece with room, and none drops it."""

    def try_hard_drop(self, key: str, cells: set[B.Cell]) -> bool | None:
        self.tried.append(key)
        return False

    def _check_not_paused(self, key: str) -> bool:
        return True


def _scripted(cls: type[CrowdedBot]) -> CrowdedBot:
    log = EventLog()
    session = SimpleNamespace(log=log, poll_numbers=lambda: None, geometry=object())
    bot = cls(session, endurance_s=30.0, deadline=1e12)  # type: ignore[arg-type]
    bot.tried, bot.set_aside = [], 0  # type: ignore[attr-defined]
    return bot


def test_keys_never_tried_on_a_piece_with_room_give_no_hard_drop_fail() -> None:
    bot = _scripted(CrowdedBot)
    bot.discover_hard_drop()
    assert not bot.evidence.has("hard_drop", "fail")
    assert bot.controls["hard_drop"] is None
    # Each key waited for up to three pieces, letting the crowded ones land in between.
    assert bot.tried.count(" ") == 3  # type: ignore[attr-defined]
    assert any("could not be tried" in note for _t, note in bot.log.notes)


def test_every_key_tried_and_none_dropping_is_a_hard_drop_fail() -> None:
    bot = _scripted(NoHardDropBot)
    bot.discover_hard_drop()
    assert bot.evidence.has("hard_drop", "fail")
    assert bot.tried == list(HARD_DROP_KEYS)  # type: ignore[attr-defined]


class LateTextBot(Bot):
    """A page whose field changes by itself once (a score drawn over it late) but runs no
    game until its start button is clicked."""

    def __init__(self) -> None:
        log = EventLog()
        session = SimpleNamespace(log=log, poll_numbers=lambda: None, geometry=object())
        super().__init__(session, endurance_s=30.0, deadline=1e12)  # type: ignore[arg-type]
        self.clicked = False
        self.attempts: list[bool] = []

    def _start_attempt(self, quick: bool, watch_auto: bool) -> bool:
        self.attempts.append(watch_auto)
        if watch_auto:
            # What the real attempt does when the change was three cells of text that
            # never fell: it takes the change for an auto-start and finds no piece.
            self.start_mechanism = "auto"
            self.evidence.add(
                self.log.now(), "starts", "fail", "the field changed but no piece appeared"
            )
            return False
        self.clicked = True
        self.start_mechanism = "click:New Game"
        self.started_at = self.log.now()
        self.evidence.add(self.started_at, "starts", "pass", f"first piece {sorted(T_PIECE)}")
        return True


def test_a_change_that_brings_no_piece_is_no_start_and_the_buttons_are_tried() -> None:
    bot = LateTextBot()
    assert bot._start_once()
    assert bot.attempts == [True, False]
    assert bot.clicked and bot.start_mechanism == "click:New Game"
    assert bot.evidence.has("starts", "pass") and not bot.evidence.has("starts", "fail")

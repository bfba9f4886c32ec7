"""Calibration decisions that must not turn into wrong verdicts: a hard-drop key that could
not be tried is no FAIL, and a change on the page that brings no piece is no start.

Scripted bots stand in for the browser: each overrides only the moves the decision rests on.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from bench_pipeline.bot import board as B
from bench_pipeline.bot import play
from bench_pipeline.bot.contract import Verdict
from bench_pipeline.bot.observations import EventLog, FieldSeen, Frame, ObservationLog, PlayFacts
from bench_pipeline.bot.play import HARD_DROP_KEYS, Bot
from bench_pipeline.bot.verdicts import endurance

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


class PausingGame:
    """A scripted game: gravity one row a second unless paused; Enter toggles the pause."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.paused = False
        self.row = 0.0
        self.presses: list[str] = []
        self.pause_key: str | None = "Enter"

    def advance(self, seconds: float) -> None:
        if not self.paused:
            self.row = (self.row + seconds) % 12  # a new piece spawns after 12 rows
        self.now += seconds

    def press(self, key: str, _purpose: str = "") -> None:
        self.presses.append(key)
        if key == self.pause_key:
            self.paused = not self.paused
        self.advance(0.1)


class PausingBot(Bot):
    def __init__(self, game: PausingGame) -> None:
        log = EventLog()
        session = SimpleNamespace(
            log=log,
            poll_numbers=lambda: None,
            geometry=object(),
            press=game.press,
            wait=game.advance,
        )
        super().__init__(session, endurance_s=30.0, deadline=1e12)  # type: ignore[arg-type]
        self.game = game
        self.gravity_s_per_row = 1.0

    def time_left(self) -> float:
        return 1e6

    def fresh_piece(self, timeout: float = 7.0) -> set[B.Cell]:
        return {(r + int(self.game.row), c) for r, c in T_PIECE}

    def read(self) -> SimpleNamespace:  # type: ignore[override]
        return SimpleNamespace()

    def active(self, frame: object) -> set[B.Cell]:
        return self.fresh_piece()

    def _falls(self, window: float) -> bool:
        self.game.advance(min(window, 1.0))
        return not self.game.paused


def test_a_piece_showing_up_after_an_empty_field_makes_no_key_a_pause_toggle(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The probed piece landed and the field stands empty until the next one spawns; it then
    # shows up whatever was pressed. Blamed on the key pressed again, that made ArrowUp, a
    # real game's rotate key, a "pause toggle" and the rotate verdict a FAIL.
    game = PausingGame()
    game.pause_key = None
    monkeypatch.setattr(play.time, "monotonic", lambda: game.now)
    bot = PausingBot(game)
    falls = iter([False, True])  # nothing fell (no piece), then the next piece came
    bot._falls = lambda window: next(falls)  # type: ignore[method-assign]
    bot.active = lambda frame: set()  # type: ignore[method-assign]
    assert bot._check_not_paused("ArrowUp")
    assert bot.pause_keys == set() and "ArrowUp" not in game.presses


def test_a_frozen_piece_that_falls_again_after_the_key_makes_it_a_pause_toggle(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    game = PausingGame()
    game.paused = True  # Enter was pressed as a probe and paused the game
    monkeypatch.setattr(play.time, "monotonic", lambda: game.now)
    bot = PausingBot(game)
    assert bot._toggle_back(["Enter"])
    assert bot.pause_keys == {"Enter"} and not game.paused and bot.pauses


def test_a_piece_at_the_top_is_lowered_once_before_its_rotation_is_judged() -> None:
    # An I piece lying in row 0 may not turn: its turned shape would reach above the field.
    game = PausingGame()
    bot = PausingBot(game)
    bot.controls["down"] = "ArrowDown"
    at_top = {(0, 3), (0, 4), (0, 5), (0, 6)}
    assert bot._lower_to_rotate(at_top, lowered=False)
    assert game.presses == ["ArrowDown", "ArrowDown"]
    assert not bot._lower_to_rotate(at_top, lowered=True)  # once only
    assert not bot._lower_to_rotate({(r + 3, c) for r, c in at_top}, lowered=False)
    bot.controls["down"] = None
    assert not bot._lower_to_rotate(at_top, lowered=False)  # nothing to lower it with


def _ended_at(game_over_at: float, top_out_began: float | None) -> ObservationLog:
    """The log of a 30 s window from t=1 whose field changed every half second until the
    game over (verdicts are a pure function of it)."""
    log = ObservationLog(t0=0.0, loaded=True, endurance_s=30.0)
    log.field_seen = FieldSeen("canvas", 0, 0, 300, 600, 10, 20, "test")
    log.facts = PlayFacts(
        started_at=1.0, first_game_over_at=game_over_at, top_out_began=top_out_began
    )
    log.evidence.add(2.0, "gravity", "pass", "fell")
    t = 1.0
    while t <= game_over_at:
        log.frames.append(Frame(t, np.zeros((20, 10), dtype=bool)))
        log.reads.append(t)
        t += 0.5
    log.reads.append(31.5)
    return log


def test_a_game_over_brought_about_by_the_top_out_ends_the_window_with_a_pass() -> None:
    # The top-out, timed to end with the window, ended the game 4 s before its end (the
    # game over is dated to the field's last change): the window was played out.
    assert endurance(_ended_at(27.0, top_out_began=22.0)).verdict is Verdict.PASS


def test_a_game_that_ended_early_in_play_and_was_not_restarted_is_inconclusive() -> None:
    assert endurance(_ended_at(15.0, top_out_began=None)).verdict is Verdict.INCONCLUSIVE
    assert endurance(_ended_at(15.0, top_out_began=22.0)).verdict is Verdict.INCONCLUSIVE


def _field(rows: list[str]) -> np.ndarray:
    return np.array([[ch == "#" for ch in row] for row in rows], dtype=bool)


def test_a_ghost_is_the_games_only_once_seen_in_two_places() -> None:
    # A T that landed unseen right under the next T looks exactly like that T's ghost:
    # taken for the game's ghost, it made every later landing and spawn go unseen
    # (hard_drop and spawn FAIL on a game that has both).
    bot = PausingBot(PausingGame())
    piece = {(0, 4), (1, 3), (1, 4), (1, 5)}
    known = np.zeros((20, 10), dtype=bool)
    under = _field(["." * 10] * 18 + ["....#.....", "...###...."])
    rest = bot._without_ghost(under, piece, known)
    assert not rest.any()  # not counted as stack meanwhile
    assert not bot.saw_ghost
    assert not bot._without_ghost(under, piece, known).any() and not bot.saw_ghost
    moved = {(r, c + 2) for r, c in piece}
    beside = _field(["." * 10] * 18 + ["......#...", ".....###.."])
    bot._without_ghost(beside, moved, known)
    assert bot.saw_ghost  # the same shape again under the piece, elsewhere: a ghost


class FieldBot(Bot):
    """Reads a field set by the test."""

    field: np.ndarray

    def read(self):  # type: ignore[override]
        return SimpleNamespace(t=self.log.now(), filled=self.field)


def test_a_restart_key_that_left_the_ended_game_on_screen_is_no_new_game() -> None:
    # A top-out left a stack with a loose group at the top; a restart key that did nothing
    # shows that same field, whose top cells look like a piece to a bot that forgot the
    # stack. Taking it for a new game had the rest of the window counted as a freeze.
    bot = _scripted(FieldBot)  # type: ignore[arg-type]
    ended = _field(["....##....", "....##....", "..........", "##.#######", "#########."])
    bot.field = ended.copy()  # type: ignore[attr-defined]
    top = {(0, 4), (0, 5), (1, 4), (1, 5)}
    assert not bot._new_game(ended, top)
    # The field was cleared and a piece came: a new game.
    bot.field = _field(["...###....", "....#.....", "..........", "..........", ".........."])  # type: ignore[attr-defined]
    assert bot._new_game(ended, {(0, 3), (0, 4), (0, 5), (1, 4)})
    # The field emptied at the game over, then a piece came where nothing was.
    empty = np.zeros_like(ended)
    bot.field = _field(["..........", "...##.....", "...##.....", "..........", ".........."])  # type: ignore[attr-defined]
    assert bot._new_game(empty, {(1, 3), (1, 4), (2, 3), (2, 4)})


def test_a_landing_gravity_could_have_made_is_no_hard_drop() -> None:
    # A game falling a row every 50 ms lands a piece 6 rows down between two reads by
    # itself: the key pressed before proves nothing. At 0.5 s a row it would have.
    bot = _scripted(CrowdedBot)
    bot.gravity_s_per_row = 0.05
    assert bot._gravity_could_land(6, 0.35)
    assert "no sign of a hard drop" in bot.log.notes[-1][1]
    bot.gravity_s_per_row = 0.5
    assert not bot._gravity_could_land(6, 0.35)
    bot.gravity_s_per_row = None  # not measured: no reason to doubt the key
    assert not bot._gravity_could_land(6, 0.35)

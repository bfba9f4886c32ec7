"""When the bot tops a game out: timed to end with the endurance window, not after it.

The schedule is pure logic over a clock, so it is checked with a fake clock and a bot whose
moves only advance it: no browser, and no wall-clock limit in the test."""

from __future__ import annotations

import time
from types import SimpleNamespace

import numpy as np
import pytest

from bench_pipeline.bot import play
from bench_pipeline.bot.play import EXTRA_PLAY_S, TOP_OUT_S, Bot
from bench_pipeline.bot.session import EventLog


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class ScriptedBot(Bot):
    """Each piece takes a second; a line is completed at the piece `clears_at` (never when
    None); a top-out takes `top_out_s` and ends in a game over when `ends_in_game_over`."""

    def __init__(
        self,
        clock: Clock,
        clears_at: int | None,
        ends_in_game_over: bool = True,
        deadline_s: float = 54.0,
    ):
        log = EventLog()
        session = SimpleNamespace(log=log, poll_numbers=lambda: None)
        super().__init__(session, endurance_s=30.0, deadline=clock.now + deadline_s)  # type: ignore[arg-type]
        self.clock = clock
        self.clears_at = clears_at
        self.ends_in_game_over = ends_in_game_over
        self.top_out_s = 4.0
        self.pieces = 0
        self.top_outs: list[tuple[float, float]] = []  # (log time, limit)
        self.restarts: list[float] = []
        self.ended_after: int | None = None  # the game ends after this many pieces
        self.waits_in_vain = 0
        self.controls["hard_drop"] = " "
        self.started_at = log.now()

    def stalled(self, seconds: float = 6.0) -> bool:
        return False

    def game_over_signal(self) -> str | None:
        return None

    def play_piece(self, topping_out: bool = False) -> bool:
        if self.pieces == self.ended_after and self.waits_in_vain < 2:
            self.waits_in_vain += 1
            self.clock.now += 2.5  # waited for a piece that did not come
            return False
        self.last_piece_at = self.log.now()
        self.clock.now += 1.0
        self.pieces += 1
        if self.clears_at is not None and self.pieces >= self.clears_at:
            self.lines_cleared = 1
        return True

    def _observe_until(self, end: float) -> None:
        self.clock.now = max(self.clock.now, end)  # watching the field, nothing played

    def top_out(self, limit: float = 14.0) -> None:
        self.top_outs.append((self.log.now(), limit))
        self.clock.now += min(self.top_out_s, limit, self.time_left())  # as the real one
        if self.ends_in_game_over:
            self.first_game_over_at = self.log.now()

    def restart(self) -> bool:
        self.restarts.append(self.log.now())
        self.clock.now += 1.0
        return True


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(time, "monotonic", fake)
    monkeypatch.setattr(play.time, "monotonic", fake)
    return fake


def test_the_top_out_ends_inside_the_window_and_the_window_is_played_out(clock: Clock) -> None:
    bot = ScriptedBot(clock, clears_at=5)
    window_end = bot.started_at + 30.0
    bot.play_window()
    assert len(bot.top_outs) == 1
    began, _limit = bot.top_outs[0]
    assert window_end - TOP_OUT_S <= began <= window_end - TOP_OUT_S + 1.0
    # The game ended with time left: restarted, the pause recorded, the window played out.
    assert len(bot.restarts) == 1
    assert bot.first_game_over_at is None
    (pause,) = bot.pauses
    assert pause[0] < began + bot.top_out_s <= pause[1]
    assert bot.log.now() >= window_end


def test_no_line_yet_plays_past_the_window_before_topping_out(clock: Clock) -> None:
    bot = ScriptedBot(clock, clears_at=None)
    window_end = bot.started_at + 30.0
    bot.play_window()
    began, limit = bot.top_outs[0]
    assert began >= window_end + EXTRA_PLAY_S - 1.0
    assert limit >= 13.0  # a top-out is never cut short of a game over
    assert bot.restarts == []  # past the window: nothing left to play out


def test_a_line_cleared_past_the_window_ends_the_extra_play(clock: Clock) -> None:
    bot = ScriptedBot(clock, clears_at=28)  # calibration took most of the window
    window_end = bot.started_at + 30.0
    bot.play_window()
    began, _limit = bot.top_outs[0]
    assert window_end - TOP_OUT_S <= began < window_end + 2.0


def test_a_top_out_with_no_game_over_still_plays_the_window_out(clock: Clock) -> None:
    bot = ScriptedBot(clock, clears_at=5, ends_in_game_over=False)
    bot.top_out_s = 2.0
    window_end = bot.started_at + 30.0
    bot.play_window()
    assert bot.restarts == []
    assert bot.log.now() >= window_end


def test_a_game_over_in_play_is_a_pause_from_the_last_piece_to_the_restart(clock: Clock) -> None:
    bot = ScriptedBot(clock, clears_at=3)
    bot.ended_after = 10  # no piece comes after the tenth: the game ended
    bot.play_window()
    first = bot.pauses[0]
    assert bot.restarts[0] == pytest.approx(bot.started_at + 10.0 + 5.0)  # two waits
    assert first[1] == pytest.approx(bot.restarts[0] + 1.0)
    # The tenth piece began 9 s into play: the pause starts half a second before it.
    assert first[0] == pytest.approx(bot.started_at + 9.0 - 0.5)


def test_a_game_without_a_hard_drop_also_plays_past_the_window_for_a_line(clock: Clock) -> None:
    # Leaving a soft-dropped top-out twice its (longer) budget left such games no extra
    # play at all: their calibration is the slowest, so they never completed a row.
    bot = ScriptedBot(clock, clears_at=None)
    bot.controls["hard_drop"] = None
    window_end = bot.started_at + 30.0
    bot.play_window()
    began, limit = bot.top_outs[0]
    assert began >= window_end + EXTRA_PLAY_S - 1.0
    assert limit >= 13.0 * play.SOFT_TOP_OUT  # and its top-out keeps its whole minimum


def test_no_piece_is_begun_that_would_end_after_the_window(clock: Clock) -> None:
    # A piece begun with less than a piece's time left ran past the window's end and
    # stretched every evaluation by a second or two: the field is watched instead.
    bot = ScriptedBot(clock, clears_at=1)
    start = clock.now
    assert bot._play_until(start + 5.5)
    assert bot.pieces == 5
    assert clock.now == pytest.approx(start + 5.5)


def test_a_late_start_shortens_the_top_out_not_the_budget(clock: Clock) -> None:
    # The game started 20 s into a 54 s budget (overlays, reloads): play, the extra play
    # for a line and a slow top-out all end by the deadline; the evaluation stays about a
    # minute long whatever the game does.
    bot = ScriptedBot(clock, clears_at=None, deadline_s=34.0)
    bot.top_out_s = 20.0  # a slow top-out: soft drops on a tall field
    bot.play_window()
    assert bot.top_outs, "the top-out was still tried"
    assert clock.now <= bot.deadline + 1e-6


def test_a_game_that_stopped_with_its_stack_at_the_top_ended_when_the_field_last_changed(
    clock: Clock,
) -> None:
    # No game-over words, no new piece: the bot takes two waits to tell (5 s here). With
    # the stack at the top, the game ended when its field last changed; those 5 s are the
    # bot's, not a freeze.
    bot = ScriptedBot(clock, clears_at=3)
    bot.ended_after = 6
    bot.stack_height = lambda: 19  # type: ignore[method-assign]
    bot.stack = np.zeros((20, 10), dtype=bool)
    last_change = bot.log.now() + 5.5
    bot.log.frames.append(SimpleNamespace(t=last_change))  # type: ignore[arg-type]
    bot.restart = lambda: False  # type: ignore[method-assign]
    bot._play_until(time.monotonic() + 20.0)
    assert bot.first_game_over_at == pytest.approx(last_change)

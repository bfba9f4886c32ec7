"""Phase 4 of the bot's play: the endurance window and the top-out.

Play pieces until the window's end (and a while past it when no row was completed yet),
top the game out timed to end with the window, tell a game over, and restart the game.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from bench_pipeline.bot import board as B
from bench_pipeline.bot.core import BotCore
from bench_pipeline.bot.timings import TIMINGS
from bench_pipeline.bot.words import GAME_OVER

EXTRA_PLAY_S = TIMINGS.extra_play_s
TOP_OUT_S = TIMINGS.top_out_s
TOP_OUT_MIN_S = TIMINGS.top_out_min_s
SOFT_TOP_OUT = TIMINGS.soft_top_out
FINISH_AFTER_WINDOW_S = TIMINGS.finish_after_window_s
# A dialog saying the game ended: the game-over words of words.json.
GAME_OVER_DIALOG = GAME_OVER


class EndurancePhase(BotCore):
    """Phase 4: the endurance window, the top-out and restarts."""

    def stack_height(self) -> int:
        if self.stack is None or not self.stack.any():
            return 0
        return self.stack.shape[0] - int(np.nonzero(self.stack.any(axis=1))[0].min())

    # ---- phase 4: endurance window and top-out ---------------------------------------
    def game_over_signal(self) -> str | None:
        """A visible game-over message or a game-over dialog, if any."""
        text = self.s.evaluate("window.__bench ? window.__bench.gameOverText() : null")
        if text:
            return str(text)
        for _t, _kind, message in self.log.dialogs:
            if GAME_OVER_DIALOG.search(message):
                return f"dialog:{message[:60]}"
        return None

    def field_static(self, seconds: float) -> bool:
        """True when nothing changes on the field for `seconds` (no piece spawns or falls)."""
        first = self.read().filled
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.s.wait(0.1)
            if not np.array_equal(self.read().filled, first):
                return False
        return True

    def restart(self) -> bool:
        """Start again after a game over: a start button, the start key, else a reload."""
        mechanism = self.start_mechanism or "auto"
        self.log.note(f"restarting (the game was started by {mechanism})")
        attempts: list[Callable[[], None]] = []
        self._dismiss_overlays()
        for button in self.s.evaluate("window.__bench.startButtons()", []) or []:
            attempts.append(lambda b=button: self._click(b["selector"]))
        if mechanism.startswith("key:"):
            key = mechanism.removeprefix("key:")
            attempts.append(lambda k=key: self.s.press(" " if k == "Space" else k, "restart"))
        attempts.append(lambda: self.s.press("Enter", "restart"))
        attempts.append(self._reload)
        ended = self.read().filled.copy()
        for attempt in attempts:
            attempt()
            self.s.wait(0.3)
            self.stack = self.empty()
            cells = self.wait_piece(1.5, need=3)
            if cells and self._new_game(ended, cells):
                self._resync(self.read())
                return True
        return False

    def _new_game(self, ended: np.ndarray, cells: set[B.Cell]) -> bool:
        """After a restart attempt: the field was cleared, or a piece is where the ended
        game's field had nothing. A few loose cells at the top of the ended game's own
        field are not a new game: a key that did not restart it leaves that field as it
        was, and taking it for a new game had the rest of the window counted as a freeze."""
        now = self.read().filled
        if now.shape != ended.shape:
            return True
        if int(ended.sum()) - int(now.sum()) >= 4:
            return True
        return any(not ended[r, c] for r, c in cells)

    def _click(self, selector: str) -> None:
        try:
            self.s.frame.click(selector, timeout=1500)
        except Exception as error:
            self.log.note(f"click failed: {str(error).splitlines()[0]}")
        self._unfocus()

    def _reload(self) -> None:
        """Games that start on load restart only by reloading: the page is the same game."""
        self.log.note("reloading the page to play again")
        try:
            self.s.page.reload(wait_until="load", timeout=10000)
            self.s.refind_frame()
        except Exception as error:
            self.log.note(f"reload failed: {str(error).splitlines()[0]}")
            return
        self.s.wait(0.4)
        self.s.evaluate("window.__bench && window.__bench.lockScroll()")
        if self.start_mechanism and self.start_mechanism.startswith("click:"):
            for button in self.s.evaluate("window.__bench.startButtons()", []) or []:
                self._click(button["selector"])
                break
        elif self.start_mechanism and self.start_mechanism.startswith("key:"):
            key = self.start_mechanism.removeprefix("key:")
            self.s.press(" " if key == "Space" else key, "start after reload")

    def play_window(self) -> None:
        """Play through the endurance window and top the game out at its end.

        The top-out is timed to end with the window (then the game is restarted if time
        is left), so that an evaluation lasts about the window rather than the window and
        a top-out after it. A game that completed no row yet is first played on past the
        window for a while (EXTRA_PLAY_S): calibrating a slow game's controls can take
        most of the window, and `line_clear` (and a score that counts only lines) needs
        some real play. Everything after the window ends by FINISH_AFTER_WINDOW_S."""
        assert self.started_at is not None
        window_end = self.log.t0 + self.started_at + self.endurance_s
        finish_by = min(window_end + FINISH_AFTER_WINDOW_S, self.deadline)
        budget = self.top_out_budget()
        if not self._play_until(window_end - budget):
            return
        if self.rows_cleared == 0 and not self.clears_broken:
            # Leave the top-out a hard-dropped one's minimum: a slow one still ends in a
            # game over (and is never cut below its minimum, below). Not a soft-dropped
            # one's: that left games without a hard drop, whose calibration is the
            # slowest, no extra play at all, and so no completed row.
            extra_end = min(window_end + EXTRA_PLAY_S, finish_by - TOP_OUT_MIN_S)
            if not self._play_until(extra_end, until_a_line=True):
                return
        self.s.poll_numbers()
        if self.evidence.judged("game_over"):
            # The game already ended in play (and was restarted): a second top-out would
            # judge game_over again on a game the bot's restart may have left in another
            # state (a reload, a key that is not the game's restart key).
            self.log.note("no top-out: game_over was already judged in play")
            self._play_until(window_end)
            return
        self.log.note(
            f"topping out ({budget:.0f}s budgeted, {window_end - time.monotonic():.1f}s of the window left)"
        )
        # A soft-dropped top-out can take 20 s: it is never cut shorter than its
        # minimum, so that game_over is still observed.
        least = TOP_OUT_MIN_S * budget / TOP_OUT_S
        self.top_out_began = self.log.now()
        self.topping_out = True
        try:
            self.top_out(max(finish_by - time.monotonic(), least))
        finally:
            self.topping_out = False
        self.s.poll_numbers()
        if time.monotonic() > window_end - 1.0:
            return
        # Time is left in the window (the game ended, or the top of the field was emptied
        # with no game over): start again if it ended, and play the window out, so that
        # endurance is judged on the whole window.
        if self.first_game_over_at is None or self._restart_after_game_over():
            self._play_until(window_end)

    def top_out_budget(self) -> float:
        """Seconds a top-out takes: dropping pieces on one column until the stack reaches
        the top, then watching the end."""
        return TOP_OUT_S if self.controls["hard_drop"] else TOP_OUT_S * SOFT_TOP_OUT

    def _restart_after_game_over(self) -> bool:
        """Restart a game that ended; from the last piece played (or the last change of the
        field, if earlier) to the restart is recorded as a game over, not a freeze."""
        over_at = self.first_game_over_at
        assert over_at is not None
        since = min(
            t
            for t in (
                over_at,
                self.last_piece_at,
                self.log.frames[-1].t if self.log.frames else None,
            )
            if t is not None
        )
        if not self.restart():
            self.log.note("the game could not be restarted")
            return False
        self.pauses.append((since - 0.5, self.log.now()))
        self.first_game_over_at = None
        return True

    def _play_until(self, end: float, until_a_line: bool = False) -> bool:
        """Play pieces with the heuristic until the monotonic time `end` (or, with
        `until_a_line`, until a row is completed). False when play cannot go on: the field
        no longer reacts, or the game ended and could not be restarted."""
        last_numbers = 0.0
        misses = 0
        while time.monotonic() < end and self.time_left() > 0:
            if until_a_line and (self.rows_cleared or self.clears_broken):
                return True
            if end - time.monotonic() < self._piece_seconds():
                # Too little time for another piece: a piece begun now would end after
                # `end` and stretch the evaluation. Watch the field until then.
                self._observe_until(end)
                return True
            if time.monotonic() - last_numbers > 1.0:
                self.s.poll_numbers()
                last_numbers = time.monotonic()
            if self.stalled():
                self.log.note("the field no longer reacts to input: stopping play")
                return False
            if self.play_piece():
                misses = 0
                continue
            misses += 1
            signal = self.game_over_signal()
            if signal or misses >= 2:
                if self.first_game_over_at is None:
                    # A stack at the top that stopped changing is a game that ended when
                    # the field last changed; the seconds the bot took to tell are no freeze.
                    high = self.stack is not None and self.stack_height() >= len(self.stack) - 4
                    last_change = self.log.frames[-1].t if self.log.frames else None
                    self._mark_over(last_change if high else None)
                self.log.note(f"play stopped before the window closed ({signal or 'no new piece'})")
                if signal and self.stack_height() >= self.empty().shape[0] - 4:
                    self.observe(
                        "game_over",
                        "pass",
                        f"stack reached the top and the game showed {signal}",
                    )
                if not self._restart_after_game_over():
                    return False
                misses = 0
        return True

    def _piece_seconds(self) -> float:
        """How long playing one piece has taken lately (the median of the last few)."""
        times = self.piece_seconds[-6:]
        return float(np.median(times)) if times else 1.0

    def _observe_until(self, end: float) -> None:
        while time.monotonic() < end - 0.05 and self.time_left() > 0:
            self.read()
            self.s.wait(min(0.1, max(0.0, end - time.monotonic())))

    def top_out(self, limit: float = 14.0) -> None:
        """Drop pieces without steering until the stack reaches the top, then watch the end."""
        rows = self.empty().shape[0]
        end = time.monotonic() + min(limit, self.time_left())
        peak = 0
        lines_before = self.rows_cleared
        while time.monotonic() < end and not self.stalled():
            signal = self.game_over_signal()
            height = self.stack_height()
            peak = max(peak, height)
            if peak >= rows - 6 and self._still_at_the_top():
                # Keys kept being pressed and nothing moved any more: no piece spawns (an
                # end panel over the field can look like cells that never fall).
                detail = f" and the game showed {signal}" if signal else ""
                self.observe(
                    "game_over",
                    "pass",
                    f"stack {peak}/{rows} high, then the field stopped changing{detail}",
                )
                self._mark_over(self.log.frames[-1].t if self.log.frames else None)
                return
            if signal and peak >= rows - 6:
                self.observe("game_over", "pass", f"stack {peak}/{rows} high, then {signal}")
                self._mark_over()
                return
            if not self.play_piece(topping_out=True):
                high = peak >= rows - 6
                if high and self.field_static(max(2.0, 4 * (self.gravity_s_per_row or 0.0))):
                    signal = self.game_over_signal()
                    detail = f" and the game showed {signal}" if signal else ""
                    self.observe(
                        "game_over",
                        "pass",
                        f"stack reached the top, pieces stopped spawning{detail}",
                    )
                    # The game ended when the field last changed, not when the bot had
                    # watched it stand still long enough to say so: that wait is no freeze.
                    self._mark_over(self.log.frames[-1].t if self.log.frames else None)
                    return
                continue
            wiped = self.stack_height() <= 3 and self.rows_cleared == lines_before
            if peak >= rows - 5 and wiped:
                if (signal := self.game_over_signal()) is not None:
                    self.observe("game_over", "pass", f"stack {peak}/{rows}, then {signal}")
                    self._mark_over()
                    return
                wiped_at = self.log.frames[-1].t if self.log.frames else self.log.now()
                if not self._play_goes_on():
                    # The field emptied and nothing came after: the game ended (a form
                    # for a name, a menu) without words the bot knows.
                    self.observe(
                        "game_over",
                        "pass",
                        f"stack {peak}/{rows}, then the field was emptied and no piece came",
                    )
                    self._mark_over(wiped_at)
                    return
                self.observe(
                    "game_over",
                    "fail",
                    "the field was emptied at the top and play went on with no game-over state",
                )
                return
        self.log.note(f"top-out ended with the stack {peak}/{rows} high")

    def _play_goes_on(self) -> bool:
        """After the field emptied at the top: does a new piece come and fall by itself?"""
        window = max(3.0, 4 * (self.gravity_s_per_row or 0.5))
        if len(self.wait_piece(window)) != 4:
            return False
        if self._falls(max(1.5, 2.5 * (self.gravity_s_per_row or 0.5))):
            return True
        if not self.evidence.has("gravity", "fail"):
            return False
        # A game without gravity (judged under `gravity`) goes on when the new piece
        # answers the movement keys: waiting for it to fall would call every wipe an end.
        for key in (self.controls["down"], self.controls["left"], self.controls["right"]):
            if not key:
                continue
            before = self.active(self.read())
            after = self.active(self.press_and_read(key, "does the new piece answer a key?"))
            if len(before) == 4 and len(after) == 4 and after != before:
                return True
        return False

    def _still_at_the_top(self) -> bool:
        """The field has not changed for a while (four gravity rows, at least 2.5 s)
        although keys were pressed meanwhile."""
        if not self.log.frames:
            return False
        last_change = self.log.frames[-1].t
        still = max(2.5, 4 * (self.gravity_s_per_row or 0.0))
        presses = sum(1 for t, _k, _p in self.log.actions if t > last_change + 0.3)
        return self.log.now() - last_change >= still and presses >= 2

    def stalled(self, seconds: float = 6.0) -> bool:
        """The field has not changed for `seconds` although keys were pressed meanwhile."""
        if not self.log.frames:
            return False
        last_change = self.log.frames[-1].t
        if self.log.now() - last_change <= seconds:
            return False
        if self._resume():
            return False
        if sum(1 for t, _k, _p in self.log.actions if t > last_change + 0.5) < 3:
            self.nudge()  # make sure it is the game that does not react, not the bot idling
        return sum(1 for t, _k, _p in self.log.actions if t > last_change + 0.5) >= 3

    def nudge(self) -> None:
        """Press the movement keys once each and read: a living game shows something."""
        for key in (self.controls["left"], self.controls["right"], self.controls["down"]):
            if key:
                self.press_and_read(key, "is the game still alive?", 0.1)

    def game_over_before_gone(self) -> None:
        """The page stopped answering (a loop of dialogs at the end, say) right after a
        game-over dialog while the stack was at the top: that was the game over."""
        if self.evidence.judged("game_over"):
            return
        frame = self.last_frame
        if frame is None or not frame.filled.any():
            return
        rows = frame.filled.shape[0]
        height = rows - int(np.nonzero(frame.filled.any(axis=1))[0].min())
        if max(height, self.stack_height()) < rows - 4:
            return
        for t, _kind, message in self.log.dialogs:
            if t >= frame.t - 3.0 and GAME_OVER_DIALOG.search(message):
                self.observe(
                    "game_over",
                    "pass",
                    f"stack {height}/{rows} high, then dialog:{message[:60]!r} "
                    "(and the page stopped answering)",
                    at=t,
                )
                self._mark_over()
                return

    def _mark_over(self, at: float | None = None) -> None:
        if self.first_game_over_at is None:
            self.first_game_over_at = self.log.now() if at is None else at

"""Phase 2 of the bot's play, control discovery: the soft drop and the hard drop.

A key tried as a soft drop may turn out to be a hard drop, and one tried as a hard drop
may turn the piece (then it is the rotate key).
"""

from __future__ import annotations

import time

import numpy as np

from bench_pipeline.bot import board as B
from bench_pipeline.bot.core import BotCore
from bench_pipeline.bot.session import Frame

DOWN_KEYS = ("ArrowDown", "s", "k", "j", " ", "w")  # Space: more often a hard drop; W: rare
HARD_DROP_KEYS = (" ", "ArrowUp", "w", "Enter", "i", "Shift")
HARD_DROP_TRIES = 3  # pieces a hard-drop key is tried on before it is left untried


class DropDiscovery(BotCore):
    """Phase 2: the soft drop and the hard drop."""

    def discover_soft_drop(self) -> None:
        for key in self.keys.to_try(DOWN_KEYS, "down"):
            if key in self.controls.values() or key in self.pause_keys:
                continue
            cells = self.fresh_piece()
            if not cells:
                return
            top = min(r for r, _ in cells)
            t0 = time.monotonic()
            if self.controls["hard_drop"] is None and self._drops_at_once(key, cells):
                # One press put the piece on its landing cells: the game's down key is a
                # hard drop (the lock may follow later). Soft drop is another key.
                self.controls["hard_drop"] = key
                continue
            pressed_from = self.log.now()
            for _ in range(2):
                self.s.press(key, "try soft drop")
                self.s.wait(0.04)
            self.s.wait(0.06)
            elapsed = time.monotonic() - t0
            after = self.active(self.read())
            shift = self._shift(cells, after)
            if shift and shift[0] >= 1:
                by_gravity = elapsed / self.gravity_s_per_row if self.gravity_s_per_row else 0.0
                if shift[0] >= by_gravity + 1:
                    self.controls["down"] = key
                    self.observe(
                        "soft_drop",
                        "pass",
                        f"{key!r}: {shift[0]} rows in {elapsed:.2f}s (gravity: {by_gravity:.1f})",
                        key=key,
                        since=pressed_from,
                        before=cells,
                        after=after,
                        rows=shift[0],
                        by_gravity=by_gravity,
                    )
                    return
            elif after and min(r for r, _ in after) < top:
                continue  # a new piece: this key dropped it all the way (a hard drop)
            self._check_not_paused(key)
            if key not in self.pause_keys:
                if self._held_drop(key):
                    return
                # Two taps of a pause toggle leave the game running; one held press
                # pauses it.
                self._check_not_paused(key)
        self.observe(
            "soft_drop",
            "fail",
            "no key moved the piece down faster than gravity" + self._not_probed(DOWN_KEYS),
        )

    def _held_drop(self, key: str, hold_s: float = 0.45) -> bool:
        """Hold `key` down for a moment: some games drop faster only while it is held
        (they read the key's state on their own tick, and a tap falls between ticks)."""
        start = self.active(self.read())
        if len(start) != 4 or self._room(start) < 4:
            return False
        t0 = time.monotonic()
        held_from = self.log.now()
        self.s.key_down(key, "try soft drop")
        try:
            self.s.wait(hold_s)
            after = self.active(self.read())
        finally:
            self.s.key_up(key)
        elapsed = time.monotonic() - t0
        shift = self._shift(start, after)
        by_gravity = elapsed / self.gravity_s_per_row if self.gravity_s_per_row else 0.0
        if not (shift and shift[0] >= by_gravity + 2):
            return False
        self.controls["down"] = key
        self.down_held = True
        self.observe(
            "soft_drop",
            "pass",
            f"{key!r} held down: {shift[0]} rows in {elapsed:.2f}s (gravity: {by_gravity:.1f})",
            key=key,
            since=held_from,
            before=start,
            after=after,
            rows=shift[0],
            by_gravity=by_gravity,
        )
        return True

    def _drops_at_once(self, key: str, cells: set[B.Cell]) -> bool:
        """Press `key` once: True (and the hard drop recorded) when the piece is then on
        its predicted landing cells; a soft drop moves it a row or so."""
        self.sync_stack(cells)
        assert self.stack is not None
        landing = B.drop(self.stack, cells)
        rows = min(r for r, _ in landing) - min(r for r, _ in cells)
        merged = self.stack | B.mask_of(landing, self.stack.shape)
        cleared, n = B.clear_full_rows(merged)

        def landed(frame: Frame) -> bool:
            return self._landed_at_once(frame, cells, rows, merged, cleared if n else None)

        if rows < 4:
            self.s.press(key, "try soft drop")
            self.s.wait(0.04)
            return False
        # Read for a moment: the piece may glide down in an animation.
        t0 = time.monotonic()
        if not landed(self.press_until(key, "try soft drop", landed, timeout=0.3)):
            return False
        if self._gravity_could_land(rows, time.monotonic() - t0):
            return False
        self.observe(
            "hard_drop",
            "pass",
            f"{key!r} dropped the piece {rows} rows at once (tried as a soft drop)",
            key=key,
            before=cells,
            after=landing,
            rows=rows,
        )
        self.after_landing(landing)
        return True

    def discover_hard_drop(self) -> None:
        if self.controls["hard_drop"] is not None:
            return  # the down key turned out to be a hard drop
        untried: list[str] = []
        # A key the game's handlers use for a move down, or for something their code did
        # not show, and not yet taken for another control may be its hard drop (ArrowDown
        # drops to the floor in some games).
        downs = tuple(
            k
            for k, role in self.handler_keys.items()
            if role in ("down", "hard_drop", None) and k not in HARD_DROP_KEYS
        )
        for key in self.keys.to_try(HARD_DROP_KEYS + downs, "hard_drop"):
            if (
                key
                in (
                    self.controls["left"],
                    self.controls["right"],
                    self.controls["rotate"],
                    self.controls["down"],
                )
                or key in self.pause_keys
            ):
                continue
            tried = None
            for _ in range(HARD_DROP_TRIES):
                cells = self.fresh_piece()
                if not cells:
                    return
                tried = self.try_hard_drop(key, self._steer_for_probe(cells))
                if tried is not None:
                    break
                # Too close to the stack to tell a hard drop from a soft one: let this
                # piece land and try the key on the next one.
                self.drop_or_wait(cells)
            if tried is None:
                untried.append(key)
                continue
            if tried:
                self.controls["hard_drop"] = key
                return
            self._check_not_paused(key)
        if untried:
            # A key never pressed on a piece with room to fall says nothing: no FAIL.
            self.log.note(f"hard drop: {untried} could not be tried (no piece with room below it)")
            return
        self.observe(
            "hard_drop",
            "fail",
            "no key dropped a piece to its landing row at once" + self._not_probed(HARD_DROP_KEYS),
        )

    def try_hard_drop(self, key: str, cells: set[B.Cell]) -> bool | None:
        """True when `key` put the piece on its landing cells at once, False when it did
        not, None when the piece had too little room below it to tell."""
        self.sync_stack(cells)
        assert self.stack is not None
        landing = B.drop(self.stack, cells)
        rows = min(r for r, _ in landing) - min(r for r, _ in cells)
        if rows < 3:
            return None  # too close to the floor to tell a hard drop from a soft one
        merged = self.stack | B.mask_of(landing, self.stack.shape)
        cleared, n = B.clear_full_rows(merged)

        def landed(frame: Frame) -> bool:
            return self._landed_at_once(frame, cells, rows, merged, cleared if n else None)

        t0 = time.monotonic()
        frame = self.press_until(key, "try hard drop", landed, timeout=0.35)
        if landed(frame):
            if self._gravity_could_land(rows, time.monotonic() - t0):
                return None  # the piece falls so fast that gravity alone got it there
            self.observe(
                "hard_drop",
                "pass",
                f"{key!r} dropped the piece {rows} rows at once",
                key=key,
                before=cells,
                after=landing,
                rows=rows,
            )
            self.after_landing(landing)
            return True
        self._turned_by(key, cells, frame, "pressed while probing for a hard drop")
        return False

    def _gravity_could_land(self, rows: int, elapsed: float) -> bool:
        """Gravity alone moves the piece `rows` rows within `elapsed` s (a game that drops a
        row every 50 ms): its landing then shows no hard drop."""
        per_row = self.gravity_s_per_row
        if not per_row or rows * per_row > elapsed:
            return False
        self.log.note(
            f"the piece landed {rows} rows lower within {elapsed:.2f}s, but gravity alone "
            f"falls a row every {per_row:.2f}s: no sign of a hard drop"
        )
        return True

    def _landed_at_once(
        self,
        frame: Frame,
        cells: set[B.Cell],
        rows: int,
        merged: np.ndarray,
        cleared: np.ndarray | None,
    ) -> bool:
        """The piece is on its landing cells (maybe with the next piece at the top, maybe
        where the old one was), or the rows it completed are already gone; and the piece
        is not simply where it was or a little lower. A ghost drawn as solid cells sits on
        the landing cells before any key is pressed: it must not pass for the piece."""
        if not (
            self._matches(frame, merged, ghost_first=False)
            or (cleared is not None and self._matches(frame, cleared, ghost_first=False))
        ):
            return False
        shift = self._shift(cells, self.active(frame))
        return not (shift is not None and shift[1] == 0 and 0 <= shift[0] < rows)

    def _turned_by(self, key: str, cells: set[B.Cell], frame: Frame, how: str) -> None:
        """A probe key for another control that turned the piece where it was is the
        rotate key (Space rotates in some games, and is tried as a hard drop first)."""
        if self.controls["rotate"] is not None or key in self.controls.values():
            return
        after = self.active(frame)
        shift = self._shift(cells, after)
        if (
            len(after) == 4
            and B.identify(cells) not in (None, "O")
            and B.identify(after) == B.identify(cells)
            and B.normalize(after) != B.normalize(cells)
            and shift is None
            and abs(min(r for r, _ in after) - min(r for r, _ in cells)) <= 2
        ):
            self.controls["rotate"] = key
            self.observe(
                "rotate",
                "pass",
                f"{key!r} turned a {B.identify(cells)} piece ({how})",
                key=key,
                before=cells,
                after=after,
            )

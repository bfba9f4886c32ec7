"""The bot's play: start the game, discover controls, play with the heuristic, top out.

Every phase records what it saw in the observation log (observations.py): the frames and
keys, and per test the episodes its probes showed; once play ends `record_facts` adds the
facts of the play. `verdicts.judge` turns that log, and nothing else, into verdicts. A
phase that cannot go on (the page is gone, time is up) stops; what was observed so far
still counts.

`Bot` is put together from one mixin per phase: the state and the reads of the field in
core.py, the start in start.py, control discovery in controls.py and drops.py, the
endurance window and the top-out in endurance.py. This module holds phase 3, playing a
piece (steering it, dropping it, following its landing and the model of the stack), and
re-exports the names other code imports from here.
"""

from __future__ import annotations

import time

import numpy as np

from bench_pipeline.bot import board as B
from bench_pipeline.bot.controls import (
    GRAVITY_WATCH_S,
    LEFT_KEYS,
    RIGHT_KEYS,
    ROTATE_KEYS,
    WALL_TURNS,
    ControlDiscovery,
)
from bench_pipeline.bot.core import AFTER_KEY_S, SPAWN_ROWS, faint_piece
from bench_pipeline.bot.drops import DOWN_KEYS, HARD_DROP_KEYS, HARD_DROP_TRIES, DropDiscovery
from bench_pipeline.bot.endurance import (
    EXTRA_PLAY_S,
    FINISH_AFTER_WINDOW_S,
    GAME_OVER_DIALOG,
    SOFT_TOP_OUT,
    TOP_OUT_MIN_S,
    TOP_OUT_S,
    EndurancePhase,
)
from bench_pipeline.bot.observations import Evidence, FieldSeen, Frame, PlayFacts
from bench_pipeline.bot.start import (
    AUTO_WATCH_S,
    MAX_LOADS,
    MAX_VIEWPORT_HEIGHT,
    OVERLAY_SHARE,
    PLAYER_NAME,
    QUICK_WATCH_S,
    START_KEYS,
    START_WATCH_S,
    StartPhase,
)

__all__ = [
    "AFTER_KEY_S",
    "AUTO_WATCH_S",
    "DOWN_KEYS",
    "EXTRA_PLAY_S",
    "FINISH_AFTER_WINDOW_S",
    "GAME_OVER_DIALOG",
    "GRAVITY_WATCH_S",
    "HARD_DROP_KEYS",
    "HARD_DROP_TRIES",
    "LEFT_KEYS",
    "MAX_LOADS",
    "MAX_VIEWPORT_HEIGHT",
    "OVERLAY_SHARE",
    "PLAYER_NAME",
    "QUICK_WATCH_S",
    "RIGHT_KEYS",
    "ROTATE_KEYS",
    "SOFT_PRESSES_MAX",
    "SOFT_TOP_OUT",
    "SPAWN_ROWS",
    "START_KEYS",
    "START_WATCH_S",
    "TOP_OUT_MIN_S",
    "TOP_OUT_S",
    "WALL_TURNS",
    "Bot",
    "Evidence",
    "faint_piece",
]

SOFT_PRESSES_MAX = 8  # soft-drop presses a read, while the piece has that many rows to fall


class Bot(EndurancePhase, DropDiscovery, ControlDiscovery, StartPhase):
    """The gameplay bot: every phase's mixin, and phase 3 (playing pieces) here."""

    def record_facts(self) -> None:
        """Write the facts of the play into the observation log, once play has ended: the
        verdicts read them there, never from the bot."""
        g = self.s.geometry
        if g is not None:
            self.log.field_seen = FieldSeen(
                g.renderer, g.x, g.y, g.width, g.height, g.cols, g.rows, g.locator, g.by_shape
            )
        self.log.facts = PlayFacts(
            start_mechanism=self.start_mechanism,
            started_at=self.started_at,
            controls=dict(self.controls),
            loads=self.loads,
            gravity_s_per_row=self.gravity_s_per_row,
            locks=self.locks,
            lock_times=list(self.lock_times),
            rows_cleared=self.rows_cleared,
            first_game_over_at=self.first_game_over_at,
            top_out_began=self.top_out_began,
            pauses=list(self.pauses),
        )

    # ---- phase 3: play ---------------------------------------------------------------
    def _matches(self, frame: Frame, expected: np.ndarray, ghost_first: bool = True) -> bool:
        """The frame is `expected` plus at most one new piece near the top (and that
        piece's ghost, where a game draws it as solid cells). Without `ghost_first`, a new
        piece whose ghost is not drawn yet will do: the caller knows the old piece left."""
        missing = expected & ~frame.filled
        if missing.any():
            return False
        extra = frame.filled & ~expected
        rows = np.nonzero(extra)[0]
        if extra.sum() <= 4 and (rows.size == 0 or rows.max() < SPAWN_ROWS + 2):
            # Where ghosts are solid, the piece still falling above its own ghost looks
            # like a landed piece and a new one: a new piece shows its ghost too, unless
            # it is already where it would land.
            if not self.saw_ghost or not ghost_first or not extra.any():
                return True
            piece = B.cells_of(extra)
            return B.drop(expected, piece) == piece
        if extra.sum() > 8:
            return False
        pieces = [
            g for g in B.components(extra) if len(g) == 4 and min(r for r, _ in g) < SPAWN_ROWS
        ]
        if not pieces:
            return False
        piece = min(pieces, key=lambda g: min(r for r, _ in g))
        rest = frame.filled & ~B.mask_of(piece, extra.shape)
        ghost = B.ghost_of(rest, piece, extra & rest)
        return ghost is not None and int(extra.sum()) == 8

    def _without_ghost(self, rest: np.ndarray, piece: set[B.Cell], known: np.ndarray) -> np.ndarray:
        """`rest` (the field without the falling piece) without that piece's ghost, when it
        is drawn as solid cells: only cells not in the `known` stack can be the ghost."""
        if len(piece) != 4:
            return rest
        ghost = B.ghost_of(rest, piece, rest & ~known)
        if ghost is None:
            return rest
        if not self.saw_ghost:
            # A piece that landed unseen right under the next one of its kind (probes drop
            # pieces where they spawn) looks exactly like a ghost once: a ghost is only
            # taken as the game's when seen in two places, as it moves with its piece.
            self.ghost_places.add(frozenset(ghost))
            if len(self.ghost_places) >= 2:
                self.saw_ghost = True
                self.log.note(
                    f"the piece's ghost is drawn as solid cells at {sorted(ghost)}: not stack"
                )
        return rest & ~B.mask_of(ghost, rest.shape)

    def after_landing(self, landed: set[B.Cell], wait: float = 2.0) -> None:
        """After a piece was dropped: follow lock, line clears and the next spawn."""
        assert self.stack is not None
        if self.topping_out:
            # Nothing is judged on a top-out's pieces but the end: the next piece is
            # watched for briefly, not as long as a landing that may show a clear.
            wait = min(wait, 0.8)
        merged = self.stack | B.mask_of(landed, self.stack.shape)
        # Only rows this piece completed are expected to clear: rows a broken game left
        # full before are part of its stack now.
        new_full = merged.all(axis=1) & ~self.stack.all(axis=1)
        n = int(new_full.sum())
        cleared = np.vstack([np.zeros((n, merged.shape[1]), dtype=bool), merged[~new_full]])
        end = time.monotonic() + wait
        landed_at = self.log.now()
        outcome: str | None = None  # "cleared" | "kept" (full rows still there) | "placed"
        frame = self.last_frame
        while time.monotonic() < end and self.time_left() > 0:
            frame = self.read()
            if n and self._spawned(frame, cleared):
                outcome = "cleared"
                break
            if self._spawned(frame, merged):
                outcome = "kept" if n else "placed"
                if not n or self.clears_broken:
                    break
                # Full rows still on screen: a clear animation, or no clear at all. Watch on.
            self.s.wait(0.05)
        self.locks += 1
        self.lock_times.append(self.log.now())
        if frame is None or outcome is None:
            if frame is not None:
                self._resync(frame)
            return
        new = frame.filled & ~(cleared if outcome == "cleared" else merged)
        rows = np.nonzero(new)[0]
        self.observe(
            "spawn",
            "pass",
            f"new piece in rows {rows.min()}-{rows.max()}",
            since=landed_at,
            landed=landed,
            new_rows=[int(rows.min()), int(rows.max())],
        )
        if outcome == "cleared":
            self.lines_cleared += n
            self.observe(
                "line_clear",
                "pass",
                f"{n} full row(s) vanished and the rows above moved down",
                since=landed_at,
                rows=n,
                full_rows=[int(r) for r in np.nonzero(new_full)[0]],
            )
        elif outcome == "kept" and not self.clears_broken:
            self.clears_broken = True
            self.observe(
                "line_clear",
                "fail",
                f"{n} full row(s) still there {wait:.1f}s after the piece completed them",
                since=landed_at,
                rows=n,
                full_rows=[int(r) for r in np.nonzero(new_full)[0]],
            )
        self.stack = cleared if outcome == "cleared" else merged
        if len(self.evidence.items.get("lock", [])) < 3:
            # Lock: the landed cells are still there a moment after the next piece appeared.
            settle = time.monotonic() + 0.25
            later = self.read()
            while time.monotonic() < settle:
                self.s.wait(0.04)
                later = self.read()
            still = outcome == "cleared" or all(later.filled[r, c] for r, c in landed if r >= 0)
            if not still and later.filled.sum() < 0.5 * self.stack.sum():
                # Most of the stack went with it: the field was wiped (a game over that
                # restarts at once), which says nothing about this piece's lock.
                self.log.note("the field was wiped just after a landing: lock not judged")
                return
            self.observe(
                "lock",
                "pass" if still else "fail",
                "landed piece stayed in place after the next piece appeared"
                if still
                else "landed piece moved or vanished after the next piece appeared",
                since=landed_at,
                landed=landed,
            )

    def _spawned(self, frame: Frame, expected: np.ndarray) -> bool:
        """`expected` is on screen and a new piece has appeared near the top."""
        return self._matches(frame, expected) and bool((frame.filled & ~expected).any())

    def _resync(self, frame: Frame) -> None:
        """Our model of the stack disagrees with the field: rebuild it from what is seen."""
        filled = frame.filled.copy()
        groups = B.components(filled)
        top_piece = [g for g in groups if len(g) <= 4 and min(r for r, _ in g) < SPAWN_ROWS]
        for group in top_piece[:1]:
            for r, c in group:
                filled[r, c] = False
            known = self.stack if self.stack is not None else np.zeros_like(filled)
            filled = self._without_ghost(filled, group, known)
        self.stack = filled
        self.log.note("resynchronised the stack with the field")

    def drop_or_wait(self, cells: set[B.Cell], hurry: bool = False) -> None:
        if self.controls["hard_drop"]:
            self.drop_piece(cells)
        else:
            self.wait_piece_lands(cells, presses=4 if hurry else 2)

    def drop_piece(self, cells: set[B.Cell]) -> None:
        self.sync_stack(cells)
        assert self.stack is not None
        landing = B.drop(self.stack, cells)
        self.s.press(self.controls["hard_drop"] or " ", "hard drop")
        self.s.wait(0.05)
        self.after_landing(landing)

    def wait_piece_lands(self, cells: set[B.Cell], limit: float = 8.0, presses: int = 2) -> None:
        """No hard drop: soft-drop (or let gravity do it) until the piece lands."""
        assert self.stack is not None
        if not (self.controls["down"] or self.gravity_s_per_row):
            return  # no gravity and no down key: this piece will never land
        end = time.monotonic() + limit
        landing = B.drop(self.stack, cells)
        stuck_after = max(1.2, 2.5 * (self.gravity_s_per_row or 0.0))
        held = self.down_held and self.controls["down"]
        if held:
            self.s.key_down(held, "soft drop")
        try:
            landing = self._follow_fall(
                cells, landing, end, stuck_after, presses=0 if held else presses
            )
        finally:
            if held:
                self.s.key_up(held)
        self.after_landing(landing, wait=max(2.0, 2.5 * (self.gravity_s_per_row or 0.5)))

    def _follow_fall(
        self,
        cells: set[B.Cell],
        landing: set[B.Cell],
        end: float,
        stuck_after: float,
        presses: int,
    ) -> set[B.Cell]:
        """Read until the piece reaches its landing cells, soft-dropping it with `presses`
        presses a read; returns where it landed."""
        assert self.stack is not None
        current = cells
        last_move = time.monotonic()
        while time.monotonic() < end and self.time_left() > 0:
            if time.monotonic() - last_move > stuck_after:
                break  # it no longer moves: landed and waiting to lock, or the game is over
            if presses and self.controls["down"]:
                # Two presses a read in play, or as many as the piece has rows to fall but
                # one: more could push the next piece down before it is seen. Topping out
                # judges nothing on the pieces: it hurries.
                rows_left = min(r for r, _ in landing) - min(r for r, _ in current)
                count = max(presses, min(rows_left - 1, SOFT_PRESSES_MAX))
                if self.topping_out:
                    count = max(presses, rows_left + 2)  # where the next one goes is no matter
                for _ in range(count):
                    self.s.press(self.controls["down"], "soft drop")
                    self.s.wait(0.02)
            frame = self.read()
            now = self.active(frame)
            if now == landing or (
                len(now) == 4 and min(r for r, _ in now) < min(r for r, _ in current) - 2
            ):
                break
            if all(frame.filled[r, c] for r, c in landing) and not (set(now) - landing):
                break
            if len(now) == 4:
                if now != current:
                    last_move = time.monotonic()
                current = now
                landing = B.drop(self.stack, now)
            self.s.wait(0.05)
        return landing

    def steer(self, cells: set[B.Cell], target: B.Placement) -> set[B.Cell]:
        if self.controls["rotate"] and B.normalize(cells) != target.shape:
            for _ in range(3):
                now = self.active(self.press_and_read(self.controls["rotate"], "rotate"))
                if len(now) == 4:
                    cells = now
                if B.normalize(cells) == target.shape:
                    break
        for _ in range(3):
            dx = target.left - min(c for _, c in cells)
            key = self.controls["right"] if dx > 0 else self.controls["left"]
            if dx == 0 or key is None:
                break
            for i in range(abs(dx)):
                self.s.press(key, "move")
                if i % 2:
                    self.read()  # keep the reads flowing during long moves
            self.s.wait(0.04)
            now = self.active(self.read())
            if len(now) == 4:
                cells = now
        return cells

    def sync_stack(self, cells: set[B.Cell]) -> None:
        """The stack is what the field shows minus the falling piece: a model that drifted
        (a piece we did not see land, a clear we missed) is corrected at every piece."""
        if self.last_frame is not None:
            filled = self.last_frame.filled
            rest = filled & ~B.mask_of(cells, filled.shape)
            known = self.stack if self.stack is not None else np.zeros_like(filled)
            self.stack = self._without_ghost(rest, set(cells), known)

    def play_piece(self, topping_out: bool = False) -> bool:
        began = self.log.now()
        played = self._play_piece(topping_out)
        self.scan_clears()
        if played:
            self.last_piece_at = began
            if not topping_out:
                self.piece_seconds.append(self.log.now() - began)
        return played

    @property
    def rows_cleared(self) -> int:
        """Rows cleared as far as the bot can tell, by its model or in the frames."""
        return max(self.lines_cleared, self.clears_seen)

    def scan_clears(self) -> None:
        """Look through the frames recorded since the last scan for a row clear.

        The model of the stack follows the bot's own pieces: a landing it did not follow
        (a ghost taken for the piece, a pause, a piece it never saw land) leaves it unable
        to say that a row cleared, although the screen showed it. The recorded frames
        show it regardless: a full row gone and the rows above moved down."""
        frames = self.log.frames
        start = self.started_at if self.started_at is not None else float("inf")
        for i in range(max(self._clears_scanned, 1) - 1, len(frames) - 1):
            before = frames[i]
            full = before.filled.all(axis=1)
            if before.t < start or not full.any() or frames[i + 1].filled[full].all():
                continue  # only the last frame that shows the full rows
            for after in frames[i + 1 : i + 8]:
                if after.t - before.t > 2.0:
                    break
                if after.filled[full].all():
                    continue
                n = B.row_clear_between(before.filled, after.filled, SPAWN_ROWS)
                if n:
                    self.clears_seen += n
                    if not self.evidence.has("line_clear", "pass"):
                        rows = ", ".join(str(r) for r in np.nonzero(full)[0])
                        self.observe(
                            "line_clear",
                            "pass",
                            f"row(s) {rows} full at {before.t:.2f}s, gone at {after.t:.2f}s with "
                            "the rows above moved down (seen in the recorded frames)",
                            since=before.t,
                            at=after.t,
                            rows=n,
                            full_rows=[int(r) for r in np.nonzero(full)[0]],
                        )
                break
        self._clears_scanned = len(frames)

    def _play_piece(self, topping_out: bool) -> bool:
        if topping_out and (self.controls["hard_drop"] or self.controls["down"]):
            # Topping out needs no whole piece: one that spawns above the field and shows
            # a row at a time is dropped as soon as a cell of it shows.
            cells = self.wait_piece(2.5, need=1)
            if 0 < len(cells) < 4:
                return self._drop_partial_piece()
        else:
            cells = self.wait_piece(2.5)
        if len(cells) != 4:
            return False
        self.sync_stack(cells)
        if not topping_out:
            cells = self._steer_to_best(cells)
        self.drop_or_wait(cells, hurry=topping_out)
        return True

    def _steer_to_best(self, cells: set[B.Cell]) -> set[B.Cell]:
        """Steer the piece to the heuristic's best placement with the controls known."""
        if self.stack is None or not (self.controls["left"] or self.controls["right"]):
            return cells
        target = B.best_placement(self.stack, cells, can_rotate=self.controls["rotate"] is not None)
        return cells if target is None else self.steer(cells, target)

    def _drop_partial_piece(self) -> bool:
        """Drop a piece only partly in view (topping out), with the hard drop or a burst of
        soft drops: nothing is judged on it. False when the field did not react (the game
        may be over)."""
        before = self.read().filled
        if self.controls["hard_drop"]:
            self.s.press(self.controls["hard_drop"], "hard drop (top-out)")
        else:
            assert self.controls["down"] is not None
            for _ in range(self.empty().shape[0] // 2):
                self.s.press(self.controls["down"], "soft drop (top-out)")
                self.s.wait(0.01)
        self.s.wait(0.25)
        frame = self.read()
        if np.array_equal(before, frame.filled):
            return False
        self._resync(frame)
        return True

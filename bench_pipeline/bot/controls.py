"""Phase 2 of the bot's play, control discovery: gravity, moving left and right,
rotation, and the walls; with the probes' shared helpers (a fresh piece to probe with,
setting a useless one aside). The drops are probed in drops.py.
"""

from __future__ import annotations

import time

from bench_pipeline.bot import board as B
from bench_pipeline.bot.core import BotCore
from bench_pipeline.bot.session import Frame
from bench_pipeline.bot.source_keys import prior_from
from bench_pipeline.bot.timings import TIMINGS

LEFT_KEYS = ("ArrowLeft", "a", "j", "h")
RIGHT_KEYS = ("ArrowRight", "d", "l")
# Rotation is also found on Q/E and A/D (when the arrows move the piece), and last on
# Space, the period and comma keys and Control (tried only where the game's code mentions
# them, once the scan of its code is trusted).
ROTATE_KEYS = (
    "ArrowUp",
    "x",
    "z",
    "w",
    "q",
    "e",
    "a",
    "d",
    "i",
    "k",
    " ",
    ".",
    ",",
    "Control",
    "ArrowRight",
    "ArrowLeft",
)
GRAVITY_WATCH_S = TIMINGS.gravity_watch_s
WALL_TURNS = 3  # turns tried against each wall once the walls were judged


class ControlDiscovery(BotCore):
    """Phase 2: gravity, left and right, rotation and the walls."""

    # ---- phase 2: controls -----------------------------------------------------------
    def fresh_piece(self, timeout: float = 7.0) -> set[B.Cell]:
        """A piece with four visible cells in the upper part of the field.

        Before any drop control is known, gravity alone brings the next piece: from low in
        the field that takes a few seconds (more on a loaded machine, where reads are
        slow). A field that has not changed for 3 s will bring none: give up then."""
        end = time.monotonic() + timeout
        began = self.log.now()
        extended = False
        while time.monotonic() < end and self.time_left() > 0:
            last_change = self.log.frames[-1].t if self.log.frames else began
            if self.log.now() - max(last_change, began) > 3.0:
                if self._resume():
                    began = self.log.now()
                    continue
                break
            cells = self.wait_piece(min(1.5, max(0.1, end - time.monotonic())))
            if not extended and len(cells) != 4 and self._big_piece_falling():
                # A piece that is no tetromino (5 or more cells) is on its way down: it
                # takes a whole fall before the next one comes.
                end, extended = end + 6.0, True
            if len(cells) == 4 and max(r for r, _ in cells) < (self.empty().shape[0] * 0.6):
                return cells
            if len(cells) == 4 and (self.controls["hard_drop"] or self.controls["down"]):
                self._set_aside(cells)
            elif len(cells) == 4 and not self.gravity_s_per_row:
                return cells  # nothing brings the next piece: use this one where it is
        return set()

    def _big_piece_falling(self) -> bool:
        """The last read shows a loose group of 5 to 9 cells: a piece of another size."""
        if self.last_frame is None:
            return False
        stack = self.stack if self.stack is not None else self.empty()
        loose = self.last_frame.filled & ~stack
        return any(5 <= len(g) <= 9 for g in B.components(loose))

    def observe_gravity(self) -> None:
        """Watch a piece with no input: it should fall. The rate is taken between two falls,
        since the first one comes at an arbitrary point of the game's tick."""
        cells = self.fresh_piece()
        if not cells:
            return
        top = min(r for r, _ in cells)
        t_start = time.monotonic()
        watched_from = self.log.now()
        steps: list[tuple[float, int]] = []
        # Some games run their gravity off animation frames, and a slow page (a large
        # canvas redrawn every frame) falls a row in a few seconds: 5 s before a FAIL.
        while time.monotonic() - t_start < (3.0 if steps else GRAVITY_WATCH_S):
            now_cells = self.active(self.read())
            if len(now_cells) == 4 and B.normalize(now_cells) == B.normalize(cells):
                row = min(r for r, _ in now_cells)
                if row > (steps[-1][1] if steps else top):
                    steps.append((time.monotonic() - t_start, row))
                    if len(steps) >= 3:
                        break
            elif steps:
                break  # landed or replaced: what was seen is enough
            self.s.wait(0.04)
        if not steps and self.started_by_nudge:
            steps, top = self._fall_after_start_key()
        if not steps:
            self.observe(
                "gravity",
                "fail",
                f"the piece stayed in place for {GRAVITY_WATCH_S:.0f} s without input",
                since=watched_from,
                piece=cells,
            )
            return
        rows = steps[-1][1] - top
        if len(steps) >= 2:
            (t1, r1), (t2, r2) = steps[0], steps[-1]
            self.gravity_s_per_row = (t2 - t1) / (r2 - r1)
        elif rows >= 2:
            # Two rows or more between two reads: a fast gravity (a row every 50 ms).
            self.gravity_s_per_row = steps[0][0] / rows
        else:
            self.gravity_s_per_row = max(steps[0][0], 0.5)
        self.observe(
            "gravity",
            "pass",
            f"fell {rows} row(s) in {steps[-1][0]:.2f}s without input "
            f"(~{self.gravity_s_per_row:.2f}s per row)",
            since=watched_from,
            piece=cells,
            rows=rows,
            s_per_row=self.gravity_s_per_row,
        )

    def _fall_after_start_key(self) -> tuple[list[tuple[float, int]], int]:
        """A piece shown and movable before the game began ("Press Space to begin"): its
        gravity starts with the start key. Space and Enter are pressed once each; a piece
        then falling two rows with no further input shows the game was started by that key
        (one row could be a soft drop). Returns the fall's steps and the piece's top row."""
        self.started_by_nudge = False  # asked once
        for key in (" ", "Enter"):
            self._unfocus()
            pressed_at = self.log.now()
            self.s.press(key, "does the still piece wait for a start key?")
            cells = self.wait_piece(1.5)
            if len(cells) != 4:
                continue
            top = min(r for r, _ in cells)
            t_start = time.monotonic()
            steps: list[tuple[float, int]] = []
            while time.monotonic() - t_start < 3.0 and len(steps) < 3:
                now_cells = self.active(self.read())
                if len(now_cells) != 4 or B.normalize(now_cells) != B.normalize(cells):
                    break
                row = min(r for r, _ in now_cells)
                if row > (steps[-1][1] if steps else top):
                    steps.append((time.monotonic() - t_start, row))
                self.s.wait(0.04)
            if len(steps) >= 2:
                name = "Space" if key == " " else key
                self.start_mechanism = f"key:{name}"
                # The game began with the key: the endurance window opens there (the
                # still piece before it was no freeze), and the page may have moved the
                # field as its start hint went away.
                self.started_at = pressed_at
                self.log.note(
                    f"the still piece began to fall after {name!r}: the game was started by it"
                )
                self._relearn_after_start()
                return steps, top
        return [], 0

    def discover_moves(self) -> None:
        """Left, then right; a left probe put off because the piece was against the left
        wall (a game spawning in the top-left corner) is made once right is known."""
        self._read_key_prior()
        left, right = self.keys.order(LEFT_KEYS, "left"), self.keys.order(RIGHT_KEYS, "right")
        deferred = not self.discover_horizontal("left", left, -1, defer=True)
        self.discover_horizontal("right", right, +1)
        if deferred:
            self.discover_horizontal("left", left, -1)
        if self.keys.confirm([self.controls["left"], self.controls["right"]]):
            self.log.note(
                "the game's code mentions the movement keys found: keys it does not mention "
                "are not probed"
            )

    def _not_probed(self, keys: tuple[str, ...]) -> str:
        """What a FAIL's reason says of the candidate keys left untried."""
        if not self.keys.trusted:
            return ""
        skipped = [k for k in self.keys.unmentioned(keys) if k not in self.controls.values()]
        if not skipped:
            return ""
        names = ", ".join("Space" if k == " " else k for k in skipped)
        return f" ({names}: not in the game's code, not probed)"

    def _read_key_prior(self) -> None:
        """The page's code, collected by the probe since the start (a moment at most)."""
        if self.keys.text is not None:
            return
        # Collected on the first page; a page followed since (a menu page's Play button
        # opened the game's page) has not begun: begin it now (a no-op when begun).
        self.s.evaluate("window.__bench && window.__bench.collectSources()")
        end = time.monotonic() + 1.0
        text = None
        while time.monotonic() < end:
            text = self.s.evaluate("window.__bench ? window.__bench.sourceText : null")
            if text is not None:
                break
            self.s.wait(0.1)
        self.keys = prior_from(text).with_handlers(self.handler_keys)
        if self.keys.text:
            self.log.note(f"read {len(self.keys.text or ''):,} characters of the page's code")

    def _away_from_wall(self, cells: set[B.Cell], sign: int) -> set[B.Cell] | None:
        """The piece, moved off the wall on the side `sign` when it touches it (with the
        opposite control, if known); None when it touches it and cannot be moved off."""
        cols = self.empty().shape[1]
        at_wall = (
            (min(c for _, c in cells) == 0) if sign < 0 else (max(c for _, c in cells) == cols - 1)
        )
        if not at_wall:
            return cells
        away = self.controls["right" if sign < 0 else "left"]
        if away is None or away in self.pause_keys:
            return None
        for _ in range(2):
            self.s.press(away, "off the wall")
            self.s.wait(0.03)
        now = self.active(self.press_and_read(away, "off the wall"))
        if len(now) == 4 and B.normalize(now) == B.normalize(cells) and now != cells:
            return now
        return None

    def discover_horizontal(
        self, name: str, keys: list[str], sign: int, defer: bool = False
    ) -> bool:
        """False only when `defer` and the piece stood against that wall: not tried."""
        for key in keys:
            if key in self.pause_keys:
                continue
            cells = self.fresh_piece()
            if not cells:
                return True
            moved_off = self._away_from_wall(cells, sign)
            if moved_off is None:
                if defer:
                    self.log.note(f"move {name}: the piece is against the {name} wall; later")
                    return False
                self.log.note(f"move {name}: the piece is against the {name} wall")
                return True
            cells = moved_off

            def moved(frame: Frame, cells: set[B.Cell] = cells) -> bool:
                shift = self._shift(cells, self.active(frame))
                return bool(shift and shift[1] * sign >= 1)

            after = self.active(self.press_until(key, f"try {name}", moved))
            shift = self._shift(cells, after)
            if shift and shift[1] * sign >= 1:
                self.controls[name] = key
                self.observe(
                    f"move_{name}",
                    "pass",
                    f"{key!r} moved the piece {shift[1]:+d} column(s)",
                    key=key,
                    before=cells,
                    after=after,
                    columns=shift[1],
                )
                return True
            self._check_not_paused(key)
        self.observe(
            f"move_{name}", "fail", f"none of {list(keys)} moved the piece {name}", keys=list(keys)
        )
        return True

    def discover_rotate(self) -> None:
        if self.controls["rotate"] is not None:
            return  # a probe for another control turned the piece
        tried = 0
        keys = [
            k
            for k in self.keys.to_try(ROTATE_KEYS, "rotate")
            if k not in self.controls.values() and k not in self.pause_keys
        ]  # not the keys known to move or drop the piece, or to pause the game
        for index, key in enumerate(keys):
            # A piece that lands (and is replaced) before the press shows says nothing
            # about the key: try it again on the next piece. The likeliest key (the first
            # one the game's code mentions) gets a second piece even when the first did
            # not turn: with fewer keys probed, one misread must not decide the verdict.
            lowered = False
            chances = 2 if index == 0 and self.keys.known and self.keys.mentions(key) else 1
            for _ in range(3 + chances - 1):
                cells = self._rotatable_piece()
                if not cells:
                    return
                outcome = self._try_rotate(key, cells)
                if outcome == "turned":
                    return
                if outcome == "kept" and self._lower_to_rotate(cells, lowered):
                    lowered = True
                    continue
                if outcome == "kept":
                    chances -= 1
                    if chances:
                        self.log.note(f"rotate: {key!r} did not turn the piece; once more")
                        lowered = False
                        continue
                    tried += 1
                    self._check_not_paused(key)
                    break
                self.log.note(f"rotate: the piece was replaced while trying {key!r}; again")
        if tried:
            self.observe(
                "rotate",
                "fail",
                "no key changed a piece's orientation" + self._not_probed(ROTATE_KEYS),
            )

    def _lower_to_rotate(self, cells: set[B.Cell], lowered: bool) -> bool:
        """A piece in the top two rows may not turn because the turned shape would reach
        above the field (an I piece lying in row 0): soft-drop it two rows and try the same
        key again, once. True when it was lowered."""
        if lowered or min(r for r, _ in cells) >= 2 or not self.controls["down"]:
            return False
        for _ in range(2):
            self.s.press(self.controls["down"], "lower the piece to rotate it")
            self.s.wait(0.04)
        self.log.note("rotate: the piece was at the top of the field; tried again lower down")
        return True

    def _rotatable_piece(self) -> set[B.Cell]:
        """A fresh piece that can show a rotation: not an O, with a few rows to fall.

        An O cannot show a rotation, and a piece about to land (on a stack the control
        probes piled up under the spawn) is replaced by the next one while the press is
        read. Six tries, as three O pieces in a row do come up."""
        for _ in range(6):
            cells = self.fresh_piece()
            if not cells:
                return set()
            usable = B.identify(cells) != "O"
            if usable and self._room(cells) >= 3:
                return cells
            if not self._set_aside(cells):
                return cells if usable else set()
        return set()

    def _set_aside(self, cells: set[B.Cell]) -> bool:
        """Get rid of a piece that is of no use for a probe, where the heuristic puts it
        (without rotating): dropped where it spawns, pieces pile up under the spawn and
        leave the next ones no room. False when nothing brings the next piece."""
        if not (self.controls["hard_drop"] or self.controls["down"] or self.gravity_s_per_row):
            return False
        self.sync_stack(cells)
        assert self.stack is not None
        target = B.best_placement(self.stack, cells, can_rotate=False)
        if target is not None:
            cells = self.steer(cells, target)
        self.drop_or_wait(cells, hurry=True)  # where it lands matters, how fast it falls not
        return True

    def _steer_for_probe(self, cells: set[B.Cell], room: int = 3) -> set[B.Cell]:
        """Move a probe piece (not rotating it) to where the heuristic would put it, when
        it keeps `room` rows to fall there: the probes' pieces then build rows that can be
        completed, instead of a pile under the spawn."""
        if not (self.controls["left"] and self.controls["right"]):
            return cells
        self.sync_stack(cells)
        assert self.stack is not None
        target = B.best_placement(self.stack, cells, can_rotate=False)
        if target is None:
            return cells
        top = min(r for r, _ in cells)
        if min(r for r, _ in target.landed) - top < room:
            return cells
        return self.steer(cells, target)

    def _room(self, cells: set[B.Cell]) -> int:
        """Rows the piece can still fall before it rests on the stack."""
        self.sync_stack(cells)
        assert self.stack is not None
        landing = B.drop(self.stack, cells)
        return min(r for r, _ in landing) - min(r for r, _ in cells)

    def _try_rotate(self, key: str, cells: set[B.Cell]) -> str:
        """'turned' (and the control is recorded), 'kept' (the key did not rotate the
        piece) or 'replaced' (the piece is not whole or another one is there now:
        nothing can be told)."""
        before_shape = B.normalize(cells)

        def turned(frame: Frame, shape: B.Piece = before_shape) -> bool:
            now = self.active(frame)
            return len(now) == 4 and B.normalize(now) != shape

        after = self.active(self.press_until(key, "try rotate", turned))
        if not self._same_piece_turned(cells, after):
            # A piece that glides between orientations (an eased SVG or DOM transition)
            # reads as another shape, or not whole, halfway: judge the shape it settles in.
            after = self._settled_piece(after)
        if self._same_piece_turned(cells, after):
            self.controls["rotate"] = key
            self.observe(
                "rotate",
                "pass",
                f"{key!r} turned a {B.identify(cells)} piece",
                key=key,
                before=cells,
                after=after,
            )
            return "turned"
        shift = self._shift(cells, after)
        if shift and shift[0] >= 3:
            self.log.note(f"{key!r} dropped the piece instead of rotating it")
            return "kept"
        if len(after) != 4 or B.identify(after) != B.identify(cells):
            return "replaced"  # landed (the next piece not whole yet) or another piece
        if shift is not None and shift[0] < 0:
            return "replaced"  # the same shape higher up: the next piece
        return "kept"

    @staticmethod
    def _same_piece_turned(cells: set[B.Cell], after: set[B.Cell]) -> bool:
        return (
            len(after) == 4
            and B.normalize(after) != B.normalize(cells)
            and B.identify(after) == B.identify(cells)
        )

    def _settled_piece(self, last: set[B.Cell], limit: float = 0.4) -> set[B.Cell]:
        """The active piece once two reads in a row show it whole in the same shape (it
        may have fallen between them), or the last read after `limit` seconds."""
        end = time.monotonic() + limit
        while time.monotonic() < end and self.time_left() > 0:
            self.s.wait(0.05)
            now = self.active(self.read())
            if len(now) == 4 and len(last) == 4 and B.normalize(now) == B.normalize(last):
                return now
            last = now
        return last

    def check_walls(self) -> None:
        if not (self.controls["left"] and self.controls["right"]):
            return
        for name, key, wall in (
            ("left", self.controls["left"], 0),
            ("right", self.controls["right"], None),
        ):
            cells = self.fresh_piece()
            if not cells:
                return
            cols = self.empty().shape[1]
            wall_col = 0 if wall == 0 else cols - 1
            pushed_from = self.log.now()
            for _ in range(cols + 2):
                self.s.press(key, f"push {name} wall")
                self.s.wait(0.03)
            self.s.wait(0.08)
            frame = self.read()
            after = self.active(frame)
            top_before = min(r for r, _ in cells)
            if after and min(r for r, _ in after) < top_before:
                # A new piece higher up: the pushed one landed meanwhile. Not a wall verdict.
                self.log.note(f"walls: the piece landed while pushing {name}; not judged")
                continue
            if len(after) == 4 and B.normalize(after) == B.normalize(cells):
                edge = min(c for _, c in after) if wall == 0 else max(c for _, c in after)
                if edge == wall_col:
                    self.observe(
                        "walls",
                        "pass",
                        f"stopped at the {name} wall",
                        key=key,
                        since=pushed_from,
                        before=cells,
                        after=after,
                    )
                else:
                    self.log.note(f"walls: piece stopped at column {edge} pushing {name}")
            elif len(after) < 4 and self._loose_cells(frame) >= 4:
                # Cells enough for a piece, in no group of four: another shape (a piece of
                # five cells, leftovers merged with it), not a piece pushed out of view.
                self.log.note(f"walls: no four-cell piece to judge after pushing {name}")
            elif len(after) < 4:
                self.observe(
                    "walls",
                    "fail",
                    f"pushing {name}, the piece left the field ({len(after)} of 4 cells visible)",
                    key=key,
                    since=pushed_from,
                    before=cells,
                    after=after,
                )
            else:
                self.observe(
                    "walls",
                    "fail",
                    f"pushing {name}, the piece changed shape at the wall (wrapped?)",
                    key=key,
                    since=pushed_from,
                    before=cells,
                    after=after,
                )
            if len(after) == 4:
                after = self._turn_at_wall(key, after)
            if len(after) == 4:
                self._set_aside(after)
            else:
                self.drop_or_wait(cells)

    def _turn_at_wall(self, push: str, cells: set[B.Cell]) -> set[B.Cell]:
        """Turn a piece that rests against a wall, pushing it back after each turn: a
        narrow orientation against the wall has no room to turn into a wide one, so a game
        without wall kicks meets a blocked rotation here, as a player soon does. Some games
        throw on one (no_errors); a bot that never blocks a turn would never see it.
        Returns the piece's cells afterwards (fewer than four if it could not be found)."""
        rotate = self.controls["rotate"]
        if rotate is None or self._room(cells) < 4:
            return cells
        for _ in range(WALL_TURNS):
            self.s.press(rotate, "turn against the wall")
            self.s.wait(0.03)
            self.s.press(push, "back against the wall")
            self.s.wait(0.03)
        self.s.wait(0.08)
        return self.active(self.read())

    def _loose_cells(self, frame: Frame) -> int:
        stack = self.stack if self.stack is not None else self.empty()
        return int((frame.filled & ~stack).sum())

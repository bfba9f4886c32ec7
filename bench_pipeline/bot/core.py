"""What the bot knows and how it reads the field: the state every phase shares.

`BotCore` holds the bot's state, its reads of the field (the falling piece, a faint piece
entering it) and the check that a probed key did not pause the game; `Evidence` collects
what each test's judgement rests on. The phases are mixins on `BotCore` in their own
modules (start.py, controls.py, drops.py, endurance.py); `Bot` in play.py puts them
together, and their methods call each other's through `self`.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from bench_pipeline.bot import board as B
from bench_pipeline.bot.geometry import BoardGeometry
from bench_pipeline.bot.readers.page_code import KeyTarget, ListenerReport
from bench_pipeline.bot.session import MIN_THRESHOLD, Frame, GameSession
from bench_pipeline.bot.source_keys import KeyPrior
from bench_pipeline.bot.timings import TIMINGS

SPAWN_ROWS = 5  # a new piece appears with cells in the top rows
AFTER_KEY_S = TIMINGS.after_key_s


def faint_piece(
    distances: np.ndarray,
    colours: np.ndarray,
    filled: np.ndarray,
    stack: np.ndarray,
    floor: float = MIN_THRESHOLD,
) -> set[B.Cell] | None:
    """A whole piece drawn fainter than the threshold near the top of the field, if any.

    The cells are not `filled` but clearly drawn on (more than `floor` from their
    background), form a tetromino in the spawn rows, and share one colour (text or an
    animation would not); no visible cells are above them in their columns (that would
    make them the ghost of a piece still entering the field).
    """
    faint = (distances > floor) & ~filled & ~stack
    for group in B.components(faint):
        if len(group) != 4 or B.identify(group) is None:
            continue
        top = min(r for r, _ in group)
        if top >= SPAWN_ROWS:
            continue
        columns = sorted({c for _, c in group})
        if (filled[:top, columns] & ~stack[:top, columns]).any():
            continue
        cells = sorted(group)
        spread = max(
            float(np.linalg.norm(colours[a] - colours[b]))
            for a, b in itertools.combinations(cells, 2)
        )
        if spread > max(10.0, 0.2 * float(np.median([distances[c] for c in cells]))):
            continue
        return group
    return None


class StateSampler(Protocol):
    def sample(self) -> dict[str, Any] | None: ...


def _plain(value: object) -> object:
    """A fact as JSON data: cells as sorted [row, col] pairs, numbers rounded."""
    if isinstance(value, set | frozenset):
        return sorted([int(r), int(c)] for r, c in value)  # type: ignore[misc]
    if isinstance(value, float):
        return round(value, 3)
    if isinstance(value, np.integer | np.floating):
        return round(float(value), 3)
    return value


class BotCore:
    """The bot's state and its reads of the field, shared by every phase."""

    def __init__(self, session: GameSession, endurance_s: float, deadline: float) -> None:
        self.s = session
        self.log = session.log
        self.endurance_s = endurance_s
        self.deadline = deadline  # monotonic time by which play must end
        # What each probe showed, per test: kept in the observation log the verdicts read.
        self.evidence = session.log.evidence
        self.controls: dict[str, str | None] = dict.fromkeys(
            ("left", "right", "down", "rotate", "hard_drop")
        )
        self.start_mechanism: str | None = None
        self.started_at: float | None = None  # log time of the first piece
        self.stack: np.ndarray | None = None
        self.gravity_s_per_row: float | None = None
        self.locks = 0
        self.lock_times: list[float] = []  # log time of each landing followed
        self.lines_cleared = 0  # rows the bot's model saw its pieces complete and clear
        self.clears_seen = 0  # rows seen cleared in the recorded frames (scan_clears)
        self._clears_scanned = 0  # log.frames index scan_clears has looked at
        self.last_frame: Frame | None = None
        self.score_source: str | None = None
        self.pauses: list[tuple[float, float]] = []  # game over -> restart, not a freeze
        self.clears_broken = False  # full rows were seen to stay: do not wait for clears
        self.first_game_over_at: float | None = None
        self.top_out_began: float | None = None  # log time the bot last began a top-out
        self.topping_out = False  # within a top-out: landings are not followed closely
        self.piece_seconds: list[float] = []  # how long each piece played took
        self.watch_faint = False  # after the threshold was tuned on the first piece
        self.loads = 1  # page loads it took to get a game that starts
        self.overlay: np.ndarray | None = None  # cells drawn over the field, not play
        self.down_held = False  # the soft drop works while the down key is held, not tapped
        self.field_focused = False  # the field's element took the keyboard focus
        self.name_given = False  # a name was typed into the form before the game
        # Taken for running because a still piece moved on a key: its gravity may still
        # wait for the game's start key ("Press Space to begin").
        self.started_by_nudge = False
        # A lattice that included a floor row or wall columns: (as located, trimmed).
        self.trimmed: tuple[BoardGeometry, BoardGeometry] | None = None
        # Probed keys that paused the game (pressed again, it went on): no control.
        self.pause_keys: set[str] = set()
        self.saw_ghost = False  # a ghost piece drawn as solid cells was seen (twice)
        self.ghost_places: set[frozenset[B.Cell]] = set()  # where ghost-like cells were seen
        self.last_piece_at: float | None = None  # log time the last piece played began
        # Which keys the page's code mentions: probes try those first (source_keys.py).
        self.keys = KeyPrior()
        # Keys read from the game's own keyboard handlers, with a role hint each
        # (readers/page_code.py), and the element that must hold the keyboard focus when
        # the game listens on one element only (a canvas, a hidden input).
        self.handler_keys: dict[str, str | None] = {}
        self.listeners: ListenerReport | None = None
        self.key_target: KeyTarget | None = None
        # The game's own state (readers/state.py), once found after the start; None where
        # the page gave none to read.
        self.state_reader: StateSampler | None = None
        self._next_state_sample = -1.0

    # ---- the log -----------------------------------------------------------------------
    def observe(
        self,
        test: str,
        outcome: str,
        detail: str,
        key: str | None = None,
        since: float | None = None,
        at: float | None = None,
        **facts: object,
    ) -> None:
        """Record what a probe showed about `test`: the renderer reader's claim (`pass` or
        `fail`) and the raw facts it rests on, in the observation log. `since` is when the
        probe began (by default the last press of `key`); the verdicts look for the same
        event in the game's own state between then and now."""
        now = self.log.now() if at is None else at
        if since is None and key is not None:
            since = next((t for t, k, _p in reversed(self.log.actions) if k == key), None)
        data: dict[str, object] = {name: _plain(value) for name, value in facts.items()}
        if key is not None:
            data["key"] = key
        if since is not None:
            data["since"] = round(since, 3)
        self.evidence.add(now, test, outcome, detail, data or None)

    # ---- small helpers ---------------------------------------------------------------
    def time_left(self) -> float:
        return self.deadline - time.monotonic()

    def read(self) -> Frame:
        frame = self._masked(self.s.read())
        if self.watch_faint and self._lowered_for_faint_piece(frame):
            frame = self._masked(self.s.read())
        for _ in range(2):
            if self._settled(frame):
                break
            # Caught mid-animation (a piece gliding between cells, a flash): a moment
            # later the same piece is on whole cells.
            self.s.wait(0.04)
            frame = self._masked(self.s.read())
        self.last_frame = frame
        self.sample_state()
        return frame

    def sample_state(self, force: bool = False) -> None:
        """Re-read the game's own state (the objects the state reader found, by reference:
        cheap) beside the field's read, at most every `state_sample_every_s`."""
        reader = self.state_reader
        if reader is None:
            return
        now = self.log.now()
        if not force and now < self._next_state_sample:
            return
        began = time.monotonic()
        sample = reader.sample()
        took = time.monotonic() - began
        # A busy page answers slowly: space the samples out (five times what one took) so
        # the state's cost stays a small share of the bot's time.
        gap = TIMINGS.state_sample_every_s
        if took > TIMINGS.state_sample_slow_s:
            gap = max(gap, 5 * took)
        self._next_state_sample = now + gap
        if sample:
            self.log.state_samples.append((now, sample))

    def _masked(self, frame: Frame) -> Frame:
        """The frame without the cells of an overlay drawn over the field (a copy: the
        event log keeps what the screen showed)."""
        if self.overlay is None or frame.filled.shape != self.overlay.shape:
            return frame
        return Frame(frame.t, frame.filled & ~self.overlay)

    def _settled(self, frame: Frame) -> bool:
        """No loose group of more than four cells, nor four cells that are no tetromino:
        what a read taken while a piece glides from one cell to the next shows."""
        if self.stack is None:
            return True
        loose = frame.filled & ~self.stack
        if not loose.any() or loose.sum() > 12:
            return True  # nothing loose, or a wiped or changed field: not an animation
        return all(
            len(g) < 4 or (len(g) == 4 and B.identify(g) is not None) for g in B.components(loose)
        )

    def _lowered_for_faint_piece(self, frame: Frame) -> bool:
        """Lower the threshold when a piece fainter than it is entering the field.

        The threshold is half of how far the first piece is from the background, but one
        game's pieces can differ a lot in contrast (on a pastel board a Z is half as far
        from the background as a J): after a J first, every Z would fall unseen, and the
        field would look frozen. Only checked while no whole piece is visible."""
        distances, colours = self.s.last_distances, self.s.last_colours
        if distances is None or colours is None:
            return False
        stack = self.stack if self.stack is not None else self.empty()
        # A whole piece in the air is the falling one. A whole piece resting on the floor
        # or the stack may be one whose landing the bot did not follow (a probe kept it
        # busy): it is no reason not to look for a faint piece entering the field.
        loose = B.components(frame.filled & ~stack)
        if any(len(g) == 4 and B.drop(stack, g) != g for g in loose):
            return False
        if stack.sum() >= 4 and not (frame.filled & stack).any():
            return False  # the whole stack is gone from view: an overlay (a pause) covers it
        cells = faint_piece(distances, colours, frame.filled, stack)
        if cells is None:
            return False
        previous = self.s.lower_threshold(np.array([distances[c] for c in cells]))
        if previous is None:
            return False
        self.log.note(
            f"a {B.identify(cells)} piece fainter than the threshold at {sorted(cells)}: "
            f"threshold {previous:.0f} -> {self.s.threshold:.0f}"
        )
        return True

    def empty(self) -> np.ndarray:
        g = self.s.geometry
        assert g is not None
        return np.zeros((g.rows, g.cols), dtype=bool)

    def active(self, frame: Frame) -> set[B.Cell]:
        """The falling piece: the top-most group of cells not in the stack (ghosts are lower)."""
        stack = self.stack if self.stack is not None else self.empty()
        loose = frame.filled & ~stack
        groups = [g for g in B.components(loose) if len(g) <= 4]
        if not groups:
            return set()
        return min(groups, key=lambda g: (min(r for r, _ in g), -len(g)))

    def wait_piece(self, timeout: float, need: int = 4) -> set[B.Cell]:
        end = time.monotonic() + timeout
        cells: set[B.Cell] = set()
        while time.monotonic() < end and self.time_left() > 0:
            frame = self.read()
            cells = self.active(frame)
            if len(cells) >= need:
                return cells
            self.s.wait(0.05)
        return cells

    def press_and_read(self, key: str, purpose: str, wait: float = AFTER_KEY_S) -> Frame:
        self.s.press(key, purpose)
        self.s.wait(wait)
        return self.read()

    def press_until(
        self, key: str, purpose: str, done: Callable[[Frame], bool], timeout: float = 0.45
    ) -> Frame:
        """Press once, then read until `done` holds: some games redraw only on their tick.

        On a loaded machine a read can take a few hundred milliseconds: the wait is never
        shorter than three reads at the recent pace."""
        self.s.press(key, purpose)
        end = time.monotonic() + max(timeout, 3 * self._read_pace())
        self.s.wait(0.03)
        frame = self.read()
        while not done(frame) and time.monotonic() < end:
            self.s.wait(0.04)
            frame = self.read()
        return frame

    def _read_pace(self) -> float:
        """The median time between the last reads (seconds)."""
        reads = self.log.reads[-12:]
        if len(reads) < 3:
            return 0.1
        return float(np.median(np.diff(reads)))

    # ---- pauses -------------------------------------------------------------------
    def _falls(self, window: float) -> bool:
        """Within `window` s the piece falls (the same shape lower) or a new one appears
        higher up: gravity is running. A rotation or a one-off redraw (a pause banner) is
        not enough."""
        end = time.monotonic() + window
        first: set[B.Cell] | None = None
        while time.monotonic() < end and self.time_left() > 0:
            now = self.active(self.read())
            if len(now) == 4:
                if first is None:
                    first = now
                else:
                    shift = self._shift(first, now)
                    if (shift and shift[0] >= 1) or (
                        min(r for r, _ in now) < min(r for r, _ in first)
                    ):
                        return True
            self.s.wait(0.05)
        return False

    def _fall_window(self) -> float:
        return min(3.0, 2.5 * (self.gravity_s_per_row or 0.0) + 0.3)

    def _check_not_paused(self, key: str) -> bool:
        """After a probe of `key` that did not do what was tried: is gravity still
        running? A key that paused the game (P, Enter, Space in some games) is pressed
        again to resume it and remembered as no control; the still field meanwhile is the
        bot's doing, not a freeze. Only told where gravity was measured."""
        if not self.gravity_s_per_row or key in self.controls.values():
            return True
        if not self.keys.mentions(key):
            return True  # the game's code does not handle this key: it cannot pause it
        if self._falls(self._fall_window()):
            return True
        if len(self.active(self.read())) != 4 and self._falls(self._fall_window()):
            # No piece stood in the field: the game was between two pieces (a spawn delay,
            # a restart), and the next one came by itself. Pressed again now, the key would
            # get the blame for it and be taken for a pause toggle (a real game's rotate key).
            return True
        return self._toggle_back([key])

    def _toggle_back(self, keys: list[str]) -> bool:
        """Press each key once more (most suspect first): True, and the key recorded as a
        pause toggle, when gravity runs again after it."""
        still_since = self.log.frames[-1].t if self.log.frames else self.log.now()
        for key in keys:
            if self.time_left() < 5:
                return False
            self.s.press(key, "toggle back (did it pause the game?)")
            self.s.wait(0.1)
            if self._falls(self._fall_window()):
                self.pause_keys.add(key)
                self.pauses.append((still_since - 0.5, self.log.now()))
                self.log.note(
                    f"{'Space' if key == ' ' else key!r} paused the game: pressed again, it "
                    "went on (a pause toggle, not a control)"
                )
                return True
        return False

    def _resume(self) -> bool:
        """The field stands still though gravity was seen: one of the keys pressed just
        before (not a known control) may have paused the game; press them again."""
        if not self.gravity_s_per_row or not self.log.frames:
            return False
        since = self.log.frames[-1].t - 1.5
        known = set(self.controls.values())
        recent: list[str] = []
        for t, key, purpose in reversed(self.log.actions):
            if t < since:
                break
            if key not in known and key not in recent and not purpose.startswith("toggle"):
                recent.append(key)
        return bool(recent) and self._toggle_back(recent[:3])

    def _shift(self, before: set[B.Cell], after: set[B.Cell]) -> tuple[int, int] | None:
        """(drow, dcol) when `after` is `before` translated (same shape), else None."""
        if len(before) != 4 or len(after) != 4 or B.normalize(before) != B.normalize(after):
            return None
        return (
            min(r for r, _ in after) - min(r for r, _ in before),
            min(c for _, c in after) - min(c for _, c in before),
        )

"""The second reader's word on a PASS: the same event in the game's own state.

The renderer reader (what the page shows) claims a PASS for a test with the facts of one
episode (observations.Episode). Where the state reader found the part of the game's
state that the test is about (the piece's position for a move, the board for a lock or a
clear, the score for the score), the same event must show there in the same window, in
the same direction and of about the same size: a left move and x one step down, a lock
and about four cells added to the board, a clear and a row's worth of cells removed, a
shown score equal to a state value. Where the state disagrees, the verdict is
INCONCLUSIVE with both readings in its reason, never FAIL: the state can be something
other than the visible board (hidden rows, walls inside the array, pixel units). Where
the state reader found nothing for the test, the renderer's PASS stands alone, as before.

Pure: reads an observations.Episode and a StateView; no browser.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from bench_pipeline.bot.observations import Episode

# The state may be read a little before the renderer sees a change (a game updates its
# state, then draws on the next frame) or after it (sampled every ~0.12 s): the window
# opens this long before the probe began and closes this long after the renderer's claim.
BEFORE_S = 0.25
AFTER_S = 0.6
# A lock, a drop or a clear may be in the state before the renderer's probe says it began
# (a game locks and clears on the key press; the bot confirms on a later read).
BOARD_BEFORE_S = 1.0
BASELINE_S = 2.0  # how old the state before a probe may be
# Board samples further apart than this may hide a clear behind the locks around it.
CLEAR_GAP_S = 0.5


class StateView(Protocol):
    """What the verdicts need of the interpreted state (readers.state_model)."""

    def piece_xy(self, t0: float, t1: float) -> Sequence[tuple[float, float, float]]:
        """(t, x, y) samples of the active piece's position between t0 and t1."""

    def board_counts(self, t0: float, t1: float) -> Sequence[tuple[float, int]]:
        """(t, filled cells) samples of the game's board between t0 and t1."""

    def score_values(self) -> Sequence[float]:
        """Every value the game's own score variable took."""

    def over_flags(self, t0: float, t1: float) -> Sequence[tuple[float, bool]]:
        """(t, game over) samples of the game's own game-over flag."""

    @property
    def found(self) -> dict[str, bool]:
        """Which parts were found: piece, board, score, over."""

    @property
    def board_speaks_against(self) -> bool:
        """Whether the board may contradict the screen (not held by identity alone)."""

    @property
    def x_speaks_against(self) -> bool:
        """Whether the piece's x may contradict a move the screen showed."""

    @property
    def y_speaks_against(self) -> bool:
        """Whether the piece's y may contradict a fall the screen showed."""


@dataclass(frozen=True)
class SampledState:
    """A StateView over series already read out of the state samples (what the state
    model hands the verdicts)."""

    piece: Sequence[tuple[float, float, float]] = ()  # (t, x, y)
    board: Sequence[tuple[float, int]] = ()  # (t, filled cells)
    scores: Sequence[tuple[float, float]] = ()  # (t, score)
    over: Sequence[tuple[float, bool]] = ()  # (t, game over)
    # False for a board the state reader holds by identity alone (found in the heap, under
    # no name it can follow): a game that replaces its board array on every lock leaves
    # that reference stale, so it may confirm an event but never contradict one.
    board_speaks_against: bool = True
    # False for a coordinate of the piece that never agreed with the renderer on enough
    # episodes of its own tests (verdicts._trusted): the state model may take the spawn
    # column, or a counter, for x while its y is right, and sparse samples on a loaded
    # machine make such a guess likelier. Such a coordinate may confirm, never contradict.
    x_speaks_against: bool = True
    y_speaks_against: bool = True

    def piece_xy(self, t0: float, t1: float) -> Sequence[tuple[float, float, float]]:
        return [p for p in self.piece if t0 <= p[0] <= t1]

    def board_counts(self, t0: float, t1: float) -> Sequence[tuple[float, int]]:
        return [b for b in self.board if t0 <= b[0] <= t1]

    def score_values(self) -> Sequence[float]:
        return [v for _t, v in self.scores]

    def over_flags(self, t0: float, t1: float) -> Sequence[tuple[float, bool]]:
        return [f for f in self.over if t0 <= f[0] <= t1]

    @property
    def found(self) -> dict[str, bool]:
        return {
            "piece": bool(self.piece),
            "board": bool(self.board),
            "score": bool(self.scores),
            "over": bool(self.over),
        }


@dataclass(frozen=True)
class Check:
    """The state's word on one claimed PASS: agree (True), disagree (False, with what it
    saw), or nothing to say (None)."""

    agrees: bool | None
    saw: str = ""


NOTHING = Check(None)


def _window(episode: Episode, before: float = BEFORE_S) -> tuple[float, float]:
    data = episode.data or {}
    since = data.get("since")
    start = float(since) if isinstance(since, int | float) else episode.t - 1.0
    return start - before, episode.t + AFTER_S


def _around(samples: Sequence[tuple], t0: float, t1: float, baseline: Sequence[tuple]) -> list:
    """The samples in [t0, t1], after the last sample before t0 (the state before the
    probe: reads are not always taken just before a key is pressed)."""
    inside = [s for s in samples if t0 <= s[0] <= t1]
    earlier = [s for s in baseline if t0 - BASELINE_S <= s[0] < t0]
    return ([earlier[-1]] if earlier else []) + inside


def _span(values: Sequence[float]) -> float:
    return (max(values) - min(values)) if values else 0.0


def check(test: str, episode: Episode, state: StateView | None) -> Check:
    """Does the game's state show the event this PASS episode claims?"""
    if state is None:
        return NOTHING
    t0, t1 = _window(episode)
    found = state.found
    piece = _around(state.piece_xy(t0, t1), t0, t1, state.piece_xy(t0 - BASELINE_S, t0))
    if test in ("move_left", "move_right") and found.get("piece"):
        xs = [x for _t, x, _y in piece]
        if len(xs) < 2:
            return NOTHING
        want = -1 if test == "move_left" else 1
        moved = [(a, b) for a, b in itertools.pairwise(xs) if (b - a) * want > 0]
        if moved:
            return Check(True, f"the state's x went {moved[0][0]:g} → {moved[0][1]:g}")
        if not state.x_speaks_against:
            return NOTHING
        return Check(False, f"the game's own piece x stayed or went the other way ({xs})")
    if test in ("gravity", "soft_drop") and found.get("piece"):
        ys = [y for _t, _x, y in piece]
        if len(ys) < 2:
            return NOTHING
        if max(ys) > ys[0]:
            return Check(True, f"the state's y rose {ys[0]:g} → {max(ys):g}")
        if not state.y_speaks_against:
            return NOTHING
        return Check(False, f"the game's own piece y did not rise ({ys[:8]})")
    b0 = t0 + BEFORE_S - BOARD_BEFORE_S
    board = _around(state.board_counts(b0, t1), b0, t1, state.board_counts(b0 - BASELINE_S, b0))
    word = _board_check(test, episode, state, board, piece)
    if word.agrees is False and not state.board_speaks_against:
        return NOTHING
    if word is not NOTHING:
        return word
    if test == "game_over" and found.get("over"):
        flags = [f for _t, f in state.over_flags(t0 - 3.0, t1 + 2.0)]
        if not flags:
            return NOTHING
        if any(flags):
            return Check(True, "the game's own game-over flag was set")
        return Check(False, "the game's own game-over flag stayed unset")
    return NOTHING


def _board_check(test: str, episode: Episode, state: StateView, board: list, piece: list) -> Check:
    """A lock, a hard drop or a clear in the board's filled cells."""
    found = state.found
    data = episode.data or {}
    if test in ("hard_drop", "lock") and found.get("board"):
        counts = [n for _t, n in board]
        if len(counts) < 2:
            return NOTHING
        gained = max(counts) - counts[0]
        if gained >= 3 or (test == "hard_drop" and _span([float(n) for n in counts]) >= 3):
            return Check(True, f"the game's board gained {gained} cells")
        if test == "hard_drop" and found.get("piece"):
            ys = [y for _t, _x, y in piece]
            rows = data.get("rows")
            if ys and isinstance(rows, int) and max(ys) - ys[0] >= max(2, rows - 1):
                return Check(True, f"the state's y jumped {ys[0]:g} → {max(ys):g}")
        return Check(False, f"the game's board did not gain a piece's cells ({counts[:8]})")
    if test == "line_clear" and found.get("board"):
        counts = [n for _t, n in board]
        if len(counts) < 2:
            return NOTHING
        # A board only loses cells when rows clear (or the game wipes it): between two
        # samples a clear of one row, with the piece that completed it and the next one
        # written into the board as well, still shows as a net loss of at least two cells.
        drops = [a - b for a, b in itertools.pairwise(counts) if b < a]
        if drops and max(drops) >= 2:
            return Check(True, f"the game's board lost {max(drops)} cells at once")
        # Samples far apart may hold the clear and several locks between two of them (a
        # row's ten cells lost, twelve gained): only dense samples may speak against it.
        times = [t for t, _n in board]
        if any(b - a > CLEAR_GAP_S for a, b in itertools.pairwise(times)):
            return NOTHING
        return Check(False, f"the game's board never lost cells ({counts[:8]})")
    return NOTHING


def check_score(
    shown: Sequence[float], state: StateView | None, any_values: Sequence[float] = ()
) -> Check:
    """A shown score that rose must be a value of the game's own state: of the number the
    state model took for the score or, where that was a wrong guess, of any number of the
    state (`any_values`). A disagreement needs a score the model found."""
    risen = [v for v in shown if v > min(shown)] if shown else []
    if not risen:
        return NOTHING
    if any(v in set(any_values) for v in risen):
        return Check(True, "the shown score is a value of the game's own state")
    if state is None or not state.found.get("score"):
        return NOTHING
    values = set(state.score_values())
    if any(v in values for v in risen):
        return Check(True, "the shown score equals the game's own score")
    return Check(
        False,
        f"the shown score ({sorted(set(risen))[:5]}) never equalled the game's own score "
        f"({sorted(values)[:5]}) nor any number of its state",
    )

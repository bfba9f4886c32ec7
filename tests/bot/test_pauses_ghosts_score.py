"""Pure logic behind three bot fixes: solid ghost pieces, and the score verdict when no
line was cleared (a game may score only line clears)."""

from __future__ import annotations

import numpy as np

from bench_pipeline.bot import board as B
from bench_pipeline.bot.contract import Verdict
from bench_pipeline.bot.observations import FieldSeen, ObservationLog, PlayFacts
from bench_pipeline.bot.verdicts import score


def _field(rows: list[str]) -> np.ndarray:
    return np.array([[ch == "#" for ch in row] for row in rows], dtype=bool)


def test_a_solid_ghost_under_the_piece_is_found() -> None:
    field = _field(
        [
            "...#......",
            "..###.....",
            "..........",
            "..........",
            "...#......",
            "..###.....",
            "##########",
        ]
    )
    piece = {(0, 3), (1, 2), (1, 3), (1, 4)}
    rest = field & ~B.mask_of(piece, field.shape)
    known = _field(["." * 10] * 6 + ["#" * 10])
    assert B.ghost_of(rest, piece, rest & ~known) == {(4, 3), (5, 2), (5, 3), (5, 4)}


def test_a_landed_piece_known_as_stack_is_no_ghost() -> None:
    field = _field(["....##....", "....##....", "..........", "....##....", "....##...."])
    piece = {(0, 4), (0, 5), (1, 4), (1, 5)}
    rest = field & ~B.mask_of(piece, field.shape)
    assert B.ghost_of(rest, piece, rest & ~rest) is None  # all of it is known stack


def _observed(numbers: list[tuple[float, str, str, int]], locks: int, lines: int) -> ObservationLog:
    """The log of a game started at 1 s: these numbers seen, pieces locked, rows cleared."""
    log = ObservationLog(t0=0.0, loaded=True)
    log.field_seen = FieldSeen("canvas", 0, 0, 300, 600, 10, 20, "test")
    log.facts = PlayFacts(
        started_at=1.0,
        locks=locks,
        lock_times=[2.0 + i for i in range(locks)],
        rows_cleared=lines,
    )
    for number in numbers:
        log.numbers.append(number)
    return log


def test_a_score_still_at_zero_with_no_line_cleared_is_inconclusive() -> None:
    o = _observed([(1.0, "dom:#s", "Score", 0), (9.0, "dom:#s", "Score", 0)], locks=9, lines=0)
    assert score(o).verdict is Verdict.INCONCLUSIVE


def test_a_score_still_at_zero_after_a_line_clear_fails() -> None:
    o = _observed([(1.0, "dom:#s", "Score", 0), (9.0, "dom:#s", "Score", 0)], locks=9, lines=1)
    assert score(o).verdict is Verdict.FAIL


def test_no_number_at_all_over_many_pieces_still_fails() -> None:
    assert score(_observed([], locks=9, lines=0)).verdict is Verdict.FAIL


def test_a_counter_shown_only_once_it_counted_rose_from_nothing() -> None:
    # "Lines: 1 / Count: 100" is written into an empty element at the first line clear,
    # and wiped back to 0 at the top-out: Count rose from nothing to 100.
    numbers = [
        (17.5, "dom:#c#0", "Lines:", 1),
        (17.5, "dom:#c#1", "Count:", 100),
        (30.0, "dom:#c#1", "Count:", 0),
    ]
    verdict = score(_observed(numbers, locks=11, lines=1))
    assert verdict.verdict is Verdict.PASS and "0 → 100 (dom:#c#1)" in verdict.reason
    # A number there from the start and never rising is no score that rose.
    there = [(1.5, "dom:#s", "Score", 100), (9.0, "dom:#s", "Score", 100)]
    assert score(_observed(there, locks=9, lines=1)).verdict is Verdict.FAIL


def test_a_year_scrolled_into_view_late_is_no_score_that_rose() -> None:
    # A footer "© 2022" read for the first time 12 s into play (the window grew): it did
    # not rise from nothing, and a game with no other number has no score.
    footer = [(13.0, "dom:footer > h3", "©", 2022), (20.0, "dom:footer > h3", "©", 2022)]
    assert score(_observed(footer, locks=9, lines=1)).verdict is Verdict.FAIL
    # The same value under a score label still counts as a score that appeared.
    labelled = [(13.0, "dom:#s", "Score:", 2000)]
    assert score(_observed(labelled, locks=9, lines=1)).verdict is Verdict.PASS

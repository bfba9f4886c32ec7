"""The state reader's word on a PASS (crosscheck.py): the same event in the game's own
state confirms it, a contradiction makes it INCONCLUSIVE (never FAIL), and where the state
reader found nothing the renderer's PASS stands alone."""

from __future__ import annotations

from bench_pipeline.bot.crosscheck import SampledState, check, check_score
from bench_pipeline.bot.observations import Episode

LEFT = Episode(
    10.0,
    "pass",
    "'ArrowLeft' moved the piece -1 column(s)",
    {"key": "ArrowLeft", "since": 9.8, "columns": -1},
)


def _piece(*xs: float, y: float = 3.0, t0: float = 9.7) -> SampledState:
    return SampledState(piece=[(t0 + 0.1 * i, x, y) for i, x in enumerate(xs)])


def test_a_left_move_agrees_with_x_going_down_and_not_with_x_standing_or_rising() -> None:
    assert check("move_left", LEFT, _piece(4, 4, 3, 3)).agrees is True
    stood = check("move_left", LEFT, _piece(4, 4, 4, 4))
    assert stood.agrees is False and "x stayed" in stood.saw
    assert check("move_left", LEFT, _piece(4, 5, 5)).agrees is False
    # Samples outside the probe's window say nothing.
    assert check("move_left", LEFT, _piece(4, 3, t0=2.0)).agrees is None


def test_no_state_or_no_piece_found_leaves_the_renderer_alone() -> None:
    assert check("move_left", LEFT, None).agrees is None
    board_only = SampledState(board=[(9.7, 10), (10.2, 14)])
    assert check("move_left", LEFT, board_only).agrees is None


def test_gravity_and_soft_drop_need_y_to_rise() -> None:
    fell = Episode(5.0, "pass", "fell 3 rows", {"since": 3.0})
    falling = SampledState(piece=[(3.0, 4, 0), (4.0, 4, 2), (5.0, 4, 3)])
    still = SampledState(piece=[(3.0, 4, 0), (4.0, 4, 0), (5.0, 4, 0)])
    assert check("gravity", fell, falling).agrees is True
    assert check("gravity", fell, still).agrees is False
    assert check("soft_drop", fell, still).agrees is False


def test_a_lock_or_hard_drop_adds_about_a_piece_of_cells_to_the_board() -> None:
    drop = Episode(
        8.0, "pass", "' ' dropped the piece 13 rows at once", {"key": " ", "since": 7.9, "rows": 13}
    )
    locked = SampledState(board=[(7.8, 20), (8.1, 24)])
    unchanged = SampledState(board=[(7.8, 20), (8.1, 20), (8.4, 20)])
    assert check("hard_drop", drop, locked).agrees is True
    assert check("lock", drop, locked).agrees is True
    assert check("hard_drop", drop, unchanged).agrees is False
    # The piece's y jumping by the rows dropped is the same event where the board alone
    # did not show it (a board that holds the falling piece as well).
    jumped = SampledState(board=[(7.8, 24), (8.1, 24)], piece=[(7.8, 4, 2), (8.1, 4, 15)])
    assert check("hard_drop", drop, jumped).agrees is True


def test_a_clear_is_cells_lost_from_the_board() -> None:
    clear = Episode(12.0, "pass", "1 full row(s) vanished", {"since": 11.5, "rows": 1})
    assert check(
        "line_clear", clear, SampledState(board=[(11.4, 30), (11.8, 34), (12.2, 24)])
    ).agrees
    # Sampled sparsely, a clear falls between two samples with the lock and the next piece
    # (both written into the board): 20 -> 18 is still cells lost at once.
    sparse = SampledState(board=[(11.4, 20), (11.8, 20), (12.2, 18)])
    assert check("line_clear", clear, sparse).agrees
    kept = check("line_clear", clear, SampledState(board=[(11.4, 30), (11.8, 34), (12.2, 34)]))
    assert kept.agrees is False and "never lost cells" in kept.saw
    # CI, a loaded machine: samples a second apart hid a clear behind three locks
    # (28, 32, 32, 34): sparse samples never speak against a clear.
    hidden = SampledState(board=[(10.2, 28), (11.3, 32), (12.4, 32), (12.5, 34)])
    assert check("line_clear", clear, hidden).agrees is None


def test_game_over_flag() -> None:
    over = Episode(30.0, "pass", "stack 20/20 high, then text:Game Over", {})
    assert check("game_over", over, SampledState(over=[(28.0, False), (29.5, True)])).agrees
    assert (
        check("game_over", over, SampledState(over=[(28.0, False), (29.5, False)])).agrees is False
    )


def test_a_shown_score_must_be_a_value_the_games_score_took() -> None:
    state = SampledState(scores=[(5.0, 0), (9.0, 100), (14.0, 300)])
    assert check_score([0, 100, 300], state).agrees is True
    wrong = check_score([2024, 2025], state)  # a year in the header, not the score
    assert wrong.agrees is False and "never equalled" in wrong.saw
    assert check_score([0, 100], SampledState()).agrees is None


def test_a_board_held_by_identity_alone_confirms_but_never_contradicts() -> None:
    # A game that replaces its board array on every lock (a private field: no name to
    # follow) leaves the state reader's reference stale: its full row never goes.
    clear = Episode(12.0, "pass", "1 full row(s) vanished", {"since": 11.5, "rows": 1})
    stale = SampledState(board=[(11.4, 20), (11.8, 24), (12.2, 24)], board_speaks_against=False)
    assert check("line_clear", clear, stale).agrees is None
    lost = SampledState(board=[(11.4, 30), (12.2, 24)], board_speaks_against=False)
    assert check("line_clear", clear, lost).agrees is True


def test_a_right_y_lends_no_trust_to_the_x_paired_with_it() -> None:
    """CI, a loaded machine: the state model took a column that never moved (3.0) for x
    beside a right y; two gravity agreements made the piece trusted, and every move the
    page showed became INCONCLUSIVE. x and y are now trusted apart."""
    from bench_pipeline.bot.observations import ObservationLog
    from bench_pipeline.bot.verdicts import _trusted

    log = ObservationLog()
    log.evidence.add(5.0, "gravity", "pass", "fell 2 rows", {"since": 3.0})
    log.evidence.add(7.0, "soft_drop", "pass", "fell 3 rows", {"since": 6.0})
    log.evidence.add(10.0, "move_left", "pass", LEFT.detail, LEFT.data)
    piece = [(3.0 + 0.5 * i, 3.0, float(i)) for i in range(16)]  # y rises, x never moves
    view = _trusted(log, SampledState(piece=piece))
    assert view is not None and view.y_speaks_against and not view.x_speaks_against
    assert check("move_left", LEFT, view).agrees is None
    # The same x, once it agreed on two moves, may speak against a third.
    moving = SampledState(piece=[(9.7, 4, 0), (10.1, 3, 0), (11.7, 3, 0), (12.1, 4, 0)])
    log.evidence.add(12.0, "move_right", "pass", "'d' moved +1", {"since": 11.8})
    trusted = _trusted(log, moving)
    assert trusted is not None and trusted.x_speaks_against
    assert check("move_left", LEFT, SampledState(piece=[(9.7, 4, 0), (10.1, 4, 0)])).agrees is False

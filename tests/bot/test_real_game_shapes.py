"""Fields that real agent-written games draw and the first bot misread.

A canvas field of another size (12x20) must be found as such, not forced into 10x20; a
lattice of boxes that includes a visible floor row (210 cells) must lose that row; a
field whose only counter is labelled "Lines" has a score; a 15x20 canvas field taken as
10 columns beside a panel must not PASS `loads` once a piece left those columns. Pure
logic: no browser.
"""

from __future__ import annotations

import numpy as np
import pytest

from bench_pipeline.bot.contract import Verdict
from bench_pipeline.bot.geometry import (
    BoardGeometry,
    box_rows,
    canvas_lattice,
    choose_board,
    trim_walls,
)
from bench_pipeline.bot.observations import FieldSeen, Frame, ObservationLog
from bench_pipeline.bot.verdicts import (
    LINES_LABEL,
    NOT_SCORE,
    SCORE_LABEL,
    line_clear,
    loads,
)


def _cells(cols: range, rows: range, pitch: float = 30, x0: int = 0, y0: int = 0) -> list:
    return [
        ("fill", x0 + c * pitch + 1, y0 + r * pitch + 1, pitch - 2, pitch - 2)
        for r in rows
        for c in cols
        if (r + c) % 3
    ]


def test_the_pitch_of_a_piece_drawn_in_one_column_is_read_down_it() -> None:
    # A 640x480 canvas with the 240x480 field in its middle; cells are 22 px squares at a
    # 24 px pitch, and the only piece drawn so far is an O (two columns, two rows) or an
    # upright I (one column): read as 22 px cells, the field was 11x22.
    field = ("fill", 200, 0, 240, 480)
    for piece in ([(4, 0), (5, 0), (4, 1), (5, 1)], [(4, 0), (4, 1), (4, 2), (4, 3)]):
        cells = [("fill", 200 + c * 24 + 1, r * 24 + 1, 22, 22) for c, r in piece]
        found = canvas_lattice(640, 480, [("fill", 0, 0, 640, 480), field, *cells])
        assert found is not None
        assert found[:4] == (200, 0, 240, 480) and found[5:] == (10, 20), found


def test_a_field_of_cells_wider_than_tall_is_found_on_its_steps() -> None:
    # A brick game: 550x750 canvas, cells 48x31 on 54x37 steps (a 6 px gap), every cell
    # outlined and the filled ones black. No cell is square, so no square lattice exists.
    draws = [("fill", 0, 0, 550, 750)]
    for r in range(20):
        for c in range(10):
            draws.append(("stroke", c * 55 + 3, r * 37.5 + 3, 48.4, 31.2))
    draws += [("fill", c * 55 + 6, r * 37.5 + 6, 42, 25) for c, r in [(4, 0), (5, 0), (5, 1)]]
    found = canvas_lattice(550, 750, draws)
    assert found is not None
    x, y, w, h, how, cols, rows = found
    assert (x, y, w, h, cols, rows) == (0, 0, 550, 750, 10, 20)
    assert "not square" in how
    # Square cells are still read as before, never as oblong ones.
    square = canvas_lattice(300, 600, [("fill", 0, 0, 300, 600), *_cells(range(10), range(16, 20))])
    assert square is not None and "not square" not in square[4]


def test_a_12x20_field_in_a_wider_canvas_is_found_with_its_size() -> None:
    # canvas 540x600: a background fill of it all, the field's fill, then the cells.
    draws = [("fill", 0, 0, 540, 600), ("fill", 0, 0, 360, 600), *_cells(range(12), range(15, 20))]
    found = canvas_lattice(540, 600, draws)
    assert found is not None
    x, y, w, h, _how, cols, rows = found
    assert (x, y, w, h, cols, rows) == (0, 0, 360, 600, 12, 20)


def test_a_10x20_field_is_still_10x20() -> None:
    draws = [("fill", 0, 0, 450, 600), ("fill", 0, 0, 300, 600), *_cells(range(10), range(16, 20))]
    found = canvas_lattice(450, 600, draws)
    assert found is not None
    assert found[5:] == (10, 20)
    assert found[:4] == (0, 0, 300, 600)


def _lattice(rows: int, cols: int = 10) -> BoardGeometry:
    return BoardGeometry("dom", 0, 0, cols * 26, rows * 26, cols, rows, "test")


PAGE = np.array([244.0, 241.0, 234.0])
FLOOR = np.array([107.0, 107.0, 107.0])


def _background(rows: int, floor_rows: int = 0, cols: int = 10) -> np.ndarray:
    bg = np.broadcast_to(PAGE, (rows, cols, 3)).copy()
    if floor_rows:
        bg[-floor_rows:] = FLOOR
    return bg


def test_a_floor_row_under_the_field_is_trimmed() -> None:
    found = trim_walls(_lattice(21), _background(21, floor_rows=1), 40.0)
    assert found is not None
    trimmed, what = found
    assert (trimmed.cols, trimmed.rows) == (10, 20)
    assert trimmed.height == 20 * 26 and trimmed.y == 0
    assert "1 floor row" in what


def test_wall_columns_beside_the_field_are_trimmed() -> None:
    bg = _background(21, floor_rows=1, cols=12)
    bg[:, 0] = FLOOR
    bg[:, -1] = FLOOR
    found = trim_walls(_lattice(21, cols=12), bg, 40.0)
    assert found is not None
    trimmed, _ = found
    assert (trimmed.cols, trimmed.rows) == (10, 20)
    assert trimmed.x == 26


def test_walls_with_a_piece_drawn_over_two_of_their_cells_are_still_walls() -> None:
    # 14x24: two wall columns each side and two floor rows; a piece entering from the
    # left painted two wall cells a mauve grey while the background was learnt.
    bg = _background(24, floor_rows=2, cols=14)
    bg[:, :2] = FLOOR
    bg[:, -2:] = FLOOR
    bg[1:3, :2] = np.array([139.0, 122.0, 136.0])
    found = trim_walls(_lattice(24, cols=14), bg, 40.0)
    assert found is not None
    trimmed, what = found
    assert (trimmed.cols, trimmed.rows) == (10, 22)
    assert what == "2 floor row(s) and 4 wall column(s)"


def test_a_uniform_field_of_another_size_is_left_as_it_is() -> None:
    assert trim_walls(_lattice(21), _background(21), 40.0) is None


def test_a_10x20_field_is_never_trimmed() -> None:
    assert trim_walls(_lattice(20), _background(20, floor_rows=1), 40.0) is None


def test_score_labels_in_the_prompt_languages() -> None:
    for label in ("Score", "Punkte", "Puntos", "Points", "スコア", "得分", "分数"):
        assert SCORE_LABEL.search(label), label
    for label in ("Lines", "Zeilen", "Líneas", "Lignes", "ライン", "消除行数"):
        assert LINES_LABEL.search(label) and NOT_SCORE.search(label), label
    for label in ("Level", "Stufe", "Nivel", "Niveau", "レベル", "等级", "Best", "最高"):
        assert NOT_SCORE.search(label) and not SCORE_LABEL.search(label), label


def test_a_field_and_its_side_panel_on_one_background_is_the_field_only() -> None:
    # canvas 820x900 (20x22 cells of 41px) filled as one: the field is the left 10x22,
    # the right half holds a next piece; most drawn cells are in the field.
    field = _cells(range(10), range(14, 22), pitch=41)
    preview = [("fill", 14 * 41, 4 * 41 + k * 41, 41, 41) for k in range(4)]
    found = canvas_lattice(820, 900, [("fill", 0, 0, 820, 900), *field, *preview])
    assert found is not None
    x, y, w, _h, _how, cols, rows = found
    assert (x, y, w, cols, rows) == (0, 0, 410, 10, 22)


def test_a_12x20_field_drawn_beside_a_wide_panel_keeps_its_12_columns() -> None:
    # canvas 540x600 (18x20 cells: the field and a panel in one background), the field's
    # own 360x600 fill, and cells only in its middle ten columns: not narrowed to 10.
    draws = [
        ("fill", 0, 0, 540, 600),
        ("fill", 0, 0, 360, 600),
        *_cells(range(1, 11), range(15, 20)),
    ]
    found = canvas_lattice(540, 600, draws)
    assert found is not None
    assert found[5:] == (12, 20)
    assert found[:4] == (0, 0, 360, 600)


def test_a_menu_start_is_reported_in_the_contracts_form() -> None:
    from bench_pipeline.bot.contract import contract_start

    assert contract_start("menu:Enduro then click:Start") == "click:Start"
    assert contract_start("menu:Enduro then key:Enter") == "key:Enter"
    assert contract_start("menu:Enduro") == "click:Enduro"
    assert contract_start("click:Jugar") == "click:Jugar"
    assert contract_start("auto") == "auto"
    assert contract_start(None) is None


def _observed_on(geometry: BoardGeometry, walls: list[tuple[float, str, str]]) -> ObservationLog:
    """The observation log of a game played on `geometry` with these wall episodes."""
    log = ObservationLog(t0=0.0, loaded=True)
    g = geometry
    log.field_seen = FieldSeen(
        g.renderer, g.x, g.y, g.width, g.height, g.cols, g.rows, g.locator, g.by_shape
    )
    for t, outcome, detail in walls:
        log.evidence.add(t, "walls", outcome, detail)
    log.evidence.add(3.0, "gravity", "pass", "fell a row")
    log.facts.controls.update(left="ArrowLeft", right="ArrowRight")
    return log


def test_a_15x20_canvas_field_narrowed_to_10_columns_says_so() -> None:
    # 817x1090 canvas of 54.5 px cells, the first piece drawn in the middle columns.
    draws = [("fill", 0, 0, 817, 1090), *_cells(range(6, 9), range(0, 2), pitch=54.5)]
    found = canvas_lattice(817, 1090, draws)
    assert found is not None and found[5:] == (10, 20)
    assert "narrowed to the 10 of 15 columns" in found[4]


def test_a_piece_pushed_out_of_a_narrowed_field_leaves_size_and_walls_undecided() -> None:
    narrowed = BoardGeometry(
        "canvas",
        0,
        0,
        545,
        1090,
        10,
        20,
        "canvas #screen: canvas rect 545x1090, cell 54px, narrowed to the 10 of 15 columns",
    )
    out = [(9.0, "fail", "pushing right, the piece left the field (0 of 4 cells visible)")]
    verdict = loads(_observed_on(narrowed, out))
    assert verdict.verdict is Verdict.INCONCLUSIVE
    assert "may be the whole lattice" in verdict.reason
    # Without the push out of it, or on a lattice that was not narrowed, loads stands.
    assert (
        loads(_observed_on(narrowed, [(9.0, "pass", "stopped at the right wall")])).verdict
        is Verdict.PASS
    )
    plain = BoardGeometry(
        "canvas", 0, 0, 300, 600, 10, 20, "canvas #c: canvas rect 300x600, cell 30px"
    )
    assert loads(_observed_on(plain, out)).verdict is Verdict.PASS


def test_a_full_row_left_on_a_narrowed_field_a_piece_left_is_no_line_clear_fail() -> None:
    # A 15x20 field read as its 10 busiest columns: a row full across those ten is not
    # full across the field, so it staying there says nothing against line clears.
    narrowed = BoardGeometry(
        "canvas",
        0,
        0,
        300,
        600,
        10,
        20,
        "canvas #board: canvas rect 300x600, cell 30px, narrowed to the 10 of 15 columns",
    )
    out = [(9.0, "fail", "pushing right, the piece left the field (0 of 4 cells visible)")]
    still = "1 full row(s) still there 2.0s after the piece completed them"
    for geometry, expected in (
        (narrowed, Verdict.INCONCLUSIVE),
        (BoardGeometry("canvas", 0, 0, 300, 600, 10, 20, "canvas #c: cell 30px"), Verdict.FAIL),
    ):
        o = _observed_on(geometry, out)
        o.facts.started_at = 1.0
        o.evidence.add(12.0, "line_clear", "fail", still)
        verdict = line_clear(o)
        assert verdict.verdict is expected, verdict.reason
        assert still in verdict.reason


def _assumed(locator: str, by_shape: bool = False) -> BoardGeometry:
    return BoardGeometry("canvas", 52, 8, 440, 880, 10, 20, locator, by_shape=by_shape)


def _with_frames(o: ObservationLog, bottom_row: bool) -> ObservationLog:
    filled = np.zeros((20, 10), bool)
    filled[19 if bottom_row else 17, 3:7] = True
    o.frames.append(Frame(5.0, filled))
    return o


@pytest.mark.parametrize(
    "geometry",
    [
        _assumed("canvas #c: canvas cell lattice, cell 44px (anchored on drawn cells)"),
        _assumed("canvas #gl: pixel frame with a 1:2 shape 385x769", by_shape=True),
    ],
    ids=["anchored", "1:2 frame"],
)
def test_an_assumed_10x20_size_needs_both_walls_and_the_floor(geometry: BoardGeometry) -> None:
    # A 9x18 field read as 10x20: pieces fall and move by whole cells, but the right
    # wall stops them in column 9 and the stack never reaches row 20.
    both = [(8.0, "pass", "stopped at the left wall"), (9.0, "pass", "stopped at the right wall")]
    short = _with_frames(_observed_on(geometry, both[:1]), bottom_row=False)
    verdict = loads(short)
    assert verdict.verdict is Verdict.INCONCLUSIVE
    assert "right wall" in verdict.reason and "bottom row" in verdict.reason
    assert "left wall" not in verdict.reason.split("and", 1)[1]
    seen = _with_frames(_observed_on(geometry, both), bottom_row=True)
    assert loads(seen).verdict is Verdict.PASS


def test_a_dom_box_taller_than_1_to_2_is_counted_in_square_cells() -> None:
    # A black 200x440 div whose pieces are 20 px squares placed over it: 10x22, not 10x20.
    box = {
        "kind": "dom-box",
        "locator": "box #canvas",
        "rect": {"x": 0, "y": 0, "w": 200, "h": 440},
    }
    found = choose_board([box], {})
    assert found is not None and (found.cols, found.rows) == (10, 22) and found.by_shape
    # A 1:2 box with a border or a little padding stays 10x20; an SVG box always does.
    assert box_rows("dom-box", 204, 404) == 20 and box_rows("dom-box", 220, 430) == 20
    assert box_rows("svg-box", 200, 440) == 20

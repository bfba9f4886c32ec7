"""A field found in a canvas's pixels, for canvases whose draw calls show none (WebGL).

Each image is drawn here the way a real WebGL game in the corpus draws its field: grid
lines only between cells on a canvas the field fills, white outlines on an off-white
field 7 grey levels apart (a lattice whose inner edges also repeat at half the pitch),
a thin well outline in a much larger canvas with nothing else to go by. Pure numpy: no
browser.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from bench_pipeline.bot.geometry import choose_board
from bench_pipeline.bot.pixel_field import field_from_pixels


def _canvas(h: int, w: int, colour: tuple[int, int, int]) -> np.ndarray:
    return np.broadcast_to(np.array(colour, np.uint8), (h, w, 3)).copy()


def _bordered_grid(
    image: np.ndarray, x: int, y: int, pitch: int, cols: int, rows: int, grey: int
) -> None:
    """Grid lines around and between `cols` x `rows` cells, the outer border included."""
    for k in range(cols + 1):
        image[y : y + rows * pitch + 1, x + k * pitch] = grey
    for k in range(rows + 1):
        image[y + k * pitch, x : x + cols * pitch + 1] = grey


def test_grid_lines_between_cells_only_still_give_the_outer_cells() -> None:
    # 256x512, 25.6 px cells: the lines fall on 25 or 26 px steps, none on the edges.
    image = _canvas(512, 256, (0, 0, 0))
    for k in range(1, 10):
        image[:, round(k * 25.6)] = 190
    for k in range(1, 20):
        image[round(k * 25.6), :] = 190
    found = field_from_pixels(image)
    assert found is not None
    assert (found.cols, found.rows) == (10, 20)
    assert found.x == pytest.approx(0, abs=2) and found.width == pytest.approx(256, abs=4)
    assert found.y == pytest.approx(0, abs=2) and found.height == pytest.approx(512, abs=6)
    assert not found.by_shape


def test_a_bordered_grid_one_cell_from_the_canvas_edge_gets_no_extra_rows() -> None:
    # A 512x512 WebGL canvas: a 10x20 grid of 23 px cells with its own border lines, 23 px
    # below the top and 23 px above the bottom (the margin is plain black), the next
    # piece drawn to the right. Its margins are background, not a row of cells.
    image = _canvas(512, 512, (0, 0, 0))
    _bordered_grid(image, x=70, y=23, pitch=23, cols=10, rows=20, grey=120)
    image[60:106, 380:426] = (200, 40, 40)  # the next piece
    found = field_from_pixels(image)
    assert found is not None
    assert (found.cols, found.rows) == (10, 20)
    assert found.y == pytest.approx(23, abs=2) and found.height == pytest.approx(460, abs=4)


def test_a_hatched_well_in_a_thick_frame_is_the_inside_of_the_frame() -> None:
    # A DOM game's background picture: a well of 26 px cells (260x520) inside a 6 px dark
    # frame with a light bevel outside it, its floor finely hatched (dense vertical edges,
    # few horizontal ones), panels and a logo to its right. The field is inside
    # the frame's inner edge, not its outer one.
    image = _canvas(550, 525, (214, 226, 240))
    image[2:548, 2:284] = (230, 236, 246)  # the bevel
    image[9:541, 9:281] = (60, 80, 120)  # the dark frame, 6 px wide
    well = np.full((520, 260, 3), (190, 205, 228), np.uint8)
    ys, xs = np.mgrid[0:520, 0:260]
    # A steep hatch of 1 px lines 3 px apart: edges 3 px long, 6 px apart, in two of
    # every three columns.
    well[(xs + ys // 3) % 3 == 0] = (170, 188, 214)
    image[15:535, 15:275] = well
    image[20:120, 300:500] = (60, 80, 120)  # a panel
    found = field_from_pixels(image)
    assert found is not None and found.by_shape
    assert found.x == pytest.approx(15, abs=1) and found.width == pytest.approx(260, abs=2)
    assert found.y == pytest.approx(15, abs=1) and found.height == pytest.approx(520, abs=2)


def _outlined_well(faint: bool) -> np.ndarray:
    """A well of outlined cells right of a dark panel: a 55 px pitch whose cells are
    41 px outlines 7 px thick, so their inner edges are about half a pitch apart too."""
    image = _canvas(1100, 1280, (0, 6, 0))
    field, outline = (
        ((249, 245, 249), (255, 255, 255)) if faint else ((10, 40, 10), (240, 250, 240))
    )
    image[:, 502:1052] = field
    for r in range(20):
        for c in range(10):
            y, x = r * 55 + 7, 502 + c * 55 + 7
            image[y : y + 41, x : x + 41] = outline
            image[y + 7 : y + 34, x + 7 : x + 34] = field
    return image


@pytest.mark.parametrize("faint", [False, True], ids=["contrasted", "7-levels-apart"])
def test_a_lattice_of_outlined_cells_is_found_at_its_pitch_not_half_of_it(faint: bool) -> None:
    found = field_from_pixels(_outlined_well(faint))
    assert found is not None
    assert (found.cols, found.rows) == (10, 20)
    assert found.width / found.cols == pytest.approx(55, abs=1)
    assert found.x == pytest.approx(502, abs=4)


def test_a_12x20_lattice_keeps_its_size() -> None:
    image = _canvas(700, 500, (20, 20, 30))
    _bordered_grid(image, x=20, y=50, pitch=30, cols=12, rows=20, grey=90)
    found = field_from_pixels(image)
    assert found is not None
    assert (found.cols, found.rows) == (12, 20)


def test_a_well_outline_in_a_larger_canvas_is_taken_by_its_shape() -> None:
    # 600x1200 canvas, #111 background, a thin grey outline of 375x750 with a T inside.
    image = _canvas(1200, 600, (17, 17, 17))
    image[225:976, 112] = image[225:976, 487] = 70
    image[975, 112:488] = 70
    image[400:437, 262:300] = image[437:475, 225:337] = (80, 0, 80)
    found = field_from_pixels(image)
    assert found is not None
    assert (found.cols, found.rows) == (10, 20) and found.by_shape
    assert found.x == pytest.approx(113, abs=2) and found.width == pytest.approx(374, abs=3)
    assert found.y == pytest.approx(225, abs=2) and found.height == pytest.approx(750, abs=3)


@pytest.mark.parametrize(
    "what",
    ["flat", "square frame", "stripes", "noise"],
)
def test_no_field_is_made_up(what: str) -> None:
    image = _canvas(600, 800, (30, 30, 30))
    if what == "square frame":  # a box of the wrong shape
        image[100:500, 100] = image[100:500, 500] = image[499, 100:501] = 200
    elif what == "stripes":  # periodic in one direction only
        for k in range(20):
            image[:, 20 + k * 30] = 200
    elif what == "noise":
        image = np.random.default_rng(7).integers(0, 255, (600, 800, 3), dtype=np.uint8)
    assert field_from_pixels(image) is None


def _canvas_candidate() -> dict[str, Any]:
    return {
        "kind": "canvas",
        "index": 0,
        "locator": "canvas #gl",
        "rect": {"x": 100, "y": 50, "w": 450, "h": 350},
        "backing": {"w": 900, "h": 700},
    }


def test_a_canvas_with_no_draws_takes_the_field_its_pixels_show() -> None:
    asked = []

    def look(cand: dict[str, Any]) -> tuple:
        asked.append(cand["index"])
        return (300.0, 70.0, 280.0, 560.0, "pixel cell lattice, cell 28px", 10, 20)

    geometry = choose_board([_canvas_candidate()], {0: []}, look)
    assert asked == [0]
    assert geometry is not None and not geometry.by_shape
    # Canvas pixels (900 wide) -> page CSS pixels (450 wide, from x=100).
    assert (geometry.x, geometry.y, geometry.width, geometry.height) == (250, 85, 140, 280)
    assert "pixel cell lattice" in geometry.locator


def test_a_canvas_whose_draws_show_its_cells_is_not_looked_at() -> None:
    draws = [("fill", 0, 0, 300, 600)] + [
        ("fill", c * 30 + 1, r * 30 + 1, 28, 28)
        for r in range(15, 20)
        for c in range(10)
        if (r + c) % 3
    ]
    cand = {
        **_canvas_candidate(),
        "backing": {"w": 300, "h": 600},
        "rect": {"x": 0, "y": 0, "w": 300, "h": 600},
    }

    def look(_cand: dict[str, Any]) -> tuple:
        raise AssertionError("the draw calls were enough")

    geometry = choose_board([cand], {0: draws}, look)
    assert geometry is not None and (geometry.cols, geometry.rows) == (10, 20)

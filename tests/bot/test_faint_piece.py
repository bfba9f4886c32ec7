"""Pieces fainter than the cell threshold (tuned on the first piece) are still found.

On the pastel corpus game a J is 137 (RGB distance) from an empty cell and a Z only 66:
after a J first, the threshold (half the first piece's distance) hid every Z, and the
field looked frozen while a Z fell (issue: rotate/hard_drop INCONCLUSIVE, endurance FAIL).
"""

from __future__ import annotations

import numpy as np

from bench_pipeline.bot.play import faint_piece

BACKGROUND = np.array([255.0, 253.0, 249.0])
Z = np.array([255.0, 218.0, 193.0])  # 66 from BACKGROUND
J = np.array([170.0, 150.0, 218.0])  # 137 from BACKGROUND
THRESHOLD = 68.5  # half of J's distance


def field(cells: dict[tuple[int, int], np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(distances, colours, filled) of a 20x10 field with these cells drawn."""
    colours = np.broadcast_to(BACKGROUND, (20, 10, 3)).copy()
    for cell, colour in cells.items():
        colours[cell] = colour
    distances = np.linalg.norm(colours - BACKGROUND, axis=2)
    return distances, colours, distances > THRESHOLD


NO_STACK = np.zeros((20, 10), dtype=bool)
Z_AT_TOP = {(0, 3): Z, (0, 4): Z, (1, 4): Z, (1, 5): Z}


def test_a_whole_faint_piece_in_the_spawn_rows_is_found() -> None:
    distances, colours, filled = field(Z_AT_TOP)
    assert not filled.any()  # invisible at the threshold tuned on a J
    assert faint_piece(distances, colours, filled, NO_STACK) == set(Z_AT_TOP)


def test_a_faint_piece_next_to_the_stack_is_found() -> None:
    stack_cells = {(r, c): J for r in range(2, 20) for c in range(0, 3)}
    distances, colours, filled = field({**stack_cells, **Z_AT_TOP})
    stack = filled.copy()
    assert faint_piece(distances, colours, filled, stack) == set(Z_AT_TOP)


def test_lower_down_it_is_not_taken_for_a_piece() -> None:
    low = {(r + 8, c): colour for (r, c), colour in Z_AT_TOP.items()}
    distances, colours, filled = field(low)
    assert faint_piece(distances, colours, filled, NO_STACK) is None


def test_the_ghost_of_a_piece_entering_the_field_is_not_a_piece() -> None:
    # A bright J with only its bottom row visible, its translucent ghost just below.
    ghost = BACKGROUND + 0.45 * (J - BACKGROUND)
    cells = {(0, 3): J, (0, 4): J, (0, 5): J}
    cells |= {(1, 3): ghost, (2, 3): ghost, (2, 4): ghost, (2, 5): ghost}
    distances, colours, filled = field(cells)
    assert faint_piece(distances, colours, filled, NO_STACK) is None


def test_cells_of_different_colours_are_not_a_piece() -> None:
    # Text or an animation: drawn on, but not one colour.
    shades = [Z, BACKGROUND + 0.4 * (J - BACKGROUND), Z, np.array([230.0, 230.0, 200.0])]
    distances, colours, filled = field(dict(zip(Z_AT_TOP, shades, strict=True)))
    assert faint_piece(distances, colours, filled, NO_STACK) is None


def test_three_cells_or_a_non_tetromino_are_not_a_piece() -> None:
    three = dict(list(Z_AT_TOP.items())[:3])
    distances, colours, filled = field(three)
    assert faint_piece(distances, colours, filled, NO_STACK) is None
    square_ring = {(0, 0): Z, (0, 2): Z, (1, 0): Z, (1, 1): Z, (1, 2): Z}
    distances, colours, filled = field(square_ring)
    assert faint_piece(distances, colours, filled, NO_STACK) is None


def test_noise_below_the_floor_is_ignored() -> None:
    barely = BACKGROUND + np.array([0.0, -8.0, -10.0])  # 13 from the background
    distances, colours, filled = field({cell: barely for cell in Z_AT_TOP})
    assert faint_piece(distances, colours, filled, NO_STACK) is None

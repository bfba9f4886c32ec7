"""Pure board logic of the bot: shapes, drops, clears and the placement heuristic."""

import numpy as np
import pytest

from bench_pipeline.bot import board as B


def grid(*rows: str) -> np.ndarray:
    return np.array([[ch == "#" for ch in row] for row in rows], dtype=bool)


@pytest.mark.parametrize(
    ("cells", "name"),
    [
        ({(0, 3), (0, 4), (0, 5), (0, 6)}, "I"),
        ({(5, 3), (6, 3), (7, 3), (8, 3)}, "I"),
        ({(0, 4), (0, 5), (1, 4), (1, 5)}, "O"),
        ({(0, 4), (1, 3), (1, 4), (1, 5)}, "T"),
        ({(2, 2), (2, 3), (3, 1), (3, 2)}, "S"),
        ({(2, 1), (2, 2), (3, 2), (3, 3)}, "Z"),
        ({(0, 0), (1, 0), (1, 1), (1, 2)}, "J"),
        ({(0, 2), (1, 0), (1, 1), (1, 2)}, "L"),
        ({(0, 0), (0, 1), (0, 2)}, None),
        ({(0, 0), (0, 2), (1, 0), (1, 2)}, None),
    ],
)
def test_identify_any_orientation(cells: set, name: str | None) -> None:
    assert B.identify(cells) == name


@pytest.mark.parametrize(("letter", "count"), [("I", 2), ("O", 1), ("T", 4), ("S", 2), ("J", 4)])
def test_orientations_are_distinct(letter: str, count: int) -> None:
    shape = B._TETROMINOES[letter]
    assert len(B.orientations(shape)) == count


def test_drop_and_clear() -> None:
    stack = grid(
        "..........",
        "..........",
        "..........",
        "####.#####",
    )
    landed = B.drop(stack, {(0, 4), (1, 4), (2, 4), (-1, 4)})  # a vertical I above column 4
    assert landed == {(0, 4), (1, 4), (2, 4), (3, 4)}
    merged = stack | B.mask_of(landed, stack.shape)
    cleared, n = B.clear_full_rows(merged)
    assert n == 1
    assert cleared[3].tolist() == [False] * 4 + [True] + [False] * 5
    assert not cleared[0].any()


def test_features_count_height_holes_and_bumpiness() -> None:
    board = grid(
        "..........",
        "#.........",
        "..#.......",
        "#.##......",
    )
    height, holes, bumpiness = B.features(board)
    assert height == 3 + 2 + 1  # columns 0, 2, 3
    assert holes == 1  # column 0, row 2
    assert bumpiness == 3 + 2 + 1 + 1


def test_best_placement_fills_the_gap_and_clears() -> None:
    stack = np.zeros((20, 10), dtype=bool)
    stack[19, :9] = True  # a row missing only its last cell
    piece = {(0, 4), (1, 4), (2, 4), (3, 4)}  # vertical I
    best = B.best_placement(stack, piece, can_rotate=True)
    assert best is not None
    assert (19, 9) in best.landed
    assert best.left == 9


def test_without_rotation_only_the_current_orientation_is_used() -> None:
    stack = np.zeros((20, 10), dtype=bool)
    piece = {(0, 3), (0, 4), (0, 5), (0, 6)}  # horizontal I
    best = B.best_placement(stack, piece, can_rotate=False)
    assert best is not None and B.normalize(best.landed) == B.normalize(piece)


def test_components_are_four_connected() -> None:
    board = grid("#.#", "#..", "..#")
    groups = sorted(B.components(board), key=len)
    assert [len(g) for g in groups] == [1, 1, 2]

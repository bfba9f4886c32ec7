"""Pure board logic: pieces, drops, line clears and the placement heuristic.

A board is a (rows, cols) boolean numpy array, row 0 at the top. A piece is a frozenset
of (row, col) cells.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

Cell = tuple[int, int]
Piece = frozenset[Cell]

# The methodology's weights (Yiyuan Lee's well-known tuned heuristic).
W_HEIGHT, W_LINES, W_HOLES, W_BUMPINESS = -0.51, 0.76, -0.36, -0.18


def normalize(cells: Iterable[Cell]) -> Piece:
    cells = list(cells)
    r0 = min(r for r, _ in cells)
    c0 = min(c for _, c in cells)
    return frozenset((r - r0, c - c0) for r, c in cells)


def rotate_cw(shape: Piece) -> Piece:
    return normalize((c, -r) for r, c in shape)


def orientations(shape: Piece) -> list[Piece]:
    """The distinct orientations of a shape (1 for O, 2 for I/S/Z, 4 for T/J/L)."""
    out: list[Piece] = []
    current = normalize(shape)
    for _ in range(4):
        if current not in out:
            out.append(current)
        current = rotate_cw(current)
    return out


_TETROMINOES: dict[str, Piece] = {
    "I": normalize([(0, 0), (0, 1), (0, 2), (0, 3)]),
    "O": normalize([(0, 0), (0, 1), (1, 0), (1, 1)]),
    "T": normalize([(0, 0), (0, 1), (0, 2), (1, 1)]),
    "S": normalize([(0, 1), (0, 2), (1, 0), (1, 1)]),
    "Z": normalize([(0, 0), (0, 1), (1, 1), (1, 2)]),
    "J": normalize([(0, 0), (1, 0), (1, 1), (1, 2)]),
    "L": normalize([(0, 2), (1, 0), (1, 1), (1, 2)]),
}
_BY_SHAPE: dict[Piece, str] = {o: name for name, s in _TETROMINOES.items() for o in orientations(s)}


def identify(cells: Iterable[Cell]) -> str | None:
    """The tetromino letter of four cells in any orientation, else None."""
    cells = list(cells)
    if len(cells) != 4:
        return None
    return _BY_SHAPE.get(normalize(cells))


def components(mask: np.ndarray) -> list[set[Cell]]:
    """4-connected groups of filled cells."""
    rows, cols = mask.shape
    seen = np.zeros_like(mask, dtype=bool)
    groups: list[set[Cell]] = []
    for r in range(rows):
        for c in range(cols):
            if not mask[r, c] or seen[r, c]:
                continue
            group: set[Cell] = set()
            stack = [(r, c)]
            seen[r, c] = True
            while stack:
                y, x = stack.pop()
                group.add((y, x))
                for dy, dx in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                    ny, nx = y + dy, x + dx
                    if 0 <= ny < rows and 0 <= nx < cols and mask[ny, nx] and not seen[ny, nx]:
                        seen[ny, nx] = True
                        stack.append((ny, nx))
            groups.append(group)
    return groups


def cells_of(mask: np.ndarray) -> set[Cell]:
    return {(int(r), int(c)) for r, c in zip(*np.nonzero(mask), strict=True)}


def mask_of(cells: Iterable[Cell], shape: tuple[int, int]) -> np.ndarray:
    mask = np.zeros(shape, dtype=bool)
    for r, c in cells:
        if 0 <= r < shape[0] and 0 <= c < shape[1]:
            mask[r, c] = True
    return mask


def fits(stack: np.ndarray, cells: Iterable[Cell]) -> bool:
    rows, cols = stack.shape
    return all(0 <= c < cols and r < rows and (r < 0 or not stack[r, c]) for r, c in cells)


def drop(stack: np.ndarray, cells: Iterable[Cell]) -> set[Cell]:
    """Where cells land when moved straight down onto the stack."""
    current = set(cells)
    while True:
        lower = {(r + 1, c) for r, c in current}
        if not fits(stack, lower):
            return current
        current = lower


def ghost_of(rest: np.ndarray, piece: Iterable[Cell], loose: np.ndarray) -> set[Cell] | None:
    """The ghost of `piece` drawn as solid cells, if there is one.

    `rest` is the field without the piece; `loose` its cells not known to be stack. The
    ghost is the piece moved straight down, all of its cells loose, exactly where the piece
    would land on the rest without them."""
    piece = set(piece)
    if not piece:
        return None
    rows = rest.shape[0]
    for d in range(1, rows):
        ghost = {(r + d, c) for r, c in piece}
        if any(r >= rows for r, _ in ghost):
            return None
        if all(r >= 0 and loose[r, c] for r, c in ghost):
            without = rest.copy()
            for cell in ghost:
                without[cell] = False
            if drop(without, piece) == ghost:
                return ghost
    return None


def clear_full_rows(board: np.ndarray) -> tuple[np.ndarray, int]:
    full = board.all(axis=1)
    n = int(full.sum())
    if n == 0:
        return board.copy(), 0
    kept = board[~full]
    return np.vstack([np.zeros((n, board.shape[1]), dtype=bool), kept]), n


def row_clear_between(before: np.ndarray, after: np.ndarray, top: int = 5) -> int:
    """How many full rows of `before` were cleared in `after` (0: no clear seen).

    A clear is the full rows gone and everything else as `before` showed it, with the rows
    above moved down by as many rows: compared below the `top` rows, where a new piece
    enters, and allowing four cells for a piece or ghost drawn on the stack. A board
    wiped at a game over, a ghost that completed a row for a moment, a flash of the whole
    field: none of them looks like that."""
    if before.shape != after.shape:
        return 0
    full = before.all(axis=1)
    n = int(full.sum())
    if not 1 <= n <= 4 or after[full].all(axis=1).all():
        return 0
    expected, _ = clear_full_rows(before)
    if int((expected[top:] != after[top:]).sum()) > 4:
        return 0
    return n


def features(board: np.ndarray) -> tuple[int, int, int]:
    """(aggregate height, holes, bumpiness)."""
    rows, _ = board.shape
    filled = board.any(axis=0)
    tops = np.where(filled, board.argmax(axis=0), rows)
    heights = rows - tops
    holes = int(sum(int((~board[t:, c]).sum()) for c, t in enumerate(tops) if t < rows))
    return int(heights.sum()), holes, int(np.abs(np.diff(heights)).sum())


def evaluate(board_with_piece: np.ndarray) -> float:
    cleared, lines = clear_full_rows(board_with_piece)
    height, holes, bumpiness = features(cleared)
    return W_HEIGHT * height + W_LINES * lines + W_HOLES * holes + W_BUMPINESS * bumpiness


@dataclass(frozen=True)
class Placement:
    shape: Piece  # normalized orientation to reach
    left: int  # target leftmost column
    landed: frozenset[Cell]
    score: float


def placements(stack: np.ndarray, shapes: Iterable[Piece]) -> list[Placement]:
    _rows, cols = stack.shape
    out: list[Placement] = []
    for shape in shapes:
        width = max(c for _, c in shape) + 1
        height = max(r for r, _ in shape) + 1
        for left in range(cols - width + 1):
            start = {(r - height, c + left) for r, c in shape}
            if not fits(stack, start):
                continue
            landed = drop(stack, start)
            if any(r < 0 for r, _ in landed):
                continue
            board = stack.copy()
            for r, c in landed:
                board[r, c] = True
            out.append(Placement(shape, left, frozenset(landed), evaluate(board)))
    return out


def best_placement(stack: np.ndarray, piece: Iterable[Cell], can_rotate: bool) -> Placement | None:
    shape = normalize(piece)
    shapes = orientations(shape) if can_rotate else [shape]
    options = placements(stack, shapes)
    return max(options, key=lambda p: (p.score, -abs(p.left - 4))) if options else None

"""`state_model.interpret` on hand-made sample sequences (no browser): a small Tetris run
(gravity, left/right presses, a double line clear, then hard drops into the same columns
until the stack tops out) stored the ways real games store it."""

from __future__ import annotations

from typing import Any

import pytest

from bench_pipeline.bot.readers.state_model import interpret

ROWS, COLS = 20, 10


def _run(
    hidden: int = 0,
    piece_in_board: bool = True,
    keys: tuple[str, str] = ("ArrowLeft", "ArrowRight"),
) -> tuple[list[tuple[float, dict[str, Any]]], list[tuple[float, str]], list[list[str]]]:
    """Samples of a game: each a rows x cols grid (top row first, hidden rows included),
    scalars x, y, score, lines, over, a clock and a constant. Also the grids, to store
    them in other layouts."""
    height = ROWS + hidden
    locked: set[tuple[int, int]] = set()
    # two bottom rows filled but for columns 4-5: the first O piece there clears both
    for r in (height - 1, height - 2):
        locked |= {(r, c) for c in range(COLS) if c not in (4, 5)}
    x, y, score, lines, over = 4, 0, 0, 0, False
    timer = 3  # a setTimeout id the game keeps: it rises with every gravity step, forever
    t, clock = 0.0, 0.0
    samples: list[tuple[float, dict[str, Any]]] = []
    actions: list[tuple[float, str]] = []
    grids: list[list[str]] = []
    moves = [keys[0], keys[0], keys[1], keys[1], keys[1], keys[0]]  # back to x = 4

    def piece() -> set[tuple[int, int]]:
        return {(y + dy, x + dx) for dy in (0, 1) for dx in (0, 1)}

    def record() -> None:
        cells = locked | (piece() if piece_in_board and not over else set())
        grid = [
            "".join("3" if (r, c) in cells else "." for c in range(COLS)) for r in range(height)
        ]
        grids.append(grid)
        scalars = {
            **{"s0": x, "s1": y, "s2": score, "s3": lines, "s4": over},
            **{"s5": clock, "s6": 7, "s7": timer},
        }
        samples.append((t, {"ok": True, "boards": {"b0": grid}, "scalars": scalars}))

    record()
    step = 0
    while step < 400:
        step += 1
        t += 0.1
        clock += 16.7 * (1 + step % 3)
        if over:
            record()
            if len(samples) > 3 and samples[-4][1]["scalars"]["s4"]:
                break
            continue
        if moves and step % 2 == 0:
            key = moves.pop(0)
            actions.append((t - 0.05, key))
            x += -1 if key == keys[0] else 1
            record()
            continue
        below = {(r + 1, c) for r, c in piece()}
        if any(r >= height for r, _ in below) or below & locked:
            locked |= piece()
            full = [r for r in range(height) if all((r, c) in locked for c in range(COLS))]
            for r in sorted(full):
                locked = {(rr + 1 if rr < r else rr, c) for rr, c in locked if rr != r}
            lines += len(full)
            score += [0, 100, 300, 500, 800][len(full)]
            x, y = 4, 0
            if piece() & locked:
                over = True
        else:
            y += 1
        timer += 1
        record()
    return samples, actions, grids


DESCRIPTION = {
    "ok": True,
    "boards": [{"id": "b0", "path": "window.game.board", "layout": "rows"}],
    "scalars": [
        {"id": "s0", "path": "window.game.piece.x", "type": "number"},
        {"id": "s1", "path": "window.game.piece.y", "type": "number"},
        {"id": "s2", "path": "window.game.points", "type": "number"},
        {"id": "s3", "path": "window.game.cleared", "type": "number"},
        {"id": "s4", "path": "window.game.ended", "type": "boolean"},
        {"id": "s5", "path": "window.clock", "type": "number"},
        {"id": "s6", "path": "window.SIZE", "type": "number"},
        {"id": "s7", "path": "window.game.timeout", "type": "number"},
    ],
    "shapes": [{"id": "p0", "path": "window.game.piece.shape", "layout": "matrix"}],
}


def _with_boards(samples, convert) -> list[tuple[float, dict[str, Any]]]:
    out = []
    for t, s in samples:
        out.append((t, {**s, "boards": {"b0": convert(s["boards"]["b0"])}}))
    return out


def test_the_board_piece_score_lines_and_game_over_are_found() -> None:
    samples, actions, _ = _run()
    model = interpret(DESCRIPTION, samples, actions, renderer_grid=(ROWS, COLS))
    board = model.board
    assert board is not None and board.id == "b0"
    assert (board.columns_first, board.flipped, board.hidden_rows) == (False, False, 0)
    assert board.shape == (ROWS, COLS) and board.matches_renderer and board.includes_piece
    assert board.frames[0][1][0] == "....##...."
    assert model.piece is not None
    assert (model.piece.x_id, model.piece.y_id) == ("s0", "s1")
    assert (model.piece.left_key, model.piece.right_key) == ("ArrowLeft", "ArrowRight")
    assert model.piece.x_step == 1 and model.piece.y_step == 1
    assert model.piece.shape_id == "p0"
    assert model.score is not None and model.score.id == "s2"
    assert model.score.evidence["rises_at_clears"] >= 1
    assert model.lines is not None and model.lines.id == "s3"
    assert model.game_over is not None and model.game_over.id == "s4"
    assert (model.game_over.playing_value, model.game_over.over_value) == (False, True)
    assert model.to_json()["board"]["id"] == "b0"  # JSON-able


def test_a_timer_id_that_rises_with_gravity_but_never_goes_back_is_not_y() -> None:
    samples, actions, _ = _run()
    # the timer even comes first, so only behaviour can tell them apart
    description = {**DESCRIPTION, "scalars": DESCRIPTION["scalars"][::-1]}
    model = interpret(description, samples, actions, renderer_grid=(ROWS, COLS))
    assert model.piece is not None and model.piece.y_id == "s1"
    assert model.piece.evidence["y"]["resets"] >= 1


def test_with_no_clear_a_number_that_rose_once_and_fell_is_not_the_score() -> None:
    samples = []
    for i in range(12):
        cell = 1 if i == 5 else 0  # a matrix cell: 0, 1, 0
        scalars = {"s0": cell, "s1": 0, "s2": 40 if i > 7 else 0}
        samples.append((i * 0.1, {"ok": True, "boards": {}, "scalars": scalars}))
    scalars = [
        {"id": "s0", "path": "window.piece.m", "type": "number"},
        {"id": "s1", "path": "window.score", "type": "number"},
        {"id": "s2", "path": "window.level", "type": "number"},
    ]
    model = interpret({"ok": True, "boards": [], "scalars": scalars}, samples, [])
    assert model.score is None
    assert model.game_over is None  # 0 -> 40 is a count, not a flag


def test_a_number_picked_at_random_for_each_piece_is_not_y() -> None:
    samples, actions, _ = _run()
    colours = [3, 1, 4, 1, 5, 2, 6, 5, 3, 5, 0, 2, 6, 4, 3, 1]
    changed = []
    for i, (t, s) in enumerate(samples):
        changed.append((t, {**s, "scalars": {**s["scalars"], "s1": colours[i % len(colours)]}}))
    model = interpret(DESCRIPTION, changed, actions, renderer_grid=(ROWS, COLS))
    assert model.piece is not None and model.piece.y_id != "s1"


def test_a_fall_hidden_by_unreadable_samples_still_counts() -> None:
    # a piece's y read as a score: it rises, is unreadable while the piece is replaced,
    # and is back at the top afterwards; that is not a score
    values = [4, 6, 8, 10, 12, 14, None, None, 0, 2, 4, 6]
    samples = [
        (i * 0.1, {"ok": True, "boards": {}, "scalars": {"s0": v}}) for i, v in enumerate(values)
    ]
    scalars = [{"id": "s0", "path": "window.blocks[0].y", "type": "number"}]
    actions = [(i * 0.1 + 0.05, " ") for i in range(12)]
    model = interpret({"ok": True, "boards": [], "scalars": scalars}, samples, actions)
    assert model.score is None


def test_left_is_the_key_that_lowers_x_whatever_it_is_called() -> None:
    samples, actions, _ = _run(keys=("j", "l"))
    model = interpret(DESCRIPTION, samples, actions, renderer_grid=(ROWS, COLS))
    assert model.piece is not None and (model.piece.left_key, model.piece.right_key) == ("j", "l")


def test_a_column_major_board_is_turned_rows_first() -> None:
    samples, actions, _ = _run()

    def columns(grid: list[str]) -> list[str]:
        return ["".join(row[c] for row in grid) for c in range(COLS)]

    model = interpret(
        DESCRIPTION, _with_boards(samples, columns), actions, renderer_grid=(ROWS, COLS)
    )
    assert model.board is not None and model.board.columns_first and not model.board.flipped
    assert model.board.array_shape == (COLS, ROWS) and model.board.shape == (ROWS, COLS)
    assert model.board.frames[0][1][0] == "....##...."


def test_a_board_stored_bottom_row_first_is_flipped() -> None:
    samples, actions, _ = _run()
    model = interpret(
        DESCRIPTION, _with_boards(samples, lambda g: g[::-1]), actions, renderer_grid=(ROWS, COLS)
    )
    assert model.board is not None and model.board.flipped
    assert model.board.frames[0][1][0] == "....##...."
    assert model.board.frames[0][1][-1] == "####..####"


def test_hidden_rows_and_walls_inside_the_array_are_trimmed() -> None:
    samples, actions, _ = _run(hidden=2)
    walled = _with_boards(samples, lambda g: ["9" + r + "9" for r in g] + ["9" * (COLS + 2)])
    model = interpret(DESCRIPTION, walled, actions, renderer_grid=(ROWS, COLS))
    board = model.board
    assert board is not None
    assert board.hidden_rows == 2 and board.walls == (1, 1) and board.floor_rows == 1
    assert board.shape == (ROWS, COLS) and board.matches_renderer
    assert board.frames[-1][1][-1] != "#" * COLS  # the floor row is gone


def test_a_flat_board_is_cut_into_rows() -> None:
    samples, actions, _ = _run()
    description = {**DESCRIPTION, "boards": [{"id": "b0", "path": "heap#0", "layout": "flat"}]}
    model = interpret(
        description,
        _with_boards(samples, lambda g: ["".join(g)]),
        actions,
        renderer_grid=(ROWS, COLS),
    )
    assert model.board is not None and model.board.shape == (ROWS, COLS)
    assert not model.board.columns_first and model.board.frames[0][1][0] == "....##...."


def test_a_board_without_the_piece_is_still_the_board() -> None:
    samples, actions, _ = _run(piece_in_board=False)
    model = interpret(DESCRIPTION, samples, actions, renderer_grid=(ROWS, COLS))
    assert model.board is not None and model.board.id == "b0" and not model.board.includes_piece
    assert model.board.shape == (ROWS, COLS)


def test_a_board_that_never_changes_and_a_busy_preview_are_not_the_board() -> None:
    samples, actions, grids = _run()
    static = ["." * COLS] * ROWS
    boards = [
        {"id": "b0", "path": "window.game.board", "layout": "rows"},
        {"id": "b1", "path": "window.empty", "layout": "rows"},
        {"id": "b2", "path": "window.next", "layout": "rows"},
    ]
    mixed = []
    for i, (t, s) in enumerate(samples):
        preview = ["#." if (i + j) % 2 else ".#" for j in range(4)]
        mixed.append((t, {**s, "boards": {"b0": grids[i], "b1": static, "b2": preview}}))
    model = interpret({**DESCRIPTION, "boards": boards}, mixed, actions, (ROWS, COLS))
    assert model.board is not None and model.board.id == "b0"


def test_without_a_renderer_grid_gravity_still_orients_the_board() -> None:
    samples, actions, _ = _run()

    def columns(grid: list[str]) -> list[str]:
        return ["".join(row[c] for row in grid) for c in range(COLS)][::-1]

    model = interpret(DESCRIPTION, _with_boards(samples, columns), actions)
    assert model.board is not None and model.board.columns_first
    assert model.board.evidence["vertical_from"] == "gravity"
    assert model.board.frames[0][1][0] == "....##...."


@pytest.mark.parametrize(
    "description",
    [{"ok": False, "error": "timeout", "boards": [], "scalars": []}, {}],
)
def test_no_state_gives_an_empty_model(description: dict[str, Any]) -> None:
    samples, actions, _ = _run()
    model = interpret(description, samples, actions)
    assert model.board is None and model.piece is None and model.score is None
    assert model.notes


def test_nothing_found_is_said_so() -> None:
    samples = [(i * 0.1, {"ok": True, "boards": {}, "scalars": {"s6": 7}}) for i in range(10)]
    model = interpret({"ok": True, "boards": [], "scalars": DESCRIPTION["scalars"]}, samples, [])
    assert (model.board, model.piece, model.score, model.game_over) == (None, None, None, None)
    assert "no candidate board" in model.notes[0]

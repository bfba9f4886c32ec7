"""Two things the bot reads besides the falling piece: which keys the game's code mentions
(the order and choice of control probes) and row clears seen in the recorded frames."""

from __future__ import annotations

import numpy as np
import pytest

from bench_pipeline.bot import board as B
from bench_pipeline.bot.evaluate import is_ignored_console
from bench_pipeline.bot.play import Bot, Evidence
from bench_pipeline.bot.session import EventLog, Frame
from bench_pipeline.bot.source_keys import KeyPrior, prior_from

ARROWS_ONLY = """
document.addEventListener('keydown', (e) => {
  switch (e.key) {
    case 'ArrowLeft': move(-1); break;
    case 'ArrowRight': move(1); break;
    case 'ArrowUp': rotate(); break;
    case 'ArrowDown': softDrop(); break;
  }
});
const SIZE = 30, COLS = 10, ROWS = 20;
"""
KEY_CODES = """
window.onkeydown = function (ev) {
  if (ev.keyCode == 37) left(); else if (ev.keyCode == 39) right();
  else if (ev.keyCode === 87) rotate();
};
ctx.fillRect(0, 0, 300.5, 600); var padding = '40px'; var id = '#40';
"""
WASD_CODES = """
const keymap = { KeyA: 'left', KeyD: 'right', KeyS: 'down', KeyW: 'rotate' };
onkeydown = (e) => act(keymap[e.code]);
"""


def test_named_keys_are_found_and_absent_ones_are_not() -> None:
    prior = prior_from(ARROWS_ONLY)
    for key in ("ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown"):
        assert prior.mentions(key)
    for key in ("w", "x", "Enter", "Shift", "q", "i"):
        assert not prior.mentions(key), key


def test_key_codes_count_only_as_standalone_numbers() -> None:
    prior = prior_from(KEY_CODES)
    assert prior.mentions("ArrowLeft") and prior.mentions("ArrowRight")
    assert prior.mentions("w")  # keyCode 87
    # 40 only appears inside '40px' and '#40', 300.5 is no 30x: Down and Shift unmentioned.
    assert not prior.mentions("ArrowDown")
    assert not prior.mentions("Shift")


def test_codes_like_keyw_name_the_letter() -> None:
    prior = prior_from(WASD_CODES)
    assert [k for k in ("a", "d", "s", "w", "ArrowLeft") if prior.mentions(k)] == [
        "a",
        "d",
        "s",
        "w",
    ]


def test_a_key_map_written_as_an_object_literal_names_its_keys() -> None:
    prior = prior_from("const act = { ArrowLeft: left, s: soft,\n  q: () => rotate(1) }[e.key];")
    assert prior.mentions("q") and prior.mentions("s") and prior.mentions("ArrowLeft")
    assert not prior.mentions("e") and not prior.mentions("ArrowRight")


def test_mentioned_keys_come_first_and_unknown_code_changes_nothing() -> None:
    keys = ("ArrowLeft", "a", "j", "h")
    assert prior_from(WASD_CODES).order(keys) == ["a", "ArrowLeft", "j", "h"]
    assert KeyPrior().order(keys) == list(keys)
    assert prior_from("   ").order(keys) == list(keys)
    assert prior_from(None).to_try(keys) == list(keys)


def test_unmentioned_keys_are_skipped_only_once_the_found_controls_confirm_the_scan() -> None:
    prior = prior_from(ARROWS_ONLY)
    hard_drop_keys = (" ", "ArrowUp", "w", "Enter", "i", "Shift")
    assert prior.to_try(hard_drop_keys) == ["ArrowUp", " ", "w", "Enter", "i", "Shift"]
    # The scan failed to see how the game reads its keys (found controls unmentioned).
    assert not prior.confirm(["a", "d"])
    assert prior.to_try(hard_drop_keys)[-1] == "Shift"
    assert prior.confirm(["ArrowLeft", "ArrowRight"])
    assert prior.to_try(hard_drop_keys) == ["ArrowUp"]
    assert not KeyPrior().confirm(["ArrowLeft", "ArrowRight"])  # nothing read: never trusted


def grid(*rows: str) -> np.ndarray:
    return np.array([[ch == "#" for ch in row] for row in rows], dtype=bool)


BEFORE = grid(
    "....##....",  # the next piece at the top
    "....##....",
    "..........",
    "..........",
    "..........",
    "..........",
    "#.........",
    "##....#...",
    "##########",
    "###.######",
)


def test_a_full_row_gone_with_the_rows_above_moved_down_is_a_clear() -> None:
    after = grid(
        "..........",
        "....##....",
        "....##....",
        "..........",
        "..........",
        "..........",
        "..........",
        "#.........",
        "##....#...",
        "###.######",
    )
    assert B.row_clear_between(BEFORE, after) == 1


@pytest.mark.parametrize(
    "after",
    [
        # The full row is still there: no clear (a game that does not clear rows).
        BEFORE.copy(),
        # Wiped at a game over: everything gone, not one row.
        grid(*["." * 10] * 10),
        # The row emptied but nothing above moved down.
        grid(
            "....##....",
            "....##....",
            "..........",
            "..........",
            "..........",
            "..........",
            "#.........",
            "##....#...",
            "..........",
            "###.######",
        ),
    ],
)
def test_what_is_no_clear(after: np.ndarray) -> None:
    assert B.row_clear_between(BEFORE, after) == 0


def test_a_whole_field_flash_is_no_clear() -> None:
    flash = np.ones((10, 10), dtype=bool)
    assert B.row_clear_between(flash, np.zeros((10, 10), dtype=bool)) == 0


def test_the_bot_finds_a_clear_in_its_recorded_frames() -> None:
    log = EventLog()
    bot = Bot.__new__(Bot)
    bot.log = log
    bot.started_at = 0.0
    bot.clears_seen, bot._clears_scanned, bot.lines_cleared = 0, 0, 0
    bot.evidence = Evidence()
    after = np.vstack([np.zeros((1, 10), dtype=bool), np.delete(BEFORE, 8, axis=0)])
    log.frames = [Frame(1.0, BEFORE), Frame(1.2, BEFORE), Frame(1.4, after)]
    bot.scan_clears()
    assert bot.clears_seen == 1 and bot.rows_cleared == 1
    assert bot.evidence.has("line_clear", "pass")
    # Frames already scanned are not counted again.
    bot.scan_clears()
    assert bot.clears_seen == 1


@pytest.mark.parametrize(
    ("message", "ignored"),
    [
        ("Failed to load resource: the server responded with a status of 404 ()", True),
        ("Manifest fetch from http://127.0.0.1:8000/manifest.json failed, code 404", True),
        ("Uncaught TypeError: Cannot read properties of undefined (reading 'draw')", False),
        ("[analytics] beacon failed: manifest", False),
    ],
)
def test_missing_files_are_no_console_errors_of_the_game(message: str, ignored: bool) -> None:
    assert is_ignored_console(message) is ignored

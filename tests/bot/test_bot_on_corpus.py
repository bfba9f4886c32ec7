"""The bot against the labelled corpus: every verdict of every game is asserted.

A short endurance window keeps the suite fast; `expected.json` may list `tolerated`
alternatives for verdicts that depend on the bot's timing (never a PASS for a FAIL); a game
with a wrong verdict other than a false PASS is evaluated once more (a shared, loaded machine).
"""

from __future__ import annotations

import json
import os
import shutil
import warnings
from pathlib import Path

import pytest

from bench_pipeline.bot import TEST_IDS, evaluate

GAMES = Path(__file__).parent / "games"
ALL_GAMES = sorted(p for p in GAMES.iterdir() if (p / "expected.json").is_file())
# Played live by `make test`: one game per renderer, a defect and a start behind a form.
# Every game's verdicts are asserted on every run by test_rejudged_corpus.py, from the
# observation logs recorded live (tests/bot/record_corpus_logs.py), so a verdict change
# is caught in a second; the live games check the playing. BENCH_LIVE_CORPUS=all plays
# the whole corpus (about 15 minutes on two cores), as a change to the readers needs.
LIVE = (
    "canvas-basic",
    "dom-table",
    "svg-board",
    "webgl-well-de",
    "defect-no-line-clear",
    "canvas-bricks-name-form-zh",
)
CORPUS = (
    ALL_GAMES
    if os.environ.get("BENCH_LIVE_CORPUS") == "all"
    else [p for p in ALL_GAMES if p.name in LIVE]
)
ENDURANCE_S = 25.0


def _no_row_completed(test: str, result: dict) -> bool:
    """On a loaded machine the bot may fill no row within the window: line_clear is then
    INCONCLUSIVE for that reason (docs/bot.md, known limitations), never a wrong verdict."""
    return (
        test == "line_clear"
        and result["tests"][test] == "INCONCLUSIVE"
        and "no row was completed" in result["reasons"][test]
    )


def _wrong(expected: dict, result: dict) -> dict[str, str]:
    tolerated = expected.get("tolerated", {})
    return {
        test: f"{result['tests'][test]} (expected {want}): {result['reasons'][test]}"
        for test, want in expected["tests"].items()
        if result["tests"][test] != want
        and result["tests"][test] not in tolerated.get(test, [])
        and not _no_row_completed(test, result)
    }


@pytest.mark.slow
@pytest.mark.parametrize("game", CORPUS, ids=lambda p: p.name)
def test_every_verdict_matches_the_label(game: Path, tmp_path: Path, chromium: str) -> None:
    expected = json.loads((game / "expected.json").read_text())
    result = evaluate(str(game), endurance_s=ENDURANCE_S, artifacts=tmp_path / "1").to_json()
    wrong = _wrong(expected, result)
    if wrong:
        # The bot gives the same verdict in about nine of ten (game, test) pairs across
        # repeats (docs/bot.md, Accuracy), and the suite runs it beside other browsers on a
        # shared machine: a miss is evaluated once more, and said. A PASS where the label
        # is FAIL is never given a second chance.
        false_pass = {t: w for t, w in wrong.items() if w.startswith("PASS")}
        assert not false_pass, json.dumps(false_pass, indent=1)
        warnings.warn(f"{game.name}: evaluated again after {json.dumps(wrong)}", stacklevel=1)
        result = evaluate(str(game), endurance_s=ENDURANCE_S, artifacts=tmp_path / "2").to_json()
        wrong = _wrong(expected, result)
    assert not wrong, json.dumps(wrong, indent=1)
    assert set(result["tests"]) == set(TEST_IDS)
    # The calibration names what was found, as the contract's JSON requires.
    if expected["tests"]["loads"] == "PASS" or "grid" in expected:
        assert result["calibration"]["renderer"] == expected["renderer"]
        grid = expected.get("grid", {"cols": 10, "rows": 20})
        assert result["calibration"]["grid"] == grid
    for control, key in expected.get("controls", {}).items():
        if key is not None and result["calibration"]["controls"][control] is not None:
            assert result["calibration"]["controls"][control] == key or control == "rotate", control


# Math.random picks a piece as TYPES[floor(r * 7)]; pastel.js lists I J L O S T Z.
_J_THEN_Z = """<script>(() => {
  const order = [1, 6, 3, 3, 3, 0, 6, 2, 6, 5];  // J Z O O O I Z L Z T, then random
  const random = Math.random.bind(Math);
  let i = 0;
  Math.random = () => (i < order.length ? (order[i++] + 0.5) / 7 : random());
})();</script>
"""


@pytest.mark.slow
def test_a_faint_piece_after_a_bright_first_one_is_seen(tmp_path: Path, chromium: str) -> None:
    """pastel's J is twice as far from an empty cell as its Z: with a J first, the cell
    threshold tuned on it (half its distance) hid every Z, the field looked frozen while a
    Z fell, and rotate/hard_drop/game_over came out INCONCLUSIVE and endurance FAIL.
    Three O pieces in a row follow: the rotate probe sets them aside and waits for a
    piece it can judge (it used to give up after three, or judge a landing piece)."""
    game = tmp_path / "game"
    shutil.copytree(GAMES / "canvas-gridlines-pastel", game)
    page = (game / "index.html").read_text()
    (game / "index.html").write_text(
        page.replace('<script src="pastel.js">', _J_THEN_Z + '<script src="pastel.js">', 1)
    )
    assert "Math.random = " in (game / "index.html").read_text()
    expected = json.loads((game / "expected.json").read_text())
    result = evaluate(
        str(game), endurance_s=ENDURANCE_S, artifacts=tmp_path / "artifacts"
    ).to_json()
    wrong = {
        test: f"{result['tests'][test]} (expected {want}): {result['reasons'][test]}"
        for test, want in expected["tests"].items()
        if result["tests"][test] != want and not _no_row_completed(test, result)
    }
    assert not wrong, json.dumps(wrong, indent=1)
    assert any("fainter than the threshold" in note for note in result["notes"]), result["notes"]


@pytest.mark.slow
def test_a_game_wrapped_in_a_same_origin_iframe_is_played_inside_it(
    tmp_path: Path, chromium: str
) -> None:
    """A page that is only a full-window <iframe> around the game (seen in the seventh
    corpus batch): the field, the clicks and the keys are in the frame, which the bot
    finds and reads there."""
    shutil.copytree(GAMES / "canvas-basic", tmp_path / "site" / "game")
    (tmp_path / "site" / "index.html").write_text(
        "<!doctype html><html><head><style>body{margin:0}iframe{border:0;width:100vw;"
        'height:100vh}</style></head><body><iframe src="game/index.html"></iframe></body></html>'
    )
    expected = json.loads((GAMES / "canvas-basic" / "expected.json").read_text())
    result = evaluate(str(tmp_path / "site"), endurance_s=ENDURANCE_S).to_json()
    assert not _wrong(expected, result), json.dumps(_wrong(expected, result), indent=1)
    assert any("in an <iframe>" in note for note in result["notes"]), result["notes"]


def test_the_live_games_are_games_of_the_corpus() -> None:
    """A misspelt name would drop a live game without a word."""
    assert set(LIVE) <= {p.name for p in ALL_GAMES}, sorted(set(LIVE) - {p.name for p in ALL_GAMES})

"""A game may replace the JavaScript built-ins that Playwright's page helper and the probe
use (an agent's `class Map` for its tile map shadows the built-in for every later script).
The bot must go on reading such a page, and still see a page that freezes afterwards.
A page that is only slow for a moment (a loaded machine) must not be called frozen."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page

from bench_pipeline.bot.geometry import BoardGeometry
from bench_pipeline.bot.session import SLOW_ANSWERS_MAX, EventLog, GameSession, PageGone
from tests.bot.helpers import probed_page

# Each test here opens Chromium: asking for it marks them `browser` (tests/needs.py).
pytestmark = pytest.mark.usefixtures("chromium")

GAME = """<!doctype html><html><body><div id="score">Score 120</div>
<canvas id="board" width="300" height="600"></canvas>
<script>
class Map { constructor() { this.rows = []; } }   // shadows the built-in everywhere
window.Set = function () { return {}; };
var JSON = { stringify() { return "not json"; } };
const ctx = document.getElementById("board").getContext("2d");
ctx.fillStyle = "#222"; ctx.fillRect(0, 0, 300, 600);
ctx.fillStyle = "#e33"; ctx.fillRect(120, 0, 60, 30);
function freeze() { for (;;) {} }
</script></body></html>"""


@pytest.fixture()
def page(tmp_path: Path) -> Iterator[Page]:
    with probed_page(tmp_path, GAME) as opened:
        yield opened


def test_a_page_that_replaced_map_set_and_json_is_still_read(page: Page) -> None:
    log = EventLog()
    session = GameSession(page, log)
    numbers = session.evaluate("window.__bench.numbers()", [])
    assert [(n["label"], n["value"]) for n in numbers] == [("Score", 120)]
    # The probe's own Map/Set work (candidate boards are grouped with them).
    assert len(session.evaluate("window.__bench.candidates()", [])) == 1
    assert session.plain_evaluation and not session.gone
    assert any("plain evaluations" in text for _, text in log.notes)


def test_such_a_page_that_freezes_is_seen_frozen_not_waited_on_forever(page: Page) -> None:
    log = EventLog()
    session = GameSession(page, log)
    assert session.evaluate("1 + 1") == 2
    page.evaluate("setTimeout(freeze, 10)")
    time.sleep(0.2)
    with pytest.raises(PageGone):
        session.evaluate("1 + 1")
    assert log.frozen_at is not None and log.crashed_at is None


# A page whose main thread is busy for a few seconds once (a machine loaded by other
# evaluations, a game that builds a big table): it misses one 3 s timeout but answers again.
STALL = "setTimeout(() => { const end = Date.now() + 4500; while (Date.now() < end) {} }, 10)"


@pytest.mark.slow
def test_a_page_that_stalls_once_is_slow_not_frozen(page: Page) -> None:
    log = EventLog()
    session = GameSession(page, log)
    page.evaluate(STALL)
    time.sleep(0.2)
    assert session.evaluate("1 + 1") == 2
    assert not session.gone and log.frozen_at is None
    assert session.slow_answers == 1
    assert any("slow, not frozen" in text for _, text in log.notes)


@pytest.mark.slow
def test_a_screenshot_missed_on_a_stalled_page_is_taken_again(page: Page) -> None:
    log = EventLog()
    session = GameSession(page, log)
    session.geometry = BoardGeometry("canvas", 8, 8, 300, 600, 10, 20, "test")
    page.evaluate(STALL)
    time.sleep(0.2)
    image = session._screenshot()
    assert image.shape[:2] == (600, 300)
    assert not session.gone and log.frozen_at is None and log.blind_at is None
    assert session.slow_answers == 1  # the first screenshot did time out


@pytest.mark.slow
def test_a_page_that_keeps_stalling_leaves_the_bot_blind_not_the_game_frozen(page: Page) -> None:
    log = EventLog()
    session = GameSession(page, log)
    session.slow_answers = SLOW_ANSWERS_MAX  # it was slow that often already
    page.evaluate(STALL)
    time.sleep(0.2)
    with pytest.raises(PageGone):
        session.evaluate("1 + 1")
    assert log.blind_at is not None and log.frozen_at is None and session.gone

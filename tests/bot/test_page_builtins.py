"""A game may replace the JavaScript built-ins that Playwright's page helper and the probe
use (an agent's `class Map` for its tile map shadows the built-in for every later script).
The bot must go on reading such a page, and still see a page that freezes afterwards."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, sync_playwright

from bench_pipeline.bot.browser import chromium_executable
from bench_pipeline.bot.evaluate import PROBE
from bench_pipeline.bot.session import EventLog, GameSession, PageGone

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
    executable = chromium_executable()
    if executable is None:
        pytest.skip("no Chromium on this machine")
    (tmp_path / "index.html").write_text(GAME)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable)
        page = browser.new_page()
        page.add_init_script(PROBE)
        page.goto((tmp_path / "index.html").as_uri())
        yield page
        browser.close()


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

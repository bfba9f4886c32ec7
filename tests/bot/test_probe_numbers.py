"""The numbers a page shows, as the probe reads them: the score's raw material."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page

from bench_pipeline.bot.verdicts import LINES_LABEL, NOT_SCORE, SCORE_LABEL
from tests.bot.helpers import probed_page

# Each test here opens Chromium: asking for it marks them `browser` (tests/needs.py).
pytestmark = pytest.mark.usefixtures("chromium")

# Three counters in one paragraph, one per line (a real game's "Lines / Count / Record"
# panel), and localised labels the prompt languages and real games use.
PAGE = """<!doctype html><html><body>
<p id="panel">Lines: 1<br>Count: 100<br>Record: 300</p>
<div>Баллы: 40</div><div>점수 <span>70</span></div><div>Уровень: 2</div>
<div id="jp">20分</div>
</body></html>"""


@pytest.fixture()
def page(tmp_path: Path) -> Iterator[Page]:
    with probed_page(tmp_path, PAGE) as opened:
        yield opened


def test_counters_sharing_an_element_line_by_line_are_each_read(page: Page) -> None:
    numbers = page.evaluate("window.__bench.numbers()")
    by_label = {n["label"].rstrip(":"): (n["value"], n["source"]) for n in numbers}
    assert by_label["Lines"][0] == 1 and by_label["Count"][0] == 100
    assert by_label["Record"][0] == 300
    # Each line is a source of its own: the score's series never mixes them.
    assert len({by_label[k][1] for k in ("Lines", "Count", "Record")}) == 3


def test_localised_score_labels_are_told_from_other_counters(page: Page) -> None:
    numbers = page.evaluate("window.__bench.numbers()")
    labels = {n["value"]: n["label"] for n in numbers}
    assert SCORE_LABEL.search(labels[40]) and SCORE_LABEL.search(labels[70])
    assert NOT_SCORE.search(labels[2]) and not SCORE_LABEL.search(labels[2])
    assert LINES_LABEL.search(labels[1]) and NOT_SCORE.search(labels[300])


def test_a_number_with_its_unit_after_it_is_read(page: Page) -> None:
    # A Chinese page's score "20分" (20 points): the unit is no second number.
    numbers = page.evaluate("window.__bench.numbers()")
    assert [n["value"] for n in numbers if n["source"] == "dom:#jp"] == [20]

"""The compare pages mark the effects that may be the bot's (mart_main_effects'
instrument_suspect) with a visible badge and their note, and show the INCONCLUSIVE share as
an outcome of its own."""

from __future__ import annotations

import html
import re

import duckdb

from bench_pipeline.report.readings import instrument_reading
from tests.report.conftest import Site


def _effect_rows(page: str, metric: str) -> dict[str, tuple[str, str]]:
    """term -> (the row's class, the row's HTML) in the main-effects table of `metric`."""
    start = page.index(f'id="me-{metric}"')
    table = page[start : page.index("</table>", start)]
    rows = {}
    for match in re.finditer(
        r'<tr(?: class="([^"]*)")?>\s*<th scope="row">(.*?)</th>(.*?)</tr>', table, re.S
    ):
        rows[html.unescape(match.group(2))] = (match.group(1) or "", match.group(3))
    return rows


def test_suspect_effects_carry_a_badge_and_their_note(site: Site) -> None:
    with duckdb.connect(str(site.fake.db), read_only=True) as con:
        mart = con.execute(
            "select metric, axis, level, instrument_suspect, instrument_note "
            "from mart_main_effects where experiment = 'planted'"
        ).fetchall()
    # The fake bot leaves more tests INCONCLUSIVE the fewer pass (tests/report/fake_site.py),
    # so the planted model effects come with INCONCLUSIVE shifts and are flagged.
    suspects = {(m, f"{a} = {lv}") for m, a, lv, s, _ in mart if s}
    assert ("gameplay_score", "model = claude-haiku-4-5") in suspects
    assert not {m for m, _ in suspects} - {"gameplay_score", "score"}
    page = (site.out / "compare" / "planted.html").read_text()
    for metric in ("gameplay_score", "score", "quality_score"):
        rows = _effect_rows(page, metric)
        assert rows, metric
        for term, (css, cells) in rows.items():
            suspect = (metric, term) in suspects
            assert (css == "suspect") is suspect, (metric, term)
            assert ('class="badge instrument"' in cells) is suspect, (metric, term)
    notes = {(m, f"{a} = {lv}"): n for m, a, lv, s, n in mart if s}
    css, cells = _effect_rows(page, "gameplay_score")["model = claude-haiku-4-5"]
    text = html.unescape(re.sub(r"<[^>]+>", "", cells))
    assert "May be the bot's: " + notes[("gameplay_score", "model = claude-haiku-4-5")] in text
    assert "raises INCONCLUSIVE verdicts by" in text
    # The outcome's summary says so too, and so does the overview of every experiment.
    assert "Instrument check:" in page
    overview = html.unescape((site.out / "compare.html").read_text())
    assert "the share of the bot's verdicts left INCONCLUSIVE" in overview
    assert "may be the bot's rather than the games'" in overview
    assert "on 6 outcomes" in overview


def test_the_inconclusive_share_is_an_outcome_of_the_compare_pages(site: Site) -> None:
    page = (site.out / "compare" / "planted.html").read_text()
    assert '<h2 id="inconclusive_share">INCONCLUSIVE share (the bot&#39;s)</h2>' in page
    rows = _effect_rows(page, "inconclusive_share")
    assert "model = claude-haiku-4-5" in rows
    # Its own rows are not flagged: the share is the instrument, not what it measures.
    assert all(css != "suspect" for css, _ in rows.values())
    assert "the share of INCONCLUSIVE verdicts" in html.unescape(page)
    # No cell means of the share to draw an interaction plot from: none is drawn, no empty one.
    assert "no cell means to plot" not in page


def test_the_instrument_reading_names_the_suspects_or_says_nothing() -> None:
    rows = [
        {"axis": "framework", "level": "react", "instrument_suspect": True},
        {"axis": "model", "level": "opus", "instrument_suspect": False},
        {"axis": "effort", "level": "low"},  # a mart written before the flag
    ]
    reading = instrument_reading("gameplay_score", rows)
    assert reading is not None
    assert reading.startswith(
        "1 effect on the gameplay score may be the bot's rather than the games' (framework = react)"
    )
    assert instrument_reading("score", rows[1:]) is None

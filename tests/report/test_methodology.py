"""The methodology page comes from the code's definitions and mentions every one of them."""

from __future__ import annotations

import dataclasses
import html
import re

from bench_pipeline import settings
from bench_pipeline.analysis.stage import METRICS
from bench_pipeline.bot.contract import TEST_IDS, TESTS
from bench_pipeline.design import AXES, DESIGN_TYPES
from bench_pipeline.quality.score import DEFAULT_WEIGHTS, Penalty, ScoreWeights
from bench_pipeline.report.methodology import (
    DESIGN_DESCRIPTIONS,
    HEADLINE_WEIGHTS,
    METRIC_LABELS,
    METRIC_TITLES,
    METRIC_UNITS,
    QUALITY_WEIGHT_NOTES,
    analysis_defaults,
    gameplay_example,
    headline_formula,
    quality_weight_rows,
)
from tests.report.conftest import Site


def _text(site: Site) -> str:
    raw = (site.out / "methodology.html").read_text()
    return html.unescape(re.sub(r"<[^>]+>", " ", raw))


def test_every_definition_the_code_has_is_described() -> None:
    # A new design type, quality weight or analysed metric needs its words here first.
    assert set(DESIGN_DESCRIPTIONS) == set(DESIGN_TYPES)
    assert set(QUALITY_WEIGHT_NOTES) == {f.name for f in dataclasses.fields(ScoreWeights)}
    for table in (METRIC_LABELS, METRIC_TITLES, METRIC_UNITS):
        assert set(table) == set(METRICS)


def test_headline_weights_are_the_sql_of_fct_runs() -> None:
    formula = headline_formula(settings.sql_models_dir())
    assert formula is not None, "fct_runs.sql no longer has round(a * gameplay + b * quality)"
    assert formula.gameplay_weight == HEADLINE_WEIGHTS["gameplay_score"]
    assert formula.quality_weight == HEADLINE_WEIGHTS["quality_score"]
    assert formula.gameplay_weight + formula.quality_weight == 1.0


def test_gameplay_example_is_the_bots_own_formula() -> None:
    assert gameplay_example(12) == round(100 * 12 / len(TEST_IDS), 2)
    assert gameplay_example(len(TEST_IDS)) == 100.0


def test_page_mentions_every_test_id_and_what_it_checks(site: Site) -> None:
    text = _text(site)
    for test_id in TEST_IDS:
        assert re.search(rf"\b{test_id}\b", text), test_id
        assert TESTS[test_id] in text, test_id
    for verdict in ("PASS", "FAIL", "INCONCLUSIVE"):
        assert verdict in text


def test_page_mentions_every_score_weight(site: Site) -> None:
    text = _text(site)
    page = (site.out / "methodology.html").read_text()
    rows = quality_weight_rows()
    assert [r.name for r in rows] == [f.name for f in dataclasses.fields(DEFAULT_WEIGHTS)]
    for field in dataclasses.fields(DEFAULT_WEIGHTS):
        value = getattr(DEFAULT_WEIGHTS, field.name)
        row = re.search(rf"<code>{field.name}</code></th>(.*?)</tr>", page, re.S)
        assert row, field.name
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row.group(1), re.S)
        numbers = [float(c) for c in cells[:4] if c.strip()]
        if isinstance(value, Penalty):
            assert numbers == [value.per_unit, value.threshold, value.cap], field.name
        else:
            assert numbers == [float(value)], field.name
    for weight in HEADLINE_WEIGHTS.values():
        assert f"{weight:g}" in text
    assert "round(0.5 * e.gameplay_score + 0.5 * q.quality_score, 2)" in text


def test_page_mentions_designs_metrics_rules_and_axes(site: Site) -> None:
    text = _text(site)
    for design in DESIGN_TYPES:
        assert design in text and DESIGN_DESCRIPTIONS[design] in text
    for metric, size in METRICS.items():
        assert metric in text and METRIC_TITLES[metric] in text
        prefix, suffix = METRIC_UNITS[metric]
        assert f"{prefix}{size}{suffix}" in text, metric
    defaults = analysis_defaults()
    assert f"alpha = {defaults['alpha']}" in text and f"power = {defaults['power']}" in text
    assert defaults["correction"] in text
    assert "significant AND larger than the noise" in text
    # The instrument-bias rule, with the axes and outcomes the code flags.
    assert "possibly the bot's (instrument_suspect)" in text
    assert "(framework, language, human_language)" in text
    assert "An effect on gameplay_score or score is marked" in text
    for axis in AXES.values():
        assert axis.name in text and axis.description in text

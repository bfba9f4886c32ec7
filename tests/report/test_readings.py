"""Plain-English readings of mart rows, and the small pieces the site is made of."""

from __future__ import annotations

from pathlib import Path

from bench_pipeline.analysis import chart_style
from bench_pipeline.report.files import Slugs, inside, png_size
from bench_pipeline.report.readings import (
    best_model_reading,
    effect_reading,
    interaction_reading,
    metric_summary,
    noise_reading,
)
from bench_pipeline.report.svg import interaction_svg, main_effects_svg, pareto_svg

OPUS = {
    "metric": "score",
    "axis": "model",
    "level": "claude-opus-4-6",
    "baseline": "claude-sonnet-4-6",
    "estimate": 10.2,
    "ci_low": 6.1,
    "ci_high": 14.3,
    "significant": True,
    "meaningful": True,
    "noise_sd": 3.9,
}


def test_effect_readings() -> None:
    assert effect_reading(OPUS) == (
        "claude-opus-4-6 raises the score by 10.2 ± 4.10 points vs claude-sonnet-4-6 "
        "(significant and larger than the noise)"
    )
    weak = {
        **OPUS,
        "axis": "prompt_style",
        "level": "terse",
        "baseline": "standard",
        "estimate": -3.0,
        "ci_low": -5.0,
        "ci_high": -1.0,
        "meaningful": False,
    }
    assert effect_reading(weak) == (
        "prompt_style = terse lowers the score by 3 ± 2 points vs standard "
        "(significant but within the noise (SD 3.90))"
    )
    null = {
        **OPUS,
        "metric": "cost_usd",
        "estimate": 0.012,
        "ci_low": -0.05,
        "ci_high": 0.07,
        "significant": False,
        "meaningful": False,
    }
    assert effect_reading(null) == (
        "claude-opus-4-6 vs claude-sonnet-4-6: no detectable effect on the cost "
        "(estimate +$0.012, 95 % interval −$0.05 to $0.07)"
    )
    assert "no residual degrees of freedom" in effect_reading({**OPUS, "significant": None})


def test_summaries() -> None:
    assert metric_summary("score", []) == "The score was not analysed."
    assert metric_summary("score", [], "no runs") == "The score was not analysed: no runs."
    assert metric_summary("score", [OPUS]).startswith("Strongest: claude-opus-4-6 raises")
    quiet = {**OPUS, "significant": False, "meaningful": False}
    assert metric_summary("duration_s", [{**quiet, "metric": "duration_s"}]) == (
        "No detectable effect of any axis on the duration."
    )
    noise = {
        "metric": "score",
        "noise_sd": 3.86,
        "n_cells": 18,
        "repeats_needed": 11,
        "effect_size": 5.0,
        "repeats_per_cell": 3.0,
        "detectable_effect": 11.8,
    }
    assert noise_reading(noise) == (
        "Repeats of the same configuration differ by a standard deviation of 3.86 points "
        "(pooled over 18 cells). Detecting an effect of 5 points needs 11 repeats per cell "
        "(now 3); the current repeats detect 11.8 points or more."
    )
    assert "could not be estimated: one run per cell" in noise_reading(
        {"metric": "score", "noise_sd": None, "reason": "one run per cell"}
    )
    assert (
        interaction_reading(
            {
                "axes": "model × prompt_style",
                "significant": True,
                "f_value": 13.2,
                "p_adjusted": 1e-5,
            }
        )
        == "model × prompt_style: the effect of one depends on the other (F = 13.2, p_adj <0.0001)"
    )


def test_best_model_reading_says_when_it_is_not_clearly_ahead() -> None:
    a = {
        "model": "a",
        "agent": "x",
        "score_mean": 80.0,
        "score_ci_low": 70.0,
        "score_ci_high": 90.0,
        "n_scored": 5,
    }
    b = {**a, "model": "b", "score_mean": 60.0, "score_ci_low": 50.0, "score_ci_high": 75.0}
    assert "not clearly ahead" in (best_model_reading([b, a]) or "")
    assert (best_model_reading([b, a]) or "").startswith("a (x) leads with a mean score of 80")
    c = {**b, "score_ci_high": 65.0}
    assert "the intervals do not overlap" in (best_model_reading([a, c]) or "")
    assert "tentative" in (best_model_reading([{**a, "n_scored": 2}, c]) or "")
    assert best_model_reading([{**a, "score_mean": None}]) is None


def test_slugs_are_safe_unique_and_stable() -> None:
    slugs = Slugs()
    assert slugs("x.c123.r0") == "x.c123.r0"
    evil = slugs('a/../<b>"')
    assert evil != 'a/../<b>"' and all(c.isalnum() or c in "-_" for c in evil)
    assert slugs('a/../<b>"') == evil
    assert slugs("index") != "index" and slugs("page-2") != "page-2"
    assert slugs("Run") != slugs("run")  # case-insensitive filesystems


def test_inside_refuses_symlinks_and_escapes(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "d").mkdir(parents=True)
    (root / "d" / "ok.txt").write_text("ok")
    (tmp_path / "secret").write_text("s")
    (root / "d" / "link").symlink_to(tmp_path / "secret")
    (root / "linkdir").symlink_to(tmp_path)
    assert inside(root / "d" / "ok.txt", root)
    assert not inside(root / "d" / "link", root)
    assert not inside(root / "linkdir" / "secret", root)
    assert not inside(root / "d" / ".." / ".." / "secret", root)
    assert not inside(root / "d" / "missing", root)
    assert png_size(root / "d" / "ok.txt") is None


def test_svg_chart_escapes_labels() -> None:
    svg = str(main_effects_svg([{**OPUS, "level": "<b>&"}], 3.9, 'label "<x>"'))
    assert "<b>&" not in svg and "&lt;b&gt;&amp;" in svg
    assert 'aria-label="label &#34;&lt;x&gt;&#34;"' in svg or 'aria-label="label &quot;' in svg
    assert "http" not in svg


def test_svg_charts_need_no_inline_style_and_share_the_palette() -> None:
    """Why the site draws its own SVG (svg.py): the pages' CSP blocks inline styles, which
    matplotlib's SVG is made of; these use presentation attributes only."""
    weak = {**OPUS, "level": "haiku", "meaningful": False, "t_value": -2.0}
    none = {**OPUS, "level": "gpt", "significant": False, "meaningful": False, "t_value": 0.5}
    rows = [{**OPUS, "t_value": 5.0}, weak, none]
    charts = {
        "main": str(main_effects_svg(rows, 3.9, "main")),
        "pareto": str(pareto_svg(rows, 2.1, "pareto")),
        "interaction": str(
            interaction_svg({("a", "x"): 1.0, ("a", "y"): 2.0}, ["a"], ["x", "y"], "p", "q", "i")
        ),
    }
    for name, svg in charts.items():
        for banned in ("style=", "<style", "url(", " id=", "xmlns", "http"):
            assert banned not in svg, (name, banned)
    main, pareto, interaction = charts.values()
    for colour in (chart_style.STRONG, chart_style.WEAK, chart_style.NONE, chart_style.BAND):
        assert f'fill="{colour}"' in main
    assert f'stroke="{chart_style.CRITICAL}"' in pareto and "critical |t| = 2.10" in pareto
    assert all(f'fill="{c}"' in interaction for c in chart_style.SERIES[:2])

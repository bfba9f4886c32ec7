"""The effects charts (PNG) draw in the palette the site's inline SVG charts use."""

from __future__ import annotations

import io

import numpy as np
import pytest

from bench_pipeline.analysis import analyze
from bench_pipeline.analysis.chart_style import CRITICAL, SERIES, STRONG
from bench_pipeline.analysis.simulate import simulate_runs


def _colours(png: bytes) -> set[str]:
    from matplotlib import image

    assert png[:4] == b"\x89PNG"
    pixels = image.imread(io.BytesIO(png), format="png")[..., :3]
    rgb = np.unique((pixels.reshape(-1, 3) * 255).round().astype(int), axis=0)
    return {"#{:02x}{:02x}{:02x}".format(*c) for c in rgb}


@pytest.fixture(scope="module")
def drawn() -> dict[str, set[str]]:
    from bench_pipeline.analysis.charts import interaction_chart, main_effects_chart, pareto_chart

    frame, truth = simulate_runs("plackett_burman", repeats=3, seed=5,
                                 effects={("plan_first", True): 10.0})  # fmt: skip
    report = analyze(frame, "score", baselines=truth.baselines)
    assert any(e.meaningful for e in report.main_effects) and report.pareto_t_crit
    axes = ["plan_first", "self_test"]
    return {
        "main": _colours(main_effects_chart(report)),
        "pareto": _colours(pareto_chart(report)),
        "interaction": _colours(interaction_chart(frame, "score", axes)),
    }


def test_png_charts_use_the_shared_palette(drawn: dict[str, set[str]]) -> None:
    assert STRONG in drawn["main"]  # the planted effect: significant and beyond the noise
    assert {SERIES[0], CRITICAL} <= drawn["pareto"]  # raises the score; the critical line
    assert set(SERIES[:2]) <= drawn["interaction"]  # one colour per level of the second axis

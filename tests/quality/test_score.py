"""The quality score: bounds, penalties, and monotonicity in every bad metric."""

from __future__ import annotations

import random
from typing import Any

import pytest

from bench_pipeline.quality import DEFAULT_WEIGHTS, Penalty, ScoreWeights, quality_score
from bench_pipeline.quality.score import quality_breakdown

PERFECT: dict[str, Any] = {
    "eslint_errors": 0,
    "eslint_warnings": 0,
    "ts_compiles": True,
    "ts_errors": 0,
    "build_ok": True,
    "bundle_bytes": 20_000,
    "function_length_max": 20,
    "nesting_depth_max": 2,
    "naming_consistency": 1.0,
    "duplication_pct": 0.0,
    "html_errors": 0,
    "magic_numbers": 0,
    "single_file": False,
    "source_lines": 500,
}
# Numeric metrics where a larger value is worse, with a range to draw from.
WORSE_WHEN_LARGER = {
    "eslint_errors": 40,
    "eslint_warnings": 60,
    "ts_errors": 30,
    "bundle_bytes": 2_000_000,
    "function_length_max": 300,
    "nesting_depth_max": 12,
    "duplication_pct": 60.0,
    "html_errors": 20,
    "magic_numbers": 120,
    "source_lines": 3000,
}


def random_metrics(rng: random.Random) -> dict[str, Any]:
    metrics: dict[str, Any] = {}
    for key, top in WORSE_WHEN_LARGER.items():
        value = rng.uniform(0, top)
        metrics[key] = rng.choice([None, value if isinstance(top, float) else int(value)])
    metrics["naming_consistency"] = rng.choice([None, rng.random()])
    metrics["ts_compiles"] = rng.choice([None, True, False])
    metrics["build_ok"] = rng.choice([None, True, False])
    metrics["single_file"] = rng.choice([None, True, False])
    metrics["has_entry_point"] = rng.choice([None, True, True, False])
    return metrics


def test_perfect_project_scores_100() -> None:
    assert quality_score(PERFECT) == 100.0
    assert set(quality_breakdown(PERFECT).values()) == {0.0}


def test_everything_bad_is_clamped_at_zero() -> None:
    worst = {key: top for key, top in WORSE_WHEN_LARGER.items()}
    worst |= {"naming_consistency": 0.0, "ts_compiles": False, "build_ok": False}
    worst |= {"single_file": True}
    assert quality_score(worst) == 0.0


def test_unmeasured_metrics_cost_nothing() -> None:
    assert quality_score({key: None for key in PERFECT}) == 100.0
    assert quality_score({}) == 100.0


@pytest.mark.parametrize(
    ("change", "points"),
    [
        ({"eslint_errors": 3}, 6.0),
        ({"eslint_errors": 100}, 25.0),
        ({"eslint_warnings": 4}, 2.0),
        ({"ts_compiles": False, "ts_errors": 2}, 16.0),
        ({"build_ok": False}, 20.0),
        ({"function_length_max": 60}, 2.0),
        ({"nesting_depth_max": 6}, 5.0),
        ({"naming_consistency": 0.8}, 4.0),
        ({"duplication_pct": 10.0}, 5.0),
        ({"html_errors": 9}, 5.0),
        ({"magic_numbers": 10}, 2.0),
        ({"bundle_bytes": 800_000}, 3.0),
        ({"single_file": True}, 5.0),
        ({"single_file": True, "source_lines": 100}, 0.0),  # a small game in one file is fine
    ],
)
def test_documented_penalties(change: dict[str, Any], points: float) -> None:
    assert quality_score(PERFECT | change) == pytest.approx(100.0 - points)


def test_weights_are_configurable() -> None:
    strict = ScoreWeights(eslint_errors=Penalty(10.0, 50.0))
    metrics = PERFECT | {"eslint_errors": 3}
    assert quality_score(metrics, strict) == 70.0
    assert quality_score(metrics, DEFAULT_WEIGHTS) == 94.0


def test_score_is_monotone_in_every_bad_metric() -> None:
    """Making one metric worse, everything else fixed, never raises the score."""
    rng = random.Random(20240607)
    for _ in range(3000):
        metrics = random_metrics(rng)
        before = quality_score(metrics)
        key = rng.choice(
            [*WORSE_WHEN_LARGER, "naming_consistency", "ts_compiles", "build_ok", "has_entry_point"]
        )
        worse = dict(metrics)
        if key == "naming_consistency":
            worse[key] = rng.uniform(0, metrics[key]) if metrics[key] is not None else None
        elif key in ("ts_compiles", "build_ok", "has_entry_point"):
            worse[key] = False if metrics[key] is not None else None
        else:
            current = metrics[key]
            if current is None:
                continue
            worse[key] = current + (rng.uniform(0, 50) if isinstance(current, float) else 7)
        assert quality_score(worse) <= before, (key, metrics, worse)
        assert 0.0 <= quality_score(worse) <= 100.0


def test_single_file_is_monotone_too() -> None:
    rng = random.Random(7)
    for _ in range(500):
        metrics = random_metrics(rng) | {"single_file": False}
        assert quality_score(metrics | {"single_file": True}) <= quality_score(metrics)


def test_no_entry_point_means_no_credit() -> None:
    """A project with no page to serve scores 0 however little there was to find fault in;
    an unknown entry point (None: not measured) costs nothing."""
    assert quality_score(PERFECT | {"has_entry_point": False}) == 0.0
    assert quality_score({"has_entry_point": False, "build_ok": False}) == 0.0
    assert quality_breakdown({"has_entry_point": False})["entry_point"] == 100.0
    assert quality_score(PERFECT | {"has_entry_point": None}) == 100.0
    assert quality_score(PERFECT | {"has_entry_point": True}) == 100.0

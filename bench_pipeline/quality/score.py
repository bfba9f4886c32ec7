"""One 0-100 code-quality score from the quality metrics.

The score starts at 100 and subtracts one capped penalty per metric:

    penalty(metric) = min(cap, per_unit * max(0, value - threshold))
    quality_score   = max(0, 100 - sum(penalties))

Every penalty is a non-decreasing function of how bad its metric is (more errors, longer
functions, lower naming consistency, ...) and the total is clamped, so making any one
metric worse never raises the score (tests/quality/test_score.py checks this on random
inputs). A metric that could not be measured (None) costs nothing: the score rates what
was seen, and `unavailable` says what was not. The exception is the build: `build_ok`
false is a result (the agent's project does not build), not a missing measurement, so it
costs `build_failed`; the bundle size it could not produce then costs nothing more.
A project with no entry point (`has_entry_point` false: the build found no page to serve)
gets no credit at all: `no_entry_point` takes the whole 100. Otherwise an empty folder,
with nothing to find fault in, would score 80 (only the build penalty).
The weights are a dataclass so an experiment can pass its own; docs/quality.md lists them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Penalty:
    per_unit: float  # points per unit above the threshold
    cap: float  # most points this metric can cost
    threshold: float = 0.0  # free allowance: values up to here cost nothing

    def __call__(self, value: float) -> float:
        return min(self.cap, self.per_unit * max(0.0, value - self.threshold))


@dataclass(frozen=True)
class ScoreWeights:
    eslint_errors: Penalty = field(default_factory=lambda: Penalty(2.0, 25.0))
    eslint_warnings: Penalty = field(default_factory=lambda: Penalty(0.5, 10.0))
    ts_not_compiling: float = 15.0
    ts_errors: Penalty = field(default_factory=lambda: Penalty(0.5, 5.0))
    build_failed: float = 20.0
    # Bytes beyond 500 kB (a Tetris needs far less): 1 point per 100 kB, up to 5.
    bundle_bytes: Penalty = field(default_factory=lambda: Penalty(1e-5, 5.0, 500_000))
    # Lines beyond 50 in the longest function: 0.2 per line, up to 10 (reached at 100).
    function_length_max: Penalty = field(default_factory=lambda: Penalty(0.2, 10.0, 50))
    # Levels beyond 4 of if/for/while/switch/try inside one function: 2.5 each, up to 10.
    nesting_depth_max: Penalty = field(default_factory=lambda: Penalty(2.5, 10.0, 4))
    # Applied to (1 - naming_consistency): 20 points per unit, up to 10.
    naming_inconsistency: Penalty = field(default_factory=lambda: Penalty(20.0, 10.0))
    duplication_pct: Penalty = field(default_factory=lambda: Penalty(0.5, 10.0))
    html_errors: Penalty = field(default_factory=lambda: Penalty(1.0, 5.0))
    magic_numbers: Penalty = field(default_factory=lambda: Penalty(0.2, 10.0))
    # Everything in one file of at least this many lines: no separation of concerns.
    single_file: float = 5.0
    single_file_min_lines: int = 300
    # No page to serve: nothing was made that could be played, so no quality credit.
    no_entry_point: float = 100.0


DEFAULT_WEIGHTS = ScoreWeights()


def _number(metrics: Mapping[str, Any], key: str) -> float | None:
    value = metrics.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def quality_breakdown(
    metrics: Mapping[str, Any], weights: ScoreWeights = DEFAULT_WEIGHTS
) -> dict[str, float]:
    """Points subtracted per metric (0 for an unmeasured one), rounded to 0.01."""
    penalties: dict[str, float] = {}
    for key in (
        "eslint_errors",
        "eslint_warnings",
        "ts_errors",
        "bundle_bytes",
        "function_length_max",
        "nesting_depth_max",
        "duplication_pct",
        "html_errors",
        "magic_numbers",
    ):
        value = _number(metrics, key)
        penalties[key] = getattr(weights, key)(value) if value is not None else 0.0
    penalties["ts_compiles"] = (
        weights.ts_not_compiling if metrics.get("ts_compiles") is False else 0
    )
    penalties["build_ok"] = weights.build_failed if metrics.get("build_ok") is False else 0.0
    penalties["entry_point"] = (
        weights.no_entry_point if metrics.get("has_entry_point") is False else 0.0
    )
    consistency = _number(metrics, "naming_consistency")
    penalties["naming_consistency"] = (
        weights.naming_inconsistency(1.0 - min(1.0, max(0.0, consistency)))
        if consistency is not None
        else 0.0
    )
    lines = _number(metrics, "source_lines") or 0.0
    penalties["single_file"] = (
        weights.single_file
        if metrics.get("single_file") is True and lines >= weights.single_file_min_lines
        else 0.0
    )
    return {key: round(float(value), 2) for key, value in penalties.items()}


def quality_score(metrics: Mapping[str, Any], weights: ScoreWeights = DEFAULT_WEIGHTS) -> float:
    """100 minus the capped penalties of `metrics`, clamped to 0-100, rounded to 0.1."""
    total = sum(quality_breakdown(metrics, weights).values())
    return round(max(0.0, min(100.0, 100.0 - total)), 1)

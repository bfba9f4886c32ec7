"""Code-quality metrics of an agent's project and the 0-100 quality score (docs/quality.md)."""

from __future__ import annotations

from bench_pipeline.quality.metrics import CONTRACT_KEYS, QualityReport, measure_quality
from bench_pipeline.quality.score import (
    DEFAULT_WEIGHTS,
    Penalty,
    ScoreWeights,
    quality_breakdown,
    quality_score,
)

__all__ = [
    "CONTRACT_KEYS",
    "DEFAULT_WEIGHTS",
    "Penalty",
    "QualityReport",
    "ScoreWeights",
    "measure_quality",
    "quality_breakdown",
    "quality_score",
]

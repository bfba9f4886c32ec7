"""Statistics on a table of runs: main effects, interactions, noise and power (docs/analysis.md).

Pure Python, no Dagster: the warehouse asset, the charts and `bench analyze` all call
`analyze(read_runs(path), metric)` or `analyze(frame, metric)`.
"""

from bench_pipeline.analysis.effects import (
    EffectsReport,
    Interaction,
    MainEffect,
    Noise,
    NotEstimable,
    ParetoEffect,
    Power,
    analyze,
)
from bench_pipeline.analysis.runs import AnalysisInputError, infer_axes, read_runs, to_level

__all__ = [
    "AnalysisInputError",
    "EffectsReport",
    "Interaction",
    "MainEffect",
    "Noise",
    "NotEstimable",
    "ParetoEffect",
    "Power",
    "analyze",
    "infer_axes",
    "read_runs",
    "to_level",
]

"""Statistics on a table of runs: main effects, interactions, noise and power (docs/analysis.md).

Pure Python, no Dagster: the warehouse asset, the charts and `bench analyze` all call
`analyze(read_runs(path), metric)` or `analyze(frame, metric)`.

The names from `effects` load on first use (PEP 562): it imports scipy and statsmodels,
which every Dagster run process would otherwise pay for when it loads the project.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from bench_pipeline.analysis.runs import AnalysisInputError, infer_axes, read_runs, to_level

if TYPE_CHECKING:
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

_FROM_EFFECTS = {
    "EffectsReport",
    "Interaction",
    "MainEffect",
    "Noise",
    "NotEstimable",
    "ParetoEffect",
    "Power",
    "analyze",
}


def __getattr__(name: str) -> Any:
    if name in _FROM_EFFECTS:
        return getattr(importlib.import_module("bench_pipeline.analysis.effects"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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

"""Stage 6: effects analysis of every experiment in the warehouse, written back as marts.

Reads `fct_runs` (the runs of each experiment's current design), runs `analyze` for
every outcome, and returns the mart tables plus PNG charts. The Dagster asset writes
the tables with the warehouse writer and shows the charts; `bench analyze` runs the
same `analyze` on any file of runs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import pandas as pd

from bench_pipeline.analysis.runs import AnalysisInputError
from bench_pipeline.design.axes import AXES
from bench_pipeline.warehouse.artifacts import ArtifactStore, atomic_write_bytes
from bench_pipeline.warehouse.marts import MART_SCHEMAS

if TYPE_CHECKING:
    from bench_pipeline.analysis.effects import EffectsReport

STAGE = "effects_analysis"

# The outcomes analysed for every experiment, with the effect size the power estimate
# is asked for (in the metric's units): 5 points on a 0-100 score, 10 cents, 1 minute.
METRICS: dict[str, float] = {
    "score": 5.0,
    "gameplay_score": 5.0,
    "quality_score": 5.0,
    "cost_usd": 0.10,
    "duration_s": 60.0,
}

# Interaction plots drawn per experiment and metric: the strongest estimable ones.
MAX_INTERACTION_CHARTS = 4


@dataclass
class MetricAnalysis:
    experiment: str
    metric: str
    report: EffectsReport | None
    error: str | None = None
    charts: dict[str, Path] = field(default_factory=dict)


@dataclass
class AnalysisOutcome:
    tables: dict[str, pd.DataFrame]
    analyses: list[MetricAnalysis]

    @property
    def errors(self) -> list[MetricAnalysis]:
        return [a for a in self.analyses if a.error]


def _clean(value: Any) -> Any:
    """NaN and infinities are not numbers an analyst can use: they become NULL."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def read_current_runs(db_path: Path) -> pd.DataFrame:
    """The runs of every experiment's current design, as `fct_runs` has them."""
    with duckdb.connect(str(db_path), read_only=True) as con:
        return con.execute(
            "select * from fct_runs where in_current_design order by experiment, run_id"
        ).df()


def _baselines(store: ArtifactStore, experiment: str) -> dict[str, Any]:
    """The experiment's named baselines (stored with its design), else none."""
    try:
        return dict(store.read_design(experiment).get("baselines") or {})
    except (FileNotFoundError, ValueError):
        return {}


def analyse_experiment(
    runs: pd.DataFrame,
    experiment: str,
    baselines: Mapping[str, Any],
    metrics: Mapping[str, float],
    chart_dir: Path | None,
) -> list[MetricAnalysis]:
    axes = [a for a in AXES if a in runs.columns and runs[a].nunique(dropna=True) > 1]
    # A named baseline no run of this design has (a retired level) would refuse the whole
    # analysis; without it the most frequent level is the baseline, and the mart says which.
    held = {a: b for a, b in baselines.items() if a in axes and (runs[a] == b).any()}
    # Imported here, not at the top: scipy, statsmodels and matplotlib are half of the
    # project's import time, and every Dagster run process loads the project (the
    # per-run stages never need them). docs/orchestration.md, "Where the time goes".
    from bench_pipeline.analysis.effects import analyze

    results: list[MetricAnalysis] = []
    for metric, effect_size in metrics.items():
        if metric not in runs.columns:
            results.append(MetricAnalysis(experiment, metric, None, f"no column {metric}"))
            continue
        try:
            report = analyze(runs, metric, axes=axes, baselines=held, effect_size=effect_size)
        except AnalysisInputError as err:
            results.append(MetricAnalysis(experiment, metric, None, str(err)))
            continue
        analysis = MetricAnalysis(experiment, metric, report)
        if chart_dir is not None:
            analysis.charts = _draw(runs, report, chart_dir / experiment, metric)
        results.append(analysis)
    return results


def _draw(runs: pd.DataFrame, report: EffectsReport, folder: Path, metric: str) -> dict[str, Path]:
    from bench_pipeline.analysis.charts import interaction_chart, main_effects_chart, pareto_chart

    charts = {
        "main_effects": main_effects_chart(report, f"{folder.name}: main effects on {metric}")
    }
    if report.pareto:
        charts["pareto"] = pareto_chart(report, f"{folder.name}: Pareto of effects on {metric}")
    strongest = sorted(report.interactions, key=lambda i: i.p_value if i.p_value is not None else 1)
    for interaction in strongest[:MAX_INTERACTION_CHARTS]:
        axes = list(interaction.axes)
        charts["interaction_" + "_x_".join(axes)] = interaction_chart(runs, metric, axes)
    paths = {}
    for name, png in charts.items():
        path = folder / f"{metric}.{name}.png"
        atomic_write_bytes(path, png)
        paths[name] = path
    return paths


def mart_rows(analyses: Sequence[MetricAnalysis]) -> dict[str, pd.DataFrame]:
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in MART_SCHEMAS}
    for a in analyses:
        key = {"experiment": a.experiment, "metric": a.metric}
        if a.report is None:
            rows["mart_not_estimable"].append({**key, "term": "*", "reason": a.error})
            continue
        r = a.report
        for e in r.main_effects:
            rows["mart_main_effects"].append(
                {
                    **key,
                    **{
                        c: _clean(getattr(e, c, None))
                        for c in MART_SCHEMAS["mart_main_effects"]
                        if c not in key and c not in {"noise_sd", "correction"}
                    },
                    "noise_sd": _clean(r.noise_sd),
                    "correction": r.correction,
                }
            )
        for i in r.interactions:
            rows["mart_interactions"].append(
                {
                    **key,
                    "axes": " × ".join(i.axes),
                    "order": len(i.axes),
                    **{
                        c: _clean(getattr(i, c))
                        for c in ("df", "f_value", "p_value", "p_adjusted", "significant")
                    },
                }
            )
        rows["mart_effect_noise"].append(
            {
                **key,
                "n_runs": r.n_runs,
                "n_cells": r.n_cells,
                "noise_sd": _clean(r.noise.noise_sd),
                "noise_df": _clean(r.noise.noise_df),
                "repeats_per_cell": _clean(r.noise.repeats_per_cell),
                "effect_size": r.power.effect_size,
                "repeats_needed": r.power.repeats_needed,
                "detectable_effect": _clean(r.power.detectable_effect),
                "reason": "; ".join(x for x in (r.noise.reason, r.power.reason) if x) or None,
            }
        )
        for n in r.not_estimable:
            rows["mart_not_estimable"].append({**key, "term": n.term, "reason": n.reason})
    return {
        name: pd.DataFrame(rows[name], columns=list(schema))
        for name, schema in MART_SCHEMAS.items()
    }


def run_effects_analysis(
    db_path: Path,
    store: ArtifactStore,
    metrics: Mapping[str, float] = METRICS,
    charts: bool = True,
) -> AnalysisOutcome:
    """Analyse every experiment of the warehouse; charts go to `<store>/analysis/`."""
    runs = read_current_runs(db_path)
    analyses: list[MetricAnalysis] = []
    for experiment, part in runs.groupby("experiment", sort=True):
        analyses += analyse_experiment(
            part.reset_index(drop=True),
            str(experiment),
            _baselines(store, str(experiment)),
            metrics,
            store.root / "analysis" if charts else None,
        )
    return AnalysisOutcome(tables=mart_rows(analyses), analyses=analyses)

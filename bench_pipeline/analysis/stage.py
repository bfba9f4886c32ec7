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

from bench_pipeline import stages
from bench_pipeline.analysis.runs import AnalysisInputError
from bench_pipeline.design.axes import AXES
from bench_pipeline.warehouse.artifacts import ArtifactStore, atomic_write_bytes
from bench_pipeline.warehouse.marts import (
    EFFECT_CI_METHOD,
    INTERACTION_TEST_METHOD,
    MART_SCHEMAS,
)

if TYPE_CHECKING:
    from bench_pipeline.analysis.effects import EffectsReport
    from bench_pipeline.analysis.instrument import BotAccuracy, InstrumentFlag

STAGE = stages.EFFECTS_ANALYSIS.name

# The outcomes analysed for every experiment, with the effect size the power estimate
# is asked for (in the metric's units): 5 points on a 0-100 score, 10 cents, 1 minute, and
# one verdict of the sixteen on the INCONCLUSIVE share (the instrument's own effect, which
# `instrument.py` holds against the score effects).
METRICS: dict[str, float] = {
    "score": 5.0,
    "gameplay_score": 5.0,
    "quality_score": 5.0,
    "cost_usd": 0.10,
    "duration_s": 60.0,
    "inconclusive_share": 1 / 16,
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
    # (axis, level) -> the renderer most of those runs were drawn with: what the instrument
    # notes cite the bot's accuracy on (instrument.level_renderers).
    renderers: dict[tuple[str, str], str] = field(default_factory=dict)


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


def read_bot_accuracy(db_path: Path) -> BotAccuracy | None:
    """The bot's accuracy per renderer to cite in the instrument notes, from
    mart_bot_accuracy_groups; None when no measurement is published (or the table predates
    it)."""
    from bench_pipeline.analysis.instrument import pick_accuracy

    with duckdb.connect(str(db_path), read_only=True) as con:
        present = con.execute(
            "select count(*) from information_schema.tables "
            "where table_schema = 'main' and table_name = 'mart_bot_accuracy_groups'"
        ).fetchone()
        if not present or not present[0]:
            return None
        cur = con.execute(
            "select * from mart_bot_accuracy_groups "
            "where breakdown = 'renderer' and test_id = 'all'"
        )
        names = [d[0] for d in cur.description]
        return pick_accuracy(dict(zip(names, row, strict=True)) for row in cur.fetchall())


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
    from bench_pipeline.analysis.instrument import level_renderers

    renderers = level_renderers(runs, axes)
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
        analysis = MetricAnalysis(experiment, metric, report, renderers=renderers)
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


def _instrument_flags(
    analyses: Sequence[MetricAnalysis], accuracy: BotAccuracy | None
) -> dict[tuple[str, str, str, str], InstrumentFlag]:
    """(experiment, metric, axis, level) -> its flag: each experiment's effects on the
    scores held against its effects on the INCONCLUSIVE share (instrument.py)."""
    from bench_pipeline.analysis.instrument import instrument_flags

    by_experiment: dict[str, list[MetricAnalysis]] = {}
    for a in analyses:
        by_experiment.setdefault(a.experiment, []).append(a)
    flags: dict[tuple[str, str, str, str], InstrumentFlag] = {}
    for experiment, group in by_experiment.items():
        effects = {a.metric: a.report.main_effects for a in group if a.report is not None}
        renderers = next((a.renderers for a in group if a.renderers), {})
        for key, flag in instrument_flags(effects, renderers=renderers, accuracy=accuracy).items():
            flags[(experiment, *key)] = flag
    return flags


def mart_rows(
    analyses: Sequence[MetricAnalysis], accuracy: BotAccuracy | None = None
) -> dict[str, pd.DataFrame]:
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in MART_SCHEMAS}
    flags = _instrument_flags(analyses, accuracy)
    instrument = {"instrument_suspect", "instrument_note", "instrument_axis"}
    for a in analyses:
        key = {"experiment": a.experiment, "metric": a.metric}
        if a.report is None:
            rows["mart_not_estimable"].append({**key, "term": "*", "reason": a.error})
            continue
        r = a.report
        for e in r.main_effects:
            flag = flags[(a.experiment, a.metric, e.axis, e.level)]
            rows["mart_main_effects"].append(
                {
                    **key,
                    **{
                        c: _clean(getattr(e, c, None))
                        for c in MART_SCHEMAS["mart_main_effects"]
                        if c not in key
                        and c not in {"noise_sd", "correction", "ci_method", *instrument}
                    },
                    "ci_method": EFFECT_CI_METHOD,
                    "noise_sd": _clean(r.noise_sd),
                    "correction": r.correction,
                    "instrument_suspect": flag.suspect,
                    "instrument_note": flag.note,
                    "instrument_axis": flag.axis,
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
                    "test_method": INTERACTION_TEST_METHOD,
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
    accuracy = read_bot_accuracy(db_path)
    analyses: list[MetricAnalysis] = []
    for experiment, part in runs.groupby("experiment", sort=True):
        analyses += analyse_experiment(
            part.reset_index(drop=True),
            str(experiment),
            _baselines(store, str(experiment)),
            metrics,
            store.root / "analysis" if charts else None,
        )
    return AnalysisOutcome(tables=mart_rows(analyses, accuracy), analyses=analyses)

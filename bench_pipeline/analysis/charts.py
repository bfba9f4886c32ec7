"""Charts of an effects report as PNG bytes: main effects, Pareto, interaction plots.

They go to the artifact store and into the Dagster UI as asset metadata, and the results
site copies them. Matplotlib runs headless (the Agg canvas), so no display is needed. The
site's own inline SVG fallback (`bench_pipeline/report/svg.py`) shares the colours
(`chart_style`) and the number format (`render.number`) with these.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")  # before pyplot: no display on the pipeline's machines

import matplotlib.pyplot as plt
import pandas as pd

from bench_pipeline.analysis.chart_style import AXIS, BAND, CRITICAL, NONE, SERIES, STRONG, WEAK
from bench_pipeline.analysis.render import number

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from bench_pipeline.analysis.effects import EffectsReport


def _png(fig: Figure) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    return buffer.getvalue()


def _empty(title: str, reason: str) -> bytes:
    fig, ax = plt.subplots(figsize=(6, 1.6))
    ax.axis("off")
    ax.set_title(title, loc="left", fontsize=11)
    ax.text(0.0, 0.4, reason, fontsize=9, transform=ax.transAxes)
    return _png(fig)


def main_effects_chart(report: EffectsReport, title: str = "") -> bytes:
    """Every level's effect against its baseline with its 95 % interval.

    The grey band is ± the within-cell noise SD: an effect is called meaningful only
    when it is significant and its estimate lies outside that band.
    """
    title = title or f"Main effects on {report.metric}"
    effects = [e for e in report.main_effects if e.estimate is not None]
    if not effects:
        return _empty(title, "no main effect could be estimated (see not_estimable)")
    labels = [f"{e.axis} = {e.level}  (vs {e.baseline})" for e in effects]
    fig, ax = plt.subplots(figsize=(8, 0.32 * len(effects) + 1.4))
    noise = report.noise_sd
    if noise:
        ax.axvspan(-noise, noise, color=BAND, zorder=0, label=f"± noise SD ({number(noise)})")
    ax.axvline(0, color=AXIS, linewidth=0.8)
    for y, effect in enumerate(effects):
        color = STRONG if effect.meaningful else WEAK if effect.significant else NONE
        if effect.ci_low is not None and effect.ci_high is not None:
            ax.plot([effect.ci_low, effect.ci_high], [y, y], color=color, linewidth=2)
        ax.plot([effect.estimate], [y], "o", color=color, markersize=5)
    ax.set_yticks(range(len(effects)), labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel(f"difference in mean {report.metric} against the baseline (95 % interval)")
    ax.set_title(title, loc="left", fontsize=11)
    handles = [
        plt.Line2D([], [], color=STRONG, marker="o", label="significant, beyond noise"),
        plt.Line2D([], [], color=WEAK, marker="o", label="significant, within noise"),
        plt.Line2D([], [], color=NONE, marker="o", label="not significant"),
    ]
    ax.legend(handles=handles, fontsize=7, loc="lower right")
    return _png(fig)


def pareto_chart(report: EffectsReport, title: str = "") -> bytes:
    """Plackett-Burman view: two-level effects ranked by |t| with the significance line."""
    title = title or f"Pareto of standardized effects on {report.metric}"
    effects = [e for e in report.pareto if e.t_value is not None]
    if not effects:
        return _empty(title, "no two-level axis with an estimable effect")
    effects = sorted(effects, key=lambda e: abs(e.t_value), reverse=True)
    fig, ax = plt.subplots(figsize=(8, 0.3 * len(effects) + 1.4))
    values = [abs(e.t_value) for e in effects]
    raises, lowers = SERIES[0], SERIES[1]  # blue and orange, as the x label says
    colors = [raises if e.estimate > 0 else lowers for e in effects]
    ax.barh(range(len(effects)), values, color=colors)
    ax.set_yticks(range(len(effects)), [f"{e.axis} = {e.level}" for e in effects], fontsize=8)
    ax.invert_yaxis()
    t_crit = getattr(report, "pareto_t_crit", None)
    if t_crit:
        ax.axvline(t_crit, color=CRITICAL, linestyle="--", linewidth=1)
        ax.text(t_crit, -0.6, f" |t| = {number(t_crit)}", color=CRITICAL, fontsize=7)
    ax.set_xlabel("|t| of the effect (blue: raises the metric, orange: lowers it)")
    ax.set_title(title, loc="left", fontsize=11)
    return _png(fig)


def interaction_chart(
    frame: pd.DataFrame, metric: str, axes: Sequence[str], title: str = ""
) -> bytes:
    """Mean metric per level of the first axis, one line per level of the second.

    Parallel lines mean no interaction; crossing or fanning lines are what the ANOVA
    tests. A third axis, if any, splits the plot into panels.
    """
    first, second, *rest = axes
    title = title or f"{metric}: {' × '.join(axes)}"
    data = frame.dropna(subset=[metric])
    if data.empty:
        return _empty(title, "no runs with this metric")
    panels = [(None, data)] if not rest else list(data.groupby(rest[0], sort=True))
    # One colour per level of the second axis, the same in every panel.
    colours = {
        level: SERIES[i % len(SERIES)]
        for i, level in enumerate(data.groupby(second, sort=True).groups)
    }
    fig, grid = plt.subplots(
        1, len(panels), figsize=(4.2 * len(panels) + 1, 3.4), squeeze=False, sharey=True
    )
    for ax, (panel, part) in zip(grid[0], panels, strict=True):
        means = part.groupby([second, first], sort=True)[metric].agg(["mean", "sem"])
        for level, rows in means.groupby(level=0, sort=True):
            xs = [str(x) for x in rows.index.get_level_values(1)]
            ax.errorbar(
                xs,
                rows["mean"],
                yerr=rows["sem"].fillna(0),
                marker="o",
                capsize=3,
                color=colours[level],
                label=f"{second} = {level}",
            )
        ax.set_xlabel(first)
        if panel is not None:
            ax.set_title(f"{rest[0]} = {panel}", fontsize=9)
        ax.tick_params(axis="x", labelsize=8, rotation=20)
    grid[0][0].set_ylabel(f"mean {metric} (± SE)")
    grid[0][-1].legend(fontsize=7)
    fig.suptitle(title, x=0.02, ha="left", fontsize=11)
    return _png(fig)

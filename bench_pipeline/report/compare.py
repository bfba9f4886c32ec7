"""The compare pages (compare.html and compare/<experiment>.html): each experiment's
effects, noise, interactions and their charts (the analysis's PNGs, else inline SVG).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from bench_pipeline.analysis.stage import MAX_INTERACTION_CHARTS, METRICS
from bench_pipeline.report import readings, svg
from bench_pipeline.report.data import Row, Warehouse
from bench_pipeline.report.files import inside, png_size
from bench_pipeline.report.methodology import METRIC_TITLES
from bench_pipeline.report.site_base import _group, _level, _Site

INTERACTIONS_SHOWN = 8  # per outcome, beyond the significant ones
CORRECTION_NAMES = {"holm": "Holm", "bh": "Benjamini-Hochberg"}


def _chart_png(
    site: _Site, artifacts_root: Path, experiment: str, slug: str, name: str
) -> Row | None:
    """Copy analysis/<experiment>/<name> into charts/<slug>/ when it is there."""
    src = artifacts_root / "analysis" / experiment / name
    if not inside(src, artifacts_root):
        return None
    size = png_size(src)
    if size is None:
        return None
    rel = f"charts/{slug}/{name}"
    site.copy(src, rel, src.stat().st_size)
    return Row(src=rel, width=size[0], height=size[1])


def _t_crit(noise: Row | None, n_effects: int, alpha: float = 0.05) -> float | None:
    if noise is None or not noise.get("n_runs"):
        return None
    df = noise["n_runs"] - 1 - n_effects
    from scipy import stats  # on first use: it is a large import for every run process

    return float(stats.t.ppf(1 - alpha / 2, df)) if df > 0 else None


def _cell_means(
    cells: list[Row], metric: str, a: str, b: str
) -> tuple[dict[tuple[str, str], float], list[str], list[str]]:
    sums: dict[tuple[str, str], list[float]] = defaultdict(list)
    for c in cells:
        if c.get("in_current_design") is False or c.get(f"{metric}_mean") is None:
            continue
        if a not in c or b not in c:
            continue
        sums[(_level(c[a]), _level(c[b]))].append(c[f"{metric}_mean"])
    means = {k: sum(v) / len(v) for k, v in sums.items()}
    xs = sorted({k[0] for k in means})
    ss = sorted({k[1] for k in means})
    return means, xs, ss


def _metric_section(
    site: _Site,
    artifacts_root: Path,
    experiment: str,
    slug: str,
    designs: list[str],
    metric: str,
    rows: list[Row],
    noise: Row | None,
    gaps: list[Row],
    interactions: list[Row],
    cells: list[Row],
) -> dict[str, Any]:
    """Everything the compare page shows for one experiment and outcome."""
    label = readings.metric_label(metric)
    reason = next((r["reason"] for r in gaps if r["term"] == "*"), None)
    where = f"on {label} in experiment {experiment}"
    # Main effects: the analysis's PNG, else an SVG from the rows.
    main_alt = (
        f"Main effects {where}: each level's difference from its baseline with its 95 % "
        "interval; the grey band is ± the noise SD"
    )
    main_png = _chart_png(site, artifacts_root, experiment, slug, f"{metric}.main_effects.png")
    main_svg = None
    if main_png is None and rows:
        main_svg = svg.main_effects_svg(rows, (noise or {}).get("noise_sd"), main_alt)
    # Pareto: when the analysis drew one, or drawn here for a Plackett-Burman experiment.
    pareto_alt = f"Pareto chart of the two-level effects {where}: |t| of each effect, largest first"
    pareto_png = _chart_png(site, artifacts_root, experiment, slug, f"{metric}.pareto.png")
    pareto_svg = None
    two_level = _two_level(rows)
    if pareto_png is None and "plackett_burman" in designs and two_level:
        estimated = sum(1 for r in rows if r.get("estimate") is not None)
        pareto_svg = svg.pareto_svg(two_level, _t_crit(noise, estimated), pareto_alt)
    # Interactions: the significant ones and the strongest few in the table; plots for the
    # strongest (as many as the analysis draws).
    plots = []
    for r in interactions[:MAX_INTERACTION_CHARTS]:
        axes = [a.strip() for a in r["axes"].split("×")]
        alt = f"Interaction plot of {r['axes']} {where}: mean per combination of levels"
        name = f"{metric}.interaction_{'_x_'.join(axes)}.png"
        png = _chart_png(site, artifacts_root, experiment, slug, name)
        chart = None
        if png is None and len(axes) == 2:
            means, xs, series = _cell_means(cells, metric, axes[0], axes[1])
            # The cell leaderboard has no means of every outcome (not of the INCONCLUSIVE
            # share): no plot rather than an empty one.
            if means:
                chart = svg.interaction_svg(means, xs, series, axes[0], axes[1], alt)
        if png or chart:
            plots.append(Row(alt=alt, png=png, svg=chart, reading=readings.interaction_reading(r)))
    return {
        "metric": metric,
        "title": METRIC_TITLES.get(metric, metric),
        "label": label,
        "summary": readings.metric_summary(metric, rows, reason),
        "instrument": readings.instrument_reading(metric, rows),
        "effects": [Row(r, reading=readings.effect_reading(r)) for r in rows],
        "noise": noise,
        "noise_reading": readings.noise_reading(noise) if noise else None,
        "main_png": main_png,
        "main_svg": main_svg,
        "main_alt": main_alt,
        "pareto_png": pareto_png,
        "pareto_svg": pareto_svg,
        "pareto_alt": pareto_alt,
        "interactions": [
            Row(r, reading=readings.interaction_reading(r))
            for i, r in enumerate(interactions)
            if r.get("significant") or i < INTERACTIONS_SHOWN
        ],
        "n_interactions": len(interactions),
        "plots": plots,
        "not_estimable": [r for r in gaps if r["term"] != "*"],
        "reason": reason,
    }


def _write_compare(
    site: _Site, data: Warehouse, experiments: dict[str, str], artifacts_root: Path
) -> None:
    effects = _group(data.main_effects)
    inter = _group(data.interactions)
    noise = {(r["experiment"], r["metric"]): r for r in data.noise}
    gaps = _group(data.not_estimable)
    cells = _group(data.cell_board)
    overview = []
    for experiment, slug in experiments.items():
        designs = data.designs.get(experiment, [])
        metrics = [
            _metric_section(
                site,
                artifacts_root,
                experiment,
                slug,
                designs,
                metric,
                [r for r in effects.get(experiment, []) if r["metric"] == metric],
                noise.get((experiment, metric)),
                [r for r in gaps.get(experiment, []) if r["metric"] == metric],
                [r for r in inter.get(experiment, []) if r["metric"] == metric],
                cells.get(experiment, []),
            )
            for metric in METRICS
        ]
        overview.append({"name": experiment, "slug": slug, "designs": designs, "metrics": metrics})
        correction = next(
            (r["correction"] for r in effects.get(experiment, []) if r.get("correction")), "holm"
        )
        site.write(
            f"compare/{slug}.html",
            "experiment.html",
            nav="compare",
            page_title=f"Compare: {experiment}",
            experiment=experiment,
            designs=designs,
            metrics=metrics,
            correction=CORRECTION_NAMES.get(correction, correction),
        )
    site.write(
        "compare.html",
        "compare.html",
        nav="compare",
        page_title="Compare",
        overview=overview,
        n_outcomes=len(METRICS),
    )


def _two_level(rows: list[Row]) -> list[Row]:
    per_axis = Counter(r["axis"] for r in rows)
    return [r for r in rows if per_axis[r["axis"]] == 1 and r.get("t_value") is not None]

"""Small inline SVG bar charts, drawn in Python from mart rows (no JavaScript library).

Used when the effects analysis left no PNG for a chart. Why not matplotlib's SVG: it styles
every shape with a `style` attribute, which the site's Content-Security-Policy
(`style-src 'self'`) blocks inline, so the chart renders as a black box; it also brings
`url(#…)` clip paths, ids that collide between charts and `xmlns` URLs, at ~12 kB a chart
against ~3 kB here. These use presentation attributes only, and their text is real text in
the site's font and colour: it scales, can be selected and is read out.

Every chart is `role="img"` with an `aria-label` and a `<title>`; every text is escaped; no
xmlns (inline SVG in HTML needs none). The colours (`chart_style`) and the number format
(`render.number`) are those of the PNGs `bench_pipeline/analysis/charts.py` draws.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from markupsafe import Markup

from bench_pipeline.analysis.chart_style import (
    AXIS,
    BAND,
    CRITICAL,
    NONE,
    SERIES,
    STRONG,
    WEAK,
    WHISKER,
)
from bench_pipeline.analysis.render import number

WIDTH = 720
LABEL_W = 260
VALUE_W = 70
ROW_H = 26


def _t(text: Any, limit: int = 48) -> str:
    s = str(text)
    return escape(s if len(s) <= limit else s[: limit - 1] + "…")


def _term(row: Mapping[str, Any]) -> str:
    return f"{row['axis']} = {row['level']}"


def _svg(width: int, height: int, label: str, body: list[str]) -> Markup:
    return Markup(
        f'<svg class="chart" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'role="img" aria-label="{escape(label)}"><title>{escape(label)}</title>'
        + "".join(body)
        + "</svg>"
    )


def _scale(values: Sequence[float], width: float) -> tuple[float, float, float]:
    """(low, high, pixels per unit) covering every value and zero."""
    low = min([0.0, *values])
    high = max([0.0, *values])
    if high == low:
        high = low + 1.0
    pad = (high - low) * 0.05
    low, high = low - pad, high + pad
    return low, high, width / (high - low)


def main_effects_svg(
    rows: Sequence[Mapping[str, Any]], noise_sd: float | None, label: str
) -> Markup:
    """Each level's estimate vs its baseline with its 95 % interval; grey band = ± noise SD."""
    rows = [r for r in rows if r.get("estimate") is not None]
    plot_w = WIDTH - LABEL_W - VALUE_W
    height = ROW_H * max(len(rows), 1) + 40
    if not rows:
        return _svg(WIDTH, 40, label, ['<text x="0" y="24">no main effect was estimated</text>'])
    values = [r["estimate"] for r in rows]
    values += [r[k] for r in rows for k in ("ci_low", "ci_high") if r.get(k) is not None]
    if noise_sd:
        values += [-noise_sd, noise_sd]
    low, _high, px = _scale(values, plot_w)

    def x(v: float) -> float:
        return LABEL_W + (v - low) * px

    body: list[str] = []
    top, bottom = 8, 8 + ROW_H * len(rows)
    if noise_sd:
        body.append(
            f'<rect x="{x(-noise_sd):.1f}" y="{top}" width="{x(noise_sd) - x(-noise_sd):.1f}" '
            f'height="{bottom - top}" fill="{BAND}"/>'
        )
    body.append(f'<line x1="{x(0):.1f}" x2="{x(0):.1f}" y1="{top}" y2="{bottom}" stroke="{AXIS}"/>')
    for i, r in enumerate(rows):
        y = top + i * ROW_H + ROW_H / 2
        colour = STRONG if r.get("meaningful") else WEAK if r.get("significant") else NONE
        est = r["estimate"]
        x0, x1 = sorted((x(0), x(est)))
        body.append(
            f'<text x="{LABEL_W - 8}" y="{y + 4:.1f}" text-anchor="end" font-size="12">'
            f"{_t(_term(r))}</text>"
        )
        body.append(
            f'<rect x="{x0:.1f}" y="{y - 7:.1f}" width="{max(x1 - x0, 1):.1f}" height="14" '
            f'fill="{colour}"/>'
        )
        if r.get("ci_low") is not None and r.get("ci_high") is not None:
            a, b = x(r["ci_low"]), x(r["ci_high"])
            body.append(
                f'<line x1="{a:.1f}" x2="{b:.1f}" y1="{y:.1f}" y2="{y:.1f}" stroke="{WHISKER}" '
                f'stroke-width="1.5"/><line x1="{a:.1f}" x2="{a:.1f}" y1="{y - 5:.1f}" '
                f'y2="{y + 5:.1f}" stroke="{WHISKER}"/><line x1="{b:.1f}" x2="{b:.1f}" '
                f'y1="{y - 5:.1f}" y2="{y + 5:.1f}" stroke="{WHISKER}"/>'
            )
        body.append(
            f'<text x="{WIDTH - 4}" y="{y + 4:.1f}" text-anchor="end" font-size="12">'
            f"{escape(number(est, signed=True))}</text>"
        )
    legend = "bar: estimate; whiskers: 95 % interval"
    if noise_sd:
        legend += f"; grey band: ± noise SD ({number(noise_sd)})"
    body.append(f'<text x="{LABEL_W}" y="{bottom + 22}" font-size="11">{escape(legend)}</text>')
    return _svg(WIDTH, height, label, body)


def pareto_svg(rows: Sequence[Mapping[str, Any]], t_crit: float | None, label: str) -> Markup:
    """|t| of every effect, largest first, with the critical |t| line when known."""
    rows = sorted(
        (r for r in rows if r.get("t_value") is not None), key=lambda r: -abs(r["t_value"])
    )
    if not rows:
        return _svg(WIDTH, 40, label, ['<text x="0" y="24">no t value to rank</text>'])
    plot_w = WIDTH - LABEL_W - VALUE_W
    values = [abs(r["t_value"]) for r in rows] + ([t_crit] if t_crit else [])
    _low, _high, px = _scale(values, plot_w)
    top, bottom = 8, 8 + ROW_H * len(rows)
    body: list[str] = []
    for i, r in enumerate(rows):
        y = top + i * ROW_H + ROW_H / 2
        t = abs(r["t_value"])
        colour = STRONG if r.get("significant") else NONE
        body.append(
            f'<text x="{LABEL_W - 8}" y="{y + 4:.1f}" text-anchor="end" font-size="12">'
            f"{_t(_term(r))}</text>"
            f'<rect x="{LABEL_W}" y="{y - 7:.1f}" width="{max(t * px, 1):.1f}" height="14" '
            f'fill="{colour}"/><text x="{WIDTH - 4}" y="{y + 4:.1f}" text-anchor="end" '
            f'font-size="12">{escape(number(t))}</text>'
        )
    if t_crit:
        xc = LABEL_W + t_crit * px
        body.append(
            f'<line x1="{xc:.1f}" x2="{xc:.1f}" y1="{top}" y2="{bottom}" stroke="{CRITICAL}" '
            f'stroke-dasharray="4 3"/><text x="{xc + 4:.1f}" y="{bottom + 16}" font-size="11" '
            f'fill="{CRITICAL}">critical |t| = {escape(number(t_crit))}</text>'
        )
    return _svg(WIDTH, bottom + 28, label, body)


def interaction_svg(
    means: Mapping[tuple[str, str], float],
    x_levels: Sequence[str],
    series: Sequence[str],
    x_axis: str,
    series_axis: str,
    label: str,
) -> Markup:
    """Grouped bars: one group per level of `x_axis`, one bar per level of `series_axis`."""
    if not means:
        return _svg(WIDTH, 40, label, ['<text x="0" y="24">no cell means to plot</text>'])
    left, top, plot_h = 60, 10, 220
    plot_w = WIDTH - left - 10
    values = list(means.values())
    low, _high, px = _scale(values, plot_h)
    group_w = plot_w / max(len(x_levels), 1)
    bar_w = max(min(group_w * 0.8 / max(len(series), 1), 40), 2)

    def y(v: float) -> float:
        return top + plot_h - (v - low) * px

    body = [
        f'<line x1="{left}" x2="{WIDTH - 10}" y1="{y(0):.1f}" y2="{y(0):.1f}" stroke="{AXIS}"/>'
    ]
    for gi, xl in enumerate(x_levels):
        gx = left + gi * group_w + (group_w - bar_w * len(series)) / 2
        for si, sl in enumerate(series):
            v = means.get((xl, sl))
            if v is None:
                continue
            y0, y1 = sorted((y(0), y(v)))
            body.append(
                f'<rect x="{gx + si * bar_w:.1f}" y="{y0:.1f}" width="{bar_w - 2:.1f}" '
                f'height="{max(y1 - y0, 1):.1f}" fill="{SERIES[si % len(SERIES)]}">'
                f"<title>{_t(f'{x_axis}={xl}, {series_axis}={sl}: {number(v)}', 120)}</title>"
                "</rect>"
            )
        body.append(
            f'<text x="{left + gi * group_w + group_w / 2:.1f}" y="{top + plot_h + 16}" '
            f'text-anchor="middle" font-size="12">{_t(xl, 24)}</text>'
        )
    body.append(
        f'<text x="{left}" y="{top + plot_h + 34}" font-size="11">{_t(x_axis, 40)} (groups); '
        f"bars: {_t(series_axis, 40)}</text>"
    )
    ly = top + plot_h + 54
    for si, sl in enumerate(series):
        lx = left + (si % 4) * 160
        ly = top + plot_h + 54 + (si // 4) * 18
        body.append(
            f'<rect x="{lx}" y="{ly - 10}" width="12" height="12" '
            f'fill="{SERIES[si % len(SERIES)]}"/><text x="{lx + 16}" y="{ly}" font-size="12">'
            f"{_t(sl, 18)}</text>"
        )
    body.append(
        f'<text x="{left - 6}" y="{y(0) + 4:.1f}" text-anchor="end" font-size="11">0</text>'
    )
    return _svg(WIDTH, ly + 10, label, body)

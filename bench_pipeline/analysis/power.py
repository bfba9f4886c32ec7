"""The Pareto view of standardized effects and the power analysis for repeats per cell.

`_pareto` ranks the two-level axes' effects by |t| (OLS t, or Lenth's pseudo standard error
from `_lenth_pse` on a saturated screen); `_power` gives the repeats per cell needed to
detect an effect size and the effect the current repeats can detect.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy import stats
from statsmodels.stats.power import TTestIndPower

from bench_pipeline.analysis.design import _Table
from bench_pipeline.analysis.main_effects import _finite
from bench_pipeline.analysis.results import MainEffect, Noise, ParetoEffect, Power


def _pareto(
    effects: list[MainEffect], table: _Table, residual_df: int, alpha: float
) -> tuple[list[ParetoEffect], float | None, str | None, str | None]:
    """Standardized effects of the two-level axes (the Plackett-Burman view).

    With residual df, t = estimate / OLS std error and the line is the t quantile on the
    residual df. A saturated screen has no residual, so Lenth's pseudo standard error stands
    in: s0 = 1.5 median|c|, PSE = 1.5 median{|c| : |c| < 2.5 s0} over all main-effect
    estimates c, with the t quantile on (number of effects)/3 df (Lenth 1989).
    """
    two_level = [e for e in effects if len(table.levels[e.axis]) == 2]
    note = None
    if residual_df > 0:
        method = "ols"
        t_crit: float | None = float(stats.t.ppf(1 - alpha / 2, residual_df))
        ts = [e.t_value for e in two_level]
    else:
        method = "lenth"
        magnitudes = np.abs([e.estimate for e in effects])
        pse = _lenth_pse(magnitudes)
        if pse is None:
            t_crit = None
            ts = [None for _ in two_level]
            note = "Pareto view: Lenth's pseudo standard error needs at least 3 non-zero effects"
        else:
            t_crit = float(stats.t.ppf(1 - alpha / 2, len(magnitudes) / 3))
            ts = [e.estimate / pse for e in two_level]
    rows = sorted(
        zip(two_level, ts, strict=True),
        key=lambda r: (-(abs(r[1]) if r[1] is not None else -1.0), -abs(r[0].estimate)),
    )
    pareto = [
        ParetoEffect(
            axis=e.axis,
            level=e.level,
            baseline=e.baseline,
            estimate=e.estimate,
            t_value=t,
            abs_t=None if t is None else abs(t),
            rank=rank,
            method=method,
        )
        for rank, (e, t) in enumerate(rows, start=1)
    ]
    return pareto, t_crit, method if two_level else None, note


def _lenth_pse(magnitudes: np.ndarray) -> float | None:
    if len(magnitudes) < 3 or not np.any(magnitudes > 0):
        return None
    s0 = 1.5 * float(np.median(magnitudes))
    trimmed = magnitudes[magnitudes < 2.5 * s0]
    if len(trimmed) == 0:
        return None
    pse = 1.5 * float(np.median(trimmed))
    return pse if pse > 0 else None


def _power(noise: Noise, effect_size: float, alpha: float, power: float) -> Power:
    """Repeats per cell to detect `effect_size` between a level cell and the baseline cell
    (two-sample t test, equal sizes), and the effect the current repeats can detect."""
    sd = noise.noise_sd
    if sd is None:
        return Power(effect_size, alpha, power, None, None, noise.reason)
    if sd == 0:
        return Power(effect_size, alpha, power, 2, 0.0, "the noise SD is zero: any effect shows")
    solver = TTestIndPower()
    with warnings.catch_warnings():
        # solve_power warns (and returns nan) when the answer is below two runs per cell.
        warnings.simplefilter("ignore")
        needed = solver.solve_power(effect_size=effect_size / sd, alpha=alpha, power=power)
        repeats = noise.repeats_per_cell
        detectable = (
            solver.solve_power(nobs1=repeats, alpha=alpha, power=power) * sd
            if repeats >= 2
            else None
        )
    needed_value = float(np.asarray(needed).reshape(-1)[0])
    if math.isfinite(needed_value):
        repeats_needed = max(2, math.ceil(needed_value))
    else:
        # The root finder gives up when the answer is near its lower bound of 2 runs (large
        # effects); counting up from 2 finds the same smallest sufficient size.
        repeats_needed = 2
        while solver.power(effect_size / sd, repeats_needed, alpha) < power:
            repeats_needed += 1
    reason = None
    if detectable is None:
        reason = "the median cell has one run: a two-sample t test needs two per cell"
    return Power(
        effect_size,
        alpha,
        power,
        repeats_needed,
        None if detectable is None else _finite(float(np.asarray(detectable).reshape(-1)[0])),
        reason,
    )

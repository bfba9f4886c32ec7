"""Main effects of the additive model, the noise of the repeats, and p-value adjustment.

`_main_effects` turns the OLS fit into one `MainEffect` per estimable level (adjusted p,
significant, meaningful); `_noise` pools the within-cell SD of the repeats; `_lack_of_fit`
warns when the repeats show structure the additive model misses. `_adjust` (Holm via
`_holm`, or Benjamini-Hochberg) and `_finite` are shared with the interactions and power.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import stats
from statsmodels.stats.multitest import multipletests

from bench_pipeline.analysis.design import _Design, _Table
from bench_pipeline.analysis.results import MainEffect, Noise

# The lack-of-fit warning is advice, not a finding: at 0.05 it would also show on one purely
# additive table in twenty.
LACK_OF_FIT_P = 0.01


def _finite(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def _adjust(p_values: list[float | None], correction: str) -> list[float | None]:
    present = [i for i, p in enumerate(p_values) if p is not None]
    adjusted: list[float | None] = [None] * len(p_values)
    if present:
        raw = np.array([p_values[i] for i in present], dtype=float)
        corrected = _holm(raw) if correction == "holm" else multipletests(raw, method="fdr_bh")[1]
        for i, p in zip(present, corrected, strict=True):
            adjusted[i] = float(p)
    return adjusted


def _holm(p_values: np.ndarray) -> np.ndarray:
    """Holm's step-down adjustment, identical to multipletests(method="holm") (a test checks
    it). statsmodels' holm branch runs gc.collect() on every call, ~0.1 s in a process that
    has pandas loaded, which would dominate an analysis; this is the same three lines."""
    order = np.argsort(p_values)
    steps = p_values[order] * np.arange(len(p_values), 0, -1)
    adjusted = np.empty_like(p_values)
    adjusted[order] = np.minimum(np.maximum.accumulate(steps), 1.0)
    return adjusted


def _main_effects(
    table: _Table,
    design: _Design,
    kept: list[int],
    fit: Any,
    conf: np.ndarray,
    residual_df: int,
    noise: Noise,
    partner_of: dict[int, list[str]],
    correction: str,
    alpha: float,
) -> list[MainEffect]:
    inferential = residual_df > 0
    raw_p: list[float | None] = []
    for i in range(len(kept)):
        p = _finite(fit.pvalues[i + 1]) if inferential else None
        raw_p.append(p)
    adjusted = _adjust(raw_p, correction)
    counts = {a: np.bincount(table.codes[a], minlength=len(table.levels[a])) for a in table.axes}
    effects: list[MainEffect] = []
    for i, j in enumerate(kept):
        axis, level = design.terms[j]
        levels = table.levels[axis]
        baseline = table.baselines[axis]
        estimate = float(fit.params[i + 1])
        p_adj = adjusted[i]
        significant = None if p_adj is None else p_adj < alpha
        meaningful = (
            None
            if significant is None or noise.noise_sd is None
            else bool(significant and abs(estimate) > noise.noise_sd)
        )
        effects.append(
            MainEffect(
                axis=axis,
                level=level,
                baseline=baseline,
                estimate=estimate,
                std_error=_finite(fit.bse[i + 1]) if inferential else None,
                t_value=_finite(fit.tvalues[i + 1]) if inferential else None,
                ci_low=_finite(conf[i + 1, 0]) if inferential else None,
                ci_high=_finite(conf[i + 1, 1]) if inferential else None,
                p_value=raw_p[i],
                p_adjusted=p_adj,
                significant=significant,
                meaningful=meaningful,
                n_level=int(counts[axis][levels.index(level)]),
                n_baseline=int(counts[axis][levels.index(baseline)]),
                aliased_with=partner_of.get(i, []),
            )
        )
    return effects


def _noise(table: _Table) -> Noise:
    keys = table.cell_keys
    sizes = np.bincount(keys).astype(float)
    centred = table.y - table.y.mean()
    sums = np.bincount(keys, weights=centred)
    squares = np.bincount(keys, weights=centred**2)
    present = sizes > 0
    sizes, sums, squares = sizes[present], sums[present], squares[present]
    within = float(np.sum(np.maximum(squares - sums**2 / sizes, 0.0)))
    noise_df = int(np.sum(sizes - 1))
    n_cells = len(sizes)
    with_repeats = int(np.sum(sizes >= 2))
    repeats = float(np.median(sizes))
    if noise_df == 0:
        return Noise(
            None,
            0,
            n_cells,
            0,
            repeats,
            "every cell has a single run: there are no repeats to measure the noise",
        )
    return Noise(math.sqrt(within / noise_df), noise_df, n_cells, with_repeats, repeats)


def _lack_of_fit(design: _Design, fit: Any, residual_df: int) -> str | None:
    """Warn when the additive model misses structure the repeats show (usually interactions):
    its main effects are then averages over the other axes' levels in this design."""
    cells = design.blocks.cells
    pure_df = cells.n_runs - len(cells.weights)
    lack_df = residual_df - pure_df
    if pure_df <= 0 or lack_df <= 0:
        return None
    pure = cells.within_ss
    lack = max(float(fit.ssr) - pure, 0.0)
    if pure <= 0:
        return None
    f_value = (lack / lack_df) / (pure / pure_df)
    p = float(stats.f.sf(f_value, lack_df, pure_df))
    if p >= LACK_OF_FIT_P:
        return None
    return (
        f"the additive model leaves structure unexplained (lack-of-fit F = {f_value:.2f}, "
        f"p = {p:.2g}): some axes interact, and each main effect averages over the levels "
        "of the others in this design"
    )

"""Effects of the experiment's axes on one metric: main effects, interactions, noise, power.

Pure Python (numpy, scipy, statsmodels); docs/analysis.md explains the methods. In short:

* one additive OLS over the runs with every axis at once, treatment-coded against each
  axis's baseline, so a coefficient is "level minus baseline, everything else held equal";
* columns that the design makes linear combinations of others are dropped before fitting
  and reported as not estimable, naming the partner terms;
* the noise is the pooled within-cell SD of the repeats; "meaningful" = significant and
  larger than that noise;
* two- and three-way interactions are nested-model F tests, only where the design can
  estimate them.

The pieces live in sibling modules: `results` (the returned dataclasses), `design` (table
and design preparation), `main_effects` (the additive fit, noise, p-value adjustment),
`interactions` and `power` (Pareto view and repeats needed). This module runs them in order.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from statsmodels.regression.linear_model import OLS

from bench_pipeline.analysis import linalg
from bench_pipeline.analysis.design import MAIN, _alias_reason, _design, _prepare, _term_name
from bench_pipeline.analysis.interactions import _interactions
from bench_pipeline.analysis.main_effects import _lack_of_fit, _main_effects, _noise
from bench_pipeline.analysis.power import _pareto, _power
from bench_pipeline.analysis.results import (
    EffectsReport,
    Interaction,
    MainEffect,
    Noise,
    NotEstimable,
    ParetoEffect,
    Power,
)
from bench_pipeline.analysis.runs import AnalysisInputError

__all__ = [
    "EffectsReport",
    "Interaction",
    "MainEffect",
    "Noise",
    "NotEstimable",
    "ParetoEffect",
    "Power",
    "analyze",
]

CORRECTIONS: tuple[str, ...] = ("holm", "bh")


def analyze(
    frame: pd.DataFrame,
    metric: str,
    *,
    axes: Sequence[str] | None = None,
    baselines: Mapping[str, Any] | None = None,
    correction: str = "holm",
    effect_size: float = 5.0,
    alpha: float = 0.05,
    power: float = 0.8,
) -> EffectsReport:
    """Main effects, interactions, noise and power of every axis on `metric`.

    Raises AnalysisInputError with a readable message when the table cannot be analysed;
    everything that can be analysed but not estimated is listed in `not_estimable`.
    """
    if correction not in CORRECTIONS:
        raise AnalysisInputError(f"correction must be 'holm' or 'bh', got {correction!r}")
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise AnalysisInputError("alpha and power must lie strictly between 0 and 1")
    if not effect_size > 0:
        raise AnalysisInputError(f"effect size must be positive, got {effect_size}")

    table = _prepare(frame, metric, axes, baselines)
    design = _design(table)
    n = len(table.y)
    n_params = 1 + design.dummies.shape[1]
    if n < n_params:
        raise AnalysisInputError(
            f"{n} runs for {n_params} parameters (intercept + one per non-baseline level of "
            f"{', '.join(table.axes)}): add runs, or choose fewer axes with --axis"
        )
    notes = table.warnings
    not_estimable = table.not_estimable

    # Drop aliased columns before fitting: statsmodels would otherwise split the effect
    # between aliases through the pseudo-inverse and print numbers that mean nothing.
    main = linalg.extend(linalg.intercept_factor(design.blocks), MAIN, design.blocks, explain=True)
    kept = main.added
    kept_terms = [design.terms[j] for j in kept]
    partner_of: dict[int, list[str]] = {}
    for j, coefs in main.aliases.items():
        reason, partners = _alias_reason(coefs, kept_terms)
        not_estimable.append(NotEstimable(_term_name(design.terms[j]), reason))
        for p in partners:
            partner_of.setdefault(p, []).append(_term_name(design.terms[j]))

    x_runs = np.column_stack([np.ones(n), design.dummies[design.inverse][:, kept]])
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        # A saturated model divides by zero residual df; that case is handled below.
        warnings.simplefilter("ignore")
        # QR rather than the default pseudo-inverse: the columns are independent by now and
        # QR is about twice as fast on 10,000 runs.
        fit = OLS(table.y, x_runs).fit(method="qr")
        conf = np.asarray(fit.conf_int(alpha))
    residual_df = round(float(fit.df_resid))

    noise = _noise(table)
    if noise.noise_sd is None and residual_df > 0:
        notes.append(
            "no cell has repeats, so the noise SD is unknown: intervals and p-values rest on "
            "the additive model's residual, which mixes lack of fit (interactions) with noise, "
            "and 'meaningful' cannot be judged"
        )
    if residual_df == 0:
        not_estimable.append(
            NotEstimable(
                "standard errors, intervals and p-values",
                "no residual degrees of freedom left: the model has as many parameters as "
                "distinct observations",
            )
        )
        notes.append(
            f"no residual degrees of freedom left ({n} runs, {len(kept) + 1} parameters): "
            "estimates are shown without intervals or p-values; add repeats"
        )
    else:
        lack = _lack_of_fit(design, fit, residual_df)
        if lack:
            notes.append(lack)

    main_effects = _main_effects(
        table, design, kept, fit, conf, residual_df, noise, partner_of, correction, alpha
    )
    interactions, interaction_gaps = _interactions(table, design, main.factor, correction, alpha)
    not_estimable.extend(interaction_gaps.entries)
    notes.extend(interaction_gaps.notes)
    pareto, t_crit, method, pareto_note = _pareto(main_effects, table, residual_df, alpha)
    if pareto_note:
        notes.append(pareto_note)

    return EffectsReport(
        metric=metric,
        n_runs=n,
        n_cells=noise.n_cells,
        n_dropped=table.n_dropped,
        axes=list(table.axes),
        baselines=dict(table.baselines),
        correction=correction,
        noise_sd=noise.noise_sd,
        main_effects=main_effects,
        interactions=interactions,
        noise=noise,
        power=_power(noise, effect_size, alpha, power),
        pareto=pareto,
        not_estimable=not_estimable,
        warnings=notes,
        pareto_t_crit=t_crit,
        pareto_method=method,
        alpha=alpha,
        residual_df=residual_df,
    )

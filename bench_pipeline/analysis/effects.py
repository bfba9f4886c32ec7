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
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.regression.linear_model import OLS
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import TTestIndPower

from bench_pipeline.analysis import linalg
from bench_pipeline.analysis.runs import (
    AnalysisInputError,
    infer_axes,
    is_id_column,
    level_codes,
    normalize_baseline,
    numeric_columns,
)

CORRECTIONS: tuple[str, ...] = ("holm", "bh")
# Past this many, not-estimable interactions collapse into one warning line: a one-at-a-time
# sweep over 16 axes would otherwise list ~120 pairs nobody asked about.
MAX_LISTED_INTERACTIONS = 6
# Rows named in a warning about dropped runs; the rest are counted.
MAX_NAMED_ROWS = 10
_ALIAS_COEF = 1e-6
MAIN = "main"
# The lack-of-fit warning is advice, not a finding: at 0.05 it would also show on one purely
# additive table in twenty.
LACK_OF_FIT_P = 0.01


@dataclass(frozen=True, slots=True)
class MainEffect:
    axis: str
    level: str
    baseline: str
    estimate: float
    std_error: float | None
    t_value: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    p_adjusted: float | None
    significant: bool | None  # None when no p-value could be computed
    meaningful: bool | None  # None when the noise SD is unknown
    n_level: int
    n_baseline: int
    # Terms this one's estimate also carries because the design never separates them.
    aliased_with: list[str] = field(default_factory=list)

    @property
    def term(self) -> str:
        return f"{self.axis}={self.level}"


@dataclass(frozen=True, slots=True)
class Interaction:
    axes: tuple[str, ...]
    order: int
    df: int
    f_value: float
    p_value: float
    p_adjusted: float
    significant: bool
    df_resid: int

    @property
    def term(self) -> str:
        return " × ".join(self.axes)


@dataclass(frozen=True, slots=True)
class Noise:
    noise_sd: float | None
    noise_df: int
    n_cells: int
    n_cells_with_repeats: int
    repeats_per_cell: float
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class Power:
    effect_size: float
    alpha: float
    power: float
    repeats_needed: int | None
    detectable_effect: float | None
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class ParetoEffect:
    axis: str
    level: str
    baseline: str
    estimate: float
    t_value: float | None
    abs_t: float | None
    rank: int
    method: str  # "ols": t = estimate / OLS std error; "lenth": estimate / Lenth's PSE


@dataclass(frozen=True, slots=True)
class NotEstimable:
    term: str
    reason: str


@dataclass(slots=True)
class EffectsReport:
    metric: str
    n_runs: int
    n_cells: int
    n_dropped: int
    axes: list[str]
    baselines: dict[str, str]
    correction: str
    noise_sd: float | None
    main_effects: list[MainEffect]
    interactions: list[Interaction]
    noise: Noise
    power: Power
    pareto: list[ParetoEffect]
    not_estimable: list[NotEstimable]
    warnings: list[str]
    pareto_t_crit: float | None = None
    pareto_method: str | None = None
    alpha: float = 0.05
    residual_df: int = 0

    def to_dict(self) -> dict[str, Any]:
        """Contract §4 keys plus the rest; strict JSON (NaN and infinities become null)."""
        return _jsonable(asdict(self))


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        number = float(value)
        return number if math.isfinite(number) else None
    return value


# --------------------------------------------------------------------------- preparation


@dataclass(slots=True)
class _Table:
    """The runs that enter the model, coded, plus what was set aside on the way."""

    y: np.ndarray
    axes: list[str]  # axes with at least two levels
    levels: dict[str, list[str]]  # first-appearance order
    baselines: dict[str, str]
    codes: dict[str, np.ndarray]  # per axis, index into levels
    cell_keys: np.ndarray  # noise cells: cell_id when present, else the axis combination
    n_dropped: int
    warnings: list[str]
    not_estimable: list[NotEstimable]


def _prepare(
    frame: pd.DataFrame,
    metric: str,
    axes: Sequence[str] | None,
    baselines: Mapping[str, Any] | None,
) -> _Table:
    if not isinstance(frame, pd.DataFrame):
        raise AnalysisInputError("the runs must be a pandas DataFrame")
    frame = frame.reset_index(drop=True)
    frame.columns = [str(c) for c in frame.columns]
    notes: list[str] = []
    y_all = _metric_values(frame, metric)

    requested = axes is not None
    axis_names = _axis_names(frame, metric, axes)
    has_cell_id = "cell_id" in frame.columns
    if has_cell_id:
        axis_names = _drop_outcome_columns(frame, axis_names, notes)
    if not requested:
        empty = [a for a in axis_names if frame[a].isna().all()]
        for name in empty:
            notes.append(f"column {name} has no values: not used as an axis")
        axis_names = [a for a in axis_names if a not in empty]
    if not axis_names:
        raise AnalysisInputError(
            "no axis columns found (axes are the columns that are neither ids nor numeric "
            f"metrics); columns: {', '.join(frame.columns)}"
        )

    labels = _row_labels(frame)
    keep = np.isfinite(y_all)
    n_dropped = 0
    missing_metric = np.flatnonzero(~keep)
    if len(missing_metric):
        n_dropped += len(missing_metric)
        notes.append(
            f"{len(missing_metric)} of {len(frame)} runs dropped: no value for {metric}: "
            + _name_rows(labels, missing_metric)
        )
    raw_codes: dict[str, np.ndarray] = {}
    raw_levels: dict[str, list[str]] = {}
    for name in axis_names:
        codes, levels = level_codes(frame[name])
        raw_codes[name], raw_levels[name] = codes, levels
        lost = np.flatnonzero(keep & (codes < 0))
        if len(lost):
            n_dropped += len(lost)
            keep &= codes >= 0
            notes.append(
                f"{len(lost)} of {len(frame)} runs dropped: no value for axis {name}: "
                + _name_rows(labels, lost)
            )
    if not keep.any():
        raise AnalysisInputError(
            f"no run is left once runs without a {metric} value or without a value for every "
            f"axis ({', '.join(axis_names)}) are dropped"
        )

    y = y_all[keep]
    not_estimable: list[NotEstimable] = []
    model_axes: list[str] = []
    levels_by_axis: dict[str, list[str]] = {}
    codes_by_axis: dict[str, np.ndarray] = {}
    chosen: dict[str, str] = {}
    levels_of_single: dict[str, str] = {}
    requested_baselines = dict(baselines or {})
    _check_baseline_axes(frame, requested_baselines, axis_names)
    for name in axis_names:
        codes, levels = _recode(raw_codes[name][keep], raw_levels[name])
        baseline = _choose_baseline(name, codes, levels, requested_baselines)
        if len(levels) < 2:
            levels_of_single[name] = levels[0]
            not_estimable.append(NotEstimable(name, f"only one level ({levels[0]}) in the table"))
            continue
        model_axes.append(name)
        levels_by_axis[name] = levels
        codes_by_axis[name] = codes
        chosen[name] = baseline
    if not model_axes:
        only = ", ".join(f"{n} (only {levels_of_single[n]})" for n in levels_of_single)
        raise AnalysisInputError(f"no axis has two or more levels: {only}")

    stacked = np.column_stack([codes_by_axis[a] for a in model_axes])
    cell_keys = np.unique(stacked, axis=0, return_inverse=True)[1].reshape(-1)
    if has_cell_id:
        ids = pd.factorize(frame["cell_id"][keep])[0]
        # A run without a cell_id falls back to its axis combination as its cell.
        cell_keys = np.where(ids >= 0, ids, ids.max() + 1 + cell_keys)
    return _Table(
        y=y,
        axes=model_axes,
        levels=levels_by_axis,
        baselines=chosen,
        codes=codes_by_axis,
        cell_keys=np.asarray(cell_keys, dtype=np.int64),
        n_dropped=n_dropped,
        warnings=notes,
        not_estimable=not_estimable,
    )


def _metric_values(frame: pd.DataFrame, metric: str) -> np.ndarray:
    numeric = [c for c in numeric_columns(frame) if not is_id_column(c)]
    listing = ", ".join(numeric) if numeric else "(none)"
    if metric not in frame.columns:
        raise AnalysisInputError(f"no column {metric!r}; numeric columns: {listing}")
    column = frame[metric]
    if pd.api.types.is_numeric_dtype(column):
        # Bools count as 0/1 (a pass rate); the nullable dtype keeps missing values missing.
        values = column.astype("Float64")
    else:
        values = pd.to_numeric(column, errors="coerce")
        bad = column[values.isna() & column.notna()]
        if len(bad):
            raise AnalysisInputError(
                f"column {metric!r} is not numeric (for example {str(bad.iloc[0])!r}); "
                f"numeric columns: {listing}"
            )
    array = values.to_numpy(dtype=float, na_value=np.nan)
    if not np.isfinite(array).any():
        raise AnalysisInputError(f"every value of {metric!r} is missing (NaN)")
    return array


def _axis_names(frame: pd.DataFrame, metric: str, axes: Sequence[str] | None) -> list[str]:
    if axes is None:
        return infer_axes(frame, metric)
    if isinstance(axes, str):
        axes = [axes]
    names: list[str] = []
    for name in axes:
        if name not in frame.columns:
            raise AnalysisInputError(
                f"axis {name!r} is not a column; columns: {', '.join(frame.columns)}"
            )
        if name == metric:
            raise AnalysisInputError(f"{name!r} is the metric; it cannot also be an axis")
        if name not in names:
            names.append(name)
    return names


def _drop_outcome_columns(
    frame: pd.DataFrame, axis_names: list[str], notes: list[str]
) -> list[str]:
    """An axis is fixed within a cell by construction; a column that varies there is an
    outcome (status, build_ok...) and would bias every estimate if it were modelled."""
    cells = pd.factorize(frame["cell_id"])[0]
    known = cells >= 0
    order = np.argsort(cells[known], kind="stable")
    sorted_cells = cells[known][order]
    starts = np.flatnonzero(np.r_[True, sorted_cells[1:] != sorted_cells[:-1]])
    kept: list[str] = []
    for name in axis_names:
        codes = pd.factorize(frame[name])[0][known][order]
        if len(codes) == 0:
            kept.append(name)
            continue
        # Missing values (code -1) are not variation: those runs are dropped later instead.
        low = np.minimum.reduceat(np.where(codes < 0, np.iinfo(np.int64).max, codes), starts)
        varies = low < np.maximum.reduceat(codes, starts)
        if not varies.any():
            kept.append(name)
            continue
        cell = sorted_cells[starts[np.argmax(varies)]]
        cell_id = frame["cell_id"][known].iloc[order[starts[np.argmax(varies)]]]
        values = frame.loc[(cells == cell), name].dropna().astype(str).unique()[:4]
        notes.append(
            f"column {name} varies within cell {cell_id} ({', '.join(values)}): it is an "
            "outcome, not a design axis; ignored"
        )
    return kept


def _check_baseline_axes(
    frame: pd.DataFrame, requested: Mapping[str, Any], axis_names: list[str]
) -> None:
    for name in requested:
        if name not in frame.columns:
            raise AnalysisInputError(
                f"baseline axis {name!r} is not a column; axes: {', '.join(axis_names)}"
            )
        if name not in axis_names:
            raise AnalysisInputError(
                f"baseline axis {name!r} is not an axis of this analysis; axes: "
                f"{', '.join(axis_names)}"
            )


def _recode(codes: np.ndarray, levels: list[str]) -> tuple[np.ndarray, list[str]]:
    """Renumber codes to the levels still present after dropping rows (first appearance)."""
    present, first = np.unique(codes, return_index=True)
    order = present[np.argsort(first)]
    remap = np.full(len(levels), -1, dtype=np.int64)
    remap[order] = np.arange(len(order))
    return remap[codes], [levels[i] for i in order]


def _choose_baseline(
    name: str, codes: np.ndarray, levels: list[str], requested: Mapping[str, Any]
) -> str:
    if name in requested:
        level = normalize_baseline(requested[name], levels)
        if level not in levels:
            raise AnalysisInputError(
                f"baseline level {level!r} of axis {name} does not occur; levels: "
                f"{', '.join(levels)}"
            )
        return level
    counts = np.bincount(codes, minlength=len(levels))
    # argmax returns the first maximum, and levels are in file order: ties go to the first.
    return levels[int(np.argmax(counts))]


def _row_labels(frame: pd.DataFrame) -> list[str]:
    if "run_id" in frame.columns:
        ids = frame["run_id"]
        return [str(v) if pd.notna(v) else f"row {i + 1}" for i, v in enumerate(ids)]
    return [f"row {i + 1}" for i in range(len(frame))]


def _name_rows(labels: list[str], rows: np.ndarray) -> str:
    named = ", ".join(labels[i] for i in rows[:MAX_NAMED_ROWS])
    more = len(rows) - MAX_NAMED_ROWS
    return named + (f" and {more} more" if more > 0 else "")


# --------------------------------------------------------------------------- the model


@dataclass(slots=True)
class _Design:
    """Cell-level dummy coding of the table: one row per distinct axis combination."""

    blocks: linalg.Blocks  # "main" holds the dummies; interactions are added as tested
    inverse: np.ndarray  # run -> design cell
    dummies: np.ndarray  # m x P, one column per non-baseline level
    terms: list[tuple[str, str]]  # (axis, level) per dummy column
    columns_of: dict[str, list[int]]  # axis -> its dummy columns


def _design(table: _Table) -> _Design:
    stacked = np.column_stack([table.codes[a] for a in table.axes])
    unique, inverse = np.unique(stacked, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    blocks: list[np.ndarray] = []
    terms: list[tuple[str, str]] = []
    columns_of: dict[str, list[int]] = {}
    for position, axis in enumerate(table.axes):
        levels = table.levels[axis]
        base_code = levels.index(table.baselines[axis])
        columns_of[axis] = []
        for code, level in enumerate(levels):
            if code == base_code:
                continue
            columns_of[axis].append(len(terms))
            terms.append((axis, level))
            blocks.append((unique[:, position] == code).astype(float))
    centred = table.y - table.y.mean()
    weights = np.bincount(inverse, minlength=len(unique)).astype(float)
    cells = linalg.CellData(
        weights=weights,
        sums=np.bincount(inverse, weights=centred, minlength=len(unique)),
        total_ss=float(centred @ centred),
        n_runs=len(table.y),
    )
    dummies = np.column_stack(blocks)
    column_blocks = linalg.Blocks(cells)
    column_blocks.add(MAIN, dummies)
    return _Design(column_blocks, inverse, dummies, terms, columns_of)


def _term_name(term: tuple[str, str]) -> str:
    return f"{term[0]}={term[1]}"


def _alias_reason(coefs: np.ndarray, kept_terms: list[tuple[str, str]]) -> tuple[str, list[int]]:
    """Plain-words reason for an aliased dummy, from its coefficients on the kept columns
    (intercept first). Returns the reason and the partner term indices into kept_terms."""
    intercept, rest = coefs[0], coefs[1:]
    partners = [i for i, c in enumerate(rest) if abs(c) > _ALIAS_COEF]
    names = [_term_name(kept_terms[i]) for i in partners]
    if len(partners) == 1 and abs(rest[partners[0]] - 1) < 1e-6 and abs(intercept) < 1e-6:
        return f"aliased with {names[0]}: the two always change together in this design", partners
    if len(partners) == 1 and abs(rest[partners[0]] + 1) < 1e-6 and abs(intercept - 1) < 1e-6:
        return (
            f"aliased with {names[0]}: every run has exactly one of the two in this design",
            partners,
        )
    if not partners:
        return "constant in this design: no run separates it from the baseline", partners
    return (
        f"aliased with a combination of {', '.join(names)}: no run in this design separates "
        "its effect from theirs",
        partners,
    )


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


# --------------------------------------------------------------------------- interactions


@dataclass(slots=True)
class _Gaps:
    entries: list[NotEstimable] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _product_block(design: _Design, axes: Sequence[str]) -> np.ndarray:
    blocks = []
    for combo in itertools.product(*(design.columns_of[a] for a in axes)):
        column = np.ones(design.dummies.shape[0])
        for j in combo:
            column = column * design.dummies[:, j]
        blocks.append(column)
    return np.column_stack(blocks)


def _f_test(ext: linalg.Extension, cells: linalg.CellData) -> tuple[int, int, float, float] | None:
    """(df, df_resid, F, p) of the added block, or None without residual df."""
    df = len(ext.added)
    df_resid = cells.n_runs - ext.factor.n_params
    if df_resid <= 0:
        return None
    rss = float(ext.factor.rss(cells))
    explained = float(ext.explained_ss)
    if rss <= 0.0:
        # No residual variation at all (e.g. a metric that is the same in every run): an
        # interaction that explains something is certain, one that explains nothing is
        # untestable. Python floats raise on 0/0, so this is decided here, not divided.
        f_value = math.inf if explained > 0.0 else math.nan
    else:
        f_value = (explained / df) / (rss / df_resid)
    p = float(stats.f.sf(f_value, df, df_resid)) if not math.isnan(f_value) else math.nan
    return df, df_resid, float(f_value), p


def _interactions(
    table: _Table, design: _Design, main: linalg.Factor, correction: str, alpha: float
) -> tuple[list[Interaction], _Gaps]:
    blocks = design.blocks
    cells = blocks.cells
    tested: list[tuple[tuple[str, ...], int, int, float, float]] = []
    # main + the pair, kept to start each triple's model from (saves one extension each)
    pair_factors: dict[tuple[str, ...], linalg.Factor] = {}
    pair_gaps: list[tuple[str, str, str]] = []  # term, kind, reason
    pairs = list(itertools.combinations(table.axes, 2))
    for a, b in pairs:
        block = _product_block(design, (a, b))
        term = f"{a} × {b}"
        if not block.any():
            pair_gaps.append(
                (
                    term,
                    "never varied together",
                    f"never varied together: no run changes both "
                    f"{a} and {b} away from their baselines",
                )
            )
            continue
        blocks.add((a, b), block)
        ext = linalg.extend(main, (a, b), blocks)
        if not ext.added:
            pair_gaps.append(
                (
                    term,
                    "confounded with the main effects",
                    "confounded with the main effects: "
                    "in this design its columns are combinations of main-effect columns",
                )
            )
            continue
        result = _f_test(ext, cells)
        if result is None:
            pair_gaps.append(
                (term, "no residual degrees of freedom", "no residual degrees of freedom left")
            )
            continue
        pair_factors[(a, b)] = ext.factor
        tested.append(((a, b), *result))

    triple_gaps: list[tuple[str, str, str]] = []
    n_triples = 0
    for triple in itertools.combinations(table.axes, 3):
        sub_pairs = list(itertools.combinations(triple, 2))
        if not all(p in pair_factors for p in sub_pairs):
            continue
        n_triples += 1
        term = " × ".join(triple)
        base = pair_factors[sub_pairs[0]]
        for pair in sub_pairs[1:]:
            base = linalg.extend(base, pair, blocks).factor
        blocks.add(triple, _product_block(design, triple))
        ext = linalg.extend(base, triple, blocks)
        if not ext.added:
            triple_gaps.append(
                (
                    term,
                    "confounded with lower-order terms",
                    "confounded with the main effects and two-way interactions in this design",
                )
            )
            continue
        result = _f_test(ext, cells)
        if result is None:
            triple_gaps.append(
                (term, "no residual degrees of freedom", "no residual degrees of freedom left")
            )
            continue
        tested.append((triple, *result))

    adjusted = _adjust([t[4] if math.isfinite(t[4]) else None for t in tested], correction)
    interactions = [
        Interaction(
            axes=axes,
            order=len(axes),
            df=df,
            f_value=f_value,
            p_value=p,
            p_adjusted=math.nan if p_adj is None else p_adj,
            significant=p_adj is not None and p_adj < alpha,
            df_resid=df_resid,
        )
        for (axes, df, df_resid, f_value, p), p_adj in zip(tested, adjusted, strict=True)
    ]
    gaps = _Gaps()
    _summarize_gaps(gaps, pair_gaps, len(pairs), "axis pairs")
    _summarize_gaps(gaps, triple_gaps, n_triples, "axis triples (whose pairs are estimable)")
    return interactions, gaps


def _summarize_gaps(gaps: _Gaps, found: list[tuple[str, str, str]], total: int, what: str) -> None:
    if not found:
        return
    if len(found) <= MAX_LISTED_INTERACTIONS:
        gaps.entries.extend(NotEstimable(term, reason) for term, _, reason in found)
        return
    kinds: dict[str, int] = {}
    for _, kind, _ in found:
        kinds[kind] = kinds.get(kind, 0) + 1
    detail = ", ".join(f"{count} {kind}" for kind, count in kinds.items())
    gaps.notes.append(f"interactions: {len(found)} of {total} {what} are not estimable ({detail})")


# --------------------------------------------------------------------------- pareto, power


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

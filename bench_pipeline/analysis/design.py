"""From a table of runs to the coded design the effects model is fitted on.

`_prepare` checks the metric and axis columns, drops runs without a value (naming them),
sets aside outcome columns and single-level axes, chooses each axis's baseline and codes the
levels into a `_Table`. `_design` turns that into the treatment-coded dummy columns of the
distinct axis combinations (`_Design`), and `_alias_reason` says in plain words why a dummy
the design cannot separate from others is not estimable. numpy and pandas only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from bench_pipeline.analysis import linalg
from bench_pipeline.analysis.results import NotEstimable
from bench_pipeline.analysis.runs import (
    AnalysisInputError,
    infer_axes,
    is_id_column,
    level_codes,
    normalize_baseline,
    numeric_columns,
)

# Rows named in a warning about dropped runs; the rest are counted.
MAX_NAMED_ROWS = 10
_ALIAS_COEF = 1e-6
MAIN = "main"


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

"""Two- and three-way interactions as nested-model F tests, only where the design allows.

`_interactions` adds each pair's (then each triple's) product columns to the main-effects
model and F-tests what they explain; pairs never varied together or confounded with lower
terms are collected as `_Gaps` and, past `MAX_LISTED_INTERACTIONS`, summarized in one line.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from bench_pipeline.analysis import linalg
from bench_pipeline.analysis.design import _Design, _Table
from bench_pipeline.analysis.main_effects import _adjust
from bench_pipeline.analysis.results import Interaction, NotEstimable

# Past this many, not-estimable interactions collapse into one warning line: a one-at-a-time
# sweep over 16 axes would otherwise list ~120 pairs nobody asked about.
MAX_LISTED_INTERACTIONS = 6


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

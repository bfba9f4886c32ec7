"""Least squares from sufficient statistics, for rank checks and nested F tests.

Every column of the models here (intercept, level dummies, their products) is constant within
a design cell, so X'X, X'y and the residual sum of squares follow exactly from per-cell counts
and sums: the work scales with the number of distinct cells, not the number of runs. A model
is kept as the Cholesky factor L of the Gram matrix of its independent columns plus
z = L^-1 X'y, so RSS = y'y - z'z, and adding a block of columns only extends L: the sum of
squares the block explains is read off the new part of z. That is the nested-model F test of
statsmodels' `compare_f_test`, without refitting (tests/analysis prove the two agree).

Columns live in named blocks (the intercept, the main-effect dummies, one block per
interaction) and Gram products between blocks are computed once and reused: testing 120 pairs
and their triples then costs little more than one pass over the cells per block.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

import numpy as np

# A column is aliased when less than this fraction of its squared norm is left once the kept
# columns are projected out. Dummies are 0/1 and counts are at most millions, so true
# dependencies leave ~1e-14 and real columns leave far more than 1e-9.
RANK_TOLERANCE = 1e-9
INTERCEPT = "intercept"


@dataclass(frozen=True, slots=True)
class CellData:
    """Per-cell sufficient statistics of runs; y is centred so the intercept is harmless."""

    weights: np.ndarray  # runs per cell
    sums: np.ndarray  # sum of centred y per cell
    total_ss: float  # sum of centred y^2 over runs
    n_runs: int

    @property
    def within_ss(self) -> float:
        """Sum of squares of runs around their cell means (pure error)."""
        return max(self.total_ss - float(np.sum(self.sums**2 / self.weights)), 0.0)


class Blocks:
    """Cell-level column blocks and their memoized Gram products (X_a' X_b over runs)."""

    def __init__(self, cells: CellData) -> None:
        self.cells = cells
        self._columns: dict[Hashable, np.ndarray] = {INTERCEPT: np.ones((len(cells.weights), 1))}
        self._gram: dict[tuple[Hashable, Hashable], np.ndarray] = {}
        self._support: dict[Hashable, tuple[np.ndarray, np.ndarray | None]] = {}

    def add(self, key: Hashable, columns: np.ndarray) -> None:
        self._columns[key] = columns

    def __contains__(self, key: Hashable) -> bool:
        return key in self._columns

    def columns(self, key: Hashable) -> np.ndarray:
        return self._columns[key]

    def gram(self, a: Hashable, b: Hashable) -> np.ndarray:
        return self.grams_with(b, [a])[0]

    def grams_with(self, key: Hashable, others: list[Hashable]) -> list[np.ndarray]:
        """[X_o' X_key for o in others]; the missing ones in one matrix product, since one
        larger product is much cheaper than several small ones."""
        missing = [o for o in dict.fromkeys(others) if (o, key) not in self._gram]
        missing = [o for o in missing if (key, o) not in self._gram]
        if missing:
            stacked = self._products(key, missing)
            offset = 0
            for o in missing:
                width = self._columns[o].shape[1]
                self._gram[(o, key)] = stacked[:, offset : offset + width].T
                offset += width
        return [
            self._gram[(o, key)] if (o, key) in self._gram else self._gram[(key, o)].T
            for o in others
        ]

    def _products(self, key: Hashable, others: list[Hashable]) -> np.ndarray:
        """X_key' W [X_o ...] over the cells where some column of `key` is non-zero: an
        interaction block is zero wherever one of its axes sits at its baseline."""
        if key not in self._support:
            block = self._columns[key]
            rows = np.flatnonzero(block.any(axis=1))
            # An interaction block is one-hot: a cell matches at most one level combination.
            one_hot = bool(np.isin(block[rows], (0.0, 1.0)).all()) and bool(
                (block[rows].sum(axis=1) == 1).all()
            )
            self._support[key] = (rows, block[rows].argmax(axis=1) if one_hot else None)
        rows, column_of_row = self._support[key]
        right = np.hstack([self._columns[o][rows] for o in others]) * self.cells.weights[rows, None]
        if column_of_row is None:
            return self._columns[key][rows].T @ right
        # One-hot: each product row is a sum of `right` over the cells of one combination.
        # Sorting and summing segments is plain numpy; the equivalent small matrix products
        # go through a threaded BLAS that spent most of its time waiting on a busy machine.
        order = np.argsort(column_of_row, kind="stable")
        sorted_columns = column_of_row[order]
        starts = np.flatnonzero(np.r_[True, sorted_columns[1:] != sorted_columns[:-1]])
        result = np.zeros((self._columns[key].shape[1], right.shape[1]))
        if len(rows):
            result[sorted_columns[starts]] = np.add.reduceat(right[order], starts, axis=0)
        return result

    def xty(self, key: Hashable) -> np.ndarray:
        return self._columns[key].T @ self.cells.sums


@dataclass(frozen=True, slots=True)
class Factor:
    """A fitted model: its kept columns as (block, column indices) parts, the inverse of the
    Cholesky factor L of their Gram matrix, and z = L^-1 X'y.

    The inverse is kept rather than L because every later step then is a small matrix
    product; small triangular solves go through LAPACK calls whose threading overhead
    dominated on a busy machine (ten times slower than the arithmetic).
    """

    parts: tuple[tuple[Hashable, np.ndarray], ...]
    inv_chol: np.ndarray
    z: np.ndarray

    @property
    def n_params(self) -> int:
        return len(self.z)

    def rss(self, cells: CellData) -> float:
        return max(cells.total_ss - float(self.z @ self.z), 0.0)


@dataclass(frozen=True, slots=True)
class Extension:
    """The result of adding a block of columns to a model."""

    factor: Factor  # the extended model
    added: list[int]  # indices (into the block) of the columns that added rank
    explained_ss: float  # extra sum of squares explained by the added columns
    # For each block column that added no rank: its coefficients on the columns of the
    # extended model (base columns first, then added ones), i.e. which columns it copies.
    aliases: dict[int, np.ndarray]


def intercept_factor(blocks: Blocks) -> Factor:
    root_n = float(np.sqrt(blocks.cells.weights.sum()))
    # X'y of the intercept is the sum of centred y, i.e. zero up to rounding.
    z = np.array([float(blocks.cells.sums.sum()) / root_n])
    return Factor(((INTERCEPT, np.array([0])),), np.array([[1.0 / root_n]]), z)


def _pivoted_cholesky(gram: np.ndarray, scale: np.ndarray) -> tuple[list[int], np.ndarray]:
    """Left-looking Cholesky that skips columns whose remaining squared norm is below
    RANK_TOLERANCE x `scale` (their original squared norm). Returns the kept columns and the
    lower factor of their Gram matrix."""
    b = gram.shape[0]
    lower = np.zeros((b, b))
    kept: list[int] = []
    for j in range(b):
        r = len(kept)
        remainder = gram[j, j] - lower[j, :r] @ lower[j, :r]
        if remainder > RANK_TOLERANCE * max(scale[j], 1e-300):
            pivot = np.sqrt(remainder)
            lower[j, r] = pivot
            lower[j + 1 :, r] = (gram[j + 1 :, j] - lower[j + 1 :, :r] @ lower[j, :r]) / pivot
            kept.append(j)
    return kept, lower[kept][:, : len(kept)]


def extend(base: Factor, key: Hashable, blocks: Blocks, *, explain: bool = False) -> Extension:
    """Add the columns of block `key` to `base`, skipping dependent ones.

    Columns are taken in order; a column that is (numerically) a linear combination of the
    base columns and of the block's earlier kept columns is skipped. With `explain`, the
    combination is returned for every skipped column so callers can name its partners.
    """
    parts = [part for part, _ in base.parts]
    *base_grams, new_gram = blocks.grams_with(key, [*parts, key])
    k, b = base.n_params, new_gram.shape[0]
    if b == 0:
        return Extension(base, [], 0.0, {})
    cross = np.vstack([g[index] for g, (_, index) in zip(base_grams, base.parts, strict=True)])
    proj = base.inv_chol @ cross  # k x b: the block's coordinates on the base's basis
    # Gram and X'y of the block once the base columns are projected out.
    resid_gram = new_gram - proj.T @ proj
    resid_xty = blocks.xty(key) - proj.T @ base.z
    kept, sub = _pivoted_cholesky(resid_gram, np.diag(new_gram))
    if kept:
        sub_inv = np.linalg.inv(sub)
        added_z = sub_inv @ resid_xty[kept]
    else:
        sub_inv, added_z = np.zeros((0, 0)), np.zeros(0)
    inv_chol = np.zeros((k + len(kept), k + len(kept)))
    inv_chol[:k, :k] = base.inv_chol
    inv_chol[k:, :k] = -sub_inv @ proj[:, kept].T @ base.inv_chol
    inv_chol[k:, k:] = sub_inv
    factor = Factor(
        (*base.parts, (key, np.array(kept, dtype=np.int64))),
        inv_chol,
        np.concatenate([base.z, added_z]),
    )
    aliases: dict[int, np.ndarray] = {}
    if explain:
        for j in range(b):
            if j not in kept:
                target = np.concatenate([cross[:, j], new_gram[kept, j]])
                aliases[j] = inv_chol.T @ (inv_chol @ target)
    return Extension(factor, kept, float(added_z @ added_z), aliases)

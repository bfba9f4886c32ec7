"""The typed results of an effects analysis: what `analyze` returns.

`EffectsReport` holds one metric's main effects, interactions, noise, power, Pareto view and
what could not be estimated; the other dataclasses are its rows. `_jsonable` turns the report
into strict JSON for `EffectsReport.to_dict`. Only numpy is needed here, no scipy or
statsmodels, so formatting code can import these types cheaply.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np


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
        """docs/interfaces.md §4 keys plus the rest; strict JSON (NaN and infinities become null)."""
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

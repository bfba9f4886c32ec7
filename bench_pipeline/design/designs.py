"""The design types: validation of a `designs:` entry and the configs each design produces.

Two-level designs code every axis as -1 (its baseline) and +1 (its other level); interaction
uses the level index in file order. Matrices come from pyDOE3 so that the rows, and therefore
the cells, are exactly the textbook designs.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

from bench_pipeline.design.axes import AXES, AxisSpec, DesignError, describe_value

if TYPE_CHECKING:
    import numpy as np

MAIN_EFFECTS = "main_effects"
PLACKETT_BURMAN = "plackett_burman"
INTERACTION = "interaction"
FRACTIONAL_FACTORIAL = "fractional_factorial"

DESIGN_TYPES: tuple[str, ...] = (MAIN_EFFECTS, PLACKETT_BURMAN, INTERACTION, FRACTIONAL_FACTORIAL)

_ALLOWED_KEYS: dict[str, tuple[str, ...]] = {
    MAIN_EFFECTS: ("type", "axes"),
    PLACKETT_BURMAN: ("type", "axes"),
    INTERACTION: ("type", "axes"),
    FRACTIONAL_FACTORIAL: ("type", "axes", "resolution"),
}
INTERACTION_MIN_AXES = 2
INTERACTION_MAX_AXES = 4
MIN_RESOLUTION = 3
# Cells one design may give. Every cell is at least one agent run, so no real sweep comes
# near; the bound stops an interaction over axes with hundreds of levels from listing
# millions of configs (it is checked before the configs are made).
MAX_CELLS_PER_DESIGN = 5000

Grid = Mapping[str, AxisSpec]
Config = dict[str, Any]


@dataclass(frozen=True, slots=True)
class DesignSpec:
    """One validated `designs:` entry. `axes` is resolved: defaults are already filled in."""

    type: str
    axes: tuple[str, ...]
    resolution: int | None = None

    @property
    def label(self) -> str:
        """Short description, e.g. `interaction[model,prompt_style]`."""
        suffix = f",res={self.resolution}" if self.resolution is not None else ""
        return f"{self.type}[{','.join(self.axes)}{suffix}]"


def parse_design(raw: Any, index: int, grid: Grid, path: str) -> DesignSpec:
    """Validate one `designs:` entry against the experiment's grid."""
    where = f"designs[{index}]"
    if not isinstance(raw, dict):
        raise DesignError(
            path, where, f"must be a mapping with a `type` key, got {describe_value(raw)}"
        )
    if "type" not in raw:
        raise DesignError(
            path, f"{where}.type", f"missing required key; one of {', '.join(DESIGN_TYPES)}"
        )
    design_type = raw["type"]
    if design_type not in DESIGN_TYPES:
        raise DesignError(
            path,
            f"{where}.type",
            f"unknown design type {describe_value(design_type)}; "
            f"allowed: {', '.join(DESIGN_TYPES)}",
        )
    allowed = _ALLOWED_KEYS[design_type]
    for key in raw:
        if key not in allowed:
            raise DesignError(
                path,
                f"{where}.{key}",
                f"unknown key for {design_type}; allowed: {', '.join(allowed)}",
            )

    axes = _parse_axes_list(raw.get("axes"), design_type, grid, path, f"{where}.axes")
    if design_type == MAIN_EFFECTS:
        spec = DesignSpec(type=design_type, axes=axes if axes is not None else tuple(grid))
        return check_size(spec, grid, path, where)
    if design_type == INTERACTION:
        spec = DesignSpec(type=design_type, axes=_check_interaction(axes, path, where))
        return check_size(spec, grid, path, where)

    axes = _check_two_level(axes, design_type, grid, path, f"{where}.axes")
    if design_type == PLACKETT_BURMAN:
        return DesignSpec(type=design_type, axes=axes)
    resolution = _check_resolution(raw.get("resolution"), len(axes), path, where)
    return DesignSpec(type=design_type, axes=axes, resolution=resolution)


def check_size(spec: DesignSpec, grid: Grid, path: str, where: str) -> DesignSpec:
    """`spec`, or a DesignError when it would give more than MAX_CELLS_PER_DESIGN cells:
    counted from the levels, before any config is made."""
    if spec.type == MAIN_EFFECTS:
        cells = 1 + sum(len(grid[name].other_levels) for name in spec.axes)
    elif spec.type == INTERACTION:
        cells = 1
        for name in spec.axes:
            cells *= len(grid[name].levels)
    else:  # two-level designs: at most 2^16 rows over the 16 axes, counted once made
        return spec
    if cells > MAX_CELLS_PER_DESIGN:
        raise DesignError(
            path,
            where,
            f"{spec.label} gives {cells} cells; at most {MAX_CELLS_PER_DESIGN} per design",
        )
    return spec


def _parse_axes_list(
    raw: Any, design_type: str, grid: Grid, path: str, key: str
) -> tuple[str, ...] | None:
    """The design's `axes` list as written, checked for shape, grid membership and repeats."""
    if raw is None:
        return None
    if not isinstance(raw, list) or not raw:
        raise DesignError(path, key, f"must be a non-empty list of axis names, got {raw!r}")
    seen: set[str] = set()
    for name in raw:
        if not isinstance(name, str):
            raise DesignError(path, key, f"{describe_value(name)} is not an axis name")
        if name not in grid:
            if name in AXES:
                problem = (
                    f"axis {name} is not in the experiment's grid (add it under `axes:` "
                    f"with at least two levels); grid axes: {', '.join(grid) or 'none'}"
                )
            else:
                problem = f"unknown axis {name!r}; known axes: {', '.join(AXES)}"
            raise DesignError(path, key, problem)
        if name in seen:
            raise DesignError(path, key, f"axis {name} is listed more than once")
        seen.add(name)
    return tuple(raw)


def _check_interaction(axes: tuple[str, ...] | None, path: str, where: str) -> tuple[str, ...]:
    if axes is None:
        raise DesignError(
            path,
            f"{where}.axes",
            f"missing required key; interaction needs {INTERACTION_MIN_AXES} to "
            f"{INTERACTION_MAX_AXES} axes",
        )
    if not INTERACTION_MIN_AXES <= len(axes) <= INTERACTION_MAX_AXES:
        amount = "too few" if len(axes) < INTERACTION_MIN_AXES else "too many"
        raise DesignError(
            path,
            f"{where}.axes",
            f"{amount} axes ({len(axes)}); interaction needs {INTERACTION_MIN_AXES} to "
            f"{INTERACTION_MAX_AXES} axes",
        )
    return axes


def _check_two_level(
    axes: tuple[str, ...] | None, design_type: str, grid: Grid, path: str, key: str
) -> tuple[str, ...]:
    if axes is None:
        # Default: every two-level axis of the grid, in grid order.
        axes = tuple(name for name, spec in grid.items() if len(spec.levels) == 2)
        if len(axes) < 2:
            raise DesignError(
                path,
                key,
                f"{design_type} needs at least 2 two-level axes; the grid has {len(axes)} "
                f"({', '.join(axes) or 'none'})",
            )
        return axes
    for name in axes:
        count = len(grid[name].levels)
        if count != 2:
            noun = "level" if count == 1 else "levels"
            raise DesignError(
                path, key, f"axis {name} has {count} {noun}; {design_type} needs two-level axes"
            )
    if len(axes) < 2:
        raise DesignError(path, key, f"{design_type} needs at least 2 axes, got {len(axes)}")
    return axes


def _check_resolution(raw: Any, axis_count: int, path: str, where: str) -> int:
    key = f"{where}.resolution"
    if raw is None:
        raise DesignError(path, key, f"missing required key (an integer >= {MIN_RESOLUTION})")
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < MIN_RESOLUTION:
        raise DesignError(
            path, key, f"must be an integer >= {MIN_RESOLUTION}, got {describe_value(raw)}"
        )
    try:
        _fractional_matrix(axis_count, raw)
    except Exception as exc:  # pyDOE3 signals "impossible" with assorted exception types
        raise DesignError(
            path,
            key,
            f"pyDOE3.fracfact_by_res cannot build a resolution {raw} design over "
            f"{axis_count} axes: {exc} (lower the resolution, add axes, or use an "
            "`interaction` design for the full factorial)",
        ) from None
    return raw


def _pydoe3() -> ModuleType:
    # Imported on first use: pyDOE3 pulls in scipy (~2 s), which every CLI command and the
    # Dagster code location would otherwise pay just for importing this package.
    return importlib.import_module("pyDOE3")


def _fractional_matrix(axis_count: int, resolution: int) -> np.ndarray:
    return _pydoe3().fracfact_by_res(axis_count, resolution)


def design_matrix(spec: DesignSpec, grid: Grid) -> np.ndarray:
    """The coded pyDOE3 matrix of a two-level or interaction design (rows x spec.axes).

    main_effects has no pyDOE3 matrix: it is one-factor-at-a-time, built by construction.
    """
    if spec.type == PLACKETT_BURMAN:
        return _pydoe3().pbdesign(len(spec.axes))
    if spec.type == FRACTIONAL_FACTORIAL:
        assert spec.resolution is not None
        return _fractional_matrix(len(spec.axes), spec.resolution)
    if spec.type == INTERACTION:
        return _pydoe3().fullfact([len(grid[name].levels) for name in spec.axes])
    raise ValueError(f"{spec.type} has no pyDOE3 matrix")


def design_configs(spec: DesignSpec, grid: Grid, baseline: Mapping[str, Any]) -> list[Config]:
    """Configs of one design, in design row order; axes the design does not name stay at
    `baseline` (which holds all 16 axes)."""
    if spec.type == MAIN_EFFECTS:
        return _main_effects(spec.axes, grid, baseline)
    matrix = design_matrix(spec, grid)
    if spec.type == INTERACTION:
        return [
            _with(
                baseline,
                spec.axes,
                [grid[name].levels[int(code)] for name, code in zip(spec.axes, row, strict=True)],
            )
            for row in matrix
        ]
    return [_two_level_row(row, spec.axes, grid, baseline) for row in matrix]


def _main_effects(axes: Sequence[str], grid: Grid, baseline: Mapping[str, Any]) -> list[Config]:
    configs = [dict(baseline)]
    for name in axes:
        for level in grid[name].other_levels:
            configs.append(_with(baseline, [name], [level]))
    return configs


def _two_level_row(
    row: np.ndarray, axes: Sequence[str], grid: Grid, baseline: Mapping[str, Any]
) -> Config:
    levels = []
    for name, code in zip(axes, row, strict=True):
        spec = grid[name]
        (other,) = spec.other_levels
        levels.append(other if code > 0 else spec.baseline)
    return _with(baseline, axes, levels)


def _with(baseline: Mapping[str, Any], axes: Sequence[str], levels: Sequence[Any]) -> Config:
    config = dict(baseline)
    config.update(zip(axes, levels, strict=True))
    return config

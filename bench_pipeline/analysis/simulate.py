"""Simulated run tables with planted effects: the ground truth the analysis is tested against.

A metric is generated as intercept + one additive shift per (axis, level) + an optional shift
for a combination of levels (an interaction) + Gaussian noise, over the cells of one of the
project's design types:

* `one_at_a_time`: the baseline cell plus every other level of every axis, one axis at a time
  (the `main_effects` design of experiment files);
* `plackett_burman`: pyDOE3 `pbdesign` over two-level axes;
* `factorial`: pyDOE3 `fullfact` over a few axes (the `interaction` design);
* `random`: cells drawn at random (a worst case: every pair and triple is estimable).

Axes are given as {axis: (baseline, other levels...)}; the frame keeps native values (bools,
ints, strings) like a warehouse export, and the truth is keyed by level strings like the
report.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

import numpy as np
import pandas as pd

from bench_pipeline.analysis.runs import to_level

Design = Literal["one_at_a_time", "plackett_burman", "factorial", "random"]
AxisLevels = Mapping[str, Sequence[Any]]
LevelKey = tuple[str, Any]

# Sixteen axes like experiments/default.yaml (baseline first): 2-, 3- and 4-level axes,
# 24 non-baseline levels, so a one-at-a-time sweep has 25 cells.
SWEEP_AXES: dict[str, tuple[Any, ...]] = {
    "agent": ("claude-code", "codex"),
    "model": ("claude-sonnet-4-6", "claude-opus-4-6", "gpt-5-codex"),
    "effort": ("medium", "low", "high", "max"),
    "prompt_style": ("standard", "terse", "detailed", "spec"),
    "language": ("javascript", "typescript"),
    "human_language": ("en", "de", "ja"),
    "budget_usd": (5, 1, 20),
    "max_turns": (50, 20, 100),
    "tool_web_search": (False, True),
    "tool_browser": (False, True),
    "tool_subagents": (False, True),
    "framework": ("vanilla", "react"),
    "context_file": (False, True),
    "self_test": (False, True),
    "time_limit_min": (30, 10),
    "plan_first": (False, True),
}
# Eleven two-level axes: pbdesign(11) is the saturated 12-run Plackett-Burman design.
SCREEN_AXES: dict[str, tuple[Any, ...]] = {
    name: levels for name, levels in SWEEP_AXES.items() if len(levels) == 2
} | {"budget_usd": (5, 20)}
FACTORIAL_AXES: dict[str, tuple[Any, ...]] = {
    "model": ("claude-sonnet-4-6", "claude-opus-4-6", "gpt-5-codex"),
    "prompt_style": ("standard", "terse", "detailed"),
    "language": ("javascript", "typescript"),
}
DEFAULT_AXES: dict[str, dict[str, tuple[Any, ...]]] = {
    "one_at_a_time": SWEEP_AXES,
    "plackett_burman": SCREEN_AXES,
    "factorial": FACTORIAL_AXES,
    "random": SWEEP_AXES,
}


@dataclass(frozen=True, slots=True)
class PlantedTruth:
    """What was planted. Keys use level strings (`to_level`), as the report does."""

    effects: dict[tuple[str, str], float]  # every non-baseline (axis, level); 0.0 = null
    interactions: dict[tuple[tuple[str, str], ...], float]  # level combination -> extra shift
    baselines: dict[str, str]
    noise_sd: float
    design: str

    def interacting_axes(self) -> set[tuple[str, ...]]:
        """Axis tuples (in axis order of the frame) that carry a planted interaction."""
        order = list(self.baselines)
        return {
            tuple(sorted((axis for axis, _ in combo), key=order.index))
            for combo, shift in self.interactions.items()
            if shift != 0
        }


class SimulatedRuns(NamedTuple):
    frame: pd.DataFrame
    truth: PlantedTruth


def design_cells(
    design: Design, axes: AxisLevels, *, n_random: int = 200, seed: int = 0
) -> list[dict[str, Any]]:
    """The configs (one per cell) of a design over `axes` (baseline = first level)."""
    names = list(axes)
    if design == "one_at_a_time":
        baseline = {a: axes[a][0] for a in names}
        cells = [dict(baseline)]
        for axis in names:
            for level in axes[axis][1:]:
                cells.append({**baseline, axis: level})
        return cells
    if design == "plackett_burman":
        from pyDOE3 import pbdesign

        if any(len(axes[a]) != 2 for a in names):
            raise ValueError("a Plackett-Burman design takes two-level axes only")
        matrix = pbdesign(len(names))
        # -1 is the baseline, +1 the other level (as bench_pipeline.design codes it).
        return [
            {a: axes[a][0] if row[i] < 0 else axes[a][1] for i, a in enumerate(names)}
            for row in matrix
        ]
    if design == "factorial":
        from pyDOE3 import fullfact

        matrix = fullfact([len(axes[a]) for a in names]).astype(int)
        return [{a: axes[a][row[i]] for i, a in enumerate(names)} for row in matrix]
    if design == "random":
        rng = np.random.default_rng(seed)
        return [{a: axes[a][rng.integers(len(axes[a]))] for a in names} for _ in range(n_random)]
    raise ValueError(f"unknown design {design!r}")


def plant_effects(
    axes: AxisLevels,
    *,
    seed: int,
    fraction: float = 0.3,
    sizes: Sequence[float] = (4.0,),
    noise_sd: float = 1.0,
) -> dict[LevelKey, float]:
    """Random planted effects: about `fraction` of the non-baseline levels get a shift of
    one of `sizes` noise SDs with a random sign; the rest are exactly zero (nulls)."""
    rng = np.random.default_rng(seed)
    effects: dict[LevelKey, float] = {}
    for axis, levels in axes.items():
        for level in levels[1:]:
            if rng.random() < fraction:
                size = float(rng.choice(np.asarray(sizes, dtype=float)))
                effects[(axis, level)] = float(rng.choice([-1.0, 1.0])) * size * noise_sd
    return effects


def simulate_runs(
    design: Design = "one_at_a_time",
    *,
    axes: AxisLevels | None = None,
    effects: Mapping[LevelKey, float] | None = None,
    interactions: Mapping[tuple[LevelKey, ...], float] | None = None,
    repeats: int = 3,
    noise_sd: float = 5.0,
    intercept: float = 50.0,
    seed: int = 0,
    metric: str = "score",
    n_random: int = 200,
) -> SimulatedRuns:
    """A run table (run_id, cell_id, repeat, one column per axis, `metric`) and its truth.

    `effects` maps (axis, level) to the level's shift from the baseline; levels not named are
    null. `interactions` maps a combination of levels, e.g.
    ((model, opus), (prompt_style, terse)), to an extra shift for runs that have all of them.
    """
    grid = dict(axes if axes is not None else DEFAULT_AXES[design])
    rng = np.random.default_rng(seed)
    cells = design_cells(design, grid, n_random=n_random, seed=seed + 1)
    shifts = {(a, to_level(v)): float(s) for (a, v), s in (effects or {}).items()}
    combos = {
        tuple((a, to_level(v)) for a, v in combo): float(s)
        for combo, s in (interactions or {}).items()
    }
    means = []
    for config in cells:
        levels = {a: to_level(v) for a, v in config.items()}
        mean = intercept + sum(shifts.get((a, lv), 0.0) for a, lv in levels.items())
        for combo, shift in combos.items():
            if all(levels.get(a) == lv for a, lv in combo):
                mean += shift
        means.append(mean)
    # Cell-major order: all repeats of a cell, then the next cell (as the runner lists runs).
    cell_index = np.repeat(np.arange(len(cells)), repeats)
    repeat = np.tile(np.arange(repeats), len(cells))
    cell_ids = np.array([f"c{i:04d}" for i in range(len(cells))], dtype=object)[cell_index]
    frame = pd.DataFrame(
        {
            "run_id": [f"sim.{c}.r{r}" for c, r in zip(cell_ids, repeat, strict=True)],
            "cell_id": cell_ids,
            "repeat": repeat,
        }
    )
    for axis in grid:
        frame[axis] = pd.Series([cells[i][axis] for i in cell_index], dtype=object)
        if all(isinstance(v, bool) for v in grid[axis]):
            frame[axis] = frame[axis].astype(bool)
        elif all(isinstance(v, int) and not isinstance(v, bool) for v in grid[axis]):
            frame[axis] = frame[axis].astype(np.int64)
    frame[metric] = np.asarray(means)[cell_index] + rng.normal(0.0, noise_sd, len(cell_index))
    truth = PlantedTruth(
        effects={
            (a, str(to_level(v))): shifts.get((a, to_level(v)), 0.0)
            for a, levels in grid.items()
            for v in levels[1:]
        },
        interactions={tuple((a, str(lv)) for a, lv in c): s for c, s in combos.items()},
        baselines={a: str(to_level(levels[0])) for a, levels in grid.items()},
        noise_sd=noise_sd,
        design=design,
    )
    return SimulatedRuns(frame, truth)


def simulate_synthetic_agent(
    *, repeats: int = 10, seed: int = 0, experiment_file: str | None = None
) -> SimulatedRuns:
    """Gameplay scores of the offline synthetic agent on the one-at-a-time cells of an
    experiment (default: experiments/default.yaml), drawn from its planted-effects model.

    Per run, each mechanic fault happens with `fault_probabilities(config, strength)` and
    fails the gameplay tests `FAULT_TESTS` maps it to, so gameplay_score =
    100 x (16 - failed tests) / 16, exactly as `expected_gameplay_score` assumes. The truth
    is the expected score difference of each level's cell from the baseline cell; the axes
    of `NULL_AXES` are planted as zero.
    """
    from bench_pipeline import settings
    from bench_pipeline.agents.synthetic.effects import (
        FAULT_TESTS,
        expected_gameplay_score,
        fault_probabilities,
    )
    from bench_pipeline.design import design_experiment, load_experiment

    path = experiment_file or str(settings.experiments_dir() / "default.yaml")
    experiment = load_experiment(path)
    cells = [c for c in design_experiment(experiment).cells if "main_effects" in c.designs]
    baseline = experiment.baseline_config()

    def strength(config: Mapping[str, Any]) -> float | None:
        info = experiment.registry.get(config["model"])
        return None if info is None else info.strength

    rng = np.random.default_rng(seed)
    faults = list(FAULT_TESTS)
    tests_lost = np.array([len(FAULT_TESTS[f]) for f in faults], dtype=float)
    rows: list[dict[str, Any]] = []
    for cell in cells:
        probabilities = fault_probabilities(cell.config, strength(cell.config))
        p = np.array([probabilities[f] for f in faults])
        drawn = rng.random((repeats, len(faults))) < p
        scores = 100.0 * (16.0 - drawn @ tests_lost) / 16.0
        for repeat, score in enumerate(scores):
            rows.append(
                {
                    "run_id": f"synthetic.{cell.cell_id}.r{repeat}",
                    "cell_id": cell.cell_id,
                    "repeat": repeat,
                    **cell.config,
                    "gameplay_score": float(score),
                }
            )
    base_score = expected_gameplay_score(baseline, strength(baseline))
    effects: dict[tuple[str, str], float] = {}
    for cell in cells:
        changed = [a for a, v in cell.config.items() if v != baseline[a]]
        if len(changed) == 1:
            axis = changed[0]
            level = str(to_level(cell.config[axis]))
            effects[(axis, level)] = (
                expected_gameplay_score(cell.config, strength(cell.config)) - base_score
            )
    truth = PlantedTruth(
        effects=effects,
        interactions={},
        baselines={a: str(to_level(v)) for a, v in baseline.items() if a in experiment.axes},
        noise_sd=math.nan,  # differs per cell: a binomial mixture, not one Gaussian SD
        design="one_at_a_time",
    )
    return SimulatedRuns(pd.DataFrame.from_records(rows), truth)


def simulate_verdicts(
    design: Design = "one_at_a_time",
    *,
    axes: AxisLevels | None = None,
    works: Mapping[LevelKey, float] | None = None,
    unread: Mapping[LevelKey, float] | None = None,
    base_works: float = 0.6,
    base_unread: float = 0.1,
    repeats: int = 10,
    quality_mean: float = 70.0,
    quality_sd: float = 5.0,
    seed: int = 0,
    n_random: int = 200,
) -> SimulatedRuns:
    """Runs judged by a simulated bot, to tell an axis's effect on the games from its effect
    on the instrument (bench_pipeline.analysis.instrument).

    Per run and test, two independent draws: the mechanic works with probability
    `base_works` + the `works` shifts of the run's levels, and the bot cannot judge it with
    probability `base_unread` + the `unread` shifts (both clipped to 0-1). A test it cannot
    judge is INCONCLUSIVE; the others PASS when the mechanic works and FAIL when not. So a
    `works` shift is a real effect on the games, an `unread` shift only the bot's, though
    both move the gameplay score. The frame has, as fct_runs does, `gameplay_score` (100 x
    PASS / 16), `inconclusive_share` (INCONCLUSIVE / 16), `quality_score` (Gaussian, no
    effect) and `score` (half each).

    The truth is the expected effect on `gameplay_score` of each level's cell against the
    baseline cell: 100 x (works x (1 - unread) at the level - the same at the baseline), the
    other axes at baseline; a level's effect on `inconclusive_share` is its `unread` shift.
    """
    grid = dict(axes if axes is not None else DEFAULT_AXES[design])
    rng = np.random.default_rng(seed)
    cells = design_cells(design, grid, n_random=n_random, seed=seed + 1)
    works_by = {(a, to_level(v)): float(s) for (a, v), s in (works or {}).items()}
    unread_by = {(a, to_level(v)): float(s) for (a, v), s in (unread or {}).items()}

    def chances(config: Mapping[str, Any]) -> tuple[float, float]:
        levels = [(a, to_level(v)) for a, v in config.items()]
        p_works = base_works + sum(works_by.get(k, 0.0) for k in levels)
        p_unread = base_unread + sum(unread_by.get(k, 0.0) for k in levels)
        return min(max(p_works, 0.0), 1.0), min(max(p_unread, 0.0), 1.0)

    n_tests = 16
    rows: list[dict[str, Any]] = []
    for index, config in enumerate(cells):
        p_works, p_unread = chances(config)
        unjudged = rng.random((repeats, n_tests)) < p_unread
        working = rng.random((repeats, n_tests)) < p_works
        passed = (~unjudged & working).sum(axis=1)
        inconclusive = unjudged.sum(axis=1)
        quality = rng.normal(quality_mean, quality_sd, repeats)
        for repeat in range(repeats):
            gameplay = 100.0 * passed[repeat] / n_tests
            rows.append(
                {
                    "run_id": f"sim.c{index:04d}.r{repeat}",
                    "cell_id": f"c{index:04d}",
                    "repeat": repeat,
                    **config,
                    "gameplay_score": gameplay,
                    "inconclusive_share": inconclusive[repeat] / n_tests,
                    "quality_score": float(quality[repeat]),
                    "score": 0.5 * gameplay + 0.5 * float(quality[repeat]),
                }
            )
    baseline = {a: levels[0] for a, levels in grid.items()}
    base_works_p, base_unread_p = chances(baseline)
    effects: dict[tuple[str, str], float] = {}
    for axis, levels in grid.items():
        for value in levels[1:]:
            p_works, p_unread = chances({**baseline, axis: value})
            effects[(axis, str(to_level(value)))] = 100.0 * (
                p_works * (1 - p_unread) - base_works_p * (1 - base_unread_p)
            )
    truth = PlantedTruth(
        effects=effects,
        interactions={},
        baselines={a: str(to_level(levels[0])) for a, levels in grid.items()},
        noise_sd=math.nan,  # binomial: differs per cell
        design=design,
    )
    return SimulatedRuns(pd.DataFrame.from_records(rows), truth)

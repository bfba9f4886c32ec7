"""The planted-effects model: how the synthetic agent's cell changes what it gets wrong.

The synthetic agent stands in for real agents offline. Whether its game has a given
fault is a Bernoulli draw whose log-odds are a base rate plus one additive shift per
axis level (a logistic model). The shifts are the *ground truth* the statistics stage
must recover: some axes matter (model strength, prompt style, effort, self-testing,
the browser tool, planning, the context file), others are planted as exactly zero
(human language, web search, subagents, framework, harness, time limit, max turns).

`planted_effects()` is the table (also printed in docs/synthetic-agent.md, and a test
keeps the two equal); `fault_probabilities(config, strength)` and
`expected_gameplay_score(config, strength)` give the exact expected outcome of a cell.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

MECHANIC_FAULTS: tuple[str, ...] = (
    "no_gravity",
    "no_rotation",
    "no_line_clear",
    "crash",
    "no_game_over",
    "no_hard_drop",
    "broken_walls",
)
QUALITY_FAULTS: tuple[str, ...] = (
    "lint_errors",
    "type_errors",
    "magic_numbers",
    "deep_nesting",
    "one_giant_file",
)
ALL_FAULTS = MECHANIC_FAULTS + QUALITY_FAULTS

# Probability of each fault in the baseline cell (a model of strength 0.75, standard
# prompt, medium effort, every tool and instruction off).
BASE_RATES: dict[str, float] = {
    "no_gravity": 0.10,
    "no_rotation": 0.18,
    "no_line_clear": 0.20,
    "crash": 0.12,
    "no_game_over": 0.25,
    "no_hard_drop": 0.20,
    "broken_walls": 0.12,
    "lint_errors": 0.40,
    "type_errors": 0.35,
    "magic_numbers": 0.45,
    "deep_nesting": 0.30,
    "one_giant_file": 0.45,
}

# The gameplay tests (docs/interfaces.md §1) each mechanic fault makes FAIL. Disjoint on purpose:
# the expected gameplay score is then exact under independent draws.
FAULT_TESTS: dict[str, tuple[str, ...]] = {
    "no_gravity": ("gravity",),
    "no_rotation": ("rotate",),
    "no_line_clear": ("line_clear",),
    "crash": ("endurance", "no_errors"),
    "no_game_over": ("game_over",),
    "no_hard_drop": ("hard_drop",),
    "broken_walls": ("walls",),
}

BASELINE_STRENGTH = 0.75
# Log-odds per unit of model strength: a model 0.2 stronger than the baseline has its
# fault odds multiplied by exp(-1.6) ~ 0.2.
STRENGTH_SLOPE = -8.0


@dataclass(frozen=True)
class PlantedEffect:
    axis: str
    level: Any  # a level of the axis, or "strength" for the model's registry strength
    faults: tuple[str, ...]
    logit_shift: float
    why: str


def _effect(
    axis: str, level: Any, faults: tuple[str, ...], shift: float, why: str
) -> PlantedEffect:
    return PlantedEffect(axis, level, faults, shift, why)


M, Q = MECHANIC_FAULTS, QUALITY_FAULTS

_EFFECTS: tuple[PlantedEffect, ...] = (
    _effect("effort", "low", M, +0.6, "less reasoning, more broken mechanics"),
    _effect("effort", "high", M, -0.4, "more reasoning, fewer broken mechanics"),
    _effect("effort", "max", M, -0.5, "diminishing return over high"),
    _effect("prompt_style", "terse", M, +1.5, "a one-liner leaves mechanics unstated"),
    _effect("prompt_style", "terse", ("one_giant_file",), +0.5, "no structure asked for"),
    _effect("prompt_style", "detailed", M, -0.5, "mechanics spelled out"),
    _effect("prompt_style", "spec", M, -0.8, "acceptance criteria for every mechanic"),
    _effect("self_test", True, M, -1.0, "the agent plays its game and fixes what it sees"),
    _effect("tool_browser", True, M, -0.5, "the agent can look at its running game"),
    _effect("plan_first", True, ("one_giant_file", "deep_nesting"), -0.8, "a plan splits modules"),
    _effect(
        "context_file", True, ("lint_errors", "magic_numbers"), -0.9, "conventions written down"
    ),
    _effect("language", "typescript", ("crash",), -0.4, "the compiler catches runtime slips"),
)

# Axes planted as exactly zero: the statistics must not find them.
NULL_AXES: tuple[str, ...] = (
    "agent",
    "human_language",
    "budget_usd",  # zero on faults; a budget below the run's cost stops it (not a planted shift)
    "max_turns",
    "tool_web_search",
    "tool_subagents",
    "framework",
    "time_limit_min",  # likewise: a limit shorter than the run stops it
)


def planted_effects() -> list[PlantedEffect]:
    """Every non-zero planted shift, plus the model-strength slope (axis "model")."""
    strength = PlantedEffect(
        "model",
        "strength",
        ALL_FAULTS,
        STRENGTH_SLOPE,
        f"per unit of registry strength above {BASELINE_STRENGTH}; stronger models fail less",
    )
    return [strength, *_EFFECTS]


def _logit(p: float) -> float:
    return math.log(p / (1 - p))


def _sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x))


def fault_probabilities(config: Mapping[str, Any], strength: float | None) -> dict[str, float]:
    """P(fault) for every fault in a cell. `strength` None (not in the registry) = baseline."""
    shift_strength = STRENGTH_SLOPE * (
        (strength if strength is not None else BASELINE_STRENGTH) - BASELINE_STRENGTH
    )
    probabilities: dict[str, float] = {}
    for fault in ALL_FAULTS:
        if fault == "type_errors" and config.get("language") != "typescript":
            # JavaScript has no type checker to fail: not applicable, never drawn.
            probabilities[fault] = 0.0
            continue
        logit = _logit(BASE_RATES[fault]) + shift_strength
        for effect in _EFFECTS:
            if fault in effect.faults and config.get(effect.axis) == effect.level:
                logit += effect.logit_shift
        probabilities[fault] = _sigmoid(logit)
    return probabilities


def expected_gameplay_score(config: Mapping[str, Any], strength: float | None) -> float:
    """The expected bot score (0-100) of a cell if the bot judges every fault as planted."""
    probabilities = fault_probabilities(config, strength)
    lost = sum(probabilities[f] * len(tests) for f, tests in FAULT_TESTS.items())
    return 100.0 * (16 - lost) / 16

"""The catalogue of the 16 axes an experiment may vary, and how their values are checked.

Every cell's config carries all 16 axes, so the catalogue is the single source of truth for
names, kinds, allowed values and defaults. `DesignError` lives here because this is the lowest
module of the package: every other design module imports from it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

AxisKind = Literal["categorical", "bool", "number"]


class DesignError(Exception):
    """Any problem with an experiment file, a model registry or a config.

    `key` is a dotted path into the offending file (`axes.model.baseline`, `designs[1].axes`),
    or one of `<file>`, `<yaml>`, `<root>` when the problem is with the file as a whole.
    """

    def __init__(self, path: str, key: str, problem: str) -> None:
        # Passing all three to Exception keeps the error picklable across processes.
        super().__init__(path, key, problem)
        self.path = path
        self.key = key
        self.problem = problem

    def __str__(self) -> str:
        return f"{self.path}: {self.key}: {self.problem}"


class AxisValueError(ValueError):
    """A value does not fit an axis; callers re-raise it as a `DesignError` with file context."""


@dataclass(frozen=True, slots=True)
class Axis:
    """One axis of the catalogue.

    `choices` is the closed set of a categorical axis; `None` on a categorical means the set is
    open and checked elsewhere (`model` is checked against the model registry). Numbers lie in
    `low < x` (or `low <= x` when `low_inclusive`) and `x <= high`.
    """

    name: str
    kind: AxisKind
    default: Any
    description: str
    choices: tuple[str, ...] | None = None
    low: float | None = None
    high: float | None = None
    low_inclusive: bool = False
    integer: bool = False

    def allowed_text(self) -> str:
        """Human-readable allowed values, for error messages and docs."""
        if self.kind == "bool":
            return "true or false"
        if self.kind == "number":
            what = "an integer" if self.integer else "a number"
            low_op = ">=" if self.low_inclusive else ">"
            return f"{what} {low_op} {_format_number(self.low)} and <= {_format_number(self.high)}"
        if self.choices is None:
            return "any model id in the model registry"
        return "one of " + ", ".join(self.choices)

    def normalize(self, value: Any) -> Any:
        """Return the canonical form of `value` for this axis, or raise `AxisValueError`.

        Canonical forms: bools stay bools, integral numbers become ints (so 5 and 5.0 are one
        value), other numbers floats, strings stay as they are.
        """
        if self.kind == "bool":
            if isinstance(value, bool):
                return value
            raise AxisValueError(self._bad(value))
        if self.kind == "number":
            return self._normalize_number(value)
        if not isinstance(value, str) or not value.strip():
            raise AxisValueError(self._bad(value))
        if self.choices is not None and value not in self.choices:
            raise AxisValueError(self._bad(value))
        return value

    def _normalize_number(self, value: Any) -> int | float:
        # bool is a subclass of int, so `true` would otherwise pass as 1.
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise AxisValueError(self._bad(value))
        if not math.isfinite(value):
            raise AxisValueError(self._bad(value))
        number = normalize_number(value)
        if self.integer and not isinstance(number, int):
            raise AxisValueError(self._bad(value))
        assert self.low is not None and self.high is not None
        too_low = number < self.low if self.low_inclusive else number <= self.low
        if too_low or number > self.high:
            raise AxisValueError(self._bad(value))
        return number

    def _bad(self, value: Any) -> str:
        return (
            f"{describe_value(value)} is not a valid value for axis {self.name}; "
            f"allowed: {self.allowed_text()}"
        )


def normalize_number(value: int | float) -> int | float:
    """Integral floats become ints so that 5 and 5.0 serialize (and hash) identically."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def describe_value(value: Any) -> str:
    """Show a value with its YAML-ish type, so `"true"` vs `true` mistakes are visible."""
    if isinstance(value, bool):
        return f"{str(value).lower()} (bool)"
    if isinstance(value, str):
        return f"{value!r} (string)"
    if value is None:
        return "null"
    if isinstance(value, int | float):
        return f"{value!r} (number)"
    return f"{value!r} ({type(value).__name__})"


def _format_number(number: float | None) -> str:
    assert number is not None
    return str(normalize_number(number))


def _bool_axis(name: str, description: str) -> Axis:
    return Axis(name=name, kind="bool", default=False, description=description)


AGENT_HARNESSES: tuple[str, ...] = ("claude-code", "codex", "command", "synthetic")

AXES: dict[str, Axis] = {
    axis.name: axis
    for axis in (
        Axis(
            name="agent",
            kind="categorical",
            default="claude-code",
            choices=AGENT_HARNESSES,
            description="Agent harness that drives the model (must be a harness of the registry).",
        ),
        Axis(
            name="model",
            kind="categorical",
            default="claude-sonnet-4-6",
            choices=None,
            description="Model id, looked up in the model registry.",
        ),
        Axis(
            name="effort",
            kind="categorical",
            default="medium",
            choices=("low", "medium", "high", "max"),
            description="Reasoning effort requested from the model.",
        ),
        Axis(
            name="prompt_style",
            kind="categorical",
            default="standard",
            choices=("terse", "standard", "detailed", "spec"),
            description="How much the task prompt spells out (terse one-liner up to a full spec).",
        ),
        Axis(
            name="language",
            kind="categorical",
            default="javascript",
            choices=("javascript", "typescript"),
            description="Programming language the game must be written in.",
        ),
        Axis(
            name="human_language",
            kind="categorical",
            default="en",
            choices=("en", "de", "ja", "es", "zh", "fr"),
            description="Natural language of the prompt.",
        ),
        Axis(
            name="budget_usd",
            kind="number",
            default=5,
            low=0,
            high=1000,
            description="Spending cap for the run, in US dollars.",
        ),
        Axis(
            name="max_turns",
            kind="number",
            default=50,
            low=1,
            high=1000,
            low_inclusive=True,
            integer=True,
            description="Maximum number of agent turns.",
        ),
        _bool_axis("tool_web_search", "Agent may search the web."),
        _bool_axis("tool_browser", "Agent may drive a browser to look at its game."),
        _bool_axis("tool_subagents", "Agent may spawn subagents."),
        Axis(
            name="framework",
            kind="categorical",
            default="vanilla",
            choices=("vanilla", "react", "vue", "svelte", "phaser"),
            description="UI/game framework the game must use (vanilla = none).",
        ),
        _bool_axis(
            "context_file", "A CLAUDE.md/AGENTS.md project-context file is present in the repo."
        ),
        _bool_axis("self_test", "The prompt instructs the agent to test its own game."),
        Axis(
            name="time_limit_min",
            kind="number",
            default=30,
            low=0,
            high=600,
            description="Wall-clock limit for the run, in minutes.",
        ),
        _bool_axis("plan_first", "The prompt instructs the agent to write a plan before coding."),
    )
}


def default_config() -> dict[str, Any]:
    """Every axis at its catalogue default, in catalogue order."""
    return {name: axis.default for name, axis in AXES.items()}


@dataclass(frozen=True, slots=True)
class AxisSpec:
    """How an experiment varies one axis: its levels (file order) and its baseline level."""

    levels: tuple[Any, ...]
    baseline: Any
    description: str | None = None

    @property
    def other_levels(self) -> tuple[Any, ...]:
        """Levels other than the baseline, in file order."""
        return tuple(level for level in self.levels if level != self.baseline)

"""The axis catalogue: names, kinds, defaults and value checking."""

from __future__ import annotations

from typing import Any

import pytest

from bench_pipeline.design import AXES, default_config
from bench_pipeline.design.axes import AxisValueError

EXPECTED_AXES = [
    ("agent", "categorical", "claude-code"),
    ("model", "categorical", "claude-sonnet-4-6"),
    ("effort", "categorical", "medium"),
    ("prompt_style", "categorical", "standard"),
    ("language", "categorical", "javascript"),
    ("human_language", "categorical", "en"),
    ("budget_usd", "number", 5),
    ("max_turns", "number", 50),
    ("tool_web_search", "bool", False),
    ("tool_browser", "bool", False),
    ("tool_subagents", "bool", False),
    ("framework", "categorical", "vanilla"),
    ("context_file", "bool", False),
    ("self_test", "bool", False),
    ("time_limit_min", "number", 30),
    ("plan_first", "bool", False),
]


def test_catalogue_has_the_16_axes_in_order() -> None:
    assert [(a.name, a.kind, a.default) for a in AXES.values()] == EXPECTED_AXES
    assert list(AXES) == [name for name, _, _ in EXPECTED_AXES]


@pytest.mark.parametrize("name", list(AXES))
def test_default_is_valid_for_its_own_axis(name: str) -> None:
    axis = AXES[name]
    assert axis.normalize(axis.default) == axis.default
    assert axis.description.strip(), "descriptions feed the docs and the UI"


def test_default_config_lists_all_axes_in_catalogue_order() -> None:
    config = default_config()
    assert list(config) == list(AXES)
    assert config["budget_usd"] == 5 and config["tool_browser"] is False


@pytest.mark.parametrize(
    ("name", "choices"),
    [
        ("agent", ("claude-code", "codex", "command", "synthetic")),
        ("effort", ("low", "medium", "high", "max")),
        ("prompt_style", ("terse", "standard", "detailed", "spec")),
        ("language", ("javascript", "typescript")),
        ("human_language", ("en", "de", "ja", "es", "zh", "fr")),
        ("framework", ("vanilla", "react", "vue", "svelte", "phaser")),
        ("model", None),
    ],
)
def test_categorical_choices(name: str, choices: tuple[str, ...] | None) -> None:
    assert AXES[name].choices == choices


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("budget_usd", 5.0, 5),
        ("budget_usd", 0.5, 0.5),
        ("budget_usd", 1000, 1000),
        ("max_turns", 1, 1),
        ("max_turns", 50.0, 50),
        ("time_limit_min", 600, 600),
        ("tool_browser", True, True),
        ("effort", "max", "max"),
        ("model", "anything-goes-here", "anything-goes-here"),
    ],
)
def test_normalize_accepts(name: str, value: Any, expected: Any) -> None:
    result = AXES[name].normalize(value)
    assert result == expected
    assert type(result) is type(expected)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("budget_usd", 0),
        ("budget_usd", -1),
        ("budget_usd", 1000.01),
        ("budget_usd", "5"),
        ("budget_usd", True),
        ("budget_usd", float("nan")),
        ("budget_usd", float("inf")),
        ("max_turns", 0),
        ("max_turns", 1001),
        ("max_turns", 2.5),
        ("time_limit_min", 0),
        ("time_limit_min", 601),
        ("tool_browser", "true"),
        ("tool_browser", "yes"),
        ("tool_browser", 1),
        ("tool_browser", None),
        ("effort", "extreme"),
        ("effort", True),
        ("language", "python"),
        ("agent", "cursor"),
        ("model", ""),
        ("model", 5),
    ],
)
def test_normalize_refuses(name: str, value: Any) -> None:
    with pytest.raises(AxisValueError) as info:
        AXES[name].normalize(value)
    assert name in str(info.value)
    assert AXES[name].allowed_text() in str(info.value)

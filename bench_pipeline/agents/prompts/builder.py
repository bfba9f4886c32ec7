"""Assemble the agent's task prompt and the project-context file from a cell's config.

A prompt is the style's task text followed by instruction paragraphs, always in this order:

    stack (language + framework), deliverable | plan_first?, self_test?, limits

The spec style instead places the first group as numbered items T1.. under its technical
requirements and the second as P1.. under its way-of-working section. Everything else is text
from the language's template file, so the same config always yields the same prompt.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bench_pipeline.agents.prompts.catalog import (
    FRAMEWORKS,
    LANGUAGES,
    PROGRAMMING_LANGUAGES,
    STYLES,
    LanguageTemplates,
    PromptError,
    load_templates,
)
from bench_pipeline.design.axes import AXES, AxisValueError, default_config, describe_value

# Display names for the context file; the names themselves are never translated.
_LANGUAGE_NAMES: Mapping[str, str] = {"javascript": "JavaScript", "typescript": "TypeScript"}
_FRAMEWORK_NAMES: Mapping[str, str] = {
    "react": "React",
    "vue": "Vue",
    "svelte": "Svelte",
    "phaser": "Phaser",
}

_CONTEXT_FILES: Mapping[str, str] = {"claude-code": "CLAUDE.md"}
# Codex reads AGENTS.md, and so do most other harnesses; it is the cross-tool convention.
_DEFAULT_CONTEXT_FILE = "AGENTS.md"


@dataclass(frozen=True, slots=True)
class PromptSettings:
    """The axes a prompt depends on, checked and in canonical form."""

    agent: str
    prompt_style: str
    human_language: str
    language: str
    framework: str
    self_test: bool
    plan_first: bool
    context_file: bool
    budget_usd: int | float
    time_limit_min: int | float
    max_turns: int

    @property
    def needs_build(self) -> bool:
        """TypeScript and every framework need a compile/bundle step before the page runs."""
        return self.language == "typescript" or self.framework != "vanilla"


def prompt_languages() -> tuple[str, ...]:
    """Human languages with templates, in the axis catalogue's order."""
    return LANGUAGES


def resolve_settings(config: Mapping[str, Any]) -> PromptSettings:
    """Check the prompt axes of `config`; missing axes take their catalogue default.

    Cells always carry all sixteen axes; the defaults only make partial configs (tests, ad-hoc
    calls) convenient. Axes a prompt does not use (model, effort, tools) are ignored.
    """
    if not isinstance(config, Mapping):
        raise PromptError(f"config must be a mapping of axis names to values, got {config!r}")
    merged = {**default_config(), **config}
    agent = merged["agent"]
    if not isinstance(agent, str) or not agent.strip():
        raise PromptError(
            f"{describe_value(agent)} is not a valid value for axis agent; "
            "allowed: a harness name such as claude-code or codex"
        )
    return PromptSettings(
        agent=agent,
        prompt_style=_choice(merged, "prompt_style", STYLES),
        human_language=_choice(merged, "human_language", LANGUAGES),
        language=_choice(merged, "language", PROGRAMMING_LANGUAGES),
        framework=_choice(merged, "framework", FRAMEWORKS),
        self_test=_axis(merged, "self_test"),
        plan_first=_axis(merged, "plan_first"),
        context_file=_axis(merged, "context_file"),
        budget_usd=_axis(merged, "budget_usd"),
        time_limit_min=_axis(merged, "time_limit_min"),
        max_turns=_axis(merged, "max_turns"),
    )


def build_prompt(config: Mapping[str, Any]) -> str:
    """The task prompt for a cell, in the cell's human language. Raises PromptError."""
    settings = resolve_settings(config)
    templates = load_templates()[settings.human_language]
    technical, process = _instruction_groups(settings, templates)
    style = templates.style[settings.prompt_style]
    if settings.prompt_style == "spec":
        return style.format(technical=_numbered("T", technical), process=_numbered("P", process))
    return "\n\n".join([style, *technical, *process])


def context_file_for(config: Mapping[str, Any]) -> tuple[str, str] | None:
    """(filename, content) of the project-context file to seed the workspace with, or None.

    CLAUDE.md for claude-code, AGENTS.md for every other harness; the content is in the cell's
    human language and matches its language and framework. None when context_file is off.
    """
    settings = resolve_settings(config)
    if not settings.context_file:
        return None
    context = load_templates()[settings.human_language].context
    framework_name = (
        context["framework_none"]
        if settings.framework == "vanilla"
        else _FRAMEWORK_NAMES[settings.framework]
    )
    content = context["document"].format(
        language_name=_LANGUAGE_NAMES[settings.language],
        framework_name=framework_name,
        language_style=context[f"style_{settings.language}"],
        build_and_check=context["check_build" if settings.needs_build else "check_static"],
    )
    filename = _CONTEXT_FILES.get(settings.agent, _DEFAULT_CONTEXT_FILE)
    # A trailing newline: the file is written as-is and text files end with one.
    return filename, content + "\n"


def _instruction_groups(
    settings: PromptSettings, templates: LanguageTemplates
) -> tuple[list[str], list[str]]:
    """(what to build, how to work): the paragraphs that follow the task text."""
    text = templates.instruction
    stack = text["stack"].format(
        language=text[f"language_{settings.language}"],
        framework=text[f"framework_{settings.framework}"],
    )
    technical = [stack, text["deliverable"]]
    process: list[str] = []
    if settings.plan_first:
        process.append(text["plan_first"])
    if settings.self_test:
        process.append(text["self_test"])
    process.append(_limits(settings, templates))
    return technical, process


def _limits(settings: PromptSettings, templates: LanguageTemplates) -> str:
    text = templates.instruction
    separator = templates.decimal_separator
    minutes = _plural(templates, "minutes", settings.time_limit_min)
    turns = _plural(templates, "turns", settings.max_turns)
    return text["limits"].format(
        time=minutes.format(count=_format_count(settings.time_limit_min, separator)),
        budget=text["budget"].format(amount=_format_amount(settings.budget_usd, separator)),
        turns=turns.format(count=_format_count(settings.max_turns, separator)),
    )


def _plural(templates: LanguageTemplates, stem: str, count: int | float) -> str:
    if templates.plural == "exactly_one":
        one = count == 1
    elif templates.plural == "below_two":
        one = 0 <= count < 2
    else:
        one = False
    return templates.instruction[f"{stem}_{'one' if one else 'other'}"]


def _format_amount(usd: int | float, separator: str) -> str:
    """Dollars with two decimals ($5.00), or more when cents would hide the value ($0.005)."""
    text = f"{usd:.2f}"
    if abs(float(text) - usd) > 1e-9:
        text = f"{usd:.6f}".rstrip("0")
    return text.replace(".", separator)


def _format_count(value: int | float, separator: str) -> str:
    """Integers as they are; fractions without trailing zeros and never in exponent form."""
    if isinstance(value, int):
        return str(value)
    return f"{value:.6f}".rstrip("0").rstrip(".").replace(".", separator)


def _numbered(prefix: str, items: Sequence[str]) -> str:
    return "\n".join(f"{prefix}{number}. {item}" for number, item in enumerate(items, start=1))


def _choice(config: Mapping[str, Any], axis: str, known: tuple[str, ...]) -> str:
    value = config[axis]
    if not isinstance(value, str) or value not in known:
        raise PromptError(
            f"unknown {axis} {describe_value(value)}; known values: {', '.join(known)}"
        )
    return value


def _axis(config: Mapping[str, Any], axis: str) -> Any:
    # The catalogue's own check: bools must be real bools ("false" would be truthy) and
    # numbers must lie in the axis range; its message names the axis, value and allowed range.
    try:
        return AXES[axis].normalize(config[axis])
    except AxisValueError as error:
        raise PromptError(str(error)) from None

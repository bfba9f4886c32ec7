"""The agent's task prompt and project-context file (bench_pipeline.agents.prompts)."""

from __future__ import annotations

import copy
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from bench_pipeline.agents.prompts import (
    PROMPT_VERSION,
    PromptError,
    PromptTemplateError,
    build_prompt,
    catalog,
    context_file_for,
    prompt_languages,
)
from bench_pipeline.design.axes import AXES, default_config

TEMPLATES = Path(catalog.__file__).parent / "templates"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "prompts.md"
LANGUAGES = prompt_languages()
STYLES: tuple[str, ...] = AXES["prompt_style"].choices or ()
NON_ENGLISH = tuple(lang for lang in LANGUAGES if lang != "en")
# Every switch on, so that every instruction paragraph is present.
ALL_ON: dict[str, Any] = {
    "language": "typescript",
    "framework": "react",
    "self_test": True,
    "plan_first": True,
}
# Words a German, Spanish or French text would contain; their absence means a template was not
# translated (or the wrong file was loaded).
TYPICAL_WORDS = {
    "de": ("Spiel", " und ", " das "),
    "es": ("juego", " el ", " la "),
    "fr": ("jeu", " le ", " la "),
}
ENGLISH_WORDS = re.compile(r"\b(the|and|must|with|you|your|when|every)\b", re.IGNORECASE)
UNFILLED = re.compile(r"\{[A-Za-z_]+\}")


def cell(**overrides: Any) -> dict[str, Any]:
    """A full sixteen-axis config, as a cell carries it."""
    return {**default_config(), **overrides}


def raw_documents() -> dict[str, Any]:
    """The template files as plain YAML, read without the catalog's code."""
    return {
        path.stem: yaml.safe_load(path.read_text(encoding="utf-8"))
        for path in sorted(TEMPLATES.glob("*.yaml"))
    }


def text_shape(document: dict[str, Any]) -> dict[str, frozenset[str] | None]:
    """section.key -> placeholder names; meta values are settings, so only their keys count."""
    shape: dict[str, frozenset[str] | None] = {}
    for section, entries in document.items():
        for key, value in entries.items():
            shape[f"{section}.{key}"] = (
                None if section == "meta" else catalog.placeholders(str(value))
            )
    return shape


def non_ascii_share(text: str) -> float:
    letters = [char for char in text if char.isalpha()]
    return sum(not char.isascii() for char in letters) / len(letters)


# --- The catalogue agrees with the axes and the files on disk --------------------------------


def test_languages_are_the_axis_levels() -> None:
    assert LANGUAGES == ("en", "de", "ja", "es", "zh", "fr")
    assert AXES["human_language"].choices == LANGUAGES


def test_styles_languages_and_frameworks_are_the_axis_levels() -> None:
    assert AXES["prompt_style"].choices == catalog.STYLES
    assert AXES["language"].choices == catalog.PROGRAMMING_LANGUAGES
    assert AXES["framework"].choices == catalog.FRAMEWORKS


def test_one_template_file_per_language() -> None:
    assert sorted(path.stem for path in TEMPLATES.glob("*.yaml")) == sorted(LANGUAGES)


# --- Parity: a translation cannot drop or add a key or a placeholder -------------------------


def test_all_languages_have_the_same_keys_and_placeholders() -> None:
    documents = raw_documents()
    reference = text_shape(documents["en"])
    for language in NON_ENGLISH:
        shape = text_shape(documents[language])
        assert shape.keys() == reference.keys(), language
        differing = [key for key in reference if shape[key] != reference[key]]
        assert differing == [], f"{language}: placeholders differ in {differing}"


def test_every_template_file_matches_the_schema() -> None:
    for language, document in raw_documents().items():
        assert catalog.template_problems(language, document) == []
    assert catalog.parity_problems(raw_documents()) == []


def test_a_missing_key_is_reported() -> None:
    documents = raw_documents()
    del documents["de"]["instruction"]["self_test"]
    schema = catalog.template_problems("de", documents["de"])
    parity = catalog.parity_problems(documents)
    assert any("de" in p and "self_test" in p and "missing" in p for p in schema)
    assert parity == ["de: missing key instruction.self_test (present in en)"]


def test_an_extra_key_is_reported() -> None:
    documents = raw_documents()
    documents["zh"]["style"]["epic"] = "更多"
    assert any("style.epic" in p for p in catalog.template_problems("zh", documents["zh"]))
    assert any("extra key style.epic" in p for p in catalog.parity_problems(documents))


def test_a_lost_placeholder_is_reported() -> None:
    documents = raw_documents()
    limits = documents["fr"]["instruction"]["limits"]
    documents["fr"]["instruction"]["limits"] = limits.replace("{budget}", "5 $")
    schema = catalog.template_problems("fr", documents["fr"])
    assert any("instruction.limits" in p and "placeholders" in p for p in schema)
    parity = catalog.parity_problems(documents)
    assert any(p.startswith("fr: instruction.limits has placeholders") for p in parity)


def test_a_stray_brace_is_reported() -> None:
    documents = raw_documents()
    documents["ja"]["style"]["terse"] += " {"
    assert any("style.terse" in p for p in catalog.template_problems("ja", documents["ja"]))


def test_a_bad_meta_setting_is_reported() -> None:
    documents = raw_documents()
    documents["es"]["meta"]["plural"] = "dual"
    assert any("meta.plural" in p for p in catalog.template_problems("es", documents["es"]))


def test_only_plain_placeholders_are_allowed() -> None:
    assert catalog.placeholders("{amount} and {count}") == {"amount", "count"}
    assert catalog.placeholders("a literal {{brace}}") == frozenset()
    for bad in ("{amount.real}", "{0}", "{amount!r}", "{amount:>5}", "{", "}"):
        with pytest.raises(ValueError):
            catalog.placeholders(bad)


def test_a_broken_template_file_stops_prompt_building(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = tmp_path / "templates"
    shutil.copytree(TEMPLATES, broken)
    document = yaml.safe_load((broken / "de.yaml").read_text(encoding="utf-8"))
    del document["context"]["check_build"]
    (broken / "de.yaml").write_text(yaml.safe_dump(document, allow_unicode=True), "utf-8")
    monkeypatch.setattr(catalog, "templates_dir", lambda: broken)
    catalog.load_templates.cache_clear()
    try:
        with pytest.raises(PromptTemplateError, match=r"de: context\.check_build: missing"):
            build_prompt(cell())
    finally:
        catalog.load_templates.cache_clear()


# --- Every style in every language ------------------------------------------------------------


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("style", STYLES)
def test_every_style_builds_in_every_language(style: str, language: str) -> None:
    for overrides in ({}, ALL_ON):
        prompt = build_prompt(cell(prompt_style=style, human_language=language, **overrides))
        assert prompt.strip() == prompt
        assert len(prompt) > 40
        assert not UNFILLED.search(prompt), "a placeholder was left unfilled"


@pytest.mark.parametrize("style", STYLES)
def test_prompts_differ_per_language(style: str) -> None:
    prompts = {build_prompt(cell(prompt_style=style, human_language=lang)) for lang in LANGUAGES}
    assert len(prompts) == len(LANGUAGES)


@pytest.mark.parametrize("language", LANGUAGES)
def test_more_explicit_styles_are_longer(language: str) -> None:
    for overrides in ({}, ALL_ON, {"framework": "phaser", "self_test": True}):
        lengths = [
            len(build_prompt(cell(prompt_style=style, human_language=language, **overrides)))
            for style in ("terse", "standard", "detailed", "spec")
        ]
        assert lengths == sorted(set(lengths)), (language, overrides, lengths)


def test_terse_says_only_the_essentials() -> None:
    task = build_prompt(cell(prompt_style="terse")).split("\n\n")[0]
    assert task == "Build a playable Tetris game that runs in the browser."


def test_spec_numbers_the_instructions() -> None:
    spec = build_prompt(cell(prompt_style="spec", **ALL_ON))
    for item in ("F14. ", "T1. ", "T2. ", "P1. ", "P2. ", "P3. ", "A8. "):
        assert f"\n{item}" in spec
    assert "P4. " not in spec
    plain = build_prompt(cell(prompt_style="spec"))
    assert "\nP1. You have at most" in plain
    assert "P2. " not in plain


# --- Real translations ------------------------------------------------------------------------


@pytest.mark.parametrize("language", ["ja", "zh"])
def test_cjk_prompts_are_mostly_non_ascii(language: str) -> None:
    for style in STYLES:
        for overrides in ({}, ALL_ON):
            prompt = build_prompt(cell(prompt_style=style, human_language=language, **overrides))
            assert non_ascii_share(prompt) > 0.7, (style, overrides)


@pytest.mark.parametrize("language", ["de", "es", "fr"])
def test_european_prompts_use_their_language(language: str) -> None:
    for style in STYLES:
        prompt = build_prompt(cell(prompt_style=style, human_language=language, **ALL_ON))
        for word in TYPICAL_WORDS[language]:
            assert word in prompt, (style, word)


@pytest.mark.parametrize("language", NON_ENGLISH)
def test_no_english_text_leaks_into_translations(language: str) -> None:
    english = raw_documents()["en"]
    sentences = [
        sentence
        for section in ("style", "instruction", "context")
        for text in english[section].values()
        for sentence in re.split(r"(?<=[.:;])\s+|\n+", text)
        if len(sentence.split()) >= 4
    ]
    for style in STYLES:
        prompt = build_prompt(cell(prompt_style=style, human_language=language, **ALL_ON))
        assert not ENGLISH_WORDS.search(prompt), (style, ENGLISH_WORDS.findall(prompt))
        leaked = [sentence for sentence in sentences if sentence in prompt]
        assert leaked == [], style
    assert "Build a playable Tetris game" not in build_prompt(cell(human_language=language))


# --- The instructions -------------------------------------------------------------------------


@pytest.mark.parametrize("language", LANGUAGES)
def test_programming_language_is_stated(language: str) -> None:
    typescript = build_prompt(cell(human_language=language, language="typescript"))
    assert "TypeScript" in typescript
    assert "tsc" in typescript
    javascript = build_prompt(cell(human_language=language, language="javascript"))
    assert "JavaScript" in javascript
    assert "TypeScript" not in javascript


@pytest.mark.parametrize("language", LANGUAGES)
def test_framework_is_stated(language: str) -> None:
    names = {"react": "React", "vue": "Vue", "svelte": "Svelte", "phaser": "Phaser"}
    for framework, name in names.items():
        prompt = build_prompt(cell(human_language=language, framework=framework))
        assert name in prompt
        assert all(other not in prompt for other in names.values() if other != name)
    vanilla = build_prompt(cell(human_language=language, framework="vanilla"))
    assert all(name not in vanilla for name in names.values())
    assert "<canvas>" in vanilla


@pytest.mark.parametrize("language", LANGUAGES)
def test_plan_first_asks_for_plan_md(language: str) -> None:
    for style in STYLES:
        with_plan = build_prompt(cell(prompt_style=style, human_language=language, plan_first=True))
        without = build_prompt(cell(prompt_style=style, human_language=language, plan_first=False))
        assert "PLAN.md" in with_plan
        assert "PLAN.md" not in without


@pytest.mark.parametrize("language", LANGUAGES)
def test_self_test_adds_its_instruction(language: str) -> None:
    instruction = raw_documents()[language]["instruction"]["self_test"]
    for style in STYLES:
        on = build_prompt(cell(prompt_style=style, human_language=language, self_test=True))
        off = build_prompt(cell(prompt_style=style, human_language=language, self_test=False))
        assert instruction in on
        assert instruction not in off


@pytest.mark.parametrize("language", LANGUAGES)
def test_deliverable_is_always_stated(language: str) -> None:
    for style in STYLES:
        prompt = build_prompt(cell(prompt_style=style, human_language=language))
        for needle in ("index.html", "dist/index.html", "`npm run build`", "CDN", "HTTP"):
            assert needle in prompt, (style, needle)


def test_limits_in_english() -> None:
    prompt = build_prompt(cell(budget_usd=5, time_limit_min=30, max_turns=50))
    assert "You have at most 30 minutes, $5.00 and 50 agent turns" in prompt
    assert "$2.50" in build_prompt(cell(budget_usd=2.5))
    assert "$0.005" in build_prompt(cell(budget_usd=0.005))
    singular = build_prompt(cell(time_limit_min=1, max_turns=1))
    assert "at most 1 minute, $5.00 and 1 agent turn for" in singular
    assert "7.5 minutes" in build_prompt(cell(time_limit_min=7.5))


@pytest.mark.parametrize(
    ("language", "expected"),
    [
        ("de", "höchstens 30 Minuten, 5,00 US-Dollar und 50 Agentenschritte"),
        ("es", "como máximo de 30 minutos, 5,00 USD y 50 turnos del agente"),
        ("fr", "au maximum de 30 minutes, 5,00 $ US et 50 tours d'agent"),
        ("ja", "時間が30分、費用が5.00米ドル、エージェントのターン数が50回"),
        ("zh", "时间 30 分钟，费用 5.00 美元，智能体交互 50 轮"),
    ],
)
def test_limits_are_localised(language: str, expected: str) -> None:
    for style in STYLES:
        assert expected in build_prompt(cell(prompt_style=style, human_language=language))


def test_plural_rules_follow_the_language() -> None:
    german = build_prompt(cell(human_language="de", time_limit_min=1, max_turns=1))
    assert "höchstens 1 Minute, 5,00 US-Dollar und 1 Agentenschritt;" in german
    # French takes the singular below two, fractions included.
    french = build_prompt(cell(human_language="fr", time_limit_min=1.5, max_turns=2))
    assert "au maximum de 1,5 minute, 5,00 $ US et 2 tours d'agent" in french
    assert "1,5 Minuten" in build_prompt(cell(human_language="de", time_limit_min=1.5))


def test_axes_a_prompt_does_not_use_change_nothing() -> None:
    base = build_prompt(cell())
    other = cell(model="gpt-5-codex", effort="max", agent="codex", tool_web_search=True)
    other.update(tool_browser=True, tool_subagents=True, context_file=True)
    assert build_prompt(other) == base


# --- The context file -------------------------------------------------------------------------


def test_context_file_name_follows_the_agent() -> None:
    assert context_file_for(cell(context_file=True, agent="claude-code"))[0] == "CLAUDE.md"  # type: ignore[index]
    for agent in ("codex", "command", "synthetic", "replay"):
        assert context_file_for(cell(context_file=True, agent=agent))[0] == "AGENTS.md"  # type: ignore[index]


def test_no_context_file_when_off() -> None:
    for language in LANGUAGES:
        assert context_file_for(cell(context_file=False, human_language=language)) is None


@pytest.mark.parametrize("language", LANGUAGES)
def test_context_file_is_in_the_cell_language(language: str) -> None:
    result = context_file_for(cell(context_file=True, human_language=language, **ALL_ON))
    assert result is not None
    _, content = result
    assert content.endswith("\n")
    assert not UNFILLED.search(content)
    for needle in ("index.html", "`npm run build`", "src/", "TypeScript", "React"):
        assert needle in content
    if language in ("ja", "zh"):
        assert non_ascii_share(content) > 0.6
    elif language != "en":
        assert not ENGLISH_WORDS.search(content), ENGLISH_WORDS.findall(content)
    contents = {
        context_file_for(cell(context_file=True, human_language=lang))[1]  # type: ignore[index]
        for lang in LANGUAGES
    }
    assert len(contents) == len(LANGUAGES)


def test_context_file_follows_the_stack() -> None:
    english = raw_documents()["en"]["context"]
    static = context_file_for(cell(context_file=True))
    assert static is not None
    assert "JavaScript" in static[1]
    assert english["check_static"] in static[1]
    assert english["framework_none"] in static[1]
    built = context_file_for(cell(context_file=True, language="typescript", framework="svelte"))
    assert built is not None
    assert english["check_build"] in built[1]
    assert '"strict": true' in built[1]
    assert "- Framework: Svelte" in built[1]
    # TypeScript alone needs a build too: tsc must run before the page can load the game.
    typescript = context_file_for(cell(context_file=True, language="typescript"))
    assert typescript is not None
    assert english["check_build"] in typescript[1]


# --- Errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("axis", "value", "known"),
    [
        ("prompt_style", "huge", "terse, standard, detailed, spec"),
        ("human_language", "it", "en, de, ja, es, zh, fr"),
        ("framework", "angular", "vanilla, react, vue, svelte, phaser"),
        ("language", "python", "javascript, typescript"),
        ("prompt_style", 3, "terse, standard, detailed, spec"),
    ],
)
def test_unknown_values_are_named_with_the_known_ones(axis: str, value: Any, known: str) -> None:
    for function in (build_prompt, context_file_for):
        with pytest.raises(PromptError) as raised:
            function(cell(context_file=True, **{axis: value}))
        message = str(raised.value)
        assert axis in message
        assert repr(value) in message
        assert known in message


@pytest.mark.parametrize(
    ("axis", "value"),
    [
        ("self_test", "yes"),
        ("plan_first", 1),
        ("context_file", "false"),
        ("budget_usd", -1),
        ("budget_usd", "5"),
        ("time_limit_min", 0),
        ("max_turns", 2.5),
        ("max_turns", True),
        ("agent", ""),
    ],
)
def test_bad_switches_and_limits_are_refused(axis: str, value: Any) -> None:
    with pytest.raises(PromptError, match=axis):
        build_prompt(cell(**{axis: value}))


def test_prompt_error_is_a_value_error() -> None:
    assert issubclass(PromptError, ValueError)
    with pytest.raises(PromptError, match="mapping"):
        build_prompt(["standard"])  # type: ignore[arg-type]


def test_missing_axes_take_their_defaults() -> None:
    assert build_prompt({}) == build_prompt(cell())
    assert build_prompt({"human_language": "fr"}) == build_prompt(cell(human_language="fr"))


# --- Determinism and versioning ---------------------------------------------------------------


def test_prompts_are_deterministic() -> None:
    config = cell(prompt_style="spec", human_language="ja", **ALL_ON)
    reordered = dict(reversed(list(config.items())))
    first = build_prompt(config)
    assert build_prompt(copy.deepcopy(config)) == first
    assert build_prompt(reordered) == first
    assert context_file_for(reordered) == context_file_for(config)
    # The cached templates are read-only: a caller cannot change the next prompt.
    templates = catalog.load_templates()["en"]
    with pytest.raises(TypeError):
        templates.style["terse"] = "changed"  # type: ignore[index]


def test_prompt_version_tracks_the_templates() -> None:
    assert re.fullmatch(rf"{catalog.ASSEMBLY_VERSION}-[0-9a-f]{{12}}", PROMPT_VERSION)
    blobs = {path.name: path.read_bytes() for path in TEMPLATES.glob("*.yaml")}
    assert catalog.compute_prompt_version(blobs) == PROMPT_VERSION
    edited = {**blobs, "de.yaml": blobs["de.yaml"] + b"\n# edited\n"}
    assert catalog.compute_prompt_version(edited) != PROMPT_VERSION


# --- Documentation ----------------------------------------------------------------------------


def test_docs_quote_every_english_template() -> None:
    docs = DOCS.read_text(encoding="utf-8")
    english = raw_documents()["en"]
    stale = [
        f"{section}.{key}"
        for section in ("style", "instruction", "context")
        for key, text in english[section].items()
        if text.strip() not in docs
    ]
    assert stale == [], f"docs/prompts.md does not quote the current text of {stale}"

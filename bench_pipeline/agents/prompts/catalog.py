"""The prompt templates: one YAML file per human language, loaded once and checked against a schema.

Each `templates/<lang>.yaml` holds four sections (see `en.yaml`, the reference):

- `meta`: the language's own name, its decimal separator and its plural rule;
- `style`: the task text for each prompt style;
- `instruction`: the paragraphs added after the task (language, framework, deliverable,
  plan, self-test, limits) and the small phrases the limits are built from;
- `context`: the project-context file (CLAUDE.md / AGENTS.md) and its variable parts.

`SCHEMA` fixes every key and the exact `{placeholders}` each text must use, so a translation that
drops a key, adds one or loses a placeholder is refused at load time (and by the tests), instead
of producing a prompt that silently differs from the other languages.
"""

from __future__ import annotations

import hashlib
import string
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from types import MappingProxyType
from typing import Any

import yaml

# Bump when the assembly logic in builder.py changes what a prompt says. Template edits need no
# bump: their bytes are part of PROMPT_VERSION (see `compute_prompt_version`).
ASSEMBLY_VERSION = "1"

LANGUAGES: tuple[str, ...] = ("en", "de", "ja", "es", "zh", "fr")
REFERENCE_LANGUAGE = "en"
STYLES: tuple[str, ...] = ("terse", "standard", "detailed", "spec")
PROGRAMMING_LANGUAGES: tuple[str, ...] = ("javascript", "typescript")
FRAMEWORKS: tuple[str, ...] = ("vanilla", "react", "vue", "svelte", "phaser")
# exactly_one: English, German, Spanish; below_two: French (0 and 1.5 take the singular);
# none: languages without grammatical number (Japanese, Chinese).
PLURAL_RULES: tuple[str, ...] = ("exactly_one", "below_two", "none")
DECIMAL_SEPARATORS: tuple[str, ...] = (".", ",")

META_KEYS: tuple[str, ...] = ("name", "decimal_separator", "plural")

_NONE: frozenset[str] = frozenset()

SCHEMA: Mapping[str, Mapping[str, frozenset[str]]] = MappingProxyType(
    {
        "style": {
            "terse": _NONE,
            "standard": _NONE,
            "detailed": _NONE,
            "spec": frozenset({"technical", "process"}),
        },
        "instruction": {
            "stack": frozenset({"language", "framework"}),
            **{f"language_{name}": _NONE for name in PROGRAMMING_LANGUAGES},
            **{f"framework_{name}": _NONE for name in FRAMEWORKS},
            "deliverable": _NONE,
            "plan_first": _NONE,
            "self_test": _NONE,
            "limits": frozenset({"time", "budget", "turns"}),
            "budget": frozenset({"amount"}),
            "minutes_one": frozenset({"count"}),
            "minutes_other": frozenset({"count"}),
            "turns_one": frozenset({"count"}),
            "turns_other": frozenset({"count"}),
        },
        "context": {
            "document": frozenset(
                {"language_name", "framework_name", "language_style", "build_and_check"}
            ),
            "framework_none": _NONE,
            **{f"style_{name}": _NONE for name in PROGRAMMING_LANGUAGES},
            "check_static": _NONE,
            "check_build": _NONE,
        },
    }
)
SECTIONS: tuple[str, ...] = ("meta", *SCHEMA)


class PromptError(ValueError):
    """A config asks for a prompt that cannot be built (unknown style, language, framework...)."""


class PromptTemplateError(RuntimeError):
    """A template file is missing or does not match the schema: fix the file, not the config."""


@dataclass(frozen=True, slots=True)
class LanguageTemplates:
    """The checked templates of one human language."""

    code: str
    name: str
    decimal_separator: str
    plural: str
    style: Mapping[str, str]
    instruction: Mapping[str, str]
    context: Mapping[str, str]


def placeholders(text: str) -> frozenset[str]:
    """The `{name}` fields of a str.format template.

    Raises ValueError for unbalanced braces and for anything but a bare name (`{a.b}`, `{0}`,
    `{x!r}`, `{x:>5}`): templates come from translators, so only plain substitution is allowed.
    """
    names: set[str] = set()
    for _literal, field, spec, conversion in string.Formatter().parse(text):
        if field is None:
            continue
        if not field.isidentifier() or spec or conversion:
            raise ValueError(f"placeholder {{{field}}} must be a plain name such as {{amount}}")
        names.add(field)
    return frozenset(names)


def template_problems(language: str, document: Any) -> list[str]:
    """Every way one parsed template file breaks the schema; empty when it is fine."""
    if not isinstance(document, Mapping):
        return [f"{language}: the file must be a mapping of sections {', '.join(SECTIONS)}"]
    problems = [f"{language}: unknown section {key!r}" for key in document if key not in SECTIONS]
    problems += _meta_problems(language, document.get("meta"))
    for section, expected in SCHEMA.items():
        problems += _section_problems(language, section, document.get(section), expected)
    return problems


def parity_problems(documents: Mapping[str, Any]) -> list[str]:
    """Differences in keys or placeholders between each language and the reference language.

    Independent of SCHEMA, so that a key added to en.yaml but forgotten elsewhere is reported as
    a parity problem even before the schema learns about it.
    """
    reference = _shape(documents[REFERENCE_LANGUAGE])
    problems: list[str] = []
    for language, document in documents.items():
        if language == REFERENCE_LANGUAGE:
            continue
        shape = _shape(document)
        for key in sorted(reference.keys() - shape.keys()):
            problems.append(f"{language}: missing key {key} (present in {REFERENCE_LANGUAGE})")
        for key in sorted(shape.keys() - reference.keys()):
            problems.append(f"{language}: extra key {key} (absent from {REFERENCE_LANGUAGE})")
        for key in sorted(reference.keys() & shape.keys()):
            if reference[key] != shape[key]:
                problems.append(
                    f"{language}: {key} has placeholders {_names(shape[key])}, "
                    f"{REFERENCE_LANGUAGE} has {_names(reference[key])}"
                )
    return problems


def templates_dir() -> Traversable:
    """The packaged templates directory (works from a source tree and from a wheel)."""
    return resources.files(__package__).joinpath("templates")


def read_documents() -> dict[str, Any]:
    """Parse the template file of every language in LANGUAGES; a missing file is an error."""
    documents: dict[str, Any] = {}
    for language in LANGUAGES:
        path = templates_dir().joinpath(f"{language}.yaml")
        if not path.is_file():
            raise PromptTemplateError(f"no template file {language}.yaml in {templates_dir()}")
        try:
            documents[language] = yaml.safe_load(path.read_text(encoding="utf-8"))
        except yaml.YAMLError as error:
            raise PromptTemplateError(f"{language}.yaml is not valid YAML: {error}") from None
    return documents


@cache
def load_templates() -> Mapping[str, LanguageTemplates]:
    """All languages, checked against the schema and against each other; cached."""
    documents = read_documents()
    problems = [p for lang, doc in documents.items() for p in template_problems(lang, doc)]
    if not problems:
        problems = parity_problems(documents)
    if problems:
        raise PromptTemplateError("prompt templates are broken:\n  " + "\n  ".join(problems))
    return MappingProxyType(
        {language: _to_templates(language, doc) for language, doc in documents.items()}
    )


def compute_prompt_version(blobs: Mapping[str, bytes]) -> str:
    """`<ASSEMBLY_VERSION>-<12 hex digits of the templates' SHA-256>`.

    Hashing the bytes (names included, in sorted order) means any template edit changes the
    version, so Dagster sees new code without anyone remembering to bump it.
    """
    digest = hashlib.sha256()
    for name in sorted(blobs):
        digest.update(name.encode("utf-8") + b"\0")
        digest.update(hashlib.sha256(blobs[name]).digest())
    return f"{ASSEMBLY_VERSION}-{digest.hexdigest()[:12]}"


def _template_blobs() -> dict[str, bytes]:
    # Every *.yaml present, not only LANGUAGES: importing must not fail on a missing file (that
    # is reported when a prompt is built), and a new translation still changes the version.
    directory = templates_dir()
    return {
        entry.name: entry.read_bytes()
        for entry in directory.iterdir()
        if entry.is_file() and entry.name.endswith(".yaml")
    }


PROMPT_VERSION: str = compute_prompt_version(_template_blobs())


def _meta_problems(language: str, meta: Any) -> list[str]:
    if not isinstance(meta, Mapping):
        return [f"{language}: section meta is missing or not a mapping"]
    problems = [f"{language}: meta: unknown key {key!r}" for key in meta if key not in META_KEYS]
    name = meta.get("name")
    if not isinstance(name, str) or not name.strip():
        problems.append(f"{language}: meta.name must be the language's own name")
    if meta.get("decimal_separator") not in DECIMAL_SEPARATORS:
        problems.append(
            f"{language}: meta.decimal_separator must be one of {' '.join(DECIMAL_SEPARATORS)}"
        )
    if meta.get("plural") not in PLURAL_RULES:
        problems.append(f"{language}: meta.plural must be one of {', '.join(PLURAL_RULES)}")
    return problems


def _section_problems(
    language: str, section: str, texts: Any, expected: Mapping[str, frozenset[str]]
) -> list[str]:
    if not isinstance(texts, Mapping):
        return [f"{language}: section {section} is missing or not a mapping"]
    problems = [f"{language}: {section}.{key}: unknown key" for key in texts if key not in expected]
    for key, wanted in expected.items():
        where = f"{language}: {section}.{key}"
        if key not in texts:
            problems.append(f"{where}: missing")
            continue
        text = texts[key]
        if not isinstance(text, str) or not text.strip():
            problems.append(f"{where}: must be non-empty text")
            continue
        try:
            found = placeholders(text)
        except ValueError as error:
            problems.append(f"{where}: {error} (write a literal brace as {{{{ or }}}})")
            continue
        if found != wanted:
            problems.append(f"{where}: placeholders {_names(found)}, expected {_names(wanted)}")
    return problems


def _shape(document: Any) -> dict[str, frozenset[str] | None]:
    """Dotted key -> placeholders of every text under the template sections (None: not text)."""
    shape: dict[str, frozenset[str] | None] = {}
    if not isinstance(document, Mapping):
        return shape
    for section, texts in document.items():
        if section == "meta":
            # meta values are settings, not text: only their keys must match.
            if isinstance(texts, Mapping):
                shape.update({f"meta.{key}": _NONE for key in texts})
            continue
        if not isinstance(texts, Mapping):
            shape[str(section)] = None
            continue
        for key, text in texts.items():
            try:
                found = placeholders(text) if isinstance(text, str) else None
            except ValueError:
                found = None
            shape[f"{section}.{key}"] = found
    return shape


def _names(found: frozenset[str] | None) -> str:
    if found is None:
        return "(not text, or malformed)"
    return "{" + ", ".join(sorted(found)) + "}" if found else "none"


def _to_templates(language: str, document: Mapping[str, Any]) -> LanguageTemplates:
    meta = document["meta"]

    def texts(section: str) -> Mapping[str, str]:
        # Surrounding whitespace is layout, not content: `|-` blocks keep none, but be safe.
        return MappingProxyType({k: str(v).strip() for k, v in document[section].items()})

    return LanguageTemplates(
        code=language,
        name=str(meta["name"]),
        decimal_separator=str(meta["decimal_separator"]),
        plural=str(meta["plural"]),
        style=texts("style"),
        instruction=texts("instruction"),
        context=texts("context"),
    )

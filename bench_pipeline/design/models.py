"""The model registry (`experiments/models.yaml`): which models exist, their harness and prices.

Also home of the strict YAML reader shared by the registry and experiment loaders.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, ClassVar

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode

from bench_pipeline.design.axes import AGENT_HARNESSES, DesignError, describe_value

_BOOL_TAG = "tag:yaml.org,2002:bool"
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
_MERGE_TAG = "tag:yaml.org,2002:merge"


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 booleans, no implicit dates, and duplicate keys refused.

    YAML 1.1 reads `yes`/`no`/`on`/`off` as booleans, so `human_language: [no]` or a bool level
    written `yes` would silently change meaning; only `true`/`false` are booleans here. Dates are
    left as strings because PyYAML raises a bare ValueError (no line number) on `2025-13-01`.
    """

    yaml_implicit_resolvers: ClassVar[dict[Any, list[tuple[str, re.Pattern[str]]]]] = {
        first: [
            (tag, regexp) for tag, regexp in resolvers if tag not in (_BOOL_TAG, _TIMESTAMP_TAG)
        ]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }

    def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, MappingNode):
            seen: set[Any] = set()
            for key_node, _ in node.value:
                if key_node.tag == _MERGE_TAG:
                    continue  # `<<` merges may legitimately repeat keys; the base class handles it
                key = self.construct_object(key_node, deep=True)
                try:
                    duplicate = key in seen
                    seen.add(key)
                except TypeError:
                    continue  # unhashable key: the base class reports it with a position
                if duplicate:
                    raise ConstructorError(
                        "while constructing a mapping",
                        node.start_mark,
                        f"found duplicate key {key!r}",
                        key_node.start_mark,
                    )
        return super().construct_mapping(node, deep=deep)


_StrictLoader.add_implicit_resolver(
    _BOOL_TAG,
    re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
    list("tTfF"),
)


def load_yaml_mapping(path: Path, display_path: str, what: str) -> dict[Any, Any]:
    """Read a YAML file whose top level must be a mapping; every failure is a DesignError."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DesignError(display_path, "<file>", f"{what} file not found") from None
    except UnicodeDecodeError as exc:
        raise DesignError(display_path, "<file>", f"not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise DesignError(display_path, "<file>", f"cannot read {what} file: {exc}") from None
    try:
        data = yaml.load(text, Loader=_StrictLoader)
    except yaml.MarkedYAMLError as exc:
        raise DesignError(display_path, "<yaml>", _describe_yaml_error(exc)) from None
    except (yaml.YAMLError, ValueError, TypeError, OverflowError) as exc:
        # Explicit tags such as `!!int abc` fail inside the constructor without a position.
        raise DesignError(display_path, "<yaml>", f"invalid YAML: {exc}") from None
    except RecursionError:
        # PyYAML composes nested nodes recursively: a few thousand levels of `[[[…` or
        # `a: {b: {…` exhaust Python's stack. No experiment or registry nests beyond a few.
        raise DesignError(
            display_path, "<yaml>", f"invalid YAML: nested too deeply ({what} file)"
        ) from None
    if data is None:
        raise DesignError(display_path, "<root>", f"file is empty; expected a mapping ({what})")
    if not isinstance(data, dict):
        raise DesignError(
            display_path,
            "<root>",
            f"top level must be a mapping, got {type(data).__name__}",
        )
    return data


def _describe_yaml_error(exc: yaml.MarkedYAMLError) -> str:
    mark = exc.problem_mark or exc.context_mark
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    problem = exc.problem or exc.context or "invalid YAML"
    return f"invalid YAML at {where}{problem}"


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """One model of the registry. Prices are US dollars per million tokens."""

    id: str
    harness: str
    provider: str
    input_usd_per_mtok: float
    output_usd_per_mtok: float
    release_date: date
    display_name: str | None = None
    # Latent skill in 0..1 that the offline synthetic agent uses for its planted effects.
    strength: float | None = None

    @property
    def label(self) -> str:
        return self.display_name or self.id

    def to_json_dict(self) -> dict[str, Any]:
        """JSON-ready fields (`release_date` as an ISO string)."""
        return {
            "id": self.id,
            "harness": self.harness,
            "provider": self.provider,
            "input_usd_per_mtok": self.input_usd_per_mtok,
            "output_usd_per_mtok": self.output_usd_per_mtok,
            "release_date": self.release_date.isoformat(),
            "display_name": self.display_name,
            "strength": self.strength,
        }

    def cost_usd(self, input_tokens: int, output_tokens: int) -> float:
        """Price of a run with these token counts."""
        if input_tokens < 0 or output_tokens < 0:
            raise ValueError("token counts must be non-negative")
        return (
            input_tokens * self.input_usd_per_mtok + output_tokens * self.output_usd_per_mtok
        ) / 1_000_000


@dataclass(frozen=True, slots=True)
class ModelRegistry:
    """All models of a registry file, in file order, plus the harnesses it knows."""

    path: str
    models: tuple[ModelInfo, ...]
    harnesses: tuple[str, ...]

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(model.id for model in self.models)

    def get(self, model_id: str) -> ModelInfo | None:
        """The model with this id, or None (like `dict.get`)."""
        for model in self.models:
            if model.id == model_id:
                return model
        return None

    def __contains__(self, model_id: object) -> bool:
        return any(model.id == model_id for model in self.models)

    def __iter__(self) -> Iterator[ModelInfo]:
        return iter(self.models)

    def __len__(self) -> int:
        return len(self.models)


_REGISTRY_KEYS = ("harnesses", "models")
_REQUIRED_MODEL_KEYS = (
    "id",
    "harness",
    "provider",
    "input_usd_per_mtok",
    "output_usd_per_mtok",
    "release_date",
)
_OPTIONAL_MODEL_KEYS = ("display_name", "strength")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_MODEL_ID = re.compile(r"^\S+$")


def load_model_registry(path: str | Path) -> ModelRegistry:
    """Load and validate a model registry file; raises DesignError on any problem."""
    display_path = str(path)
    data = load_yaml_mapping(Path(path), display_path, "model registry")
    for key in data:
        if key not in _REGISTRY_KEYS:
            raise DesignError(
                display_path,
                str(key),
                f"unknown key; allowed keys: {', '.join(_REGISTRY_KEYS)}",
            )
    harnesses = _parse_harnesses(data.get("harnesses"), display_path)
    raw_models = data.get("models")
    if raw_models is None:
        raise DesignError(display_path, "models", "missing required key (a list of models)")
    if not isinstance(raw_models, list) or not raw_models:
        raise DesignError(display_path, "models", "must be a non-empty list of model entries")

    models: list[ModelInfo] = []
    first_index: dict[str, int] = {}
    for index, raw in enumerate(raw_models):
        model = _parse_model(raw, index, display_path, harnesses)
        if model.id in first_index:
            raise DesignError(
                display_path,
                f"models[{model.id}].id",
                f"duplicate id (entries {first_index[model.id]} and {index})",
            )
        first_index[model.id] = index
        models.append(model)

    if harnesses is None:
        harnesses = tuple(dict.fromkeys(model.harness for model in models))
    return ModelRegistry(path=display_path, models=tuple(models), harnesses=harnesses)


def _parse_harnesses(raw: Any, display_path: str) -> tuple[str, ...] | None:
    """Registry-level harness list; None means "derive from the models' harness fields"."""
    if raw is None:
        return None
    if not isinstance(raw, list) or not raw:
        raise DesignError(display_path, "harnesses", "must be a non-empty list of harness names")
    for value in raw:
        if value not in AGENT_HARNESSES:
            raise DesignError(
                display_path,
                "harnesses",
                f"{describe_value(value)} is not a known harness; "
                f"allowed: {', '.join(AGENT_HARNESSES)}",
            )
    if len(set(raw)) != len(raw):
        raise DesignError(display_path, "harnesses", "lists a harness more than once")
    return tuple(raw)


def _parse_model(
    raw: Any, index: int, display_path: str, harnesses: tuple[str, ...] | None
) -> ModelInfo:
    if not isinstance(raw, dict):
        raise DesignError(
            display_path, f"models[{index}]", f"must be a mapping, got {type(raw).__name__}"
        )
    raw_id = raw.get("id")
    valid_id = isinstance(raw_id, str) and _MODEL_ID.match(raw_id) is not None
    # Name the entry by its id when it has a usable one: easier to find in the file.
    entry = f"models[{raw_id}]" if valid_id else f"models[{index}]"

    for key in raw:
        if key not in _REQUIRED_MODEL_KEYS and key not in _OPTIONAL_MODEL_KEYS:
            allowed = ", ".join(_REQUIRED_MODEL_KEYS + _OPTIONAL_MODEL_KEYS)
            raise DesignError(display_path, f"{entry}.{key}", f"unknown key; allowed: {allowed}")
    for key in _REQUIRED_MODEL_KEYS:
        if key not in raw:
            raise DesignError(display_path, f"{entry}.{key}", "missing required key")
    if not valid_id:
        raise DesignError(
            display_path,
            f"{entry}.id",
            f"must be a non-empty string without spaces, got {describe_value(raw_id)}",
        )

    harness = _require_text(raw["harness"], display_path, f"{entry}.harness")
    known_harnesses = harnesses if harnesses is not None else AGENT_HARNESSES
    if harness not in known_harnesses:
        raise DesignError(
            display_path,
            f"{entry}.harness",
            f"{harness!r} is not a known harness; allowed: {', '.join(known_harnesses)}",
        )
    display_name = raw.get("display_name")
    if display_name is not None:
        display_name = _require_text(display_name, display_path, f"{entry}.display_name")
    strength = raw.get("strength")
    if strength is not None:
        strength = _require_number(strength, display_path, f"{entry}.strength", upper=1.0)

    return ModelInfo(
        id=raw_id,
        harness=harness,
        provider=_require_text(raw["provider"], display_path, f"{entry}.provider"),
        input_usd_per_mtok=_require_number(
            raw["input_usd_per_mtok"], display_path, f"{entry}.input_usd_per_mtok"
        ),
        output_usd_per_mtok=_require_number(
            raw["output_usd_per_mtok"], display_path, f"{entry}.output_usd_per_mtok"
        ),
        release_date=_require_date(raw["release_date"], display_path, f"{entry}.release_date"),
        display_name=display_name,
        strength=strength,
    )


def _require_text(value: Any, display_path: str, key: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise DesignError(
            display_path, key, f"must be a non-empty string, got {describe_value(value)}"
        )
    return value


def _require_number(value: Any, display_path: str, key: str, upper: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise DesignError(display_path, key, f"must be a number, got {describe_value(value)}")
    if value < 0:
        raise DesignError(display_path, key, f"must not be negative, got {value}")
    if upper is not None and value > upper:
        raise DesignError(display_path, key, f"must be between 0 and {upper:g}, got {value}")
    return float(value)


def _require_date(value: Any, display_path: str, key: str) -> date:
    if isinstance(value, str) and _ISO_DATE.match(value):
        try:
            return date.fromisoformat(value)
        except ValueError as exc:
            raise DesignError(display_path, key, f"invalid date {value!r}: {exc}") from None
    raise DesignError(
        display_path, key, f"must be an ISO date (YYYY-MM-DD), got {describe_value(value)}"
    )

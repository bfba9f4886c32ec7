"""The model registry: the shipped file, its API, and validation of malformed registries."""

from __future__ import annotations

import json
import pickle
from dataclasses import fields
from datetime import date
from pathlib import Path

import pytest

from bench_pipeline.design import DesignError, ModelInfo, load_model_registry

HERE = Path(__file__).parent
BAD = HERE / "bad"
FIXTURES = HERE / "fixtures"
EXPERIMENTS = HERE.parents[1] / "experiments"

REQUIRED_MODELS = [
    "claude-sonnet-4-6",
    "claude-opus-4-6",
    "claude-haiku-4-5",
    "gpt-5-codex",
    "gpt-5",
]


def test_shipped_registry_has_the_required_models() -> None:
    registry = load_model_registry(EXPERIMENTS / "models.yaml")
    assert set(REQUIRED_MODELS) <= set(registry.ids)
    sonnet = registry.get("claude-sonnet-4-6")
    assert sonnet is not None
    assert (sonnet.input_usd_per_mtok, sonnet.output_usd_per_mtok) == (3, 15)
    assert sonnet.harness == "claude-code" and sonnet.provider == "anthropic"
    assert set(registry.harnesses) == {"claude-code", "codex", "command", "synthetic"}


@pytest.mark.parametrize("model_id", REQUIRED_MODELS)
def test_every_shipped_model_has_a_strength(model_id: str) -> None:
    model = load_model_registry(EXPERIMENTS / "models.yaml").get(model_id)
    assert model is not None
    assert model.strength is not None and 0 <= model.strength <= 1


def test_registry_api() -> None:
    registry = load_model_registry(FIXTURES / "models.yaml")
    assert registry.ids == ("claude-sonnet-4-6", "claude-opus-4-6", "gpt-5-codex")
    assert registry.harnesses == ("claude-code", "codex", "synthetic")
    assert registry.get("nope") is None
    assert "gpt-5-codex" in registry and "nope" not in registry
    assert len(registry) == 3 and [m.id for m in registry] == list(registry.ids)
    opus = registry.get("claude-opus-4-6")
    assert opus is not None
    assert opus.release_date == date(2026, 2, 5)
    assert opus.label == "Claude Opus 4.6"
    codex = registry.get("gpt-5-codex")
    assert codex is not None and codex.strength is None and codex.label == "gpt-5-codex"


def test_model_to_json_dict_is_json_ready() -> None:
    model = load_model_registry(FIXTURES / "models.yaml").get("claude-opus-4-6")
    assert model is not None
    document = json.loads(json.dumps(model.to_json_dict()))
    assert document["release_date"] == "2026-02-05"
    assert document["display_name"] == "Claude Opus 4.6"
    assert set(document) == {f.name for f in fields(ModelInfo)}


def test_harnesses_default_to_those_of_the_models(tmp_path: Path) -> None:
    text = (
        (FIXTURES / "models.yaml")
        .read_text()
        .replace("harnesses: [claude-code, codex, synthetic]\n", "")
    )
    path = tmp_path / "models.yaml"
    path.write_text(text)
    assert load_model_registry(path).harnesses == ("claude-code", "codex")


@pytest.mark.parametrize(
    ("input_tokens", "output_tokens", "expected"),
    [(0, 0, 0.0), (1_000_000, 0, 3.0), (0, 1_000_000, 15.0), (200_000, 50_000, 0.6 + 0.75)],
)
def test_cost_usd(input_tokens: int, output_tokens: int, expected: float) -> None:
    model = ModelInfo(
        id="m",
        harness="claude-code",
        provider="anthropic",
        input_usd_per_mtok=3,
        output_usd_per_mtok=15,
        release_date=date(2026, 1, 1),
    )
    assert model.cost_usd(input_tokens, output_tokens) == pytest.approx(expected)


def test_cost_usd_refuses_negative_tokens() -> None:
    model = load_model_registry(FIXTURES / "models.yaml").models[0]
    with pytest.raises(ValueError, match="non-negative"):
        model.cost_usd(-1, 0)


BAD_REGISTRIES = [
    ("registry_yaml_syntax", "<yaml>", "line 4"),
    ("registry_not_mapping", "<root>", "mapping"),
    ("registry_unknown_top_key", "vendors", "unknown"),
    ("registry_models_missing", "models", "missing"),
    ("registry_models_not_list", "models", "list"),
    ("registry_entry_not_mapping", "models[0]", "mapping"),
    ("registry_id_missing", "models[0].id", "missing"),
    ("registry_duplicate_id", "models[claude-sonnet-4-6].id", "duplicate"),
    ("registry_missing_field", "models[claude-sonnet-4-6].provider", "missing"),
    ("registry_unknown_field", "models[claude-sonnet-4-6].context_window", "unknown"),
    ("registry_bad_date", "models[claude-sonnet-4-6].release_date", "month"),
    ("registry_date_not_iso", "models[claude-sonnet-4-6].release_date", "YYYY-MM-DD"),
    ("registry_negative_price", "models[claude-sonnet-4-6].input_usd_per_mtok", "negative"),
    ("registry_price_string", "models[claude-sonnet-4-6].output_usd_per_mtok", "number"),
    ("registry_strength_out_of_range", "models[claude-sonnet-4-6].strength", "between 0 and 1"),
    ("registry_unknown_harness", "models[claude-sonnet-4-6].harness", "cursor"),
    ("registry_harness_not_listed", "models[claude-sonnet-4-6].harness", "harness"),
]


@pytest.mark.parametrize(("stem", "key", "word"), BAD_REGISTRIES)
def test_bad_registry(stem: str, key: str, word: str) -> None:
    path = BAD / f"{stem}.yaml"
    with pytest.raises(DesignError) as info:
        load_model_registry(path)
    error = info.value
    assert (error.path, error.key) == (str(path), key)
    assert word in error.problem
    assert str(error) == f"{path}: {key}: {error.problem}"


def test_every_bad_registry_fixture_is_covered() -> None:
    on_disk = {p.stem for p in BAD.glob("registry_*.yaml")}
    assert on_disk == {stem for stem, _, _ in BAD_REGISTRIES}


def test_missing_registry_file(tmp_path: Path) -> None:
    path = tmp_path / "absent.yaml"
    with pytest.raises(DesignError) as info:
        load_model_registry(path)
    assert (info.value.key, info.value.path) == ("<file>", str(path))
    assert "not found" in info.value.problem


def test_design_error_survives_pickling() -> None:
    error = DesignError("a.yaml", "repeats", "must be an integer >= 1, got 0")
    clone = pickle.loads(pickle.dumps(error))
    assert (clone.path, clone.key, clone.problem, str(clone)) == (
        "a.yaml",
        "repeats",
        "must be an integer >= 1, got 0",
        "a.yaml: repeats: must be an integer >= 1, got 0",
    )

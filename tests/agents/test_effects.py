"""The planted-effects model: the ground truth the statistics stage is checked against."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from bench_pipeline import settings
from bench_pipeline.agents import adapter_for
from bench_pipeline.agents.stage import run_generation
from bench_pipeline.agents.synthetic.effects import (
    ALL_FAULTS,
    FAULT_TESTS,
    MECHANIC_FAULTS,
    NULL_AXES,
    expected_gameplay_score,
    fault_probabilities,
    planted_effects,
)
from bench_pipeline.bot.contract import TEST_IDS
from bench_pipeline.design.axes import AXES, default_config
from bench_pipeline.sandbox import get_sandbox
from bench_pipeline.warehouse.artifacts import ArtifactStore

BASE = default_config()
DOC = settings.project_root() / "docs" / "synthetic-agent.md"


def test_every_fault_maps_to_real_tests_and_tests_are_not_shared() -> None:
    failed = [t for tests in FAULT_TESTS.values() for t in tests]
    assert set(failed) <= set(TEST_IDS)
    assert len(failed) == len(set(failed))  # disjoint: the expected score is exact
    assert set(FAULT_TESTS) == set(MECHANIC_FAULTS)


def test_planted_axes_exist_and_null_axes_have_no_shift() -> None:
    planted = {e.axis for e in planted_effects()}
    assert planted <= set(AXES)
    assert not planted & set(NULL_AXES)
    assert planted | set(NULL_AXES) == set(AXES)  # every axis is either planted or null


@pytest.mark.parametrize("axis", NULL_AXES)
def test_null_axes_change_nothing(axis: str) -> None:
    spec = AXES[axis]
    levels = spec.choices or ((True, False) if spec.kind == "bool" else (1, 500))
    probabilities = [fault_probabilities({**BASE, axis: level}, 0.75) for level in levels]
    assert all(p == probabilities[0] for p in probabilities)


def test_stronger_model_and_fuller_prompt_raise_the_expected_score() -> None:
    by_strength = [expected_gameplay_score(BASE, s) for s in (0.4, 0.55, 0.75, 0.85, 0.95)]
    assert by_strength == sorted(by_strength)
    by_style = [
        expected_gameplay_score({**BASE, "prompt_style": s}, 0.75)
        for s in ("terse", "standard", "detailed", "spec")
    ]
    assert by_style == sorted(by_style)
    # Large enough to be seen in a small demo, small enough to leave room to improve.
    assert by_style[1] - by_style[0] > 10
    assert expected_gameplay_score({**BASE, "self_test": True}, 0.75) > by_style[1]


def test_type_errors_only_for_typescript_and_probabilities_are_valid() -> None:
    js = fault_probabilities({**BASE, "language": "javascript"}, 0.75)
    ts = fault_probabilities({**BASE, "language": "typescript"}, 0.75)
    assert js["type_errors"] == 0 < ts["type_errors"]
    assert set(js) == set(ALL_FAULTS)
    assert all(0 <= p < 1 for p in (*js.values(), *ts.values()))
    assert ts["crash"] < js["crash"]


def test_expected_score_matches_simulated_draws() -> None:
    # The closed form equals the mean of many independent draws from the same model.
    config = {**BASE, "prompt_style": "terse"}
    p = fault_probabilities(config, 0.55)
    rng = np.random.default_rng(7)
    draws = rng.random((20_000, len(MECHANIC_FAULTS))) < [p[f] for f in MECHANIC_FAULTS]
    lost = draws @ np.array([len(FAULT_TESTS[f]) for f in MECHANIC_FAULTS])
    simulated = float(np.mean(100 * (16 - lost) / 16))
    assert simulated == pytest.approx(expected_gameplay_score(config, 0.55), abs=0.3)


def test_the_docs_table_is_the_model() -> None:
    text = DOC.read_text()
    for effect in planted_effects():
        row = re.compile(
            rf"\|\s*`{effect.axis}`\s*\|\s*`{effect.level}`\s*\|[^|]*\|\s*"
            + re.escape(f"{effect.logit_shift:+.1f}")
            + r"\s*\|"
        )
        assert row.search(text), f"docs/synthetic-agent.md lacks the row for {effect}"
    for axis in NULL_AXES:
        assert f"`{axis}`" in text


def test_planted_effects_show_in_what_the_synthetic_agent_writes(tmp_path: Path) -> None:
    # Many runs per cell through the real stage: fault frequencies follow the model.
    sandbox = get_sandbox("bubblewrap")
    store = ArtifactStore(tmp_path / "a")
    cells = {
        "haiku-terse": ("claude-haiku-4-5", 0.55, "terse"),
        "sonnet": ("claude-sonnet-4-6", 0.75, "standard"),
        "opus-spec": ("claude-opus-4-6", 0.85, "spec"),
    }
    observed: dict[str, float] = {}
    for name, (model, strength, style) in cells.items():
        config = {**BASE, "agent": "synthetic", "model": model, "prompt_style": style}
        faults = 0
        for repeat in range(60):
            spec = {
                "run_id": f"fx.{name}.r{repeat}",
                "experiment": "fx",
                "cell_id": name,
                "repeat": repeat,
                "seed": 1,
                "agent": "synthetic",
                "model": model,
                "input_usd_per_mtok": 3.0,
                "output_usd_per_mtok": 15.0,
                "model_strength": strength,
                "config": config,
            }
            record = run_generation(spec, store, adapter_for, sandbox).record
            faults += len(json.loads(record["details"])["plan"]["faults"])
        observed[name] = faults / 60
        expected = sum(fault_probabilities(config, strength)[f] for f in MECHANIC_FAULTS)
        # 60 runs: the mean count is within a few standard errors of the model's.
        assert observed[name] == pytest.approx(expected, abs=0.5), name
    assert observed["haiku-terse"] > observed["sonnet"] > observed["opus-spec"]

"""What runs would cost before they are launched (bench status, the schedule, dry runs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench_pipeline import settings
from bench_pipeline.design import design_experiment, load_experiment
from bench_pipeline.orchestration.estimate import (
    assumed_tokens,
    estimate_cost,
    recorded_agent_runs,
    token_history,
)

STANDARD = settings.experiments_dir() / "standard.yaml"


def test_recorded_runs_price_their_model_at_the_registry_prices() -> None:
    experiment = load_experiment(STANDARD)
    design = design_experiment(experiment)
    sonnet = [
        r.run_id
        for r in design.runs
        if next(c for c in design.cells if c.cell_id == r.cell_id).config["model"]
        == "claude-sonnet-4-6"
    ]
    history = token_history(
        [
            {"model": "claude-sonnet-4-6", "input_tokens": 100_000, "output_tokens": 10_000},
            {"model": "claude-sonnet-4-6", "input_tokens": 300_000, "output_tokens": 30_000},
            {"model": "claude-sonnet-4-6", "input_tokens": None, "output_tokens": 5},  # no count
        ]
    )
    estimate = estimate_cost(design, sonnet, experiment.registry, history)
    [model] = estimate.models
    # Mean 200k in / 20k out at $3 / $15 per million: 0.60 + 0.30 per run.
    assert model.usd_per_run == pytest.approx(0.9)
    assert model.runs == len(sonnet) and estimate.usd == pytest.approx(0.9 * len(sonnet))
    assert "mean of 2 recorded runs of claude-sonnet-4-6" in model.basis
    assert estimate.cap_usd == pytest.approx(5 * len(sonnet))  # the cells' budget_usd


def test_a_launch_cap_bounds_the_estimate_and_unknown_models_borrow_other_runs() -> None:
    experiment = load_experiment(STANDARD)
    design = design_experiment(experiment)
    everything = [r.run_id for r in design.runs]
    history = token_history(
        [{"model": "claude-opus-4-6", "input_tokens": 5_000_000, "output_tokens": 400_000}]
    )
    estimate = estimate_cost(design, everything, experiment.registry, history, budget_cap_usd=2)
    assert estimate.runs == len(everything)
    assert estimate.cap_usd == pytest.approx(2 * len(everything))
    assert all(m.usd_per_run <= 2 for m in estimate.models)
    gpt = next(m for m in estimate.models if m.model == "gpt-5")
    assert gpt.basis == "mean of 1 recorded runs of other models"
    assert estimate.free_runs == len(everything)  # the standard sweep's synthetic agent
    assert "offline agent that spends nothing" in estimate.describe()


def test_estimate_tokens_from_the_environment_and_a_bad_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("BENCH_ESTIMATE_TOKENS", "1000,200")
    assert assumed_tokens() == (1000, 200)
    assert "assumed 1,000 input / 200 output" in token_history([]).tokens("x")[2]
    monkeypatch.setenv("BENCH_ESTIMATE_TOKENS", "lots")
    with pytest.raises(ValueError, match="BENCH_ESTIMATE_TOKENS='lots': expected two whole"):
        assumed_tokens()


def test_a_half_written_record_does_not_break_the_estimate(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(json.dumps({"model": "m", "input_tokens": 1}))
    (tmp_path / "b.json").write_text('{"model": ')
    assert recorded_agent_runs(str(tmp_path / "*.json")) == [{"model": "m", "input_tokens": 1}]

"""The simulated designs are the project's designs, and the truth is what was planted."""

from __future__ import annotations

import pytest

from bench_pipeline.analysis.simulate import (
    FACTORIAL_AXES,
    SCREEN_AXES,
    SWEEP_AXES,
    design_cells,
    plant_effects,
    simulate_runs,
)


def test_design_sizes() -> None:
    assert len(design_cells("one_at_a_time", SWEEP_AXES)) == 25  # 1 + 24 other levels
    assert len(design_cells("plackett_burman", SCREEN_AXES)) == 12  # pbdesign(11)
    assert len(design_cells("factorial", FACTORIAL_AXES)) == 18  # 3 x 3 x 2
    with pytest.raises(ValueError, match="two-level axes only"):
        design_cells("plackett_burman", SWEEP_AXES)


def test_frame_and_truth() -> None:
    effects = {("model", "claude-opus-4-6"): 7.0, ("tool_browser", True): -3.0}
    frame, truth = simulate_runs("one_at_a_time", effects=effects, repeats=2, noise_sd=0.0)
    assert list(frame.columns[:3]) == ["run_id", "cell_id", "repeat"]
    assert len(frame) == 50 and frame["cell_id"].nunique() == 25
    assert truth.effects[("model", "claude-opus-4-6")] == 7.0
    assert truth.effects[("tool_browser", "true")] == -3.0
    assert truth.effects[("budget_usd", "20")] == 0.0
    assert truth.baselines["budget_usd"] == "5" and truth.baselines["tool_browser"] == "false"
    # Without noise every run is exactly intercept + its planted shifts.
    opus = frame[frame["model"] == "claude-opus-4-6"]["score"]
    assert (opus == 57.0).all()


def test_planted_interaction_and_random_effects() -> None:
    combo = (("model", "gpt-5-codex"), ("language", "typescript"))
    frame, truth = simulate_runs("factorial", interactions={combo: 5.0}, noise_sd=0.0)
    both = (frame["model"] == "gpt-5-codex") & (frame["language"] == "typescript")
    assert (frame.loc[both, "score"] == 55.0).all() and (frame.loc[~both, "score"] == 50.0).all()
    assert truth.interacting_axes() == {("model", "language")}
    planted = plant_effects(SWEEP_AXES, seed=1, fraction=0.5, sizes=(4.0,), noise_sd=2.0)
    assert planted and all(abs(v) == 8.0 for v in planted.values())

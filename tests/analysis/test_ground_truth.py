"""Ground truth: simulated tables with planted effects, analysed as a user would.

Seeds are fixed, so every figure below is deterministic; the thresholds leave room of
several standard errors of a simulation count so that a harmless change of random stream
(numpy, pyDOE3) does not flip them.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from bench_pipeline.agents.synthetic.effects import NULL_AXES
from bench_pipeline.analysis import analyze, read_runs
from bench_pipeline.analysis.simulate import (
    FACTORIAL_AXES,
    SCREEN_AXES,
    SWEEP_AXES,
    plant_effects,
    simulate_runs,
    simulate_synthetic_agent,
)

BENCH = Path(sys.executable).with_name("bench")
NOISE_SD = 5.0
SWEEPS = 150  # one-at-a-time tables of 25 cells x 3 repeats
SCREENS = 100  # Plackett-Burman tables of 12 cells x 3 repeats
FACTORIALS = 60  # 3 x 3 x 2 interaction hunts x 3 repeats
SYNTHETIC = 20  # synthetic-agent sweeps of 23 cells x 20 repeats


@dataclass
class Tally:
    found: int = 0  # planted effects significant with the right sign
    planted: int = 0
    false_positives: int = 0
    nulls: int = 0
    covered_per_sim: list[tuple[int, int]] = field(default_factory=list)  # (covered, intervals)

    @property
    def coverage(self) -> float:
        covered = sum(c for c, _ in self.covered_per_sim)
        return covered / sum(n for _, n in self.covered_per_sim)

    def coverage_se(self) -> float:
        """Standard error of the coverage, by simulation: the intervals of one table share
        its baseline cell, so they are not independent and the plain binomial SE is too
        small."""
        covered = np.array([c for c, _ in self.covered_per_sim], dtype=float)
        sizes = np.array([n for _, n in self.covered_per_sim], dtype=float)
        ratio = covered.sum() / sizes.sum()
        k = len(sizes)
        spread = np.sum((covered - ratio * sizes) ** 2) / (k - 1)
        return math.sqrt(k * spread) / sizes.sum()


def _simulate(design: str, axes: dict, count: int, tally: Tally) -> None:
    for seed in range(count):
        effects = plant_effects(axes, seed=seed, fraction=0.3, sizes=(4.0,), noise_sd=NOISE_SD)
        frame, truth = simulate_runs(design, axes=axes, effects=effects, seed=seed,
                                     noise_sd=NOISE_SD)  # fmt: skip
        report = analyze(frame, "score", baselines=truth.baselines)
        assert len(report.main_effects) == len(truth.effects)
        covered = 0
        for effect in report.main_effects:
            true = truth.effects[(effect.axis, effect.level)]
            assert effect.ci_low is not None and effect.ci_high is not None
            covered += effect.ci_low <= true <= effect.ci_high
            if true:
                tally.planted += 1
                tally.found += bool(
                    effect.significant and np.sign(effect.estimate) == np.sign(true)
                )
            else:
                tally.nulls += 1
                tally.false_positives += bool(effect.significant)
        tally.covered_per_sim.append((covered, len(report.main_effects)))
        if design == "plackett_burman":
            assert report.interactions == []  # saturated screen: no pair is estimable


def test_main_effects_find_planted_effects_ignore_nulls_and_cover_the_truth() -> None:
    # One test, not three sharing a fixture: under xdist each worker would rerun the fixture.
    tally = Tally()
    _simulate("one_at_a_time", SWEEP_AXES, SWEEPS, tally)
    _simulate("plackett_burman", SCREEN_AXES, SCREENS, tally)

    # Planted effects of 4 noise SDs: ~1100 of them, so the binomial SE near the expected
    # ~95 % is 0.7 points and the 90 % floor is 7 SE away.
    assert tally.planted > 1000
    assert tally.found / tally.planted >= 0.90, tally.found / tally.planted

    # Nulls: Holm keeps the family-wise error at 5 %, so per effect it is far lower.
    assert tally.nulls > 2500
    assert tally.false_positives / tally.nulls <= 0.05, tally.false_positives / tally.nulls

    # 95 % intervals: within 3 SE of 95 % (SE by simulation, since the intervals of one table
    # share its baseline cell) and inside 93-97 % whatever that SE.
    se = tally.coverage_se()
    assert se < 0.01
    assert abs(tally.coverage - 0.95) <= max(3 * se, 0.01), (tally.coverage, se)
    assert 0.93 <= tally.coverage <= 0.97


def test_planted_interaction_is_found_and_null_interactions_stay_quiet() -> None:
    opus, terse = ("model", "claude-opus-4-6"), ("prompt_style", "terse")
    found = quiet = tested_nulls = 0
    for seed in range(FACTORIALS):
        effects = plant_effects(FACTORIAL_AXES, seed=seed, fraction=0.5, noise_sd=NOISE_SD)
        frame, truth = simulate_runs(
            "factorial", effects=effects, interactions={(opus, terse): 4 * NOISE_SD},
            seed=seed, noise_sd=NOISE_SD,
        )  # fmt: skip
        report = analyze(frame, "score", baselines=truth.baselines)
        by_axes = {i.axes: i for i in report.interactions}
        assert set(by_axes) == {
            ("model", "prompt_style"), ("model", "language"), ("prompt_style", "language"),
            ("model", "prompt_style", "language"),
        }  # fmt: skip
        found += by_axes[("model", "prompt_style")].significant
        for axes, interaction in by_axes.items():
            if axes not in truth.interacting_axes():
                tested_nulls += 1
                quiet += not interaction.significant
    assert found / FACTORIALS >= 0.9
    assert quiet / tested_nulls >= 0.9


def test_synthetic_agent_planted_effects_come_out() -> None:
    strong_right = strong = terse_found = null_significant = nulls = 0
    for seed in range(SYNTHETIC):
        frame, truth = simulate_synthetic_agent(repeats=20, seed=seed)
        report = analyze(frame, "gameplay_score", baselines=truth.baselines)
        for effect in report.main_effects:
            true = truth.effects[(effect.axis, effect.level)]
            if abs(true) >= 4.0:  # opus, effort=low, terse prompt, self_test: about 1.8-6 SE
                strong += 1
                strong_right += np.sign(effect.estimate) == np.sign(true)
            if effect.axis in NULL_AXES:
                assert true == 0.0
                nulls += 1
                null_significant += bool(effect.significant)
            if (effect.axis, effect.level) == ("prompt_style", "terse"):
                terse_found += bool(effect.significant and effect.estimate < 0)
    assert strong == 4 * SYNTHETIC
    assert strong_right / strong >= 0.85
    assert terse_found / SYNTHETIC >= 0.9
    assert null_significant / nulls <= 0.05


# ----------------------------------------------------------------- through the real CLI


def _bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BENCH), *args],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_cli_json_on_a_simulated_table(tmp_path: Path, suffix: str) -> None:
    opus, terse = ("model", "claude-opus-4-6"), ("prompt_style", "terse")
    frame, truth = simulate_runs(
        "factorial", effects={opus: 20.0, ("language", "typescript"): 0.0},
        interactions={(opus, terse): 20.0}, seed=11, noise_sd=NOISE_SD,
    )  # fmt: skip
    path = tmp_path / f"runs{suffix}"
    if suffix == ".csv":
        frame.to_csv(path, index=False)
    else:
        frame.to_parquet(path)
    result = _bench("analyze", str(path), "--metric", "score", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)  # exactly one JSON object, strict
    assert data["metric"] == "score" and data["n_runs"] == len(frame)
    assert data["noise_sd"] == pytest.approx(NOISE_SD, rel=0.3)
    assert data["baselines"] == truth.baselines
    effects = {(e["axis"], e["level"]): e for e in data["main_effects"]}
    opus_effect = effects[opus]
    assert opus_effect["baseline"] == "claude-sonnet-4-6"
    assert opus_effect["significant"] is True
    assert opus_effect["ci_low"] < 20 + 20 / 3 < opus_effect["ci_high"]  # + its share of the bump
    assert effects[("language", "typescript")]["significant"] is False
    pair = next(i for i in data["interactions"] if i["axes"] == ["model", "prompt_style"])
    assert pair["significant"] is True and pair["p_adjusted"] >= pair["p_value"]
    # The CLI prints what the library computes.
    assert data == json.loads(json.dumps(analyze(read_runs(path), "score").to_dict()))

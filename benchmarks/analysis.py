"""Speed and statistical power of the effects analysis (bench_pipeline.analysis).

Prints figures; asserts nothing (the machines are shared and noisy).
    .venv/bin/python benchmarks/analysis.py [--runs 10000] [--sims 200]

1. speed: analyze() on ~10,000 simulated runs over 16 axes, median of 3, for three designs:
   the default experiment's cells (main effects + Plackett-Burman + interaction blocks), a
   one-at-a-time sweep, and a worst case of random cells (every pair and triple estimable).
2. power: detection rate of planted effects by size (in noise SDs) in a one-at-a-time sweep
   with 3 repeats per cell, with the false-positive rate of null effects and the coverage of
   the 95 % intervals.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

import numpy as np
import pandas as pd
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import TTestIndPower

from bench_pipeline import settings
from bench_pipeline.analysis import analyze
from bench_pipeline.analysis.simulate import SWEEP_AXES, plant_effects, simulate_runs
from bench_pipeline.design import design_experiment, load_experiment

NOISE_SD = 5.0
SIZES = (0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0)


def _timed(fn: Callable[[], object], repeat: int = 3) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def default_experiment_runs(n_runs: int, seed: int = 0) -> pd.DataFrame:
    """The cells of experiments/default.yaml, repeated up to `n_runs`, with a metric made of
    random additive effects plus noise."""
    experiment = load_experiment(settings.experiments_dir() / "default.yaml")
    cells = design_experiment(experiment).cells
    rng = np.random.default_rng(seed)
    shift = {
        (axis, str(level)): rng.normal(0, 5)
        for axis, spec in experiment.axes.items()
        for level in spec.levels
    }
    repeats = n_runs // len(cells) + 1
    rows = []
    for cell in cells:
        mean = 50 + sum(shift.get((a, str(v)), 0.0) for a, v in cell.config.items())
        for r in range(repeats):
            rows.append({"run_id": f"{cell.cell_id}.r{r}", "cell_id": cell.cell_id,
                         "repeat": r, **cell.config, "score": mean + rng.normal(0, NOISE_SD)})  # fmt: skip
    return pd.DataFrame(rows[:n_runs])


def speed(n_runs: int) -> None:
    tables = {
        "default experiment (51 cells)": default_experiment_runs(n_runs),
        "one-at-a-time sweep (25 cells)": simulate_runs(
            "one_at_a_time", repeats=max(1, n_runs // 25), seed=1
        ).frame,
        f"random cells (worst case, {n_runs} cells)": simulate_runs(
            "random", repeats=1, n_random=n_runs, seed=1
        ).frame,
    }
    for name, frame in tables.items():
        report = analyze(frame, "score")  # warm-up, and the counts to print
        times = _timed(lambda frame=frame: analyze(frame, "score"))
        print(
            f"analyze {len(frame)} runs x {len(report.axes)} axes, {name}: "
            f"median {statistics.median(times):.2f} s, max {max(times):.2f} s "
            f"({len(report.main_effects)} main effects, {len(report.interactions)} "
            "interactions tested)"
        )


def power_curve(sims: int) -> None:
    print(
        f"\npower: one-at-a-time sweep, 16 axes, 3 repeats per cell, noise SD {NOISE_SD:g}, "
        f"{sims} simulations per size, ~30 % of the 24 levels planted"
    )
    print(f"{'size (SD)':>9}  {'planted':>7}  {'found Holm':>10}  {'found BH':>8}  {'t test':>6}")
    nulls = false_holm = false_bh = covered = intervals = 0
    theory = TTestIndPower()
    for size in SIZES:
        planted = found_holm = found_bh = 0
        for sim in range(sims):
            seed = int(size * 1000) + sim
            effects = plant_effects(SWEEP_AXES, seed=seed, sizes=(size,), noise_sd=NOISE_SD)
            frame, truth = simulate_runs("one_at_a_time", effects=effects, seed=seed)
            report = analyze(frame, "score", baselines=truth.baselines)
            bh = multipletests([e.p_value for e in report.main_effects], method="fdr_bh")[1]
            for effect, p_bh in zip(report.main_effects, bh, strict=True):
                true = truth.effects[(effect.axis, effect.level)]
                intervals += 1
                covered += effect.ci_low <= true <= effect.ci_high
                right_sign = np.sign(effect.estimate) == np.sign(true)
                if true:
                    planted += 1
                    found_holm += bool(effect.significant and right_sign)
                    found_bh += bool(p_bh < 0.05 and right_sign)
                else:
                    nulls += 1
                    false_holm += bool(effect.significant)
                    false_bh += bool(p_bh < 0.05)
        # Unadjusted two-sample t test of 3 vs 3 runs: the ceiling without correction.
        reference = theory.power(size, 3, 0.05)
        print(
            f"{size:>9g}  {planted:>7}  {found_holm / planted:>10.1%}  "
            f"{found_bh / planted:>8.1%}  {reference:>6.1%}"
        )
    print(
        f"null effects significant: Holm {false_holm / nulls:.2%}, BH {false_bh / nulls:.2%} "
        f"(of {nulls})"
    )
    print(f"95 % interval coverage: {covered / intervals:.1%} (of {intervals} intervals)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10_000, help="runs in the speed tables")
    parser.add_argument("--sims", type=int, default=200, help="simulations per effect size")
    args = parser.parse_args()
    print(f"cpus: {os.cpu_count()}, load average: {os.getloadavg()[0]:.1f}")
    speed(args.runs)
    power_curve(args.sims)


if __name__ == "__main__":
    main()

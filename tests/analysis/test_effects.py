"""The effects analysis against statsmodels, and every kind of bad input."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy import stats
from statsmodels.stats.anova import anova_lm
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import TTestIndPower

from bench_pipeline.analysis import AnalysisInputError, analyze
from bench_pipeline.analysis.main_effects import _holm
from bench_pipeline.analysis.simulate import simulate_runs

CONTRACT_KEYS = {"metric", "n_runs", "noise_sd", "main_effects", "interactions"}
EFFECT_KEYS = {
    "axis", "level", "baseline", "estimate", "ci_low", "ci_high", "p_value", "p_adjusted",
    "significant",
}  # fmt: skip


def factorial(
    levels: dict[str, list[str]], repeats: int, seed: int, shift: dict[tuple[str, ...], float]
) -> pd.DataFrame:
    """Full factorial with repeats; `shift` adds to runs having all the given levels."""
    rng = np.random.default_rng(seed)
    rows = []
    for index, combo in enumerate(itertools.product(*levels.values())):
        config = dict(zip(levels, combo, strict=True))
        mean = 10.0 + sum(s for need, s in shift.items() if set(need) <= set(combo))
        for r in range(repeats):
            rows.append(
                {"run_id": f"r{index}.{r}", "cell_id": f"c{index}", **config,
                 "y": mean + rng.normal(0, 1.0)}
            )  # fmt: skip
    return pd.DataFrame(rows)


TABLE = factorial(
    {"a": ["a0", "a1", "a2"], "b": ["b0", "b1"], "c": ["c0", "c1"]},
    repeats=3,
    seed=1,
    shift={("a1",): 2.0, ("b1",): -1.0, ("a2", "b1"): 1.5, ("a1", "b1", "c1"): 1.0},
)


def test_main_effects_equal_the_statsmodels_formula_fit() -> None:
    report = analyze(TABLE, "y", baselines={"a": "a0", "b": "b0", "c": "c0"})
    fit = smf.ols(
        "y ~ C(a, Treatment('a0')) + C(b, Treatment('b0')) + C(c, Treatment('c0'))", TABLE
    ).fit()
    conf = fit.conf_int()
    for effect in report.main_effects:
        name = f"C({effect.axis}, Treatment('{effect.baseline}'))[T.{effect.level}]"
        assert effect.estimate == pytest.approx(fit.params[name], abs=1e-10)
        assert effect.std_error == pytest.approx(fit.bse[name], rel=1e-9)
        assert effect.ci_low == pytest.approx(conf.loc[name, 0], rel=1e-9)
        assert effect.ci_high == pytest.approx(conf.loc[name, 1], rel=1e-9)
        assert effect.p_value == pytest.approx(fit.pvalues[name], rel=1e-6)
    raw = [e.p_value for e in report.main_effects]
    holm = multipletests(raw, method="holm")[1]
    assert [e.p_adjusted for e in report.main_effects] == pytest.approx(holm)
    assert [e.significant for e in report.main_effects] == [p < 0.05 for p in holm]
    assert report.residual_df == round(fit.df_resid)


def test_pair_f_test_equals_type_ii_anova_and_compare_f_test() -> None:
    report = analyze(TABLE, "y", baselines={"a": "a0", "b": "b0", "c": "c0"})
    by_axes = {i.axes: i for i in report.interactions}
    # The highest-order term of `main + pair` is tested exactly as Type II ANOVA tests it.
    for pair in (("a", "b"), ("a", "c"), ("b", "c")):
        third = ({"a", "b", "c"} - set(pair)).pop()
        formula = f"y ~ C({pair[0]}) * C({pair[1]}) + C({third})"
        full = smf.ols(formula, TABLE).fit()
        row = anova_lm(full, typ=2).loc[f"C({pair[0]}):C({pair[1]})"]
        ours = by_axes[pair]
        assert ours.f_value == pytest.approx(row["F"], rel=1e-8)
        assert ours.p_value == pytest.approx(row["PR(>F)"], rel=1e-6)
        assert ours.df == row["df"]
        f_value, p_value, _ = full.compare_f_test(smf.ols("y ~ C(a) + C(b) + C(c)", TABLE).fit())
        assert ours.f_value == pytest.approx(f_value, rel=1e-8)
        assert ours.p_value == pytest.approx(p_value, rel=1e-6)
    triple = by_axes[("a", "b", "c")]
    row = anova_lm(smf.ols("y ~ C(a) * C(b) * C(c)", TABLE).fit(), typ=2).loc["C(a):C(b):C(c)"]
    assert (triple.order, triple.df) == (3, row["df"])
    assert triple.f_value == pytest.approx(row["F"], rel=1e-8)
    assert triple.p_value == pytest.approx(row["PR(>F)"], rel=1e-6)
    holm = multipletests([i.p_value for i in report.interactions], method="holm")[1]
    assert [i.p_adjusted for i in report.interactions] == pytest.approx(holm)


def test_holm_matches_statsmodels_and_bh_is_available() -> None:
    p = np.random.default_rng(3).random(40) ** 3
    p[5] = p[9]  # ties
    assert _holm(p) == pytest.approx(multipletests(p, method="holm")[1])
    report = analyze(TABLE, "y", correction="bh")
    raw = [e.p_value for e in report.main_effects]
    assert [e.p_adjusted for e in report.main_effects] == pytest.approx(
        multipletests(raw, method="fdr_bh")[1]
    )
    with pytest.raises(AnalysisInputError, match="correction must be 'holm' or 'bh'"):
        analyze(TABLE, "y", correction="bonferroni")


def test_noise_is_the_pooled_within_cell_sd_and_drives_power() -> None:
    report = analyze(TABLE, "y", effect_size=2.0)
    pooled = np.sqrt(TABLE.groupby("cell_id")["y"].var(ddof=1).mean())  # equal cell sizes
    assert report.noise_sd == pytest.approx(pooled)
    assert report.noise.noise_df == len(TABLE) - 12
    assert (report.noise.n_cells, report.noise.repeats_per_cell) == (12, 3)
    needed = TTestIndPower().solve_power(effect_size=2.0 / pooled, alpha=0.05, power=0.8)
    assert report.power.repeats_needed == max(2, int(np.ceil(needed)))
    detectable = TTestIndPower().solve_power(nobs1=3, alpha=0.05, power=0.8) * pooled
    assert report.power.detectable_effect == pytest.approx(detectable)
    # A large effect: the root finder fails near 2 runs, the count is still the smallest.
    large = analyze(TABLE, "y", effect_size=5.0).power.repeats_needed
    assert large is not None
    power_at = TTestIndPower().power
    assert power_at(5.0 / pooled, large, 0.05) >= 0.8
    assert large == 2 or power_at(5.0 / pooled, large - 1, 0.05) < 0.8
    for effect in report.main_effects:
        assert effect.meaningful == bool(effect.significant and abs(effect.estimate) > pooled)


def test_report_is_strict_json_with_the_contract_keys() -> None:
    data = analyze(TABLE, "y").to_dict()
    text = json.dumps(data, allow_nan=False)
    assert set(json.loads(text)) >= CONTRACT_KEYS
    assert set(data["main_effects"][0]) >= EFFECT_KEYS
    assert {"axes", "p_value", "p_adjusted", "significant"} <= set(data["interactions"][0])
    assert data["interactions"][0]["axes"] == ["a", "b"]


def test_lack_of_fit_is_reported_when_axes_interact() -> None:
    strong = factorial({"a": ["x", "y"], "b": ["u", "v"]}, 4, 2, {("y", "v"): 8.0})
    warnings = analyze(strong, "y").warnings
    assert any("lack-of-fit" in w and "interact" in w for w in warnings)


# ----------------------------------------------------------------- designs that hide things


def test_aliased_levels_are_named_and_never_estimated() -> None:
    # gpt-5-codex only ever runs under the codex harness: their effects cannot be separated.
    rows = []
    for i, (agent, model) in enumerate(
        [("claude-code", "sonnet"), ("codex", "gpt-5-codex"), ("claude-code", "opus")]
    ):
        rows += [{"cell_id": f"c{i}", "agent": agent, "model": model, "y": v} for v in (1, 2, 3)]
    report = analyze(pd.DataFrame(rows), "y")
    terms = [e.term for e in report.main_effects]
    assert "model=gpt-5-codex" not in terms
    [entry] = [n for n in report.not_estimable if n.term == "model=gpt-5-codex"]
    assert entry.reason == (
        "aliased with agent=codex: the two always change together in this design"
    )
    [codex] = [e for e in report.main_effects if e.term == "agent=codex"]
    assert codex.aliased_with == ["model=gpt-5-codex"]


def test_saturated_design_gives_estimates_without_p_values_and_lenth_pareto() -> None:
    frame, truth = simulate_runs("plackett_burman", repeats=1, seed=4,
                                 effects={("self_test", True): 30.0})  # fmt: skip
    report = analyze(frame, "score", baselines=truth.baselines)
    assert report.residual_df == 0
    assert all(e.p_value is None and e.ci_low is None for e in report.main_effects)
    assert all(e.significant is None for e in report.main_effects)
    assert any(n.reason.startswith("no residual degrees of freedom") for n in report.not_estimable)
    assert any("no residual degrees of freedom left" in w for w in report.warnings)
    # Lenth: PSE from the 11 effects, t quantile on 11/3 df.
    c = np.abs([e.estimate for e in report.main_effects])
    s0 = 1.5 * np.median(c)
    pse = 1.5 * np.median(c[c < 2.5 * s0])
    assert report.pareto_method == "lenth"
    assert report.pareto_t_crit == pytest.approx(stats.t.ppf(0.975, 11 / 3))
    top = report.pareto[0]
    assert (top.axis, top.rank) == ("self_test", 1)
    assert top.t_value == pytest.approx(top.estimate / pse)


def test_pareto_with_repeats_uses_ols_t_and_is_sorted() -> None:
    frame, truth = simulate_runs("plackett_burman", repeats=3, seed=5,
                                 effects={("plan_first", True): 10.0})  # fmt: skip
    report = analyze(frame, "score", baselines=truth.baselines)
    assert report.pareto_method == "ols"
    assert report.pareto_t_crit == pytest.approx(stats.t.ppf(0.975, report.residual_df))
    assert len(report.pareto) == 11
    abs_t = [p.abs_t for p in report.pareto]
    assert abs_t == sorted(abs_t, reverse=True)
    assert [p.rank for p in report.pareto] == list(range(1, 12))
    assert report.pareto[0].axis == "plan_first"
    # Plackett-Burman leaves every pair confounded with the main effects.
    assert report.interactions == []
    assert (
        "interactions: 55 of 55 axis pairs are not estimable (55 confounded with the main "
        "effects)" in report.warnings
    )


def test_one_at_a_time_sweep_summarizes_its_pairs_in_one_line() -> None:
    frame, truth = simulate_runs("one_at_a_time", seed=6)
    report = analyze(frame, "score", baselines=truth.baselines)
    assert len(report.axes) == 16 and len(report.main_effects) == 24
    assert report.interactions == []
    assert report.warnings == [
        "interactions: 120 of 120 axis pairs are not estimable (120 never varied together)"
    ]
    assert report.not_estimable == []


def test_few_missing_pairs_are_listed_one_by_one() -> None:
    axes = {"a": ("a0", "a1"), "b": ("b0", "b1"), "c": ("c0", "c1")}
    frame, _ = simulate_runs("one_at_a_time", axes=axes, seed=7)
    report = analyze(frame, "score")
    assert [(n.term, n.reason) for n in report.not_estimable] == [
        (
            f"{x} × {y}",
            f"never varied together: no run changes both {x} and {y} away from their baselines",
        )
        for x, y in (("a", "b"), ("a", "c"), ("b", "c"))
    ]


def test_one_run_per_cell_leaves_noise_unknown_and_says_why() -> None:
    frame = factorial({"a": ["x", "y", "z"], "b": ["u", "v", "w"]}, 1, 8, {("y",): 3.0})
    report = analyze(frame, "y")
    assert report.noise_sd is None
    assert report.noise.reason == (
        "every cell has a single run: there are no repeats to measure the noise"
    )
    assert report.power.repeats_needed is None and report.power.reason == report.noise.reason
    assert any("additive model's residual" in w for w in report.warnings)
    assert all(e.meaningful is None and e.p_value is not None for e in report.main_effects)
    # The only pair uses the last 4 df: nothing is left to test it against.
    assert [(n.term, n.reason) for n in report.not_estimable] == [
        ("a × b", "no residual degrees of freedom left")
    ]


# ----------------------------------------------------------------- bad input


def small() -> pd.DataFrame:
    return factorial({"model": ["m1", "m2"], "effort": ["low", "high"]}, 2, 9, {})


def test_missing_metric_lists_the_numeric_columns() -> None:
    frame = small().assign(cost_usd=1.0)
    with pytest.raises(
        AnalysisInputError, match=r"no column 'score'; numeric columns: y, cost_usd"
    ):
        analyze(frame, "score")


def test_metric_that_is_not_numeric_is_refused() -> None:
    with pytest.raises(AnalysisInputError, match=r"column 'model' is not numeric .*'m1'"):
        analyze(small(), "model")


def test_all_missing_metric_is_refused() -> None:
    with pytest.raises(AnalysisInputError, match=r"every value of 'y' is missing"):
        analyze(small().assign(y=np.nan), "y")


def test_some_missing_metric_values_drop_those_runs_by_name() -> None:
    frame = small()
    frame.loc[[0, 3], "y"] = np.nan
    report = analyze(frame, "y")
    assert (report.n_runs, report.n_dropped) == (6, 2)
    assert "2 of 8 runs dropped: no value for y: r0.0, r1.1" in report.warnings


def test_missing_axis_values_drop_those_runs_with_a_warning() -> None:
    frame = small()
    frame.loc[5, "effort"] = None
    report = analyze(frame, "y")
    assert report.n_dropped == 1
    assert "1 of 8 runs dropped: no value for axis effort: r2.1" in report.warnings


def test_baseline_axis_must_be_an_axis_column() -> None:
    with pytest.raises(
        AnalysisInputError, match=r"baseline axis 'tools' is not a column; axes: model, effort"
    ):
        analyze(small(), "y", baselines={"tools": "x"})
    with pytest.raises(AnalysisInputError, match=r"baseline axis 'run_id' is not an axis"):
        analyze(small(), "y", baselines={"run_id": "x"})


def test_unknown_baseline_level_lists_the_levels() -> None:
    with pytest.raises(
        AnalysisInputError,
        match=r"baseline level 'max' of axis effort does not occur; levels: low, high",
    ):
        analyze(small(), "y", baselines={"effort": "max"})


def test_baselines_default_to_the_most_frequent_level_then_file_order() -> None:
    report = analyze(small(), "y")  # balanced: the first level in file order
    assert report.baselines == {"model": "m1", "effort": "low"}
    assert analyze(small(), "y", baselines={"effort": "high"}).baselines["effort"] == "high"
    frame, _ = simulate_runs("one_at_a_time", seed=1)
    report = analyze(frame, "score", baselines={"budget_usd": 5.0, "tool_browser": False})
    assert report.baselines["budget_usd"] == "5"
    assert report.baselines["effort"] == "medium"  # most frequent in a one-at-a-time sweep


def test_single_level_axis_is_not_estimable() -> None:
    report = analyze(small().assign(language="typescript"), "y")
    assert report.axes == ["model", "effort"]
    assert ("language", "only one level (typescript) in the table") in [
        (n.term, n.reason) for n in report.not_estimable
    ]


def test_no_axis_with_two_levels_is_refused() -> None:
    frame = small().assign(model="m1", effort="low")
    with pytest.raises(
        AnalysisInputError,
        match=r"no axis has two or more levels: model \(only m1\), effort \(only low\)",
    ):
        analyze(frame, "y")


def test_axis_varying_within_a_cell_is_an_outcome_and_ignored() -> None:
    frame = small()
    frame["status"] = ["ok", "failed"] * 4
    report = analyze(frame, "y")
    assert report.axes == ["model", "effort"]
    assert any(
        w.startswith("column status varies within cell c0 (ok, failed): it is an outcome")
        for w in report.warnings
    )


def test_explicit_axes_are_used_exactly() -> None:
    frame = small().assign(note=["p", "q"] * 4)
    report = analyze(frame, "y", axes=["effort"])
    assert report.axes == ["effort"]
    with pytest.raises(AnalysisInputError, match=r"axis 'tools' is not a column"):
        analyze(frame, "y", axes=["tools"])


def test_fewer_runs_than_parameters_is_refused() -> None:
    frame = pd.DataFrame(
        {"a": ["x", "y", "z"], "b": ["u", "v", "w"], "c": ["p", "q", "r"], "y": [1.0, 2, 3]}
    )
    with pytest.raises(AnalysisInputError, match=r"3 runs for 7 parameters"):
        analyze(frame, "y")


def test_no_axis_column_is_refused() -> None:
    frame = pd.DataFrame({"run_id": ["a", "b"], "y": [1.0, 2.0], "cost": [1.0, 2.0]})
    with pytest.raises(AnalysisInputError, match="no axis columns found"):
        analyze(frame, "y")


def test_a_metric_without_any_variation_is_analysed_without_a_crash() -> None:
    """A constant outcome in a 2 x 2 factorial with repeats (e.g. a fixed duration): the
    interaction cannot be tested, and the analysis says so instead of dividing 0 by 0."""
    rows = [
        {"run_id": f"r{m}{p}{r}", "cell_id": f"c{m}{p}", "model": m, "prompt_style": p, "y": 60.0}
        for m in ("a", "b")
        for p in ("terse", "standard")
        for r in range(3)
    ]
    report = analyze(
        pd.DataFrame(rows),
        "y",
        axes=["model", "prompt_style"],
        baselines={"model": "a", "prompt_style": "standard"},
    )
    # Zero up to the least-squares fit's rounding (its size depends on the BLAS kernel of the
    # machine: 8e-15 on some, exactly 0 on others), and never called significant.
    estimates = [e.estimate for e in report.main_effects if e.estimate is not None]
    assert estimates and all(abs(e) < 1e-9 for e in estimates)
    assert not any(e.significant or e.meaningful for e in report.main_effects)
    assert not any(i.significant for i in report.interactions)

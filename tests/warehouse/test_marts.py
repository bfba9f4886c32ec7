"""The marts against pandas on the same runs: exact means, SDs, intervals, costs and ranks."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest
from scipy import special, stats

from bench_pipeline import settings
from bench_pipeline.design.axes import AXES
from bench_pipeline.warehouse.artifacts import ArtifactStore
from bench_pipeline.warehouse.build import build_warehouse
from bench_pipeline.warehouse.reference import reference_tables
from tests.warehouse.fake_runs import (
    AGENT_FAILED,
    CELL,
    GPT,
    OPUS,
    PENDING,
    SONNET,
    UNSCORED,
    expected_runs,
    write_store,
)

METRICS = ("score", "gameplay_score", "quality_score", "cost_usd", "duration_s")


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pd.DataFrame]:
    root = tmp_path_factory.mktemp("marts")
    store = ArtifactStore(root / "artifacts")
    runs = write_store(store)
    db = root / "w.duckdb"
    build_warehouse(store, db, settings.sql_models_dir())
    return db, expected_runs(runs)


def _frame(db: Path, sql: str) -> pd.DataFrame:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql).df()


def _runs_as_built(warehouse: tuple[Path, pd.DataFrame]) -> pd.DataFrame:
    """The written runs, with fct_runs' score (rounded to 2 decimals there)."""
    db, runs = warehouse
    fct = _frame(db, "select run_id, score from fct_runs")
    merged = runs.drop(columns="score").merge(fct, on="run_id", validate="one_to_one")
    # ...but it must be the half-half headline of what was written, up to that rounding.
    diff = (merged.set_index("run_id")["score"] - runs.set_index("run_id")["score"]).abs()
    assert diff.max() <= 0.005 + 1e-9
    return merged


def _bounded_interval(metric: str, mean: float, half: float) -> tuple[float, float]:
    """The reference for the marts' intervals, with scipy: the t interval taken on the logit
    scale of mean/100 (scores, 0-100) or on the log scale (cost, duration) by the delta
    method, and mapped back."""
    if math.isnan(half):
        return math.nan, math.nan
    if "score" in metric:
        p = mean / 100
        if p <= 0 or p >= 1:
            return mean, mean
        d = (half / 100) / (p * (1 - p))
        return 100 * special.expit(special.logit(p) - d), 100 * special.expit(special.logit(p) + d)
    if mean <= 0:
        return mean, mean
    return math.exp(math.log(mean) - half / mean), math.exp(math.log(mean) + half / mean)


def _expected_stats(runs: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    rows = []
    for key, group in runs.groupby(keys, sort=True):
        row = dict(zip(keys, key if isinstance(key, tuple) else (key,), strict=True))
        row["n_runs"] = len(group)
        row["n_scored"] = int(group["score"].notna().sum())
        for m in METRICS:
            values = group[m].dropna()
            n = len(values)
            mean = values.mean() if n else math.nan
            sd = values.std(ddof=1) if n > 1 else math.nan
            half = stats.t.ppf(0.975, n - 1) * sd / math.sqrt(n) if n > 1 else math.nan
            low, high = _bounded_interval(m, mean, half)
            row |= {f"{m}_mean": mean, f"{m}_sd": sd, f"{m}_ci_low": low, f"{m}_ci_high": high}
        built = group["build_ok"].dropna().astype(float)
        row["build_ok_rate"] = built.mean() if len(built) else math.nan
        score = row["score_mean"]
        row["cost_per_point"] = row["cost_usd_mean"] / score if score else math.nan
        rows.append(row)
    return pd.DataFrame(rows)


def _compare(actual: pd.DataFrame, expected: pd.DataFrame, keys: list[str]) -> None:
    actual = actual.sort_values(keys).reset_index(drop=True)
    expected = expected.sort_values(keys).reset_index(drop=True)
    assert actual[keys].to_dict("records") == expected[keys].to_dict("records")
    for col in expected.columns:
        if col in keys:
            continue
        np.testing.assert_allclose(
            actual[col].astype(float).to_numpy(),
            expected[col].astype(float).to_numpy(),
            rtol=1e-9,
            atol=1e-9,
            equal_nan=True,
            err_msg=col,
        )


def test_reference_t_table_matches_scipy() -> None:
    t = reference_tables()["ref_student_t"]
    assert t["df"].tolist() == list(range(1, 1001))
    np.testing.assert_allclose(t["t975"], stats.t.ppf(0.975, t["df"]), rtol=1e-12)
    assert t["t975"].iloc[1] == pytest.approx(4.302653, abs=1e-6)


def test_model_leaderboard_matches_pandas(warehouse: tuple[Path, pd.DataFrame]) -> None:
    db, _ = warehouse
    runs = _runs_as_built(warehouse)
    keys = ["experiment", "agent", "model"]
    expected = _expected_stats(runs, keys)
    actual = _frame(db, "select * from mart_leaderboard_models")
    _compare(actual[expected.columns], expected, keys)
    # x/sonnet: base, terse and the dropped cell (earlier designs' runs count), one pending;
    # x/opus: one run ran but has no bot evaluation yet.
    board = actual.set_index(keys)
    assert tuple(board.loc[("x", "claude-code", SONNET), ["n_runs", "n_scored"]]) == (12, 11)
    assert tuple(board.loc[("x", "claude-code", OPUS), ["n_runs", "n_scored"]]) == (4, 3)
    assert tuple(board.loc[("x", "codex", GPT), ["n_runs", "n_scored"]]) == (8, 8)


def test_model_leaderboard_ranks_by_mean_score(warehouse: tuple[Path, pd.DataFrame]) -> None:
    db, _ = warehouse
    board = _frame(db, "select experiment, model, score_mean, rank from mart_leaderboard_models")
    for _, group in board.groupby("experiment"):
        ordered = group.sort_values("score_mean", ascending=False)
        assert ordered["rank"].tolist() == list(range(1, len(group) + 1))


def test_an_interval_needs_two_values(warehouse: tuple[Path, pd.DataFrame]) -> None:
    db, _ = warehouse
    row = _frame(
        db, f"select * from mart_leaderboard_cells where cell_id = '{CELL['opus_high']}'"
    ).iloc[0]
    assert (row["n_runs"], row["n_scored"]) == (2, 1)
    assert not math.isnan(row["score_mean"])
    assert pd.isna(row["score_sd"]) and pd.isna(row["score_ci_low"])


def test_cell_leaderboard_matches_pandas(warehouse: tuple[Path, pd.DataFrame]) -> None:
    db, _ = warehouse
    runs = _runs_as_built(warehouse)
    keys = ["experiment", "cell_id"]
    expected = _expected_stats(runs, keys)
    actual = _frame(db, "select * from mart_leaderboard_cells")
    _compare(actual[expected.columns], expected, keys)
    # The cell's axes ride along, and whether it is still in the experiment's design.
    codex = actual.set_index(keys).loc[("x", CELL["codex_detailed"])]
    assert (codex["agent"], codex["model"], codex["prompt_style"]) == ("codex", GPT, "detailed")
    assert codex["label"] == "agent=codex, model=gpt-5-codex, prompt_style=detailed"
    assert actual.set_index(keys).loc[("x", CELL["dropped"]), "in_current_design"] is np.False_
    for _, group in actual.groupby("experiment"):
        ordered = group.sort_values("score_mean", ascending=False)
        assert ordered["rank"].tolist() == list(range(1, len(group) + 1))


def test_dim_cells_one_row_per_cell(warehouse: tuple[Path, pd.DataFrame]) -> None:
    db, runs = warehouse
    cells = _frame(db, "select * from dim_cells").set_index("cell_id")
    assert sorted(cells.index) == sorted(CELL.values())
    base = cells.loc[CELL["base"]]
    assert list(base["experiments"]) == ["x", "y"]
    assert list(base["designs"]) == ["interaction", "main_effects"]
    assert base["label"] == "all defaults"
    assert bool(base["in_current_design"])
    assert not bool(cells.loc[CELL["dropped"], "in_current_design"])
    assert cells.loc[CELL["dropped"], "label"] == "human_language=de"
    assert cells.loc[CELL["opus_high"], "label"] == "model=claude-opus-4-6, effort=high"
    counts = runs.groupby("cell_id").agg(
        n_runs_designed=("run_id", "size"), n_runs_scored=("score", "count")
    )
    for cell_id, row in counts.iterrows():
        assert cells.loc[cell_id, "n_runs_designed"] == row["n_runs_designed"]
        assert cells.loc[cell_id, "n_runs_scored"] == row["n_runs_scored"]
    # Every axis of the catalogue is a column, holding the config's value.
    assert set(AXES) <= set(cells.columns)
    for cell_id, row in cells.iterrows():
        config = json.loads(row["config_json"])
        for axis in AXES:
            assert row[axis] == config[axis], (cell_id, axis)


def test_cost_per_point_counts_what_unscored_runs_cost(
    warehouse: tuple[Path, pd.DataFrame],
) -> None:
    db, _ = warehouse
    runs = _runs_as_built(warehouse)
    actual = _frame(db, "select * from mart_cost_per_point").set_index(["experiment", "model"])
    for (experiment, model), group in runs.groupby(["experiment", "model"]):
        row = actual.loc[(experiment, model)]
        mean_cost = group["cost_usd"].mean()
        mean_score = group["score"].mean()
        assert row["total_cost_usd"] == pytest.approx(group["cost_usd"].sum(), rel=1e-12)
        assert row["mean_cost_usd"] == pytest.approx(mean_cost, rel=1e-12)
        assert row["score_mean"] == pytest.approx(mean_score, rel=1e-12)
        assert row["cost_per_point"] == pytest.approx(mean_cost / mean_score, rel=1e-12)
        assert row["points_per_dollar"] == pytest.approx(mean_score / mean_cost, rel=1e-12)
    # The opus run without a bot evaluation cost money and has no score.
    unscored = runs.set_index("run_id").loc[UNSCORED]
    assert math.isnan(unscored["score"]) and unscored["cost_usd"] > 0
    assert actual.loc[("x", OPUS), "unscored_cost_usd"] == pytest.approx(unscored["cost_usd"])
    # Cheapest per point first.
    x = actual.loc["x"].sort_values("rank")
    assert x["cost_per_point"].is_monotonic_increasing
    assert x["rank"].tolist() == list(range(1, len(x) + 1))


def test_special_runs_are_what_the_marts_saw(warehouse: tuple[Path, pd.DataFrame]) -> None:
    db, _ = warehouse
    fct = _frame(db, "select run_id, status, build_ok, score from fct_runs").set_index("run_id")
    assert fct.loc[PENDING, "status"] == "pending" and pd.isna(fct.loc[PENDING, "score"])
    assert fct.loc[AGENT_FAILED, "status"] == "failed"
    assert not fct.loc[AGENT_FAILED, "build_ok"]
    assert fct.loc[AGENT_FAILED, "score"] == 5.0  # gameplay 0, quality 10: scored, not NULL


def test_inconclusive_share_is_the_share_of_the_written_verdicts(
    warehouse: tuple[Path, pd.DataFrame],
) -> None:
    db, runs = warehouse
    built = _frame(db, "select run_id, inconclusive_share, renderer from fct_runs").set_index(
        "run_id"
    )
    evaluated = runs[runs["verdicts"].notna()]
    assert len(evaluated) > 10
    for run_id, verdicts in zip(evaluated["run_id"], evaluated["verdicts"], strict=True):
        share = sum(v == "INCONCLUSIVE" for v in verdicts.values()) / 16
        assert built.loc[run_id, "inconclusive_share"] == pytest.approx(share), run_id
        assert built.loc[run_id, "renderer"] == "canvas"
    # Not evaluated (pending, or the bot has not run yet): not measured, never 0.
    for run_id in (PENDING, UNSCORED):
        assert pd.isna(built.loc[run_id, "inconclusive_share"]), run_id
    assert built["inconclusive_share"].dropna().between(0, 1).all()


def _rescore(store: ArtifactStore, run_id: str, gameplay: float, quality: float) -> None:
    for stage, column, value in (
        ("bot_evaluation", "gameplay_score", gameplay),
        ("quality_metrics", "quality_score", quality),
    ):
        record = store.read_record(stage, run_id)
        assert record is not None
        store.write_record(stage, run_id, {**record, column: value})


@pytest.mark.slow
def test_intervals_of_scores_near_the_top_stay_on_the_scale(tmp_path: Path) -> None:
    """The incident: a 95 % interval reaching 104 on the 0-100 score. Seven perfect runs and
    one at 50: a t interval would reach about 108; through `bench warehouse rebuild` every
    score interval stays inside 0-100 and still holds the mean."""
    store = ArtifactStore(tmp_path / "artifacts")
    runs = write_store(store)
    gpt = runs[(runs["model"] == GPT) & runs["gameplay_score"].notna()]["run_id"].tolist()
    for i, run_id in enumerate(gpt):
        _rescore(store, run_id, 50.0 if i == 0 else 100.0, 50.0 if i == 0 else 100.0)
    db = tmp_path / "w.duckdb"
    env = {**os.environ, "BENCH_ARTIFACTS_DIR": str(store.root), "BENCH_WAREHOUSE": str(db)}
    done = subprocess.run(
        [str(Path(sys.executable).with_name("bench")), "warehouse", "rebuild"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    row = _frame(db, f"select * from mart_leaderboard_models where model = '{GPT}'").iloc[0]
    values = np.array([50.0] + [100.0] * (len(gpt) - 1))
    t_high = values.mean() + stats.t.ppf(0.975, len(values) - 1) * values.std(ddof=1) / math.sqrt(
        len(values)
    )
    assert t_high > 100  # what the plain t interval would have shown
    for metric in ("score", "gameplay_score", "quality_score"):
        low, mean, high = row[f"{metric}_ci_low"], row[f"{metric}_mean"], row[f"{metric}_ci_high"]
        assert 0 <= low <= mean <= high <= 100, metric
        assert (low, high) == pytest.approx(_bounded_interval(metric, mean, _half(values)))
    assert "logit-transformed t interval" in row["ci_method"]
    cells = _frame(db, "select score_ci_low, score_ci_high from mart_leaderboard_cells")
    assert ((cells.dropna() >= 0) & (cells.dropna() <= 100)).all().all()


def _half(values: np.ndarray) -> float:
    n = len(values)
    return float(stats.t.ppf(0.975, n - 1) * values.std(ddof=1) / math.sqrt(n))

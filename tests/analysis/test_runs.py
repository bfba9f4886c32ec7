"""Reading run tables and deciding which columns are axes (docs/interfaces.md §4)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bench_pipeline.analysis import AnalysisInputError, infer_axes, read_runs, to_level
from bench_pipeline.analysis.runs import level_codes, normalize_baseline


def test_levels_are_spelled_like_an_experiment_file() -> None:
    assert to_level(True) == "true"
    assert to_level(np.bool_(False)) == "false"
    assert to_level(5.0) == "5"
    assert to_level(np.int64(20)) == "20"
    assert to_level(0.5) == "0.5"
    assert to_level("claude-opus-4-6") == "claude-opus-4-6"
    assert to_level(float("nan")) is None
    assert to_level(None) is None
    assert to_level("  ") is None


def test_level_codes_merge_spellings_and_keep_file_order() -> None:
    codes, levels = level_codes(pd.Series([5.0, 20, 5, None, 1], dtype=object))
    assert levels == ["5", "20", "1"]
    assert codes.tolist() == [0, 1, 0, -1, 2]


def test_baselines_given_as_text_or_native_values_are_normalized() -> None:
    assert normalize_baseline(True, ["false", "true"]) == "true"
    assert normalize_baseline("True", ["false", "true"]) == "true"
    assert normalize_baseline("5.0", ["5", "20"]) == "5"
    assert normalize_baseline(5, ["5", "20"]) == "5"
    assert normalize_baseline("terse", ["standard", "terse"]) == "terse"


def test_csv_columns_become_numbers_only_when_every_value_parses(tmp_path: Path) -> None:
    path = tmp_path / "runs.csv"
    path.write_text(
        "run_id,cell_id,code,budget_usd,tool_browser,score,note\n"
        "r1,c1,007,5,true,80.5,\n"
        "r2,c2,x12,20,false,,ok\n"
        "r3,c3,007,,True,70,\n"
    )
    frame = read_runs(path)
    assert frame["code"].tolist() == ["007", "x12", "007"]  # text axis keeps its spelling
    assert pd.api.types.is_numeric_dtype(frame["budget_usd"])
    assert pd.api.types.is_bool_dtype(frame["tool_browser"])
    assert frame["tool_browser"].tolist() == [True, False, True]
    assert np.isnan(frame["score"][1])
    # A numeric column with a gap is float, yet its levels read "5", not "5.0".
    assert level_codes(frame["budget_usd"])[1] == ["5", "20"]


def test_parquet_is_read_by_suffix(tmp_path: Path) -> None:
    frame = pd.DataFrame({"run_id": ["a", "b"], "model": ["x", "y"], "score": [1.0, 2.0]})
    frame.to_parquet(tmp_path / "runs.parquet")
    assert read_runs(tmp_path / "runs.parquet").equals(frame)


def test_unknown_suffix_and_missing_file_are_refused(tmp_path: Path) -> None:
    (tmp_path / "runs.txt").write_text("a,b\n")
    with pytest.raises(AnalysisInputError, match=r"unsupported file type '\.txt'"):
        read_runs(tmp_path / "runs.txt")
    with pytest.raises(AnalysisInputError, match="file not found"):
        read_runs(tmp_path / "nope.csv")


def test_unreadable_parquet_is_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / "runs.parquet").write_text("not parquet")
    with pytest.raises(AnalysisInputError, match="cannot read the file"):
        read_runs(tmp_path / "runs.parquet")


def test_axes_are_the_columns_that_are_neither_ids_nor_numeric_metrics() -> None:
    frame = pd.DataFrame(
        {
            "run_id": ["a"],
            "cell_id": ["c"],
            "experiment": ["e"],
            "repeat": [0],
            "seed": [1],
            "sandbox_id": ["s"],
            "model": ["m"],
            "tool_browser": [True],
            "budget_usd": [5],  # numeric, but an axis of the catalogue
            "cost_usd": [0.3],  # numeric: a metric
            "score": [80.0],
        }
    )
    assert infer_axes(frame, "score") == ["model", "tool_browser", "budget_usd"]

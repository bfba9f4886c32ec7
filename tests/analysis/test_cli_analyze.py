"""`bench analyze` in-process (typer's runner): the readable report and bad input.

The real subprocess, with CSV and Parquet, runs in test_ground_truth.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from bench_pipeline.analysis.simulate import simulate_runs
from bench_pipeline.cli import app

OPUS = ("model", "claude-opus-4-6")


@pytest.fixture(scope="module")
def runs_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    frame, _ = simulate_runs(
        "factorial", effects={OPUS: 20.0}, interactions={(OPUS, ("prompt_style", "terse")): 20.0},
        seed=3,
    )  # fmt: skip
    path = tmp_path_factory.mktemp("analyze") / "runs.csv"
    frame.to_csv(path, index=False)
    return path


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["analyze", *args], env={"COLUMNS": "200"})
    return result.exit_code, result.stdout, result.stderr


def test_text_report_reads_as_sentences(runs_csv: Path) -> None:
    code, out, _ = invoke(str(runs_csv), "--metric", "score")
    assert code == 0
    assert "score: 54 runs in 18 cells (0 dropped), 3 axes" in out
    assert "noise: SD " in out and "power: to detect ±5.00" in out
    line = next(x for x in out.splitlines() if "model = claude-opus-4-6" in x)
    assert line.strip().startswith("model = claude-opus-4-6 vs claude-sonnet-4-6: +")
    assert line.endswith("— significant, larger than the noise")
    assert "model × prompt_style: F(4, 44) = " in out
    assert "lack-of-fit" in out


def test_options_reach_the_analysis(runs_csv: Path) -> None:
    code, out, _ = invoke(
        str(runs_csv), "--metric", "score", "--json", "--baseline", "model=gpt-5-codex",
        "--axis", "model", "--axis", "language", "--correction", "bh", "--effect-size", "10",
    )  # fmt: skip
    assert code == 0
    data = json.loads(out)
    assert data["axes"] == ["model", "language"]
    assert data["baselines"] == {"model": "gpt-5-codex", "language": "javascript"}
    assert data["correction"] == "bh"
    assert data["power"]["effect_size"] == 10


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--metric", "nope"], "no column 'nope'; numeric columns: score"),
        (["--metric", "score", "--baseline", "model"], "--baseline 'model': expected AXIS=LEVEL"),
        (
            ["--metric", "score", "--baseline", "model=gpt-6"],
            "baseline level 'gpt-6' of axis model does not occur; levels: claude-sonnet-4-6, "
            "claude-opus-4-6, gpt-5-codex",
        ),
        (["--metric", "score", "--baseline", "tools=x"], "baseline axis 'tools' is not a column"),
        (["--metric", "score", "--correction", "bonferroni"], "correction must be 'holm' or 'bh'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(runs_csv: Path, args: list[str], message: str) -> None:
    code, out, err = invoke(str(runs_csv), *args)
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert message in err
    # Problems with the table name the file first, as docs/interfaces.md §4 callers expect.
    if not message.startswith("--baseline"):
        assert err.startswith(f"error: {runs_csv}: {message}")


def test_unreadable_files_are_bad_input(tmp_path: Path) -> None:
    (tmp_path / "runs.json").write_text("{}")
    code, _, err = invoke(str(tmp_path / "runs.json"), "--metric", "score")
    assert code == 2 and f"{tmp_path / 'runs.json'}: unsupported file type '.json'" in err
    code, _, err = invoke(str(tmp_path / "missing.csv"), "--metric", "score")
    assert code == 2 and "missing.csv: file not found" in err
    pd.DataFrame({"model": ["a", "b"], "score": [None, None]}).to_csv(tmp_path / "e.csv")
    code, _, err = invoke(str(tmp_path / "e.csv"), "--metric", "score")
    assert code == 2 and "every value of 'score' is missing" in err


def test_saturated_screen_prints_the_lenth_view(tmp_path: Path) -> None:
    frame, truth = simulate_runs("plackett_burman", repeats=1, seed=4,
                                 effects={("self_test", True): 30.0})  # fmt: skip
    frame.to_csv(tmp_path / "pb.csv", index=False)
    baselines = [f"--baseline={a}={lv}" for a, lv in truth.baselines.items()]
    code, out, _ = invoke(str(tmp_path / "pb.csv"), "--metric", "score", *baselines)
    assert code == 0
    assert "screening (two-level axes by |t| on Lenth's pseudo standard error" in out
    assert "self_test = true vs false: +" in out
    assert "(no interval or p-value: no residual degrees of freedom)" in out

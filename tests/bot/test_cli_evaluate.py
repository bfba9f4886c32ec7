"""`bench evaluate` as other tools call it (docs/interfaces.md §2)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench_pipeline.bot import TEST_IDS
from bench_pipeline.bot.serve import TargetError, entry_point

BENCH = Path(sys.executable).with_name("bench")
GAMES = Path(__file__).parent / "games"


def bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BENCH), *args], capture_output=True, text=True, timeout=180, check=False
    )


@pytest.mark.parametrize("target", ["/no/such/game", "https://example.com/tetris"])
def test_a_target_the_bot_cannot_run_exits_non_zero_with_one_line(target: str) -> None:
    result = bench("evaluate", target, "--json")
    assert result.returncode != 0
    assert result.stdout == ""
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "error" in lines[0]


def test_entry_points_in_contract_order(tmp_path: Path) -> None:
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "index.html").write_text("<p>build</p>")
    assert entry_point(tmp_path) == tmp_path / "build"
    (tmp_path / "dist").mkdir()
    (tmp_path / "dist" / "index.html").write_text("<p>dist</p>")
    assert entry_point(tmp_path) == tmp_path / "dist"
    (tmp_path / "index.html").write_text("<p>root</p>")
    assert entry_point(tmp_path) == tmp_path
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(TargetError, match=r"no index\.html"):
        entry_point(empty)


@pytest.mark.slow
def test_json_output_is_one_object_with_the_contract_keys(tmp_path: Path) -> None:
    # A project whose page is only in dist/: the bot finds it by itself.
    shutil.copytree(GAMES / "canvas-basic", tmp_path / "game" / "dist")
    evidence = tmp_path / "evidence"
    result = bench(
        "evaluate",
        str(tmp_path / "game"),
        "--json",
        "--artifacts",
        str(evidence),
        "--endurance-seconds",
        "5",
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)  # exactly one object: anything else would not parse
    assert {"target", "bot_version", "calibration", "tests", "gameplay_score", "duration_s"} <= set(
        data
    )
    assert set(data["tests"]) == set(TEST_IDS)
    assert set(data["calibration"]) >= {"renderer", "grid", "start", "controls", "score_source"}
    assert set(data["calibration"]["controls"]) == {"left", "right", "down", "rotate", "hard_drop"}
    passed = sum(v == "PASS" for v in data["tests"].values())
    assert data["gameplay_score"] == pytest.approx(100 * passed / 16)
    for name in ("evaluation.json", "observations.json", "console.txt", "01-loaded.png"):
        assert (evidence / name).is_file(), name
    events = json.loads((evidence / "observations.json").read_text())
    assert events["frames"] and len(events["frames"][0]["grid"]) == 20
    assert events["evidence"]["starts"][0][1] == "pass"  # the probes' episodes, per test


@pytest.mark.parametrize(
    ("args", "env", "named"),
    [
        (["evaluate", "/tmp", "--hard-cap-seconds", "5"], {}, "--hard-cap-seconds"),
        (["evaluate", "/tmp"], {"BENCH_BOT_HARD_CAP_S": "abc"}, "BENCH_BOT_HARD_CAP_S"),
        (["run", "/no/such.yaml"], {"BENCH_BOT_HARD_CAP_S": "9999"}, "BENCH_BOT_HARD_CAP_S"),
    ],
)
def test_a_bad_hard_cap_is_one_line_exit_2(
    args: list[str], env: dict[str, str], named: str, tmp_path: Path
) -> None:
    result = subprocess.run(
        [str(BENCH), *args],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        env={**os.environ, "DAGSTER_HOME": str(tmp_path), "BENCH_DATA_DIR": str(tmp_path), **env},
    )
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and named in lines[0], result.stderr

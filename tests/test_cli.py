"""The `bench` command as a user runs it: a real subprocess of the installed entry point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench_pipeline import settings

BENCH = Path(sys.executable).with_name("bench")
EXPERIMENTS = settings.experiments_dir()
BAD = settings.project_root() / "tests" / "design" / "bad"


def bench(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BENCH), *args],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
        timeout=120,
        check=False,
    )


def test_help_lists_every_command() -> None:
    result = bench("--help")
    assert result.returncode == 0
    for command in ("design", "sql", "ui", "run", "evaluate", "quality"):
        assert command in result.stdout


def test_sql_help_names_the_warehouse(tmp_path: Path) -> None:
    result = bench("sql", "--help", env={"BENCH_DATA_DIR": str(tmp_path)})
    assert str(tmp_path / "warehouse.duckdb") in result.stdout.replace("\n", "").replace(
        " ", ""
    ) or ("warehouse.duckdb" in result.stdout)


def test_design_json_is_the_contract() -> None:
    result = bench("design", str(EXPERIMENTS / "default.yaml"), "--json")
    assert result.returncode == 0, result.stderr
    design = json.loads(result.stdout)
    assert set(design) >= {"experiment", "cells", "runs"}
    cell = design["cells"][0]
    assert set(cell) >= {"cell_id", "designs", "config"}
    assert len(cell["config"]) == 16
    assert set(design["runs"][0]) >= {"run_id", "cell_id", "repeat"}
    # Designing twice gives the same ids.
    again = json.loads(bench("design", str(EXPERIMENTS / "default.yaml"), "--json").stdout)
    assert [c["cell_id"] for c in again["cells"]] == [c["cell_id"] for c in design["cells"]]


def test_design_of_a_relative_path_finds_the_registry_beside_it() -> None:
    # As the README says to run it, from the repo root with a relative path: the registry
    # beside the file must not be looked up at experiments/experiments/models.yaml.
    result = subprocess.run(
        [str(BENCH), "design", "experiments/demo.yaml", "--json"],
        capture_output=True,
        text=True,
        cwd=settings.project_root(),
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["experiment"] == "demo"


def test_design_table_is_readable() -> None:
    result = bench("design", str(EXPERIMENTS / "smoke.yaml"))
    assert result.returncode == 0, result.stderr
    assert "cell_id" in result.stdout and "cells per design" in result.stdout


@pytest.mark.parametrize("bad_file", sorted(BAD.glob("*.yaml")), ids=lambda p: p.stem)
def test_bad_files_exit_2_with_one_message(bad_file: Path, tmp_path: Path) -> None:
    result = bench("design", str(bad_file), "--json", env={"BENCH_DATA_DIR": str(tmp_path)})
    assert result.returncode == 2
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    message = " ".join(result.stderr.split())
    assert message.startswith("error: ") and message.count("error:") == 1
    # The file at fault is named: the experiment, or the model registry it points to.
    assert bad_file.name in message or "registry" in bad_file.name
    assert not list(tmp_path.iterdir()), "a refused file must write nothing"


def test_missing_file_is_refused_like_a_bad_one() -> None:
    result = bench("design", "no/such/file.yaml")
    assert result.returncode == 2
    assert "file.yaml" in result.stderr and "Traceback" not in result.stderr


def test_sql_json_and_read_only(tmp_path: Path) -> None:
    import duckdb

    db = tmp_path / "w.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("create table t as select 1 as a, 'x' as b, date '2026-01-02' as d")
    result = bench("sql", "select * from t", "--json", "--db", str(db))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [{"a": 1, "b": "x", "d": "2026-01-02"}]
    refused = bench("sql", "drop table t", "--db", str(db))
    assert refused.returncode == 2 and "read-only" in refused.stderr
    missing = bench("sql", "select 1", "--db", str(tmp_path / "none.duckdb"))
    assert missing.returncode == 1 and "make run" in missing.stderr


def test_error_messages_keep_their_brackets(tmp_path: Path) -> None:
    bad = tmp_path / "baseline.yaml"
    bad.write_text(
        "name: x\naxes: {effort: {levels: [low, high], baseline: medium}}\n"
        "designs: [{type: main_effects}]\n"
    )
    result = bench("design", str(bad))
    assert result.returncode == 2
    assert "axes.effort.baseline" in result.stderr and "[low, high]" in result.stderr


def _saved_log(folder: Path, detail: str) -> Path:
    """An observation log as an evaluation saves it: a game that started and whose left
    key moved the piece, and nothing else."""
    from bench_pipeline.bot.observations import FieldSeen, ObservationLog, PlayFacts

    log = ObservationLog(t0=0.0, loaded=True, target="game/", bot_version="0.0-test")
    log.field_seen = FieldSeen("canvas", 0, 0, 300, 600, 10, 20, "canvas #c")
    log.facts = PlayFacts(start_mechanism="auto", started_at=1.0)
    log.evidence.add(1.0, "starts", "pass", "first piece")
    log.evidence.add(2.0, "move_left", "pass", detail, {"key": "ArrowLeft", "since": 1.9})
    folder.mkdir(parents=True)
    log.write(folder / "observations.json")
    return folder / "observations.json"


def test_rejudge_derives_the_verdicts_again_from_saved_logs(tmp_path: Path) -> None:
    _saved_log(tmp_path / "runs" / "a", "'ArrowLeft' moved the piece -1 column(s)")
    _saved_log(tmp_path / "runs" / "b", "moved")
    result = bench("rejudge", str(tmp_path / "runs"), "--json")
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(lines) == 2
    for data in lines:
        assert data["tests"]["loads"] == "PASS" and data["tests"]["move_left"] == "PASS"
        assert data["tests"]["move_right"] == "INCONCLUSIVE"
        assert data["observed_by"] == "0.0-test" and data["calibration"]["start"] == "auto"
    one = bench("rejudge", str(tmp_path / "runs" / "a" / "observations.json"))
    assert one.returncode == 0 and "move_left" in one.stdout


def test_rejudge_names_a_file_that_is_no_log_and_judges_the_rest(tmp_path: Path) -> None:
    _saved_log(tmp_path / "a", "moved")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "observations.json").write_text('{"format": 99}')
    result = bench("rejudge", str(tmp_path), "--json")
    assert result.returncode == 2
    assert len(result.stdout.splitlines()) == 1
    assert (
        "b/observations.json" in result.stderr and "not a readable observation log" in result.stderr
    )
    missing = bench("rejudge", str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and "no such file or folder" in missing.stderr


@pytest.mark.slow
def test_status_on_a_fresh_instance_launches_nothing_and_prices_the_standard_sweep(
    tmp_path: Path,
) -> None:
    home = tmp_path / "dagster_home"
    env = {"DAGSTER_HOME": str(home), "BENCH_DATA_DIR": str(tmp_path / "data")}
    result = bench("status", "--json", env=env)
    assert result.returncode == 0, result.stderr
    outlook = json.loads(result.stdout)
    schedule, sensor = outlook["schedule"], outlook["automation_sensor"]
    assert schedule["name"] == "new_model_backfill_schedule"
    assert schedule["would_launch_runs"] == 0
    assert "nobody has swept standard" in schedule["next_tick"]
    assert schedule["estimate"]["runs"] == 18 and schedule["estimate"]["usd"] > 0
    assert sensor["runs_agents"] is False and "bot_evaluation" in sensor["may_recompute"]
    text = bench("status", env=env)
    assert text.returncode == 0 and "launches nothing" in text.stdout
    pools = bench("pools", env=env)
    assert "automation: new_model_backfill_schedule" in pools.stdout
    # A bad token assumption costs the estimate, not the decision, and says why.
    bad = bench("status", "--json", env={**env, "BENCH_ESTIMATE_TOKENS": "lots"})
    assert bad.returncode == 0, bad.stderr
    broken = json.loads(bad.stdout)["schedule"]
    assert broken["would_launch_runs"] == 0 and broken["estimate"] is None
    assert "BENCH_ESTIMATE_TOKENS='lots'" in broken["estimate_error"]


def test_a_dagster_home_without_dagster_yaml_gets_the_projects_in_one_line(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    env = {"DAGSTER_HOME": str(home), "BENCH_DATA_DIR": str(tmp_path / "data")}
    result = bench("pools", env=env)
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "had no dagster.yaml: using the project's settings" in lines[0]
    # Dagster's own warning (printed by every process it starts) does not appear.
    assert "No dagster instance configuration file" not in result.stderr + result.stdout
    project = settings.project_root() / "dagster_home" / "dagster.yaml"
    assert (home / "dagster.yaml").read_text() == project.read_text()
    again = bench("pools", env=env)
    assert "dagster.yaml" not in again.stderr


def test_loading_the_definitions_warns_about_no_deliberate_choice() -> None:
    result = subprocess.run(
        [sys.executable, "-W", "error::Warning", "-c", "import bench_pipeline.definitions"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Warning" not in result.stderr

"""`bench quality DIR [--json]` as a user runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench_pipeline.quality import CONTRACT_KEYS
from tests.quality.conftest import make_game

BENCH = Path(sys.executable).with_name("bench")


def bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BENCH), *args],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
        timeout=300,
        check=False,
    )


def test_missing_directory_exits_2_with_one_line(tmp_path: Path) -> None:
    result = bench("quality", str(tmp_path / "nope"), "--json")
    assert result.returncode == 2
    assert result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1
    assert "not a directory" in result.stderr


@pytest.mark.slow
def test_json_is_one_object_with_the_contract_keys(tmp_path: Path) -> None:
    project = make_game(tmp_path, "typescript", ("type_errors",))
    result = bench("quality", str(project), "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)  # exactly one JSON document on stdout
    assert {"quality_score", "unavailable", *CONTRACT_KEYS} <= set(data)
    assert data["ts_compiles"] is False
    assert data["build_ok"] is False  # the project's own tsc build fails on the type errors
    assert isinstance(data["unavailable"], dict)
    assert 0 <= data["quality_score"] < 100


@pytest.mark.slow
def test_table_output(tmp_path: Path) -> None:
    project = make_game(tmp_path, "javascript")
    result = bench("quality", str(project))
    assert result.returncode == 0, result.stderr
    assert "quality score" in result.stdout
    assert "eslint_errors" in result.stdout

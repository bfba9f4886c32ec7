"""`bench report` and `python -m bench_pipeline.report`: options, help, exit codes, output."""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from bench_pipeline.cli import app
from bench_pipeline.report import report_command
from tests.report.conftest import Site

OPTIONS = ("--out", "--db", "--artifacts", "--title", "--page-size", "--archive-max-mb")


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["report", *args], env={"COLUMNS": "200"}, prog_name="bench")
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_lists_every_option(flag: str) -> None:
    code, out, _ = invoke(flag)
    assert code == 0
    assert "Build the static results site" in out and "docs/report.md" in out
    for option in OPTIONS:
        assert re.search(rf"{option}\s", out), option


def test_defaults_are_the_sites() -> None:
    """bench_pipeline/cli.py spells the defaults out so `bench` need not import the report
    package; they must stay those of report_command (bench_pipeline.report.site's)."""
    command = typer.main.get_command(app).commands["report"]  # type: ignore[attr-defined]
    declared = {p.name: p.default for p in command.params if p.name != "help"}
    expected = {
        name: param.default
        for name, param in inspect.signature(report_command).parameters.items()
        if name != "out"
    }
    assert declared.pop("site_dir") is None and declared == expected


def test_bench_report_builds_the_site(site: Site, tmp_path: Path) -> None:
    out = tmp_path / "s"
    code, stdout, _ = invoke(
        "--out", str(out), "--db", str(site.fake.db), "--artifacts", str(site.fake.artifacts),
        "--title", "Tetris bench", "--page-size", "500", "--archive-max-mb", "0",
    )  # fmt: skip
    lines = stdout.splitlines()
    assert code == 0
    assert re.match(rf"report: \d+ pages, {site.summary.runs} runs, 8 models, ", lines[0])
    assert lines[-1] == f"open: {out / 'index.html'}"
    assert "Tetris bench" in (out / "index.html").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "args",
    [
        [],  # --out is required
        ["--out", "s", "--page-size", "many"],
        ["--out", "s", "--bogus"],
        ["--out", "s", "extra"],
    ],
)
def test_usage_errors_exit_2(args: list[str]) -> None:
    code, stdout, stderr = invoke(*args)
    assert code == 2 and stdout == ""
    assert "Usage: bench report [OPTIONS]" in stderr


def test_bad_values_are_one_line_and_exit_2(tmp_path: Path) -> None:
    code, _, stderr = invoke("--out", str(tmp_path / "s"), "--page-size", "0")
    assert code == 2 and stderr == "error: --page-size must be at least 1\n"
    code, _, stderr = invoke("--out", str(tmp_path / "s"), "--db", str(tmp_path / "no.duckdb"))
    assert code == 2 and stderr.startswith("error: no warehouse at ") and stderr.count("\n") == 1
    assert not (tmp_path / "s").exists()


def test_python_m_runs_the_same_command(tmp_path: Path) -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "bench_pipeline.report", *args],
            capture_output=True,
            text=True,
            env={**os.environ, "COLUMNS": "200"},
            timeout=120,
            check=False,
        )

    shown = run("--help")
    assert shown.returncode == 0 and shown.stdout == invoke("--help")[1]
    failed = run("--out", str(tmp_path / "s"), "--db", str(tmp_path / "no.duckdb"))
    assert failed.returncode == 2 and failed.stdout == ""
    assert failed.stderr.startswith("error: no warehouse at ") and failed.stderr.count("\n") == 1

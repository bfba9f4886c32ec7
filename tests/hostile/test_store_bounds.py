"""Bounded inputs through the public commands (issue 32, item 8): a design that would list a
billion runs or millions of cells, a YAML nested thousands deep, and (below) the warehouse's
loader and `bench sql`. Each is refused with one line naming what is wrong, and nothing
grows while it is refused."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench_pipeline import settings

BENCH = Path(sys.executable).with_name("bench")
MODELS = settings.project_root() / "tests" / "design" / "fixtures" / "models.yaml"


def bench(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BENCH), *args],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
        timeout=300,
        check=False,
    )


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, (result.returncode, result.stderr[-2000:])
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr[-2000:]
    assert lines[0].startswith("error: ")
    return lines[0]


def _experiment(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "hostile.yaml"
    path.write_text(f"name: hostile\nmodels_file: {MODELS}\n{body}")
    return path


def test_a_billion_repeats_is_one_line_naming_the_key(tmp_path: Path) -> None:
    path = _experiment(
        tmp_path,
        "repeats: 1000000000\naxes:\n  effort: {levels: [low, high], baseline: low}\n"
        "designs:\n  - type: main_effects\n",
    )
    line = one_error_line(bench("design", str(path), "--json"))
    assert "hostile.yaml" in line and "repeats" in line and "at most 1000" in line


def test_cells_times_repeats_has_an_upper_bound(tmp_path: Path) -> None:
    # 1000 repeats are allowed, but 2 cells x ... is fine; 101+ cells x 1000 is not.
    levels = ", ".join(str(n) for n in range(1, 202))
    path = _experiment(
        tmp_path,
        f"repeats: 1000\naxes:\n  max_turns: {{levels: [{levels}], baseline: 1}}\n"
        "designs:\n  - type: main_effects\n",
    )
    line = one_error_line(bench("design", str(path), "--json"))
    assert "hostile.yaml" in line and "201 cells x 1000 repeats" in line and "100000" in line


def test_an_interaction_of_millions_of_cells_is_refused_before_it_is_listed(
    tmp_path: Path,
) -> None:
    many = ", ".join(str(n) for n in range(1, 301))
    path = _experiment(
        tmp_path,
        "axes:\n"
        f"  max_turns: {{levels: [{many}], baseline: 1}}\n"
        f"  time_limit_min: {{levels: [{many}], baseline: 1}}\n"
        f"  budget_usd: {{levels: [{many}], baseline: 1}}\n"
        "designs:\n  - type: interaction\n    axes: [max_turns, time_limit_min, budget_usd]\n",
    )
    line = one_error_line(bench("design", str(path), "--json"))
    assert "hostile.yaml" in line and "designs[0]" in line
    assert "27000000 cells" in line and "at most 5000 per design" in line


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("lists", "name: deep\naxes: " + "[" * 5000 + "]" * 5000 + "\n"),
        ("mappings", "name: deep\naxes: " + "{a: " * 5000 + "1" + "}" * 5000 + "\n"),
    ],
)
def test_a_5000_deep_yaml_is_one_line_naming_the_file(name: str, text: str, tmp_path: Path) -> None:
    path = tmp_path / f"deep-{name}.yaml"
    path.write_text(text)
    line = one_error_line(bench("design", str(path)))
    assert f"deep-{name}.yaml" in line and "nested too deeply" in line
    assert "maximum recursion depth" not in line

"""The wheel installs `bench_pipeline` only: `assets` and `resources` are folders of the
checkout, and an install must not claim such common names in site-packages."""

from __future__ import annotations

import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from bench_pipeline import settings


@pytest.mark.slow
def test_the_wheel_holds_bench_pipeline_and_nothing_named_assets_or_resources(
    tmp_path: Path,
) -> None:
    uv = [shutil.which("uv") or "uv"]
    if shutil.which("uv") is None:  # where scripts/setup.sh installs it with pip
        uv = ["python3", "-m", "uv"]
        if subprocess.run([*uv, "--version"], capture_output=True).returncode != 0:
            pytest.skip("no uv (make setup installs it)")
    subprocess.run(
        [*uv, "build", "--wheel", "--out-dir", str(tmp_path), str(settings.project_root())],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = tmp_path.glob("*.whl")
    tops = {name.split("/")[0] for name in zipfile.ZipFile(wheel).namelist()}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"bench_pipeline"}
    assert "bench_pipeline/definitions.py" in zipfile.ZipFile(wheel).namelist()


def _compiled_share(sources: list[Path]) -> float:
    """The share of `sources` whose .pyc (for this interpreter) exists beside them."""
    import importlib.util

    compiled = sum(Path(importlib.util.cache_from_source(str(s))).exists() for s in sources)
    return compiled / len(sources)


def test_setup_installed_bytecode_for_the_environment_and_the_project() -> None:
    """`make setup` compiles the environment and the project: with PYTHONDONTWRITEBYTECODE
    set (as on these machines), a process would otherwise compile every import from source
    (benchmarks/bytecode.py measures what that costs)."""
    import dagster
    import duckdb

    root = settings.project_root()
    for package in (dagster, duckdb):
        sources = sorted(Path(package.__file__).parent.rglob("*.py"))[:200]
        assert sources and _compiled_share(sources) > 0.95, package.__name__
    # The project's own modules, which uv's editable install leaves to compileall. A module
    # edited since the last `make setup` may lack a fresh .pyc; a missing one means setup
    # never compiled the checkout.
    for folder in ("bench_pipeline", "assets", "resources"):
        assert _compiled_share(sorted((root / folder).rglob("*.py"))) > 0.95, folder

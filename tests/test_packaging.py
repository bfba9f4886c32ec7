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

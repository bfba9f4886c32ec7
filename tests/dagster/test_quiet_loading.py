"""Loading the definitions prints nothing to a user for the project's deliberate choices
(the beta BackfillPolicy): `bench ui`, `bench run` and every run worker load them."""

from __future__ import annotations

import subprocess
import sys


def test_loading_the_definitions_prints_no_warning() -> None:
    done = subprocess.run(
        [sys.executable, "-W", "default", "-c", "import bench_pipeline.definitions"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "Warning" not in done.stderr, done.stderr

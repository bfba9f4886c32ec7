"""The results_site asset and `bench report`: built from a real warehouse of stored runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import dagster as dg

from assets.effects_analysis import effects_analysis
from assets.results_site import results_site
from assets.warehouse import warehouse
from bench_pipeline.warehouse.artifacts import ArtifactStore
from tests.dagster.test_warehouse_assets import fill_store

BENCH = Path(sys.executable).with_name("bench")


def test_results_site_is_built_after_the_marts(
    instance: dg.DagsterInstance, store: ArtifactStore, resources: dict, data_dir: Path
) -> None:
    runs = fill_store(store)
    result = dg.materialize(
        [warehouse, effects_analysis, results_site],
        instance=instance,
        resources=resources,
    )
    assert result.success
    [event] = [
        e for e in result.get_asset_materialization_events() if e.asset_key == results_site.key
    ]
    metadata = {k: v.value for k, v in event.materialization.metadata.items()}
    assert metadata["runs"] == runs and metadata["pages"] > runs  # a page per run, and more
    index = Path(str(metadata["index"]))
    assert index == data_dir / "site" / "index.html" and index.is_file()
    assert "claude-sonnet-4-6" in index.read_text()


def test_bench_report_writes_the_site_and_refuses_a_missing_warehouse(
    store: ArtifactStore, resources: dict, instance: dg.DagsterInstance, tmp_path: Path
) -> None:
    missing = subprocess.run(
        [str(BENCH), "report", "--out", str(tmp_path / "x"), "--db", str(tmp_path / "no.duckdb")],
        capture_output=True,
        text=True,
    )
    assert missing.returncode == 2
    assert missing.stderr.startswith("error:") and "Traceback" not in missing.stderr

    fill_store(store)
    dg.materialize([warehouse, effects_analysis], instance=instance, resources=resources)
    db = resources["warehouse"].db_path()
    built = subprocess.run(
        [
            str(BENCH),
            "report",
            "--out",
            str(tmp_path / "site"),
            "--db",
            str(db),
            "--artifacts",
            str(store.root),
        ],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr
    assert (tmp_path / "site" / "methodology.html").is_file()

"""The quality stage's record: a tool's NaN never reaches it, a failure still leaves one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench_pipeline.agents.stage import ARCHIVE, archive_workspace
from bench_pipeline.agents.stage import STAGE as GENERATION
from bench_pipeline.build.stage import STAGE as BUILD
from bench_pipeline.quality import stage as quality_stage
from bench_pipeline.quality.metrics import QualityReport
from bench_pipeline.quality.sonar import SonarConfig
from bench_pipeline.sandbox import get_sandbox
from bench_pipeline.warehouse.artifacts import ArtifactStore

RUN = "q.c1.r0"


def _stored_run(store: ArtifactStore, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "index.html").write_text("<canvas></canvas>")
    archive_workspace(workspace, store.run_dir(RUN, GENERATION) / ARCHIVE)
    store.write_record(GENERATION, RUN, {"experiment": "q", "transcript_path": None})
    store.write_record(BUILD, RUN, {"build_ok": True, "entry_point": "index.html"})


def test_a_tool_reporting_nan_leaves_that_metric_null_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = ArtifactStore(tmp_path / "artifacts")
    _stored_run(store, tmp_path)

    def fake_measure(*args: Any, **kwargs: Any) -> QualityReport:
        # What jscpd's JSON gives for a file with no lines, once Python has read it.
        return QualityReport(metrics={"duplication_pct": float("nan"), "html_errors": 0})

    monkeypatch.setattr(quality_stage, "measure_quality", fake_measure)
    record = quality_stage.run_quality(
        RUN, store, get_sandbox("bubblewrap"), SonarConfig(url=None, token=None)
    )
    assert record["duplication_pct"] is None and record["html_errors"] == 0
    why = json.loads(record["unavailable"])["duplication_pct"]
    assert why == "the tool reported nan, not a usable number"
    assert store.read_record(quality_stage.STAGE, RUN)["duplication_pct"] is None


def test_a_failed_quality_run_is_recorded_without_a_score(tmp_path: Path) -> None:
    store = ArtifactStore(tmp_path / "artifacts")
    message = f"run {RUN}: quality_metrics failed: OSError: disk full"
    record = quality_stage.record_quality_failure(RUN, store, message)
    stored = store.read_record(quality_stage.STAGE, RUN)
    assert stored == record and stored["quality_score"] is None
    assert json.loads(stored["unavailable"]) == {"quality_score": message}

"""The per-run artifact budget: what a run may copy into the artifact store past the
sandbox's own quota. Past it a write is refused with a recorded reason, never a crash."""

from __future__ import annotations

import os
import tarfile
from pathlib import Path

import pytest

from bench_pipeline.agents.stage import archive_workspace
from bench_pipeline.warehouse.budget import (
    DEFAULT_RUN_ARTIFACTS_MB,
    REFUSED_FILE,
    ArtifactBudget,
    artifact_bytes,
    run_artifacts_budget_bytes,
)

MIB = 1024 * 1024


@pytest.fixture
def run_root(tmp_path: Path) -> Path:
    root = tmp_path / "artifacts" / "runs" / "exp.r1"
    (root / "agent_generation").mkdir(parents=True)
    return root


def test_budget_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BENCH_RUN_ARTIFACTS_MB", raising=False)
    assert run_artifacts_budget_bytes() == DEFAULT_RUN_ARTIFACTS_MB * MIB
    monkeypatch.setenv("BENCH_RUN_ARTIFACTS_MB", "off")
    assert run_artifacts_budget_bytes() is None
    monkeypatch.setenv("BENCH_RUN_ARTIFACTS_MB", "12")
    assert run_artifacts_budget_bytes() == 12 * MIB
    monkeypatch.setenv("BENCH_RUN_ARTIFACTS_MB", "big")
    with pytest.raises(ValueError, match="BENCH_RUN_ARTIFACTS_MB"):
        run_artifacts_budget_bytes()


def test_workspaces_and_earlier_attempts_do_not_count(run_root: Path) -> None:
    (run_root / "agent_generation" / "workspace").mkdir()
    (run_root / "agent_generation" / "workspace" / "big").write_bytes(b"w" * (8 * MIB))
    (run_root / "attempts" / "1").mkdir(parents=True)
    (run_root / "attempts" / "1" / "old.tar.gz").write_bytes(b"a" * (8 * MIB))
    (run_root / "agent_generation" / "transcript.jsonl").write_bytes(b"t" * MIB)
    assert MIB <= artifact_bytes(run_root) < 2 * MIB


def test_a_write_past_the_budget_is_refused_and_noted(run_root: Path) -> None:
    budget = ArtifactBudget(run_root, budget_bytes=3 * MIB)
    shots = run_root / "bot_evaluation"
    assert budget.write_bytes(shots / "01-loaded.png", b"p" * (2 * MIB)) is None
    reason = budget.write_bytes(shots / "02-end.png", b"p" * (2 * MIB))
    assert reason is not None and "02-end.png" in reason and "3 MiB budget" in reason
    assert not (shots / "02-end.png").exists()
    assert (shots / "01-loaded.png").stat().st_size == 2 * MIB
    assert "02-end.png" in (run_root / REFUSED_FILE).read_text()


def test_budget_for_a_folder_outside_the_store_is_none(tmp_path: Path, run_root: Path) -> None:
    assert ArtifactBudget.for_folder(tmp_path / "evidence") is None
    budget = ArtifactBudget.for_folder(run_root / "bot_evaluation")
    assert budget is not None and budget.run_root == run_root


def test_the_workspace_archive_keeps_what_fits_and_lists_the_rest(run_root: Path) -> None:
    workspace = run_root / "agent_generation" / "workspace"
    workspace.mkdir()
    (workspace / "index.html").write_text("<canvas></canvas>")
    for name in ("a.bin", "b.bin", "c.bin"):
        (workspace / name).write_bytes(os.urandom(2 * MIB))  # incompressible
    archive = run_root / "agent_generation" / "workspace.tar.gz"

    summary = archive_workspace(workspace, archive, ArtifactBudget(run_root, budget_bytes=5 * MIB))

    with tarfile.open(archive) as tar:
        kept = set(tar.getnames())
    assert kept == {"a.bin", "b.bin", "index.html"}
    assert archive.stat().st_size <= 5 * MIB
    assert len(summary["skipped_files"]) == 1
    assert "c.bin" in summary["skipped_files"][0]
    assert "5 MiB budget" in summary["skipped_files"][0]
    assert "c.bin" in (run_root / REFUSED_FILE).read_text()

"""The bot evaluation as a warehouse record, and where the evaluated game comes from."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench_pipeline import stages
from bench_pipeline.bot.contract import TEST_IDS, Calibration, Evaluation, TestResult, Verdict
from bench_pipeline.warehouse.artifacts import ArtifactStore

STAGE = stages.BOT_EVALUATION.name
BUILD_STAGE = stages.SANDBOXED_BUILD.name


class NoBuildRecord(LookupError):
    """The build stage has not run for this run yet."""


def served_dir(store: ArtifactStore, run_id: str) -> Path | None:
    """The folder the build stage says holds the run's playable page (None: no page)."""
    build = store.read_record(BUILD_STAGE, run_id)
    if build is None:
        raise NoBuildRecord(
            f"run {run_id}: no {BUILD_STAGE} record at {store.record_path(BUILD_STAGE, run_id)}; "
            "materialize sandboxed_build for this run first"
        )
    folder = build.get("served_dir")
    return Path(folder) if folder else None


def to_record(evaluation: Evaluation, artifacts: Path | None) -> dict[str, Any]:
    data = evaluation.to_json()
    calibration = data["calibration"]
    return {
        "bot_version": data["bot_version"],
        "gameplay_score": data["gameplay_score"],
        "duration_s": data["duration_s"],
        "renderer": calibration["renderer"],
        "grid_cols": (calibration["grid"] or {}).get("cols"),
        "grid_rows": (calibration["grid"] or {}).get("rows"),
        "start": calibration["start"],
        "controls": calibration["controls"],
        "score_source": calibration["score_source"],
        "tests": data["tests"],
        "reasons": data["reasons"],
        "passed": sum(1 for v in data["tests"].values() if v == "PASS"),
        "failed": sum(1 for v in data["tests"].values() if v == "FAIL"),
        "inconclusive": sum(1 for v in data["tests"].values() if v == "INCONCLUSIVE"),
        "artifacts_dir": str(artifacts) if artifacts else None,
    }


def no_page_evaluation(target: str, reason: str) -> Evaluation:
    """The verdicts of a run whose build produced no page: it does not load; nothing else
    could be observed (INCONCLUSIVE, never FAIL for mechanics nobody saw)."""
    results = {t: TestResult(Verdict.INCONCLUSIVE, reason) for t in TEST_IDS}
    results["loads"] = TestResult(Verdict.FAIL, reason)
    return Evaluation(target, Calibration(), results, duration_s=0.0)

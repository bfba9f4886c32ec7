"""Stage 5, quality metrics: how the code was built, for one run.

Reads the agent's archived workspace (never the agent's own folder), the build record and
the transcript; writes one record with the code metrics and the quality score
(`metrics.py`, `score.py`), the transcript analysis (`transcript.py`) and SonarQube's
measures when a server is configured (`sonar.py`). Output metrics (transcript, Sonar) are
recorded but stay out of the quality score.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench_pipeline import stages
from bench_pipeline.agents.stage import ARCHIVE, NoGenerationRecord, extract_workspace
from bench_pipeline.agents.stage import STAGE as GENERATION_STAGE
from bench_pipeline.build.stage import STAGE as BUILD_STAGE
from bench_pipeline.quality.metrics import measure_quality
from bench_pipeline.quality.sonar import SonarConfig, sonar_metrics
from bench_pipeline.quality.transcript import analyze_transcript, events_table
from bench_pipeline.sandbox.base import Sandbox
from bench_pipeline.warehouse.artifacts import (
    ArtifactStore,
    atomic_write_json,
    unrepresentable,
)

STAGE = stages.QUALITY_METRICS.name
EVENTS_FILE = "transcript_events.json"


class NoBuildYet(LookupError):
    """The build stage has not run for this run yet."""


def run_quality(
    run_id: str,
    store: ArtifactStore,
    sandbox: Sandbox,
    sonar: SonarConfig,
    *,
    tool_timeout_s: float = 60.0,
) -> dict[str, Any]:
    generation = store.read_record(GENERATION_STAGE, run_id)
    archive = store.run_dir(run_id, GENERATION_STAGE) / ARCHIVE
    if generation is None or not archive.is_file():
        raise NoGenerationRecord(
            f"run {run_id}: no agent_generation record or archive; materialize it first"
        )
    build = store.read_record(BUILD_STAGE, run_id)
    if build is None:
        raise NoBuildYet(
            f"run {run_id}: no sandboxed_build record; materialize sandboxed_build first"
        )
    work = store.run_dir(run_id, STAGE)
    source = work / "source"
    extract_workspace(archive, source)
    report = measure_quality(
        source, sandbox, build=build, tool_timeout_s=tool_timeout_s, work_dir=work / "tools"
    )
    record: dict[str, Any] = dict(report.to_json())
    transcript = generation.get("transcript_path")
    transcript_file = Path(transcript) if transcript else work / "no-transcript"
    analysis = analyze_transcript(transcript_file)
    # The normalized event table, one row per event: the warehouse's transcript_events.
    events = [{"run_id": run_id, **row} for row in events_table(transcript_file)]
    atomic_write_json(work / EVENTS_FILE, events)
    store.note_change("transcript_events", run_id)
    record.update({f"transcript_{k}": v for k, v in analysis.to_record().items()})
    record.update(
        {f"sonar_{k}": v for k, v in sonar_metrics(source, run_id, sonar).to_record().items()}
    )
    record["experiment"] = generation.get("experiment")
    # A tool that printed NaN or Infinity in its JSON (Python reads both) gives a number no
    # record can hold: that metric is null with the reason, the others are kept.
    unavailable = record.setdefault("unavailable", {})
    for key, value in list(record.items()):
        if not isinstance(value, dict | list) and unrepresentable(value) is not None:
            record[key] = None
            unavailable[key] = f"the tool reported {value!r}, not a usable number"
    # Nested values (breakdowns, reasons) differ in shape from run to run: stored as JSON
    # text, so the warehouse reads every record with one schema.
    flat = {
        k: json.dumps(v, sort_keys=True, default=str) if isinstance(v, dict | list) else v
        for k, v in record.items()
    }
    store.write_record(STAGE, run_id, flat)
    return {**flat, "run_id": run_id}


def record_quality_failure(run_id: str, store: ArtifactStore, message: str) -> dict[str, Any]:
    """A run the quality stage itself failed on: recorded with no score (NULL, never a
    made-up 0) and the reason, so the other runs of its chunk go on."""
    record = {
        "quality_score": None,
        "unavailable": json.dumps({"quality_score": message}),
        "notes": json.dumps([message]),
    }
    store.write_record(STAGE, run_id, record)
    return {**record, "run_id": run_id}

"""Corrupt records among good ones: the warehouse builds with the good ones, names the bad
ones, moves them to the quarantine with their reason, and never reads through a symlink.
And the blocking-test gate: a failing blocking test leaves the old warehouse live."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from bench_pipeline import settings
from bench_pipeline.warehouse.artifacts import ArtifactStore
from bench_pipeline.warehouse.build import BlockingTestFailure, build_warehouse, query
from bench_pipeline.warehouse.integrity import pending_repairs, quarantined
from tests.warehouse.fake_runs import write_store

MODELS = settings.sql_models_dir()
SECRET = "do-not-load-this-7f3a"


def _has(store: ArtifactStore, run_id: str, stage: str) -> bool:
    return store.record_path(stage, run_id).is_file()


def _scored(store: ArtifactStore, runs: pd.DataFrame, n: int) -> list[str]:
    """n runs that have every record (agent, build, bot, quality)."""
    stages = ("agent_generation", "sandboxed_build", "bot_evaluation", "quality_metrics")
    ids = [r for r in runs["run_id"] if all(_has(store, r, s) for s in stages)]
    assert len(ids) >= n
    return ids[:n]


@pytest.fixture
def corrupted(store: ArtifactStore, tmp_path: Path) -> tuple[ArtifactStore, dict, pd.DataFrame]:
    runs = write_store(store)
    ids = _scored(store, runs, 8)
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"run_id": ids[3], "gameplay_score": 1.0, "note": SECRET}))
    bot = store.root / "records" / "bot_evaluation"
    quality = store.root / "records" / "quality_metrics"
    agent = store.root / "records" / "agent_generation"
    build = store.root / "records" / "sandboxed_build"
    bad: dict[tuple[str, str], str] = {}

    (bot / f"{ids[0]}.json").write_text('{"run_id": "' + ids[0] + '", "gameplay_score": ')
    bad[(ids[0], "bot_evaluation")] = "bad JSON"
    record = json.loads((quality / f"{ids[1]}.json").read_text())
    (quality / f"{ids[1]}.json").write_text(json.dumps({**record, "quality_score": "high"}))
    bad[(ids[1], "quality_metrics")] = "quality_score (DOUBLE) is not a number"
    record = json.loads((bot / f"{ids[2]}.json").read_text())
    text = json.dumps({**record, "gameplay_score": 1.0}).replace("1.0", "NaN", 1)
    (bot / f"{ids[2]}.json").write_text(text)
    bad[(ids[2], "bot_evaluation")] = "non-finite number NaN"
    (bot / f"{ids[3]}.json").unlink()
    (bot / f"{ids[3]}.json").symlink_to(secret)
    bad[(ids[3], "bot_evaluation")] = "is a symlink"
    (build / f"{ids[4]}.json").unlink()
    os.mkfifo(build / f"{ids[4]}.json")  # opened blindly, a FIFO would hang the build
    bad[(ids[4], "sandboxed_build")] = "is not a regular file"
    record = json.loads((agent / f"{ids[5]}.json").read_text())
    (agent / f"{ids[5]}.json").write_text(
        json.dumps(record).replace('"cost_usd": ', '"cost_usd": 1e400, "x": ', 1)
    )
    bad[(ids[5], "agent_generation")] = "non-finite number"
    record = json.loads((bot / f"{ids[6]}.json").read_text())
    (bot / f"{ids[6]}.json").write_text(json.dumps({**record, "run_id": ids[7]}))
    bad[(ids[6], "bot_evaluation")] = "is not its file name's"
    return store, bad, runs


def test_bad_records_are_named_quarantined_and_the_rest_loads(
    corrupted: tuple[ArtifactStore, dict, pd.DataFrame], tmp_path: Path
) -> None:
    store, bad, runs = corrupted
    db = tmp_path / "w.duckdb"
    build = build_warehouse(store, db, MODELS)

    named = {(q.run_id, q.stage): q for q in build.quarantined}
    assert set(named) == set(bad)
    for key, why in bad.items():
        entry = named[key]
        assert why in entry.reason, (key, entry.reason)
        assert entry.path.endswith(f"records/{key[1]}/{key[0]}.json")
        assert key[0] in entry.describe() and key[1] in entry.describe()
        # Moved aside, with its reason next to it; the record itself is gone.
        moved = Path(entry.moved_to)
        assert moved.parent == store.root / "quarantine" / key[1]
        assert os.path.lexists(moved)
        reason = json.loads(Path(str(moved) + ".reason.json").read_text())
        assert reason["run_id"] == key[0] and reason["stage"] == key[1]
        assert reason["reason"] == entry.reason
        assert not os.path.lexists(store.record_path(key[1], key[0]))
    # The symlink was moved, not what it pointed to, and never read into the warehouse.
    link = Path(named[(list(bad)[3][0], "bot_evaluation")].moved_to)
    assert link.is_symlink() and (tmp_path / "secret.json").is_file()
    dump = json.dumps(query(db, "select * from raw_bot_evaluation")[1], default=str)
    assert SECRET not in dump

    # Every other run is in the warehouse; the bad stages are simply missing.
    assert query(db, "select count(*) from fct_runs")[1] == [(len(runs),)]
    bot_rows = query(db, "select count(*) from raw_bot_evaluation")[1][0][0]
    assert bot_rows == sum(_has(store, r, "bot_evaluation") for r in runs["run_id"])
    ids = [k[0] for k in bad]
    assert query(db, "select gameplay_score from fct_runs where run_id = ?", [ids[0]])[1] == [
        (None,)
    ]

    # The resume logic's view: each quarantined stage is to be redone for its run alone.
    expected: dict[str, set[str]] = {}
    for run_id, stage in bad:
        expected.setdefault(stage, set()).add(run_id)
    assert pending_repairs(store) == expected
    # Once the stage writes its record again, nothing is pending for it.
    store.write_record("bot_evaluation", ids[0], {"gameplay_score": 50.0})
    assert ids[0] not in pending_repairs(store).get("bot_evaluation", set())

    # A second build finds nothing new to quarantine and still builds.
    again = build_warehouse(store, db, MODELS)
    assert again.quarantined == [] and len(quarantined(store)) == len(bad)


def test_bad_transcript_events_quarantine_the_quality_record_too(
    store: ArtifactStore, tmp_path: Path
) -> None:
    runs = write_store(store)
    events = sorted((store.root / "runs").glob("*/quality_metrics/transcript_events.json"))
    assert events
    run_id = events[0].parents[1].name
    events[0].write_text('[{"run_id": "' + run_id + '", "position": "first"}]')
    build = build_warehouse(store, tmp_path / "w.duckdb", MODELS)
    assert {(q.run_id, q.stage) for q in build.quarantined} == {(run_id, "quality_metrics")}
    assert len(build.quarantined) == 2  # the events file and the record it belongs to
    assert "position (INTEGER) is not an integer" in build.quarantined[0].reason
    assert pending_repairs(store) == {"quality_metrics": {run_id}}
    assert build.rows("fct_runs") == len(runs)


def test_a_failing_blocking_test_keeps_the_old_warehouse_live(
    store: ArtifactStore, tmp_path: Path
) -> None:
    """The gate runs on the copy before the swap: readers keep every table of the old
    warehouse, byte for byte, marts built from fct_runs included."""
    write_store(store)
    db = tmp_path / "w.duckdb"
    build_warehouse(store, db, MODELS)
    before = db.read_bytes()
    _, names = query(db, "select table_name from information_schema.tables order by 1")
    tables = {n: sorted(query(db, f'select * from "{n}"')[1], key=repr) for (n,) in names}
    assert tables["mart_leaderboard_models"] and tables["dim_cells"]

    design_file = next((store.root / "designs").glob("*.json"))
    design = json.loads(design_file.read_text())
    store.save_design({**design, "cells": [*design["cells"], design["cells"][0]]})
    with pytest.raises(BlockingTestFailure) as caught:
        build_warehouse(store, db, MODELS)
    message = str(caught.value)
    assert "\n" not in message and "old one stays live" in message
    assert "fct_runs.unique_run_id" in message and '"n_rows": 2' in message
    failed = {(r.test.model, r.test.name) for r in caught.value.failed}
    assert ("fct_runs", "unique_run_id") in failed
    # Tested in the copy: the copy had the duplicates, the live file never did.
    assert caught.value.build.rows("fct_runs") > len(tables["fct_runs"])

    assert db.read_bytes() == before
    assert {n: sorted(query(db, f'select * from "{n}"')[1], key=repr) for n in tables} == tables
    assert not [p for p in tmp_path.iterdir() if "building" in p.name]

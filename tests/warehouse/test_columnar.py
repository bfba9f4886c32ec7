"""The columnar mirror and the incremental warehouse update (columnar.py, build.py).

The property that matters: whatever sequence of changes the stages make, an update gives
the tables a full rebuild gives, while reading only what changed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import pytest

from bench_pipeline import settings
from bench_pipeline.warehouse import columnar
from bench_pipeline.warehouse.artifacts import ArtifactStore
from bench_pipeline.warehouse.build import SOURCE_SCHEMAS, build_warehouse
from tests.warehouse.fake_runs import write_store

MODELS = settings.sql_models_dir()


def _snapshot(db: Path) -> dict[str, tuple[list[str], list[str]]]:
    """Every table and view: its columns (sorted) and its rows (as sorted JSON lines)."""
    out = {}
    with duckdb.connect(str(db), read_only=True) as con:
        names = [
            r[0]
            for r in con.execute(
                "select table_name from information_schema.tables where table_schema = 'main' "
                "and table_name <> 'meta_loaded_parts'"
            ).fetchall()
        ]
        for name in names:
            columns = sorted(r[0] for r in con.execute(f'describe "{name}"').fetchall())
            select = ", ".join(f'"{c}"' for c in columns)
            rows = con.execute(f'select {select} from "{name}"').fetchall()
            out[name] = (columns, sorted(json.dumps(_rounded(r), default=str) for r in rows))
    return out


def _rounded(value: Any) -> Any:
    # Sums of floats depend on the order rows are read in: equal to 9 significant digits.
    if isinstance(value, float):
        return float(f"{value:.9g}")
    if isinstance(value, list | tuple):
        return [_rounded(v) for v in value]
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    return value


def _record(store: ArtifactStore, stage: str, run_id: str) -> dict[str, Any]:
    return json.loads(store.record_path(stage, run_id).read_text())


def _scored_runs(store: ArtifactStore) -> list[str]:
    folder = store.root / "records" / "bot_evaluation"
    return sorted(p.stem for p in folder.glob("*.json"))


def test_updates_give_the_tables_a_full_rebuild_gives(tmp_path: Path) -> None:
    store = ArtifactStore(tmp_path / "artifacts")
    write_store(store)
    live = tmp_path / "live.duckdb"
    first = build_warehouse(store, live, MODELS)
    assert first.changed_runs is None and first.incremental == []  # a first load is full
    runs = _scored_runs(store)

    # A chunk's worth of changes, each through the store as the stages make them:
    # a re-evaluated run (new verdicts, and a column no record had before) ...
    bot = _record(store, "bot_evaluation", runs[0])
    bot["tests"] = {**bot["tests"], "rotate": "FAIL", "walls": "FAIL"}
    bot["gameplay_score"] = 12.5
    bot["new_field"] = {"nested": [1, 2]}
    store.write_record("bot_evaluation", runs[0], bot)
    # ... a quality record whose run lost its transcript events ...
    events = store.run_dir(runs[1], "quality_metrics") / "transcript_events.json"
    events.parent.mkdir(parents=True, exist_ok=True)
    events.write_text("[]")
    store.note_change("transcript_events", runs[1])
    # ... and a record moved away (as the quarantine does), which must take its row along.
    gone = store.record_path("sandboxed_build", runs[2])
    gone.unlink()
    store.note_change("sandboxed_build", runs[2])

    update = build_warehouse(store, live, MODELS)
    assert update.changed_runs == 3
    assert sorted(update.incremental) == ["fct_runs", "fct_test_results"]
    with duckdb.connect(str(live), read_only=True) as con:
        score, build_ok = con.execute(
            "select gameplay_score, build_ok from fct_runs where run_id = ?", [runs[0]]
        ).fetchone()
        assert score == 12.5 and build_ok is not None
        assert con.execute(
            "select build_ok from fct_runs where run_id = ?", [runs[2]]
        ).fetchone() == (None,)
        verdicts = dict(
            con.execute(
                "select test_id, verdict from fct_test_results where run_id = ?", [runs[0]]
            ).fetchall()
        )
        assert verdicts["rotate"] == verdicts["walls"] == "FAIL"

    rebuilt = tmp_path / "rebuilt.duckdb"
    full = build_warehouse(store, rebuilt, MODELS, full=True)
    assert full.incremental == []
    assert _snapshot(live) == _snapshot(rebuilt)


def test_a_column_whose_type_changes_reloads_its_table(tmp_path: Path) -> None:
    store = ArtifactStore(tmp_path / "artifacts")
    write_store(store)
    live = tmp_path / "live.duckdb"
    runs = _scored_runs(store)
    record = _record(store, "quality_metrics", runs[0])
    store.write_record("quality_metrics", runs[0], {**record, "extra": 3})
    build_warehouse(store, live, MODELS)
    store.write_record("quality_metrics", runs[1], {**record, "run_id": runs[1], "extra": "x"})
    update = build_warehouse(store, live, MODELS)
    # BIGINT then VARCHAR: appending would have to guess; a reload gives the full answer.
    assert update.changed_runs is None
    rebuilt = tmp_path / "rebuilt.duckdb"
    build_warehouse(store, rebuilt, MODELS, full=True)
    assert _snapshot(live) == _snapshot(rebuilt)
    with duckdb.connect(str(live), read_only=True) as con:
        kind = con.execute(
            "select data_type from information_schema.columns "
            "where table_name = 'raw_quality_metrics' and column_name = 'extra'"
        ).fetchone()
    assert kind == ("VARCHAR",)


def test_a_store_of_json_records_alone_builds(tmp_path: Path) -> None:
    store = ArtifactStore(tmp_path / "artifacts")
    write_store(store)
    # As a store written before the mirror existed: no parts, no journal.
    for folder in (store.root / "columnar", store.root / "journal"):
        if folder.exists():
            for path in sorted(folder.rglob("*"), reverse=True):
                path.rmdir() if path.is_dir() else path.unlink()
            folder.rmdir()
    build = build_warehouse(store, tmp_path / "w.duckdb", MODELS)
    assert build.rows("raw_bot_evaluation") == len(_scored_runs(store))
    assert build.rows("fct_runs") > build.rows("raw_bot_evaluation")  # pending runs too
    assert columnar.tables(store.root)  # the mirror now holds them


def test_a_hand_edited_record_is_seen_by_a_scanning_rebuild(tmp_path: Path) -> None:
    store = ArtifactStore(tmp_path / "artifacts")
    write_store(store)
    db = tmp_path / "w.duckdb"
    build_warehouse(store, db, MODELS)
    run = _scored_runs(store)[0]
    path = store.record_path("bot_evaluation", run)
    record = json.loads(path.read_text())
    path.write_text(json.dumps({**record, "gameplay_score": 99.0}))  # no journal note
    os.utime(path, ns=(1, 1))  # a different time even on a coarse clock

    def score() -> float:
        with duckdb.connect(str(db), read_only=True) as con:
            query = "select gameplay_score from raw_bot_evaluation where run_id = ?"
            return con.execute(query, [run]).fetchone()[0]

    build_warehouse(store, db, MODELS)
    assert score() == record["gameplay_score"]  # an update reads what the journal names
    build_warehouse(store, db, MODELS, full=True, scan=True)
    assert score() == 99.0


def test_a_bad_record_noted_later_is_quarantined_and_its_row_dropped(tmp_path: Path) -> None:
    store = ArtifactStore(tmp_path / "artifacts")
    write_store(store)
    db = tmp_path / "w.duckdb"
    build_warehouse(store, db, MODELS)
    run = _scored_runs(store)[0]
    store.record_path("bot_evaluation", run).write_text("{not json")
    store.note_change("bot_evaluation", run)
    update = build_warehouse(store, db, MODELS)
    assert [q.run_id for q in update.quarantined] == [run]
    assert "bad JSON" in update.quarantined[0].reason
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute(
            "select count(*) from raw_bot_evaluation where run_id = ?", [run]
        ).fetchone() == (0,)
        assert con.execute(
            "select count(*) from fct_test_results where run_id = ?", [run]
        ).fetchone() == (0,)


def test_small_parts_are_merged_and_keep_each_runs_latest_rows(tmp_path: Path) -> None:
    store = ArtifactStore(tmp_path / "artifacts")
    run = "m.c1.r0"
    for i in range(columnar.MAX_SMALL_PARTS + 4):
        store.write_record("bot_evaluation", run, {"gameplay_score": float(i)})
        store.write_record("bot_evaluation", f"m.c{i + 2}.r0", {"gameplay_score": 1.0})
        columnar.compact(store, SOURCE_SCHEMAS)
    items = columnar.parts(store.root, "bot_evaluation")
    assert len(items) <= columnar.MAX_SMALL_PARTS + 1
    assert items[0].first_seq == 1 and items[-1].last_seq == columnar.MAX_SMALL_PARTS + 4
    with duckdb.connect() as con:
        rows = con.execute(
            f"select run_id, gameplay_score from ({columnar.current_rows_sql(items)})"
        ).fetchall()
    scores = dict(rows)
    assert len(rows) == len(scores) == columnar.MAX_SMALL_PARTS + 5
    assert scores[run] == float(columnar.MAX_SMALL_PARTS + 3)
    assert not list((store.root / "journal" / "bot_evaluation").iterdir())


def test_a_note_written_while_compacting_is_kept_for_the_next(tmp_path: Path) -> None:
    store = ArtifactStore(tmp_path / "artifacts")
    store.write_record("bot_evaluation", "n.c1.r0", {"gameplay_score": 1.0})
    # The record changes again after a compactor listed the journal: its note survives.
    noted = columnar._journal(store.root, "bot_evaluation")
    store.write_record("bot_evaluation", "n.c1.r0", {"gameplay_score": 2.0})
    for markers in noted.values():
        for marker in markers:
            marker.unlink()
    left = columnar._journal(store.root, "bot_evaluation")
    assert list(left) == ["n.c1.r0"]
    done = columnar.compact(store, SOURCE_SCHEMAS)
    assert done.changed == {"bot_evaluation": {"n.c1.r0"}}


@pytest.mark.parametrize("name", ["../x", "a/b", "x~y"])
def test_a_note_refuses_names_that_are_not_run_ids(tmp_path: Path, name: str) -> None:
    store = ArtifactStore(tmp_path / "artifacts")
    with pytest.raises(ValueError, match="invalid"):
        store.note_change("bot_evaluation", name)


def _bench(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    bench = Path(sys.executable).with_name("bench")
    return subprocess.run(
        [str(bench), *args], capture_output=True, text=True, env={**os.environ, **env}
    )


def test_bench_warehouse_rebuild_builds_a_benchmark_store(tmp_path: Path) -> None:
    """The contract independent checks use: generate(store, n) then `bench warehouse
    rebuild` with BENCH_ARTIFACTS_DIR and BENCH_WAREHOUSE, exit 0."""
    sys.path.insert(0, str(settings.project_root() / "benchmarks"))
    try:
        from warehouse import generate  # benchmarks/warehouse.py
    finally:
        sys.path.pop(0)
    store = ArtifactStore(tmp_path / "artifacts")
    generate(store, 120)
    db = tmp_path / "w.duckdb"
    env = {"BENCH_ARTIFACTS_DIR": str(store.root), "BENCH_WAREHOUSE": str(db)}
    done = _bench("warehouse", "rebuild", env=env)
    assert done.returncode == 0, done.stderr
    assert "120 runs" in done.stdout and "1920 verdicts" in done.stdout
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("select count(*) from fct_runs").fetchone() == (120,)
    # A second rebuild reads the mirror the first one made, and gives the same tables.
    first = _snapshot(db)
    again = _bench("warehouse", "rebuild", "--scan", env=env)
    assert again.returncode == 0, again.stderr
    assert _snapshot(db) == first


def test_bench_warehouse_rebuild_names_a_missing_store(tmp_path: Path) -> None:
    env = {"BENCH_ARTIFACTS_DIR": str(tmp_path / "nowhere"), "BENCH_WAREHOUSE": str(tmp_path)}
    done = _bench("warehouse", "rebuild", env=env)
    assert done.returncode == 2
    assert "no artifact store at" in done.stderr and "BENCH_ARTIFACTS_DIR" in done.stderr

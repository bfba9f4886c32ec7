import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from bench_pipeline import settings
from bench_pipeline.warehouse.artifacts import ArtifactStore
from bench_pipeline.warehouse.build import build_warehouse, query

MODELS = settings.sql_models_dir()


def _design() -> dict:
    configs = {"ca": {"model": "m1", "effort": "low"}, "cb": {"model": "m2", "effort": "low"}}
    return {
        "experiment": "x",
        "cells": [
            {"cell_id": k, "designs": ["main_effects"], "config": v} for k, v in configs.items()
        ],
        "runs": [
            {"run_id": f"x.{k}.r{i}", "cell_id": k, "repeat": i, "seed": i}
            for k in configs
            for i in (0, 1)
        ],
    }


def test_empty_store_still_builds_every_model(store: ArtifactStore, tmp_path: Path) -> None:
    build = build_warehouse(store, tmp_path / "w.duckdb", MODELS)
    assert build.rows("stg_runs") == 0
    assert {"raw_design_cells", "raw_design_runs", "stg_cells", "stg_runs"} <= {
        t.name for t in build.tables
    }


def test_a_partial_first_build_gates_only_on_what_exists(
    store: ArtifactStore, tmp_path: Path
) -> None:
    """Sources and one model on a fresh file: views not yet created do not fail the gate.

    (Two workers each rebuilding `warehouse_sources` and `stg_runs` first hit this: the
    blocking tests of views that no build had created yet "failed" on a missing table.)
    """
    store.save_design(_design())
    db = tmp_path / "w.duckdb"
    build = build_warehouse(store, db, MODELS, models=["stg_runs"])
    assert build.rows("stg_runs") == 4
    names = {(r.test.model, r.test.name) for r in build.test_results}
    assert all(model == "stg_runs" for model, _ in names), names
    assert names, "stg_runs' own blocking tests ran"
    # Once the views exist, a partial rebuild gates on them too.
    build_warehouse(store, db, MODELS)
    again = build_warehouse(store, db, MODELS, models=["stg_runs"])
    assert "stg_cells" in {r.test.model for r in again.test_results}


def test_runs_join_their_cell_axes(store: ArtifactStore, tmp_path: Path) -> None:
    store.save_design(_design())
    store.write_record("run_spec", "x.ca.r0", {"model": "m1", "cost": 1.5})
    db = tmp_path / "w.duckdb"
    build = build_warehouse(store, db, MODELS)
    assert build.rows("stg_runs") == 4
    assert build.rows("raw_run_spec") == 1
    cols, rows = query(
        db, "select run_id, model, effort, in_current_design from stg_runs order by run_id"
    )
    assert cols == ["run_id", "model", "effort", "in_current_design"]
    assert rows[0] == ("x.ca.r0", "m1", "low", True)


def test_an_open_reader_does_not_block_a_rebuild(store: ArtifactStore, tmp_path: Path) -> None:
    """An analyst's process holding the warehouse open must not stop the pipeline's writer."""
    db = tmp_path / "w.duckdb"
    store.save_design(_design())
    build_warehouse(store, db, MODELS)
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, str(db)],
        stdout=subprocess.PIPE,
        stdin=subprocess.PIPE,
        text=True,
    )
    try:
        assert reader.stdout is not None and reader.stdout.readline().strip() == "open"
        store.write_record("run_spec", "x.cb.r1", {"model": "m2"})
        # Written in place, this would wait on DuckDB's file lock and fail after ~100 s.
        build_warehouse(store, db, MODELS)
        assert query(db, "select count(*) from raw_run_spec")[1] == [(1,)]
        # The reader still holds the consistent old file, where no run_spec record existed yet.
        reader.stdin.write(
            "select count(*) from information_schema.tables where table_name = 'raw_run_spec'\n"
        )
        reader.stdin.flush()
        assert reader.stdout.readline().strip() == "0"
    finally:
        reader.kill()
        reader.wait()
    assert not [p for p in tmp_path.iterdir() if "building" in p.name]


READER = """
import sys, duckdb
con = duckdb.connect(sys.argv[1], read_only=True)
print("open", flush=True)
for line in sys.stdin:
    print(con.execute(line).fetchone()[0], flush=True)
"""


def test_query_is_read_only(store: ArtifactStore, tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    build_warehouse(store, db, MODELS)
    with pytest.raises(duckdb.Error, match="read-only"):
        query(db, "create table t as select 1")


def test_query_without_warehouse_says_how_to_make_one(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="make run"):
        query(tmp_path / "none.duckdb", "select 1")


def test_an_analysis_mart_written_before_a_column_existed_gets_it(
    store: ArtifactStore, tmp_path: Path
) -> None:
    db = tmp_path / "w.duckdb"
    build_warehouse(store, db, settings.sql_models_dir())
    with duckdb.connect(str(db)) as con:  # as an older analysis wrote it: no instrument_*
        con.execute("insert into mart_main_effects (experiment, metric) values ('x', 'score')")
        for column in ("instrument_suspect", "instrument_note", "instrument_axis"):
            con.execute(f"alter table mart_main_effects drop column {column}")
    build_warehouse(store, db, settings.sql_models_dir())
    _, rows = query(
        db, "select experiment, instrument_suspect, instrument_note from mart_main_effects"
    )
    assert rows == [("x", None, None)]  # the rows kept, the new columns NULL

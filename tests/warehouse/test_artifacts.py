import json
from pathlib import Path

import pytest

from bench_pipeline.warehouse.artifacts import ArtifactStore, atomic_write_json


def _design(levels: list[str]) -> dict:
    cells = [
        {"cell_id": f"c{lv}", "designs": ["main_effects"], "config": {"model": lv}} for lv in levels
    ]
    runs = [{"run_id": f"x.c{lv}.r0", "cell_id": f"c{lv}", "repeat": 0} for lv in levels]
    return {"experiment": "x", "cells": cells, "runs": runs}


def test_records_round_trip_and_replace(store: ArtifactStore) -> None:
    store.write_record("run_spec", "x.c1.r0", {"model": "a"})
    store.write_record("run_spec", "x.c1.r0", {"model": "b"})
    assert store.read_record("run_spec", "x.c1.r0") == {"model": "b", "run_id": "x.c1.r0"}
    assert store.stages() == ["run_spec"]
    # No temporary file is left behind by the atomic write.
    assert [p.name for p in store.record_path("run_spec", "x").parent.iterdir()] == ["x.c1.r0.json"]


@pytest.mark.parametrize("name", ["../etc", "a/b", "", ".hidden", "a..b"])
def test_names_cannot_escape_the_store(store: ArtifactStore, name: str) -> None:
    with pytest.raises(ValueError, match="invalid"):
        store.record_path("run_spec", name)


def test_failed_write_keeps_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "r.json"
    atomic_write_json(target, {"v": 1})
    with pytest.raises(ValueError):
        atomic_write_json(target, {"v": float("nan")})  # not valid JSON: refused before replace
    assert json.loads(target.read_text()) == {"v": 1}
    assert list(tmp_path.iterdir()) == [target]


def test_redesign_keeps_retired_cells_and_runs(store: ArtifactStore) -> None:
    store.save_design(_design(["a", "b"]))
    merged = store.save_design(_design(["a", "c"]))
    current = {c["cell_id"]: c["current"] for c in merged["cells"]}
    assert current == {"ca": True, "cc": True, "cb": False}
    assert {r["run_id"]: r["current"] for r in merged["runs"]}["x.cb.r0"] is False

from pathlib import Path

import pytest

from bench_pipeline import settings
from bench_pipeline.warehouse.models import SqlModelError, load_model, load_models


def _write(folder: Path, name: str, sql: str) -> None:
    (folder / f"{name}.sql").write_text(sql)


def test_dependencies_come_from_the_sql(tmp_path: Path) -> None:
    _write(tmp_path, "c_mart", "select * from b_stage join a_source using (id)")
    _write(
        tmp_path,
        "b_stage",
        "-- materialized: view\nwith x as (select * from raw_t) select * from x",
    )
    models = load_models(tmp_path)
    assert [m.name for m in models] == ["b_stage", "c_mart"]
    assert models[0].materialized == "view"
    assert models[0].references == {"raw_t"}  # the CTE name is not a dependency
    assert models[1].deps({"b_stage", "c_mart"}) == {"b_stage"}


def test_cycle_is_refused(tmp_path: Path) -> None:
    _write(tmp_path, "a", "select * from b")
    _write(tmp_path, "b", "select * from a")
    with pytest.raises(SqlModelError, match="cycle"):
        load_models(tmp_path)


@pytest.mark.parametrize(
    ("sql", "problem"),
    [
        ("select (1 from t", "parse"),
        ("selec * frm", "one SELECT"),
        ("insert into t values (1)", "one SELECT"),
        ("-- materialized: temp\nselect 1", "table or view"),
    ],
)
def test_bad_model_files_are_named(tmp_path: Path, sql: str, problem: str) -> None:
    _write(tmp_path, "bad", sql)
    with pytest.raises(SqlModelError, match=problem) as info:
        load_model(tmp_path / "bad.sql")
    assert "bad.sql" in str(info.value)


def test_project_models_load_in_order() -> None:
    names = [m.name for m in load_models(settings.sql_models_dir())]
    assert {"stg_cells", "stg_runs"} <= set(names)

"""The warehouse documents itself: every table and column has a DuckDB comment from one
source, and docs/warehouse.md's table reference is generated from the same source."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from bench_pipeline import settings
from bench_pipeline.warehouse.artifacts import ArtifactStore
from bench_pipeline.warehouse.catalog import apply_comments, table_docs, updated_page
from bench_pipeline.warehouse.marts import MART_SCHEMAS
from bench_pipeline.warehouse.models import axis_columns, load_models
from bench_pipeline.warehouse.writer import replace_table
from tests.warehouse.fake_runs import write_store

BENCH = Path(sys.executable).with_name("bench")


def _rebuild(
    store: ArtifactStore, db: Path, models: Path | None = None
) -> subprocess.CompletedProcess:
    env = {**os.environ, "BENCH_ARTIFACTS_DIR": str(store.root), "BENCH_WAREHOUSE": str(db)}
    command = [str(BENCH), "warehouse", "rebuild"]
    if models is not None:
        # `bench warehouse rebuild` reads the project's models; a copy of the project's
        # folder with one file changed stands in for a checkout with that change.
        env["BENCH_SQL_MODELS_DIR"] = str(models)
    return subprocess.run(command, env=env, capture_output=True, text=True, check=False)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("catalog")
    store = ArtifactStore(root / "artifacts")
    runs = write_store(store)
    # One evaluation with the bot's reasons, as the bot writes them, and a run spec.
    run_id = runs[runs["verdicts"].notna()]["run_id"].iloc[0]
    record = store.read_record("bot_evaluation", run_id)
    assert record is not None
    store.write_record(
        "bot_evaluation", run_id, {**record, "reasons": {t: f"why {t}" for t in record["tests"]}}
    )
    store.write_record("run_spec", run_id, {"run_id": run_id, "model": "m", "seed": 3})
    db = root / "w.duckdb"
    done = _rebuild(store, db)
    assert done.returncode == 0, done.stderr
    assert "no comment" not in done.stderr
    return db


def _query(db: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql).fetchall()


@pytest.mark.slow
def test_every_table_and_column_of_a_built_warehouse_has_a_comment(built: Path) -> None:
    tables = _query(
        built,
        "select table_name, comment from duckdb_tables() where not internal "
        "union all select view_name, comment from duckdb_views() where not internal",
    )
    assert len(tables) >= 30 and "raw_run_spec" in {t for t, _ in tables}
    assert [t for t, comment in tables if not comment] == []
    columns = _query(
        built,
        "select table_name, column_name, comment from duckdb_columns() where not internal",
    )
    assert [f"{t}.{c}" for t, c, comment in columns if not comment] == []
    fct = dict(
        (c, comment) for t, c, comment in columns if t == "fct_runs"
    )  # the incident: 0 of 55
    assert len(fct) > 50 and "headline" in fct["score"]


@pytest.mark.slow
def test_no_documented_column_is_stale(built: Path) -> None:
    """A `-- column:` line naming a column the model no longer writes is caught too."""
    actual: dict[str, set[str]] = {}
    for table, column in _query(
        built, "select table_name, column_name from duckdb_columns() where not internal"
    ):
        actual.setdefault(table, set()).add(column)
    axes = {c for c, _ in axis_columns()}
    for doc in table_docs():
        if doc.kind in {"table", "view"}:
            documented = {c for c, _ in doc.columns}
            # Axis columns that come from the stored design's columns exist only for the
            # axes the design has (this store's designs name a few).
            assert documented - axes <= actual[doc.name], doc.name
            assert actual[doc.name] <= documented, doc.name


@pytest.mark.slow
def test_fct_test_results_carries_the_bots_reason(built: Path) -> None:
    rows = _query(
        built, "select test_id, reason from fct_test_results where reason is not null order by 1"
    )
    assert len(rows) == 16 and ("walls", "why walls") in rows
    assert _query(built, "select count(*) from fct_test_results where reason is null")[0][0] > 0


@pytest.mark.slow
def test_a_model_column_without_a_line_is_named_by_the_rebuild(tmp_path: Path) -> None:
    models = tmp_path / "models"
    shutil.copytree(settings.sql_models_dir(), models)
    path = models / "fct_test_results.sql"
    path.write_text(
        "\n".join(
            line
            for line in path.read_text().splitlines()
            if not line.startswith("-- column: reason")
        )
    )
    store = ArtifactStore(tmp_path / "artifacts")
    write_store(store)
    done = _rebuild(store, tmp_path / "w.duckdb", models)
    assert done.returncode == 0, done.stderr
    assert "1 column(s) have no comment" in done.stderr and "fct_test_results.reason" in done.stderr


def test_the_effects_marts_keep_their_comments_when_replaced(tmp_path: Path) -> None:
    import pandas as pd

    with duckdb.connect(str(tmp_path / "w.duckdb")) as con:
        replace_table(con, "mart_main_effects", pd.DataFrame(), MART_SCHEMAS["mart_main_effects"])
        assert apply_comments(con, table_docs(), only=["mart_main_effects"]) == []
        comments = con.execute(
            "select column_name, comment from duckdb_columns() where table_name = 'mart_main_effects'"
        ).fetchall()
    assert all(comment for _, comment in comments) and len(comments) == len(
        MART_SCHEMAS["mart_main_effects"]
    )


def test_docs_warehouse_md_is_generated_from_the_same_source() -> None:
    page = settings.project_root() / "docs" / "warehouse.md"
    text = page.read_text(encoding="utf-8")
    assert updated_page(text, table_docs()) == text, (
        "docs/warehouse.md is out of date: run "
        "`.venv/bin/python -m bench_pipeline.warehouse.catalog --write`"
    )
    for model in load_models(settings.sql_models_dir()):
        assert f"### `{model.name}`" in text
    assert "### `raw_run_spec`" in text


def test_every_sql_model_documents_each_column_once() -> None:
    for model in load_models(settings.sql_models_dir()):
        assert model.description, model.name
        names = [c for c, _ in model.columns]
        assert names and len(names) == len(set(names)), model.name

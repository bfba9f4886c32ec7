"""Data tests declared in the models' headers: parsing, passing on a good warehouse, and
failing, with the culprit in the sample, on a deliberately broken one."""

from __future__ import annotations

import shutil
import typing
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from bench_pipeline import settings
from bench_pipeline.agents.base import AgentStatus
from bench_pipeline.bot.contract import TEST_IDS, Verdict
from bench_pipeline.warehouse.artifacts import ArtifactStore
from bench_pipeline.warehouse.build import build_warehouse
from bench_pipeline.warehouse.datatests import DataTest, run_data_test, run_data_tests
from bench_pipeline.warehouse.models import SqlModel, SqlModelError, load_model, load_models
from tests.warehouse.fake_runs import write_store

MODELS = load_models(settings.sql_models_dir())
BY_NAME: dict[str, SqlModel] = {m.name: m for m in MODELS}
ALL_TESTS = [t for m in MODELS for t in m.tests]


def _test(model: str, name: str) -> DataTest:
    return next(t for t in BY_NAME[model].tests if t.name == name)


@pytest.fixture(scope="module")
def good_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("datatests")
    store = ArtifactStore(root / "artifacts")
    write_store(store)
    db = root / "w.duckdb"
    build_warehouse(store, db, settings.sql_models_dir())
    return db


@pytest.fixture
def con(good_db: Path, tmp_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A writable copy of the good warehouse, for a test to break."""
    copy = tmp_path / "copy.duckdb"
    shutil.copy(good_db, copy)
    with duckdb.connect(str(copy)) as connection:
        yield connection


# -- what the project declares ----------------------------------------------------------


def test_declared_tests_have_unique_identifier_names() -> None:
    for model in MODELS:
        names = [t.name for t in model.tests]
        assert len(names) == len(set(names)), model.name
        assert all(n.isidentifier() for n in names), names
        assert all(t.model == model.name and t.description for t in model.tests)


@pytest.mark.parametrize(
    ("model", "name", "blocking"),
    [
        ("fct_runs", "unique_run_id", True),
        ("fct_runs", "not_null_run_id", True),
        ("fct_runs", "not_null_cell_id", True),
        ("fct_runs", "not_null_experiment", True),
        ("fct_runs", "accepted_range_gameplay_score", False),
        ("fct_runs", "accepted_range_quality_score", False),
        ("fct_runs", "accepted_range_score", False),
        ("fct_runs", "non_negative_cost_usd", False),
        ("fct_runs", "non_negative_input_tokens", False),
        ("fct_runs", "non_negative_output_tokens", False),
        ("fct_runs", "accepted_values_status", False),
        ("fct_test_results", "unique_run_id_test_id", True),
        ("fct_test_results", "rows_per_run_id_16", False),
        ("fct_test_results", "accepted_values_verdict", False),
        ("fct_test_results", "not_null_verdict", True),
        ("stg_runs", "unique_run_id", True),
        ("stg_cells", "unique_experiment_cell_id", True),
        ("stg_agent_runs", "unique_run_id", False),
        ("stg_builds", "unique_run_id", False),
        ("stg_bot_evaluations", "unique_run_id", False),
        ("stg_quality", "unique_run_id", False),
        ("stg_transcript_events", "unique_run_id_position", False),
        ("dim_cells", "unique_cell_id", True),
        ("mart_leaderboard_models", "unique_experiment_agent_model", True),
        ("mart_leaderboard_cells", "unique_experiment_cell_id", True),
        ("mart_cost_per_point", "unique_experiment_model", True),
    ],
)
def test_the_required_tests_are_declared(model: str, name: str, blocking: bool) -> None:
    assert _test(model, name).blocking is blocking


def test_accepted_values_follow_the_code() -> None:
    """The value lists in the SQL headers are copies: they must match their source."""

    def values(model: str, name: str) -> set[str]:
        sql = _test(model, name).sql
        listed = sql[sql.index(" not in (") + len(" not in (") : sql.rindex(")")]
        return {v.strip().strip("'") for v in listed.split(",")}

    assert values("fct_runs", "accepted_values_status") == {
        *typing.get_args(AgentStatus),
        "pending",
    }
    assert values("fct_test_results", "accepted_values_verdict") == {v.value for v in Verdict}
    assert values("fct_test_results", "accepted_values_test_id") == set(TEST_IDS)


def test_descriptions_read_as_sentences() -> None:
    assert _test("fct_runs", "unique_run_id").description == "run_id is unique in fct_runs"
    assert (
        _test("fct_test_results", "rows_per_run_id_16").description
        == "every run_id has exactly 16 rows in fct_test_results"
    )


def test_every_declared_test_passes_on_a_good_warehouse(good_db: Path) -> None:
    with duckdb.connect(str(good_db), read_only=True) as con:
        results = run_data_tests(con, ALL_TESTS)
    assert len(results) == len(ALL_TESTS) > 50
    assert [r.summary() for r in results if not r.passed] == []
    # The fixture has data for them to look at: not passing by default on empty tables.
    rows = con_rows(good_db, "select count(*) from fct_test_results")
    assert rows == 16 * 25  # 28 runs: two pending, one not evaluated yet


def con_rows(db: Path, sql: str) -> int:
    with duckdb.connect(str(db), read_only=True) as con:
        row = con.execute(sql).fetchone()
    assert row is not None
    return int(row[0])


def test_every_declared_test_passes_on_an_empty_warehouse(
    store: ArtifactStore, tmp_path: Path
) -> None:
    db = tmp_path / "empty.duckdb"
    build_warehouse(store, db, settings.sql_models_dir())
    with duckdb.connect(str(db), read_only=True) as con:
        failed = [r.summary() for r in run_data_tests(con, ALL_TESTS) if not r.passed]
    assert failed == []


# -- each kind fails on a broken table, with the culprit in the sample ---------------------


def _one_run(con: duckdb.DuckDBPyConnection) -> str:
    row = con.execute("select min(run_id) from fct_test_results").fetchone()
    assert row is not None
    return str(row[0])


def test_unique_fails_on_a_duplicate_key(con: duckdb.DuckDBPyConnection) -> None:
    run = _one_run(con)
    con.execute("insert into fct_runs select * from fct_runs where run_id = ?", [run])
    result = run_data_test(con, _test("fct_runs", "unique_run_id"))
    assert not result.passed and result.error is None
    assert result.failing_rows == 1
    assert result.sample == [{"run_id": run, "n_rows": 2}]


def test_composite_unique_fails_on_a_duplicate_pair(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("insert into fct_test_results select * from fct_test_results limit 1")
    result = run_data_test(con, _test("fct_test_results", "unique_run_id_test_id"))
    assert not result.passed and result.sample[0]["n_rows"] == 2
    assert set(result.sample[0]) == {"run_id", "test_id", "n_rows"}


def test_accepted_range_fails_on_an_out_of_range_score(con: duckdb.DuckDBPyConnection) -> None:
    run = _one_run(con)
    con.execute("update fct_runs set score = 150 where run_id = ?", [run])
    result = run_data_test(con, _test("fct_runs", "accepted_range_score"))
    assert not result.passed and result.failing_rows == 1
    assert result.sample[0]["run_id"] == run and result.sample[0]["score"] == 150


def test_non_negative_fails_on_a_negative_cost(con: duckdb.DuckDBPyConnection) -> None:
    run = _one_run(con)
    con.execute("update fct_runs set cost_usd = -0.5 where run_id = ?", [run])
    result = run_data_test(con, _test("fct_runs", "non_negative_cost_usd"))
    assert not result.passed and result.failing_rows == 1
    assert (result.sample[0]["run_id"], result.sample[0]["cost_usd"]) == (run, -0.5)


def test_rows_per_fails_on_a_run_with_fifteen_verdicts(con: duckdb.DuckDBPyConnection) -> None:
    run = _one_run(con)
    con.execute("delete from fct_test_results where run_id = ? and test_id = 'rotate'", [run])
    result = run_data_test(con, _test("fct_test_results", "rows_per_run_id_16"))
    assert not result.passed
    assert result.sample == [{"run_id": run, "n_rows": 15}]


def test_accepted_values_fails_on_a_bad_verdict(con: duckdb.DuckDBPyConnection) -> None:
    run = _one_run(con)
    con.execute(
        "update fct_test_results set verdict = 'MAYBE' where run_id = ? and test_id = 'lock'",
        [run],
    )
    result = run_data_test(con, _test("fct_test_results", "accepted_values_verdict"))
    assert not result.passed and result.failing_rows == 1
    assert result.sample == [{"run_id": run, "test_id": "lock", "verdict": "MAYBE", "reason": None}]


def test_not_null_fails_on_a_missing_key(con: duckdb.DuckDBPyConnection) -> None:
    run = _one_run(con)
    con.execute("update fct_runs set cell_id = null where run_id = ?", [run])
    result = run_data_test(con, _test("fct_runs", "not_null_cell_id"))
    assert not result.passed and result.sample[0]["run_id"] == run
    # The other columns' tests are separate checks, and still pass.
    assert run_data_test(con, _test("fct_runs", "not_null_run_id")).passed


def test_expect_empty_fails_on_its_rows(con: duckdb.DuckDBPyConnection) -> None:
    run = _one_run(con)
    con.execute("update fct_runs set tests_passed = tests_passed + 1 where run_id = ?", [run])
    result = run_data_test(con, _test("fct_runs", "verdict_counts_add_up_to_16"))
    assert not result.passed and result.sample[0]["run_id"] == run


def test_null_passes_range_sign_and_value_tests(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("update fct_runs set score = null, cost_usd = null, status = null")
    for name in ("accepted_range_score", "non_negative_cost_usd", "accepted_values_status"):
        assert run_data_test(con, _test("fct_runs", name)).passed, name
    assert not run_data_test(con, _test("fct_runs", "not_null_status")).passed


def test_the_sample_holds_at_most_five_rows(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("update fct_runs set cost_usd = -1")
    result = run_data_test(con, _test("fct_runs", "non_negative_cost_usd"))
    assert result.failing_rows == 28 and len(result.sample) == 5


def test_a_test_whose_sql_fails_is_a_failed_result(
    con: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    path = tmp_path / "fct_runs.sql"
    path.write_text("-- test: not_null(no_such_column)\nselect 1 as x")
    result = run_data_test(con, load_model(path).tests[0])
    assert not result.passed and result.failing_rows == 0
    assert result.error is not None and "no_such_column" in result.error
    assert "ERROR" in result.summary()


# -- the grammar ------------------------------------------------------------------------


def test_the_grammar_end_to_end(tmp_path: Path) -> None:
    path = tmp_path / "m.sql"
    path.write_text(
        "-- materialized: view\n"
        "-- test: unique(a, b)\n"
        "-- test: accepted_values(s, 'x, (y)', 'it''s', '3') blocking\n"
        "-- test: accepted_values(a, 1, 2, 3)\n"
        "-- test: accepted_range(v, -1.5, 2e3)\n"
        "-- test: expect_empty(no_big_ones) blocking: select * from m where v > 10;\n"
        "select 1 as a, 2 as b, 'x' as s, 1.0 as v\n"
    )
    tests = load_model(path).tests
    assert [t.name for t in tests] == [
        "unique_a_b",
        "accepted_values_s",
        "accepted_values_a",
        "accepted_range_v",
        "no_big_ones",
    ]
    assert [t.blocking for t in tests] == [False, True, False, False, True]
    assert [t.line for t in tests] == [2, 3, 4, 5, 6]
    assert tests[0].description == "(a, b) is unique in m"
    assert tests[4].sql == "select * from m where v > 10"
    with duckdb.connect() as con:
        con.execute(
            "create table m as select * from (values (1, 2, 'x, (y)', -1.5), "
            "(2, 2, 'it''s', 2000), (3, 2, '3', null)) t(a, b, s, v)"
        )
        assert [r.passed for r in run_data_tests(con, tests)] == [True, True, True, True, False]


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("unique()", "at least 1 argument"),
        ("uniqe(run_id)", "unknown test kind 'uniqe'"),
        ("unique(run_id", "missing closing parenthesis"),
        ("unique run_id", "expected <kind>"),
        ("unique(run-id)", "plain column name"),
        ("not_null(a) blockin", "only 'blocking' may follow"),
        ("accepted_range(score, 0)", "takes 3 argument"),
        ("accepted_range(score, low, 100)", "must be a number"),
        ("accepted_range(score, 100, 0)", "above the high bound"),
        ("non_negative(a, b)", "takes 1 argument"),
        ("accepted_values(status)", "at least 2"),
        ("accepted_values(status, ok)", "quoted string"),
        ("accepted_values(status, 'ok)", "unterminated string"),
        ("rows_per(run_id, 0)", "positive integer"),
        ("rows_per(run_id, 1.5)", "positive integer"),
        ("expect_empty(check)", "needs its SQL"),
        ("expect_empty(bad name): select 1", "plain column name"),
        ("expect_empty(check): delete from t", "one SELECT"),
        ("expect_empty(check): select (1 from t", "cannot parse"),
        ("unique(a): select 1", "only expect_empty"),
        ("unique(a, , b)", "empty argument"),
    ],
)
def test_malformed_test_lines_name_file_and_line(tmp_path: Path, line: str, problem: str) -> None:
    path = tmp_path / "broken.sql"
    path.write_text(f"-- materialized: table\n-- test: {line}\nselect 1 as a\n")
    with pytest.raises(SqlModelError, match=problem) as info:
        load_model(path)
    assert "broken.sql:2:" in str(info.value)
    assert line in str(info.value)


def test_a_repeated_test_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "twice.sql"
    path.write_text("-- test: unique(a)\n-- test: unique(a) blocking\nselect 1 as a\n")
    with pytest.raises(SqlModelError, match=r"twice\.sql:2: test unique_a is already declared"):
        load_model(path)

"""Data tests declared in a model's header, and running them against the warehouse.

A model file declares its tests one per line in its header comment (`models.py` parses
them):

    -- test: unique(run_id) blocking
    -- test: not_null(run_id, cell_id)
    -- test: accepted_range(score, 0, 100)
    -- test: non_negative(cost_usd)
    -- test: accepted_values(status, 'completed', 'failed')
    -- test: rows_per(run_id, 16)
    -- test: expect_empty(scores_add_up): select run_id from fct_runs where ...

Each test is a query that returns the *failing* rows: it passes when that query returns
none. As in dbt, NULL passes the range, sign and value tests (a missing value is what
not_null is for) and rows with a NULL key are left out of unique and rows_per.
`blocking` marks a test whose failure should stop what reads the model (a Dagster
blocking asset check); the Dagster wiring reads it from here.
"""

from __future__ import annotations

import datetime as dt
import decimal
from dataclasses import dataclass, field
from typing import Any

import duckdb

SAMPLE_ROWS = 5

KINDS: tuple[str, ...] = (
    "unique",
    "not_null",
    "accepted_range",
    "non_negative",
    "accepted_values",
    "rows_per",
    "expect_empty",
)


@dataclass(frozen=True)
class DataTest:
    """One declared test of one model.

    `sql` returns the failing rows; `name` is a valid identifier, unique within the model
    (`unique_run_id`, `accepted_range_score`, `rows_per_run_id_16`), so that it can name a
    Dagster asset check.
    """

    name: str
    model: str
    kind: str
    sql: str
    blocking: bool
    description: str
    columns: tuple[str, ...] = ()  # the columns tested (empty for expect_empty)
    line: int = 0  # where the test is declared in the model file (1-based)


@dataclass(frozen=True)
class DataTestResult:
    test: DataTest
    passed: bool
    failing_rows: int
    # Up to SAMPLE_ROWS failing rows, as column → JSON-able value (for check metadata).
    sample: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None  # the test's own SQL failed (e.g. an unknown column)

    def summary(self) -> str:
        if self.error is not None:
            return f"{self.test.model}.{self.test.name}: ERROR {self.error}"
        if self.passed:
            return f"{self.test.model}.{self.test.name}: pass"
        return f"{self.test.model}.{self.test.name}: FAIL ({self.failing_rows} failing rows)"


def quote_ident(name: str) -> str:
    # Every column goes in double quotes: "repeat" and other keywords are valid columns.
    return '"' + name.replace('"', '""') + '"'


def _is_null_any(columns: tuple[str, ...]) -> str:
    return " or ".join(f"{quote_ident(c)} is null" for c in columns)


def unique_sql(model: str, columns: tuple[str, ...]) -> str:
    cols = ", ".join(quote_ident(c) for c in columns)
    return (
        f"select {cols}, count(*) as n_rows from {quote_ident(model)} "
        f"where not ({_is_null_any(columns)}) group by {cols} having count(*) > 1"
    )


def not_null_sql(model: str, column: str) -> str:
    return f"select * from {quote_ident(model)} where {quote_ident(column)} is null"


def accepted_range_sql(model: str, column: str, low: str, high: str) -> str:
    col = quote_ident(column)
    return f"select * from {quote_ident(model)} where {col} < {low} or {col} > {high}"


def non_negative_sql(model: str, column: str) -> str:
    return f"select * from {quote_ident(model)} where {quote_ident(column)} < 0"


def accepted_values_sql(model: str, column: str, values: tuple[str, ...]) -> str:
    col = quote_ident(column)
    listed = ", ".join(values)
    return f"select * from {quote_ident(model)} where {col} is not null and {col} not in ({listed})"


def rows_per_sql(model: str, column: str, n: int) -> str:
    col = quote_ident(column)
    return (
        f"select {col}, count(*) as n_rows from {quote_ident(model)} "
        f"where {col} is not null group by {col} having count(*) <> {n}"
    )


def _jsonable(value: Any) -> Any:
    # Samples end up in asset-check metadata and `--json` output, which take JSON only.
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if value == value and abs(value) != float("inf") else str(value)
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, dt.date | dt.datetime | dt.time):
        return value.isoformat()
    return str(value)


def run_data_test(con: duckdb.DuckDBPyConnection, test: DataTest) -> DataTestResult:
    """Run one test. A test whose SQL fails is a failed result carrying the error, never an
    exception: one broken declaration must not hide the other tests' results."""
    try:
        count = con.execute(f"select count(*) from ({test.sql}) as failing").fetchone()
        failing = int(count[0]) if count else 0
        sample: list[dict[str, Any]] = []
        if failing:
            cur = con.execute(f"select * from ({test.sql}) as failing limit {SAMPLE_ROWS}")
            columns = [d[0] for d in cur.description or []]
            sample = [
                {c: _jsonable(v) for c, v in zip(columns, row, strict=True)}
                for row in cur.fetchall()
            ]
    except duckdb.Error as err:
        return DataTestResult(test, passed=False, failing_rows=0, sample=[], error=str(err))
    return DataTestResult(test, passed=failing == 0, failing_rows=failing, sample=sample)


def run_data_tests(
    con: duckdb.DuckDBPyConnection, tests: list[DataTest] | tuple[DataTest, ...]
) -> list[DataTestResult]:
    return [run_data_test(con, t) for t in tests]

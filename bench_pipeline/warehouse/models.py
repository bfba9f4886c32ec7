"""SQL models from `dbt_like_sql/`: one `.sql` file is one table or view.

Dependencies are read from the SQL itself with sqlglot, so adding a file is all it
takes to add a model. A header comment picks how it is materialized:

    -- materialized: view          (default: table)
    -- description: one line shown in the UI and the docs
    -- test: unique(run_id) blocking   (any number of these: see datatests.py)
    -- incremental: run_id          (a table whose rows of a run depend on that run's
                                     source rows alone: an update recomputes just the
                                     runs that changed; see build.py)
    -- column: run_id: what it means  (one per column the model writes, in its order)
    -- columns: axes                 (one column per experiment axis, described by the
                                     axis catalogue, bench_pipeline/design/axes.py)

The description and the column lines are the one source of the table's documentation:
the build writes them as DuckDB comments (`COMMENT ON`, see catalog.py) and
docs/warehouse.md is generated from them.
"""

from __future__ import annotations

import functools
import graphlib
import re
from dataclasses import dataclass
from pathlib import Path

import sqlglot
from sqlglot import exp

from bench_pipeline.warehouse import datatests
from bench_pipeline.warehouse.datatests import DataTest

_HEADER = re.compile(
    r"^\s*--\s*(materialized|description|incremental)\s*:\s*(.+?)\s*$", re.MULTILINE
)


class SqlModelError(ValueError):
    """A model file that cannot be parsed or that forms a dependency cycle."""


@dataclass(frozen=True)
class SqlModel:
    name: str
    path: Path
    sql: str
    materialized: str  # "table" | "view"
    description: str
    references: frozenset[str]  # every table name the query reads (models and sources)
    tests: tuple[DataTest, ...] = ()  # the `-- test:` lines of the header, in file order
    # "run_id" when an update may recompute only the changed runs' rows (tables only)
    incremental: str | None = None
    # (column, what it means) for every column the model writes, in the header's order
    columns: tuple[tuple[str, str], ...] = ()

    def deps(self, model_names: set[str]) -> set[str]:
        return {ref for ref in self.references if ref in model_names and ref != self.name}


@functools.lru_cache(maxsize=256)
def _references(sql: str, path: Path) -> frozenset[str]:
    # Cached: parsing every model takes about half a second, and a warehouse update
    # loads the models each time.
    try:
        statements = [s for s in sqlglot.parse(sql, read="duckdb") if s is not None]
    except sqlglot.errors.ParseError as err:
        raise SqlModelError(f"{path}: cannot parse SQL: {err}") from err
    if len(statements) != 1 or not isinstance(statements[0], exp.Query):
        raise SqlModelError(f"{path}: a model holds exactly one SELECT query")
    tree = statements[0]
    ctes = {cte.alias_or_name for cte in tree.find_all(exp.CTE)}
    return frozenset(
        t.name for t in tree.find_all(exp.Table) if t.name and t.name not in ctes and not t.db
    )


_TEST_LINE = re.compile(r"^\s*--\s*test\s*:(.*)$")
_COLUMN_LINE = re.compile(r"^\s*--\s*column\s*:\s*([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(.+?)\s*$")
_AXES_LINE = re.compile(r"^\s*--\s*columns\s*:\s*axes\s*$")


def axis_columns() -> list[tuple[str, str]]:
    """One (column, meaning) per axis of the catalogue, in catalogue order."""
    from bench_pipeline.design.axes import AXES

    return [(name, f"axis {name}: {axis.description}") for name, axis in AXES.items()]


def parse_columns(sql: str, path: Path) -> tuple[tuple[str, str], ...]:
    """The `-- column:` lines (and `-- columns: axes`) of a model file, in order."""
    columns: list[tuple[str, str]] = []
    for number, text in enumerate(sql.splitlines(), start=1):
        match = _COLUMN_LINE.match(text)
        entries = [match.groups()] if match else axis_columns() if _AXES_LINE.match(text) else []
        for name, meaning in entries:
            if any(name == seen for seen, _ in columns):
                raise SqlModelError(f"{path}:{number}: column {name} is described twice")
            columns.append((name, meaning))
    return tuple(columns)


_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
_TAIL = re.compile(r"^(?:(blocking)\b)?\s*(?::(.*))?$", re.DOTALL)
# How many arguments each kind takes: (at least, at most); None: no upper bound.
_ARITY: dict[str, tuple[int, int | None]] = {
    "unique": (1, None),
    "not_null": (1, None),
    "accepted_range": (3, 3),
    "non_negative": (1, 1),
    "accepted_values": (2, None),
    "rows_per": (2, 2),
    "expect_empty": (1, 1),
}
assert set(_ARITY) == set(datatests.KINDS)


class _BadTest(ValueError):
    """A problem with one test line; parse_tests adds the file and line to it."""


def _split_call(text: str) -> tuple[str, list[str], str]:
    """`kind(a, 'b, c', 3) rest` -> ("kind", ["a", "'b, c'", "3"], "rest").

    Quoted arguments keep their quotes (they are SQL string literals, '' escapes a quote),
    so that a comma or a parenthesis inside one is no separator.
    """
    match = re.match(r"\s*([A-Za-z_]+)\s*\(", text)
    if not match:
        raise _BadTest("expected <kind>(<arguments>)")
    kind, i = match.group(1), match.end()
    args: list[str] = []
    current = ""
    while True:
        if i >= len(text):
            raise _BadTest("missing closing parenthesis")
        ch = text[i]
        if ch == "'":
            end = i + 1
            while True:
                end = text.find("'", end)
                if end < 0:
                    raise _BadTest("unterminated string")
                if text[end + 1 : end + 2] == "'":  # '' is an escaped quote
                    end += 2
                    continue
                break
            current += text[i : end + 1]
            i = end + 1
        elif ch in ",)":
            args.append(current.strip())
            current = ""
            i += 1
            if ch == ")":
                break
        else:
            current += ch
            i += 1
    if args == [""]:
        args = []
    if any(a == "" for a in args):
        raise _BadTest("empty argument")
    return kind, args, text[i:].strip()


def _ident(arg: str, what: str) -> str:
    if not _IDENT.match(arg):
        raise _BadTest(f"{what} must be a plain column name, not {arg!r}")
    return arg


def _number(arg: str, what: str) -> float:
    if not _NUMBER.match(arg):
        raise _BadTest(f"{what} must be a number, not {arg!r}")
    return float(arg)


def _literal(arg: str) -> str:
    if (arg.startswith("'") and arg.endswith("'") and len(arg) >= 2) or _NUMBER.match(arg):
        return arg
    if arg.lower() in {"true", "false"}:
        return arg.lower()
    raise _BadTest(f"accepted value {arg!r} must be a quoted string, a number, true or false")


def _parse_test(text: str, model: str, line: int) -> list[DataTest]:
    kind, args, rest = _split_call(text)
    if kind not in _ARITY:
        raise _BadTest(f"unknown test kind {kind!r}; known: {', '.join(datatests.KINDS)}")
    low, high = _ARITY[kind]
    if len(args) < low or (high is not None and len(args) > high):
        wanted = f"{low}" if low == high else f"at least {low}"
        raise _BadTest(f"{kind} takes {wanted} argument(s), got {len(args)}")
    tail = _TAIL.match(rest)
    if not tail:
        raise _BadTest(f"unexpected {rest!r} after the arguments (only 'blocking' may follow)")
    blocking = tail.group(1) is not None
    custom_sql = tail.group(2)
    if kind != "expect_empty" and custom_sql is not None:
        raise _BadTest(f"only expect_empty takes SQL after a colon, not {kind}")

    def make(name: str, sql: str, description: str, columns: tuple[str, ...]) -> DataTest:
        return DataTest(name, model, kind, sql, blocking, description, columns, line)

    if kind == "expect_empty":
        name = _ident(args[0], "the test name")
        sql = (custom_sql or "").strip().rstrip(";").strip()
        if not sql:
            raise _BadTest("expect_empty needs its SQL after a colon: expect_empty(name): select")
        try:
            parsed = [s for s in sqlglot.parse(sql, read="duckdb") if s is not None]
        except sqlglot.errors.ParseError as err:
            raise _BadTest(f"cannot parse the SQL: {err}") from err
        if len(parsed) != 1 or not isinstance(parsed[0], exp.Query):
            raise _BadTest("the SQL must be one SELECT query returning the failing rows")
        return [make(name, sql, f"the custom check {name} finds no failing rows in {model}", ())]
    if kind == "unique":
        cols = tuple(_ident(a, "a unique column") for a in args)
        shown = cols[0] if len(cols) == 1 else "(" + ", ".join(cols) + ")"
        return [
            make(
                "unique_" + "_".join(cols),
                datatests.unique_sql(model, cols),
                f"{shown} is unique in {model}",
                cols,
            )
        ]
    if kind == "not_null":
        # One test per column: each is its own asset check, named after its column.
        cols = tuple(_ident(a, "a not_null column") for a in args)
        return [
            make(
                f"not_null_{c}",
                datatests.not_null_sql(model, c),
                f"{c} is never NULL in {model}",
                (c,),
            )
            for c in cols
        ]
    col = _ident(args[0], f"the {kind} column")
    if kind == "accepted_range":
        lo, hi = _number(args[1], "the low bound"), _number(args[2], "the high bound")
        if lo > hi:
            raise _BadTest(f"the low bound {args[1]} is above the high bound {args[2]}")
        return [
            make(
                f"accepted_range_{col}",
                datatests.accepted_range_sql(model, col, args[1], args[2]),
                f"{col} lies between {args[1]} and {args[2]} in {model} (NULL passes)",
                (col,),
            )
        ]
    if kind == "non_negative":
        return [
            make(
                f"non_negative_{col}",
                datatests.non_negative_sql(model, col),
                f"{col} is never negative in {model} (NULL passes)",
                (col,),
            )
        ]
    if kind == "accepted_values":
        values = tuple(_literal(a) for a in args[1:])
        return [
            make(
                f"accepted_values_{col}",
                datatests.accepted_values_sql(model, col, values),
                f"{col} is one of {', '.join(values)} in {model} (NULL passes)",
                (col,),
            )
        ]
    # rows_per
    if not re.fullmatch(r"\d+", args[1]) or int(args[1]) < 1:
        raise _BadTest(f"the row count must be a positive integer, not {args[1]!r}")
    n = int(args[1])
    return [
        make(
            f"rows_per_{col}_{n}",
            datatests.rows_per_sql(model, col, n),
            f"every {col} has exactly {n} rows in {model}",
            (col,),
        )
    ]


def parse_tests(sql: str, model: str, path: Path) -> tuple[DataTest, ...]:
    """The `-- test:` lines of a model file, as DataTests (see datatests.py for the grammar).

    Raises SqlModelError naming the file and line of a malformed or duplicate test.
    """
    tests: list[DataTest] = []
    seen: dict[str, int] = {}
    for number, text in enumerate(sql.splitlines(), start=1):
        match = _TEST_LINE.match(text)
        if not match:
            continue
        try:
            parsed = _parse_test(match.group(1), model, number)
        except _BadTest as err:
            raise SqlModelError(f"{path}:{number}: bad test {text.strip()!r}: {err}") from None
        for test in parsed:
            if test.name in seen:
                raise SqlModelError(
                    f"{path}:{number}: test {test.name} is already declared on line "
                    f"{seen[test.name]} (test names are unique within a model)"
                )
            seen[test.name] = number
            tests.append(test)
    return tuple(tests)


def load_model(path: Path) -> SqlModel:
    sql = path.read_text()
    header = {k: v for k, v in _HEADER.findall(sql)}
    materialized = header.get("materialized", "table").lower()
    if materialized not in {"table", "view"}:
        raise SqlModelError(f"{path}: materialized must be table or view, not {materialized!r}")
    incremental = header.get("incremental")
    if incremental is not None and (incremental != "run_id" or materialized != "table"):
        raise SqlModelError(
            f"{path}: incremental is only for tables, by run_id (got {incremental!r})"
        )
    return SqlModel(
        incremental=incremental,
        name=path.stem,
        path=path,
        sql=sql.strip().rstrip(";"),
        materialized=materialized,
        description=header.get("description", ""),
        references=_references(sql, path),
        tests=parse_tests(sql, path.stem, path),
        columns=parse_columns(sql, path),
    )


def load_models(folder: Path) -> list[SqlModel]:
    """All models of the folder, in an order where each comes after what it reads."""
    models = {m.name: m for m in (load_model(p) for p in sorted(folder.glob("*.sql")))}
    names = set(models)
    sorter = graphlib.TopologicalSorter({n: m.deps(names) for n, m in models.items()})
    try:
        order = list(sorter.static_order())
    except graphlib.CycleError as err:
        raise SqlModelError(
            f"{folder}: models depend on each other in a cycle: {err.args[1]}"
        ) from None
    return [models[n] for n in order]

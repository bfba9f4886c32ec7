"""Read everything the site shows from the warehouse, in a few bulk queries.

The file is opened read-only (the pipeline swaps a new file in when it writes, so a reader
never blocks it). Tables that an older or partial warehouse lacks are read as empty and
named in `missing`, so the site says what is absent instead of failing.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from bench_pipeline.bot.contract import TEST_IDS


class Row(dict[str, Any]):
    """A table row; a column the table lacks reads as None (older or partial warehouses)."""

    def __missing__(self, key: str) -> None:
        return None

    def __getattr__(self, name: str) -> Any:
        # Templates read `row.column`: answering here spares Jinja an AttributeError per
        # lookup (thousands of pages). Dunder names stay real attribute lookups.
        if name.startswith("__"):
            raise AttributeError(name)
        return self.get(name)


class ReportError(Exception):
    """The site cannot be built; the message is one line saying why and what to do."""


# What the site reads, in the order the pages use them; fct_runs is required.
TABLES: tuple[str, ...] = (
    "fct_runs",
    "fct_test_results",
    "dim_cells",
    "stg_cells",
    "mart_leaderboard_models",
    "mart_leaderboard_cells",
    "mart_cost_per_point",
    "mart_main_effects",
    "mart_interactions",
    "mart_effect_noise",
    "mart_not_estimable",
    "raw_agent_generation",
    "raw_sandboxed_build",
    "raw_bot_evaluation",
    "raw_quality_metrics",
    "stg_transcript_events",
    "mart_bot_accuracy",
    "mart_bot_accuracy_groups",
)
WASTED_EVENTS_PER_RUN = 12


@dataclass
class Warehouse:
    path: Path
    runs: list[Row]  # fct_runs, by experiment then run_id
    verdicts: dict[str, dict[str, str]]  # run_id -> test_id -> verdict
    cells: dict[str, Row]  # dim_cells by cell_id
    designs: dict[str, list[str]]  # experiment -> design types of its current cells
    models: list[Row]  # mart_leaderboard_models
    cell_board: list[Row]  # mart_leaderboard_cells
    cost: list[Row]  # mart_cost_per_point
    main_effects: list[Row]
    interactions: list[Row]
    noise: list[Row]
    not_estimable: list[Row]
    agent: dict[str, Row]  # raw_agent_generation by run_id
    build: dict[str, Row]
    bot: dict[str, Row]
    quality: dict[str, Row]
    wasted_events: dict[str, list[Row]]
    missing: list[str] = field(default_factory=list)
    accuracy: list[Row] = field(default_factory=list)  # mart_bot_accuracy
    # mart_bot_accuracy_groups' overall rows (test_id 'all'): per renderer and author group
    accuracy_groups: list[Row] = field(default_factory=list)

    @property
    def experiments(self) -> list[str]:
        return sorted({r["experiment"] for r in self.runs})


def _rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[Row]:
    cur = con.execute(sql)
    names = [d[0] for d in cur.description]
    return [Row(zip(names, values, strict=True)) for values in cur.fetchall()]


def _by_run(rows: list[Row]) -> dict[str, Row]:
    return {r["run_id"]: r for r in rows if r.get("run_id") is not None}


def _json(value: Any) -> Any:
    """Nested values the stages store as JSON text (breakdowns, reasons), decoded."""
    if isinstance(value, str) and value[:1] in "{[":
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def open_warehouse(db_path: Path) -> duckdb.DuckDBPyConnection:
    if not db_path.exists():
        raise ReportError(
            f"no warehouse at {db_path}: run `bench run` (or `make run`) first, or pass --db"
        )
    if not db_path.is_file():
        raise ReportError(f"{db_path} is not a file: pass the warehouse .duckdb file with --db")
    try:
        return duckdb.connect(str(db_path), read_only=True)
    except duckdb.Error as err:
        first = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise ReportError(f"cannot open the warehouse {db_path}: {first}") from err


def load_warehouse(db_path: Path) -> Warehouse:
    """Everything the pages need. Raises ReportError for a missing or empty warehouse."""
    con = open_warehouse(db_path)
    try:
        return _load(con, db_path)
    except duckdb.Error as err:
        first = str(err).splitlines()[0]
        raise ReportError(f"cannot read the warehouse {db_path}: {first}") from err
    finally:
        con.close()


def _load(con: duckdb.DuckDBPyConnection, db_path: Path) -> Warehouse:
    present = {
        name
        for (name,) in con.execute(
            "select table_name from information_schema.tables where table_schema = 'main'"
        ).fetchall()
    }
    if "fct_runs" not in present:
        raise ReportError(
            f"the warehouse {db_path} has no fct_runs table: build it with `bench run` first"
        )
    missing = [t for t in TABLES if t not in present]

    def table(name: str, sql: str | None = None) -> list[Row]:
        if name not in present:
            return []
        return _rows(con, sql or f"select * from {name}")

    runs = table("fct_runs", "select * from fct_runs order by experiment, run_id")
    if not runs:
        raise ReportError(
            f"the warehouse {db_path} has no runs yet: run an experiment with `bench run` first"
        )
    verdicts: dict[str, dict[str, str]] = defaultdict(dict)
    if "fct_test_results" in present:
        for run_id, test_id, verdict in con.execute(
            "select run_id, test_id, verdict from fct_test_results"
        ).fetchall():
            verdicts[run_id][test_id] = verdict
    designs: dict[str, set[str]] = defaultdict(set)
    for row in table("stg_cells", "select experiment, designs from stg_cells where current"):
        designs[row["experiment"]].update(row["designs"] or [])
    wasted: dict[str, list[Row]] = defaultdict(list)
    for row in table(
        "stg_transcript_events",
        "select run_id, position, line, tool, tool_input, wasted, text from stg_transcript_events"
        " where wasted is not null qualify row_number() over (partition by run_id order by"
        f" position) <= {WASTED_EVENTS_PER_RUN} order by run_id, position",
    ):
        wasted[row["run_id"]].append(row)
    quality = _by_run(table("raw_quality_metrics"))
    bot = _by_run(table("raw_bot_evaluation"))
    build = _by_run(table("raw_sandboxed_build"))
    # The warehouse keeps a record's objects and lists as JSON (docs/warehouse.md, Sources):
    # the bot's reasons and controls, a build's steps.
    for rows in (quality, bot, build):
        for row in rows.values():
            for key, value in row.items():
                row[key] = _json(value)
    agent = _by_run(table("raw_agent_generation"))
    for row in agent.values():
        row["details"] = _json(row.get("details"))
    return Warehouse(
        path=db_path,
        runs=runs,
        verdicts=dict(verdicts),
        cells={r["cell_id"]: r for r in table("dim_cells")},
        designs={e: sorted(d) for e, d in designs.items()},
        models=table(
            "mart_leaderboard_models",
            "select * from mart_leaderboard_models order by experiment, rank nulls last, model",
        ),
        cell_board=table(
            "mart_leaderboard_cells",
            "select * from mart_leaderboard_cells order by experiment, rank nulls last, cell_id",
        ),
        cost=table("mart_cost_per_point"),
        main_effects=table(
            "mart_main_effects",
            "select * from mart_main_effects order by experiment, metric, axis, level",
        ),
        interactions=table(
            "mart_interactions",
            'select * from mart_interactions order by experiment, metric, p_value nulls last, "axes"',
        ),
        noise=table("mart_effect_noise"),
        not_estimable=table(
            "mart_not_estimable",
            "select * from mart_not_estimable order by experiment, metric, term",
        ),
        agent=agent,
        build=build,
        bot=bot,
        quality=quality,
        wasted_events=dict(wasted),
        missing=missing,
        accuracy=table(
            "mart_bot_accuracy", "select * from mart_bot_accuracy order by corpus, split"
        ),
        accuracy_groups=table(
            "mart_bot_accuracy_groups",
            "select * from mart_bot_accuracy_groups where test_id = 'all' "
            "order by corpus, split, breakdown, group_name",
        ),
    )


def verdicts_in_order(verdicts: dict[str, str]) -> list[tuple[str, str | None]]:
    return [(t, verdicts.get(t)) for t in TEST_IDS]

"""The `raw_bot_accuracy` sources: the bot accuracy benchmark's published output files.

`benchmarks/bot_accuracy.py --publish` writes one JSON file per measurement into
`<artifacts>/bot_accuracy/`; every file becomes 17 rows of `raw_bot_accuracy` (the sixteen
tests and the overall row, `bench_pipeline.bot.accuracy.warehouse_rows`) and 17 rows per
renderer and per author group of `raw_bot_accuracy_groups` (`group_warehouse_rows`). A file
that is not the benchmark's output is left out of both with one warning naming it, and the
rest still loads.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import duckdb
import pandas as pd

from bench_pipeline.bot.accuracy import (
    GROUP_WAREHOUSE_COLUMNS,
    WAREHOUSE_COLUMNS,
    group_warehouse_rows,
    warehouse_rows,
)

TABLE = "raw_bot_accuracy"
GROUPS_TABLE = "raw_bot_accuracy_groups"
FOLDER = "bot_accuracy"  # under the artifact store's root
log = logging.getLogger(__name__)


def load_bot_accuracy(con: duckdb.DuckDBPyConnection, artifacts_root: Path) -> list[str]:
    """(Re)create `raw_bot_accuracy` and `raw_bot_accuracy_groups` from the published files;
    returns the warnings."""
    rows: list[dict[str, object]] = []
    group_rows: list[dict[str, object]] = []
    warnings: list[str] = []
    for path in sorted((artifacts_root / FOLDER).glob("*.json")):
        try:
            summary = json.loads(path.read_text())
            # Both or neither: a file half loaded would give the groups of a measurement
            # the per-test table does not hold.
            these = warehouse_rows(summary, str(path))
            these_groups = group_warehouse_rows(summary, str(path))
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as err:
            warnings.append(f"{path}: not a bot accuracy file, left out ({err!s:.200})")
            continue
        rows += these
        group_rows += these_groups
    for warning in warnings:
        log.warning(warning)
    _replace(con, TABLE, WAREHOUSE_COLUMNS, rows)
    _replace(con, GROUPS_TABLE, GROUP_WAREHOUSE_COLUMNS, group_rows)
    return warnings


def _replace(
    con: duckdb.DuckDBPyConnection,
    table: str,
    columns: dict[str, str],
    rows: list[dict[str, object]],
) -> None:
    cols = ", ".join(f'"{c}" {t}' for c, t in columns.items())
    con.execute(f"CREATE OR REPLACE TABLE {table} ({cols})")
    if rows:
        frame = pd.DataFrame(rows, columns=list(columns))
        con.register("_accuracy_frame", frame)
        names = ", ".join(f'"{c}"' for c in columns)
        con.execute(f"INSERT INTO {table} ({names}) SELECT {names} FROM _accuracy_frame")
        con.unregister("_accuracy_frame")

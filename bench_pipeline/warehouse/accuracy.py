"""The `raw_bot_accuracy` source: the bot accuracy benchmark's published output files.

`benchmarks/bot_accuracy.py --publish` writes one JSON file per measurement into
`<artifacts>/bot_accuracy/`; every file becomes 17 rows (the sixteen tests and the overall
row, `bench_pipeline.bot.accuracy.warehouse_rows`). A file that is not the benchmark's output
is left out with one warning naming it, and the rest still loads.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import duckdb
import pandas as pd

from bench_pipeline.bot.accuracy import WAREHOUSE_COLUMNS, warehouse_rows

TABLE = "raw_bot_accuracy"
FOLDER = "bot_accuracy"  # under the artifact store's root
log = logging.getLogger(__name__)


def load_bot_accuracy(con: duckdb.DuckDBPyConnection, artifacts_root: Path) -> list[str]:
    """(Re)create `raw_bot_accuracy` from the published files; returns the warnings."""
    rows: list[dict[str, object]] = []
    warnings: list[str] = []
    for path in sorted((artifacts_root / FOLDER).glob("*.json")):
        try:
            rows += warehouse_rows(json.loads(path.read_text()), str(path))
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as err:
            warnings.append(f"{path}: not a bot accuracy file, left out ({err!s:.200})")
    for warning in warnings:
        log.warning(warning)
    cols = ", ".join(f'"{c}" {t}' for c, t in WAREHOUSE_COLUMNS.items())
    con.execute(f"CREATE OR REPLACE TABLE {TABLE} ({cols})")
    if rows:
        frame = pd.DataFrame(rows, columns=list(WAREHOUSE_COLUMNS))
        con.register("_accuracy_frame", frame)
        names = ", ".join(f'"{c}"' for c in WAREHOUSE_COLUMNS)
        con.execute(f"INSERT INTO {TABLE} ({names}) SELECT {names} FROM _accuracy_frame")
        con.unregister("_accuracy_frame")
    return warnings

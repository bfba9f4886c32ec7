"""What writing the warehouse's comments costs (catalog.apply_comments), on a built warehouse.

    .venv/bin/python benchmarks/warehouse_comments.py [--repeat 5]

Builds a warehouse of the test suite's small store in a temporary folder, then times
`apply_comments` over every table: one transaction with every COMMENT, and, for comparison,
each COMMENT committed on its own. Prints figures; asserts nothing. The cost depends on the
number of columns (about 550), not on rows.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_pipeline import settings
from bench_pipeline.warehouse.artifacts import ArtifactStore
from bench_pipeline.warehouse.build import build_warehouse
from bench_pipeline.warehouse.catalog import apply_comments, table_docs
from tests.warehouse.fake_runs import write_store


def _one_by_one(con: duckdb.DuckDBPyConnection) -> None:
    rows = con.execute(
        "SELECT table_name, column_name, comment FROM duckdb_columns() WHERE NOT internal"
    ).fetchall()
    for table, column, comment in rows:
        text = (comment or "").replace("'", "''")
        con.execute(f'COMMENT ON COLUMN "{table}"."{column}" IS \'{text}\'')


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        store = ArtifactStore(root / "artifacts")
        write_store(store)
        db = root / "w.duckdb"
        build_warehouse(store, db, settings.sql_models_dir())
        docs = table_docs()
        with duckdb.connect(str(db)) as con:
            columns = con.execute(
                "SELECT count(*) FROM duckdb_columns() WHERE NOT internal"
            ).fetchone()[0]
            together, apart = [], []
            for _ in range(args.repeat):
                started = time.perf_counter()
                apply_comments(con, docs)
                together.append(time.perf_counter() - started)
                started = time.perf_counter()
                _one_by_one(con)
                apart.append(time.perf_counter() - started)
    print(f"{columns} columns, {args.repeat} repeats (median)")
    print(f"apply_comments, one transaction: {statistics.median(together):.3f} s")
    print(f"each COMMENT committed on its own: {statistics.median(apart):.3f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The one way anything writes to the warehouse: copy, change, swap.

DuckDB locks a database file per process, so an analyst holding `warehouse.duckdb`
open would block an in-place writer, and a reader must never see half a change. A
writer therefore takes the builders' file lock, copies the live file (when there is
one) beside it, changes the copy and renames it over the live file. Readers keep the
file they opened until they reconnect; a writer that dies leaves the live file as it
was.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import duckdb
import pandas as pd
from filelock import FileLock


def lock_for(db_path: Path) -> FileLock:
    return FileLock(str(db_path) + ".lock")


_BUILDING = re.compile(r"^\.(?P<name>.+)\.building-(?P<pid>\d+)(?:\.wal)?$")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


def reap_building_leftovers(db_path: Path) -> list[Path]:
    """Remove the copies (`.NAME.building-PID` and its `.wal`) that a writer killed with
    SIGKILL left beside the warehouse, each as big as the warehouse; only those whose PID
    is dead (a live one may be building right now). Returns what was removed."""
    removed = []
    try:
        entries = list(os.scandir(db_path.parent))
    except OSError:
        return removed
    for entry in entries:
        match = _BUILDING.match(entry.name)
        if match is None or match["name"] != db_path.name:
            continue
        pid = int(match["pid"])
        if pid == os.getpid() or _pid_alive(pid):
            continue
        if not entry.is_file(follow_symlinks=False) and not entry.is_symlink():
            continue  # a folder of that name is nobody's copy: left alone
        try:
            os.unlink(entry.path)
        except OSError:
            continue
        removed.append(Path(entry.path))
    return removed


@contextmanager
def updating(db_path: Path, *, fresh: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection to a private copy of the warehouse that replaces it on success.

    `fresh=True` starts from an empty database instead of a copy of the live one.
    """
    db_path.parent.mkdir(parents=True, exist_ok=True)
    with lock_for(db_path):
        reap_building_leftovers(db_path)
        tmp = db_path.with_name(f".{db_path.name}.building-{os.getpid()}")
        wal = tmp.with_name(tmp.name + ".wal")
        for leftover in (tmp, wal):
            leftover.unlink(missing_ok=True)
        try:
            if db_path.exists() and not fresh:
                # Every writer checkpoints before its rename, so the live file is whole
                # without its WAL; readers open it read-only and never change it.
                shutil.copyfile(db_path, tmp)
            with duckdb.connect(str(tmp)) as con:
                yield con
                con.execute("CHECKPOINT")
            os.replace(tmp, db_path)
        finally:
            for leftover in (tmp, wal):
                leftover.unlink(missing_ok=True)


def replace_table(
    con: duckdb.DuckDBPyConnection,
    name: str,
    frame: pd.DataFrame,
    schema: Mapping[str, str] | None = None,
) -> None:
    """Create or replace `name` from a DataFrame, cast to `schema` (column -> SQL type).

    Why the schema: an empty frame has no types to infer, and analysts' queries should
    not change meaning with the data (a column of NULLs is still a DOUBLE).
    """
    if schema is None:
        select = "*"
    else:
        for column in schema:
            if column not in frame.columns:
                frame = frame.assign(**{column: None})
        select = ", ".join(f'CAST("{c}" AS {t}) AS "{c}"' for c, t in schema.items())
    con.register("_replace_frame", frame)
    try:
        con.execute(f'CREATE OR REPLACE TABLE "{name}" AS SELECT {select} FROM _replace_frame')
    finally:
        con.unregister("_replace_frame")

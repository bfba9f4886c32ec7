"""The artifact store: every stage's per-run output as files, written atomically.

Why files and not DuckDB rows: DuckDB admits one writing process per database file,
and many partition runs execute at once in separate processes. Each run therefore
writes only its own files here (no shared lock, no lost rows), and a single step
builds the warehouse from them (see `build.py`).

Layout under the root:

    designs/<experiment>.json          the cells and runs of one experiment
    records/<stage>/<run_id>.json      one flat record per run and stage (a warehouse row)
    runs/<run_id>/<stage>/...          larger evidence: transcripts, archives, screenshots
    journal/<table>/<run_id>~<token>   "this run's record changed": what the warehouse reads next
    columnar/<table>/part-*.parquet    the records again, as Parquet (columnar.py)
"""

from __future__ import annotations

import json
import math
import os
import re
import secrets
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

JOURNAL = "journal"
MARKER_SEP = "~"  # never in a run id (see _SAFE_NAME)
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,199}$")
# The warehouse reads integers as BIGINT: a bigger one would silently become NULL there.
_INT64 = (-(2**63), 2**63 - 1)


def _breaks_its_model(stage: str, record: dict[str, Any]) -> tuple[str, str] | None:
    """(field, what is wrong) where `record` does not validate against its stage's model
    (records.py): the store refuses it on write, so a stage cannot leave a row the
    warehouse would load wrong (a number as text, a list for a verdict)."""
    from pydantic import ValidationError

    from bench_pipeline.records import RECORDS  # lazy: the models import the bot's contract

    model = RECORDS.get(stage)
    if model is None:
        return None
    try:
        model.model_validate(record)
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(p) for p in first.get("loc", ())) or "record"
        return field, f"{field} {first.get('msg', 'is invalid')} ({first.get('input')!r:.80})"
    return None


class RecordError(ValueError):
    """A record holds a value no warehouse row can: a NaN or infinite float, an integer
    beyond 64 bits. The message names the run, the record's path and the field."""

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.field = field


def unrepresentable(value: Any, where: str = "") -> tuple[str, Any] | None:
    """(field path, value) of the first number in `value` a record cannot hold, else None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else (where, value)
    if isinstance(value, int):
        return None if _INT64[0] <= value <= _INT64[1] else (where, value)
    if isinstance(value, Mapping):
        items: Iterator[tuple[Any, Any]] = iter(value.items())
    elif isinstance(value, list | tuple):
        items = iter(enumerate(value))
    else:
        return None
    for key, item in items:
        found = unrepresentable(item, f"{where}.{key}" if where else str(key))
        if found is not None:
            return found
    return None


def _check_name(kind: str, name: str) -> str:
    # Names become file names: refuse anything that could escape the store.
    if not _SAFE_NAME.match(name) or ".." in name:
        raise ValueError(f"invalid {kind} name for the artifact store: {name!r}")
    return name


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write so that a reader or a crash sees the old complete file or the new one, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_json(path: Path, obj: Any) -> None:
    text = json.dumps(obj, indent=2, sort_keys=True, default=str, allow_nan=False)
    atomic_write_bytes(path, text.encode() + b"\n")


def _has_json(folder: Path) -> bool:
    with os.scandir(folder) as entries:
        return any(e.name.endswith(".json") and not e.name.startswith(".") for e in entries)


@dataclass(frozen=True)
class ArtifactStore:
    root: Path

    def design_path(self, experiment: str) -> Path:
        return self.root / "designs" / f"{_check_name('experiment', experiment)}.json"

    def record_path(self, stage: str, run_id: str) -> Path:
        return (
            self.root
            / "records"
            / _check_name("stage", stage)
            / f"{_check_name('run', run_id)}.json"
        )

    def run_dir(self, run_id: str, stage: str | None = None) -> Path:
        base = self.root / "runs" / _check_name("run", run_id)
        return base / _check_name("stage", stage) if stage else base

    def save_design(self, design: Mapping[str, Any]) -> dict[str, Any]:
        """Store an experiment's design (the `bench design --json` object).

        Cells and runs of an earlier design that the new one no longer has are kept,
        marked `current: false`: their partitions and results stay addressable.
        Returns what was written.
        """
        experiment = design["experiment"]
        path = self.design_path(experiment)
        previous = self.read_design(experiment) if path.is_file() else {"cells": [], "runs": []}
        cell_ids = {c["cell_id"] for c in design["cells"]}
        run_ids = {r["run_id"] for r in design["runs"]}
        merged = {
            **design,
            "cells": [{**c, "current": True} for c in design["cells"]]
            + [{**c, "current": False} for c in previous["cells"] if c["cell_id"] not in cell_ids],
            "runs": [{**r, "current": True} for r in design["runs"]]
            + [{**r, "current": False} for r in previous["runs"] if r["run_id"] not in run_ids],
        }
        atomic_write_json(path, merged)
        return merged

    def read_design(self, experiment: str) -> dict[str, Any]:
        return json.loads(self.design_path(experiment).read_text())

    def designs(self) -> Iterator[dict[str, Any]]:
        for path in sorted((self.root / "designs").glob("*.json")):
            # A design is no one run's record: a bad one is named, not quarantined (every
            # run of the experiment hangs on it); `bench run` writes it again.
            try:
                design = json.loads(path.read_text())
            except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
                raise ValueError(f"design file {path} cannot be read: {err}") from None
            yield design

    def write_record(self, stage: str, run_id: str, record: Mapping[str, Any]) -> Path:
        """One warehouse row for (stage, run). Replaces the previous one atomically.

        Raises RecordError (nothing written, the previous record kept) for a NaN or an
        infinite float, or an integer beyond 64 bits: the stage turns that into the run's
        error record instead of storing a value the warehouse would read as NULL or refuse.
        """
        path = self.record_path(stage, run_id)
        found = unrepresentable(dict(record))
        if found is not None:
            field, value = found
            raise RecordError(
                f"run {run_id}: record {path}: {field} is {value!r}, which a record cannot "
                "hold (not finite, or beyond 64 bits)",
                field,
            )
        problem = _breaks_its_model(stage, {**record, "run_id": run_id})
        if problem is not None:
            field, message = problem
            raise RecordError(f"run {run_id}: record {path}: {message}", field)
        atomic_write_json(path, {**record, "run_id": run_id})
        self.note_change(stage, run_id)
        return path

    def note_change(self, table: str, run_id: str) -> None:
        """Say that `run_id`'s file of `table` (a stage's record, or its transcript events)
        changed: written, replaced or moved away. The warehouse's next update reads just
        the files noted here (columnar.py), so every writer calls this after its file is
        in place. Each call leaves its own marker: a reader that saw an older one never
        deletes this one.
        """
        folder = self.root / JOURNAL / _check_name("table", table)
        folder.mkdir(parents=True, exist_ok=True)
        token = f"{time.time_ns()}-{os.getpid()}-{secrets.token_hex(4)}"
        (folder / f"{_check_name('run', run_id)}{MARKER_SEP}{token}").touch()

    def read_record(self, stage: str, run_id: str) -> dict[str, Any] | None:
        path = self.record_path(stage, run_id)
        return json.loads(path.read_text()) if path.is_file() else None

    def stages(self) -> list[str]:
        records = self.root / "records"
        if not records.is_dir():
            return []
        # os.scandir stops at the first record; a glob would list 100,000 names first.
        return sorted(p.name for p in records.iterdir() if p.is_dir() and _has_json(p))

    def record_glob(self, stage: str) -> str:
        return str(self.root / "records" / _check_name("stage", stage) / "*.json")

"""Reading a table of runs and deciding which of its columns are design axes.

A run table has one row per run: ids (`run_id`, `cell_id`, ...), one column per axis, and
numeric metric columns (docs/interfaces.md §4). Axes are categorical for the analysis, so every axis
value becomes a string *level* spelled the way an experiment file spells it: bools as
`true`/`false`, integral numbers without a trailing `.0`, strings as they are.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bench_pipeline.design.axes import AXES

# Columns that identify a run rather than describe its config; any `*_id` column too.
ID_COLUMNS: frozenset[str] = frozenset({"run_id", "cell_id", "experiment", "repeat", "seed"})
# Only these spellings mean "no value" in a CSV: pandas' default list also swallows "NA" and
# "n/a", which could be real levels.
_CSV_MISSING = ["", "nan", "NaN", "NULL", "null", "None"]
_BOOL_TEXT = {"true": True, "false": False}


class AnalysisInputError(ValueError):
    """The table or the request cannot be analysed; the message says what is wrong."""


def read_runs(path: str | Path) -> pd.DataFrame:
    """Read a CSV or Parquet run table (by suffix).

    CSV is read as text first and a column becomes numeric only when every non-empty value
    parses as a number, so a level such as `007` or `1e3` of a text axis keeps its spelling
    unless the whole column is numeric. A column holding only true/false becomes boolean.
    """
    file = Path(path)
    suffix = file.suffix.lower()
    if suffix not in (".csv", ".parquet", ".pq"):
        raise AnalysisInputError(
            f"unsupported file type {file.suffix or '(none)'!r}: use a .csv or .parquet file"
        )
    if not file.is_file():
        raise AnalysisInputError("file not found")
    try:
        if suffix == ".csv":
            raw = pd.read_csv(file, dtype=str, keep_default_na=False, na_values=_CSV_MISSING)
            return _typed_columns(raw)
        return pd.read_parquet(file)
    except (ValueError, OSError, pd.errors.ParserError) as error:
        # pyarrow and the CSV parser raise several error types; all mean "unreadable file".
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else repr(error)
        raise AnalysisInputError(f"cannot read the file: {first_line}") from None


def _typed_columns(raw: pd.DataFrame) -> pd.DataFrame:
    columns: dict[str, pd.Series] = {}
    for name in raw.columns:
        text = raw[name]
        present = text.dropna()
        if present.empty:
            columns[name] = text
            continue
        lowered = present.str.strip().str.lower()
        if lowered.isin(list(_BOOL_TEXT)).all():
            columns[name] = text.str.strip().str.lower().map(_BOOL_TEXT).astype("boolean")
            continue
        numbers = pd.to_numeric(text, errors="coerce")
        if numbers.notna().sum() == len(present):
            columns[name] = numbers
        else:
            columns[name] = text
    return pd.DataFrame(columns, index=raw.index)


def is_id_column(name: str) -> bool:
    return name in ID_COLUMNS or name.endswith("_id")


def is_numeric_column(series: pd.Series) -> bool:
    """True for numbers; bools are not numeric here because a bool column is an axis."""
    return pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)


def numeric_columns(frame: pd.DataFrame) -> list[str]:
    return [str(c) for c in frame.columns if is_numeric_column(frame[c])]


def infer_axes(frame: pd.DataFrame, metric: str) -> list[str]:
    """Columns that are neither ids nor numeric metrics (docs/interfaces.md §4), in table order.

    A numeric column named after an axis of the catalogue (budget_usd, max_turns,
    time_limit_min) is an axis: those axes are numbers by nature. Bool columns are axes.
    """
    axes: list[str] = []
    for column in frame.columns:
        name = str(column)
        if name == metric or is_id_column(name):
            continue
        series = frame[column]
        if name in AXES or pd.api.types.is_bool_dtype(series) or not is_numeric_column(series):
            axes.append(name)
    return axes


def to_level(value: Any) -> str | None:
    """The level string of one axis value; None when the value is missing."""
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, bool | np.bool_):
        return "true" if value else "false"
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        number = float(value)
        if math.isnan(number):
            return None
        if number.is_integer():
            return str(int(number))
        return repr(number)
    text = str(value)
    return text if text.strip() else None


def level_codes(series: pd.Series) -> tuple[np.ndarray, list[str]]:
    """Integer codes (-1 = missing) and the level strings, in order of first appearance.

    Factorizing first and normalizing only the distinct values keeps this fast on large
    tables; distinct raw values that spell the same level (5 and 5.0) are merged.
    """
    raw_codes, uniques = pd.factorize(series, use_na_sentinel=True)
    levels: list[str] = []
    index: dict[str, int] = {}
    remap = np.full(len(uniques) + 1, -1, dtype=np.int64)
    for position, value in enumerate(uniques):
        level = to_level(value)
        if level is None:
            continue
        if level not in index:
            index[level] = len(levels)
            levels.append(level)
        remap[position] = index[level]
    # raw code -1 (missing) indexes the final slot, which stays -1.
    return remap[raw_codes], levels


def normalize_baseline(value: Any, levels: Sequence[str]) -> str | None:
    """Match a baseline given natively (5, True) or as text ("5.0", "True") to a level."""
    level = to_level(value)
    if level is None or level in levels:
        return level
    text = level.strip()
    if text.lower() in _BOOL_TEXT:
        return text.lower()
    try:
        number = float(text)
    except ValueError:
        return text
    return to_level(number)

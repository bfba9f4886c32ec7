"""`table_preview`: the tables the assets show in the UI (assets/metadata.py)."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import numpy as np
from dagster._serdes import deserialize_value, serialize_value

from assets.metadata import table_preview


def _types(table: dg.TableMetadataValue) -> dict[str, str]:
    return {c.name: c.type for c in table.schema.columns}


def test_column_types_are_inferred_and_values_made_plain() -> None:
    table = table_preview(
        [
            {"n": np.int64(3), "x": 1, "ok": np.bool_(True), "name": "a", "path": Path("/p")},
            {"n": 4, "x": 2.5, "ok": None, "name": 7, "path": None},
        ]
    )
    assert _types(table) == {
        "n": "int",
        "x": "float",
        "ok": "bool",
        "name": "string",
        "path": "string",
    }
    assert [r.data for r in table.records] == [
        {"n": 3, "x": 1.0, "ok": True, "name": "a", "path": "/p"},
        {"n": 4, "x": 2.5, "ok": None, "name": "7", "path": None},
    ]
    assert table.schema.constraints.other == []  # nothing left out
    # What the instance stores, it reads back the same.
    assert deserialize_value(serialize_value(table), dg.TableMetadataValue) == table


def test_not_a_number_is_empty_and_every_record_is_json_the_ui_can_parse() -> None:
    table = table_preview([{"p": float("nan"), "q": float("inf")}, {"p": 0.5, "q": 1.0}])
    assert _types(table) == {"p": "float", "q": "string"}
    assert table.records[0].data == {"p": None, "q": "inf"}
    for record in table.records:
        json.loads(json.dumps(record.data, allow_nan=False))


def test_rows_left_out_are_noted_and_missing_keys_are_empty() -> None:
    rows = [{"i": i} for i in range(7)] + [{"i": 7, "extra": "x"}]
    table = table_preview(rows, 3)
    assert [r.data for r in table.records] == [{"i": 0}, {"i": 1}, {"i": 2}]
    assert table.schema.constraints.other == ["first 3 of 8 rows"]
    # Cut already by the caller (a SQL limit): the caller says how many there were.
    cut = table_preview(rows[:2], 5, total=120)
    assert cut.schema.constraints.other == ["first 2 of 120 rows"]
    # A key that only some kept rows have is a column; the others show it empty.
    mixed = table_preview(rows[6:])
    assert [r.data for r in mixed.records] == [{"i": 6, "extra": None}, {"i": 7, "extra": "x"}]


def test_an_empty_table_keeps_its_header() -> None:
    table = table_preview([], 100, columns=["run", "why"])
    assert table.records == []
    assert _types(table) == {"run": "string", "why": "string"}

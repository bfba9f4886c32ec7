"""Small helpers for asset metadata that a person reads in the UI."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import dagster as dg


def markdown_table(rows: Sequence[Mapping[str, Any]], limit: int = 30) -> dg.MetadataValue:
    """A preview table (first `limit` rows) as Markdown, without extra dependencies."""
    if not rows:
        return dg.MetadataValue.md("_(no rows)_")
    columns = list(rows[0])
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for row in rows[:limit]:
        lines.append("| " + " | ".join(str(row.get(c, "")) for c in columns) + " |")
    if len(rows) > limit:
        lines.append(f"\n_{len(rows) - limit} more rows_")
    return dg.MetadataValue.md("\n".join(lines))

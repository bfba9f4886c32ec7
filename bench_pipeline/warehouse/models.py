"""SQL models from `dbt_like_sql/`: one `.sql` file is one table or view.

Dependencies are read from the SQL itself with sqlglot, so adding a file is all it
takes to add a model. A header comment picks how it is materialized:

    -- materialized: view          (default: table)
    -- description: one line shown in the UI and the docs
"""

from __future__ import annotations

import graphlib
import re
from dataclasses import dataclass
from pathlib import Path

import sqlglot
from sqlglot import exp

_HEADER = re.compile(r"^\s*--\s*(materialized|description)\s*:\s*(.+?)\s*$", re.MULTILINE)


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

    def deps(self, model_names: set[str]) -> set[str]:
        return {ref for ref in self.references if ref in model_names and ref != self.name}


def _references(sql: str, path: Path) -> frozenset[str]:
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


def load_model(path: Path) -> SqlModel:
    sql = path.read_text()
    header = {k: v for k, v in _HEADER.findall(sql)}
    materialized = header.get("materialized", "table").lower()
    if materialized not in {"table", "view"}:
        raise SqlModelError(f"{path}: materialized must be table or view, not {materialized!r}")
    return SqlModel(
        name=path.stem,
        path=path,
        sql=sql.strip().rstrip(";"),
        materialized=materialized,
        description=header.get("description", ""),
        references=_references(sql, path),
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

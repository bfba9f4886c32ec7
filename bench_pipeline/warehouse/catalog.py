"""What every warehouse table and column means, from one source per table.

- A SQL model (`dbt_like_sql/*.sql`): its `-- description:` header and its `-- column:`
  lines (`-- columns: axes` for the sixteen axis columns, described by the axis catalogue).
- A stage's `raw_<stage>` table: the `Doc` of each field of its record model
  (`bench_pipeline/records.py`).
- The other tables the loader and the effects analysis write: `LOADER_TABLES` below.

From these, `apply_comments` writes DuckDB comments (`COMMENT ON TABLE / VIEW / COLUMN`), so
that `duckdb_tables()`, `duckdb_views()`, `duckdb_columns()` and `DESCRIBE` answer an analyst
from inside the file, and `render_markdown` generates docs/warehouse.md's table reference
(`python -m bench_pipeline.warehouse.catalog --write`; a test keeps the page up to date).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass

import duckdb

from bench_pipeline.records import RECORDS, source_docs
from bench_pipeline.warehouse.models import SqlModel, axis_columns, load_models

# What a raw_<stage> column means when the record field has no Doc: a stage writes more
# than the warehouse reads, and each extra field lands as a column of its own.
EXTRA_FIELD = (
    "a field of the {stage} record that the models do not read (objects and lists as JSON); "
    "see docs/warehouse.md, Sources"
)
FILENAME = "the record file this row was loaded from (the artifact store's records/{stage}/)"

RUN_ID = "the run: `<experiment>.<cell_id>.r<repeat>`"
EXPERIMENT = "experiment name (the YAML file's `name`)"
CELL_ID = "the cell: `c` + 12 hex digits of the sha256 of its canonical config"
TEST_ID = "one of the sixteen tests (`loads` … `no_errors`, docs/interfaces.md §1), or `all`"
ACCURACY = {
    "source_file": "the published file the row came from",
    "bot_version": "the bot version measured",
    "measured_at": "when the benchmark started",
    "corpus": "`real` (public games, benchmarks/bot_corpus/manifest.yaml) or `repo` (tests/bot/games)",
    "split": "`tune` (games the bot was developed against), `heldout` (never looked at: the fair figure) or `all`",
    "test_id": TEST_ID,
    "n_games": "games evaluated",
    "repeats": "evaluations per game",
    "endurance_s": "the endurance window used, seconds",
    "n_labelled": "games with a PASS/FAIL label for this test (the sum over tests on the `all` row)",
    "n_verdicts": "labelled verdicts compared (= label_pass + label_fail)",
    "label_pass": "of those, labelled PASS (the mechanic works)",
    "label_fail": "of those, labelled FAIL (the mechanic is broken)",
    "agreement": "0–1: verdicts equal to their label / n_verdicts",
    "working_right": "0–1: label PASS judged PASS / label_pass (NULL when label_pass = 0)",
    "defects_caught": "0–1: label FAIL judged FAIL / label_fail (NULL when label_fail = 0)",
    "false_pass": "label FAIL judged PASS: a defect hidden",
    "false_fail": "label PASS judged FAIL: the game blamed for the bot's mistake",
    "inconclusive": "labelled verdicts the bot left INCONCLUSIVE",
    "n_uncertain": "verdicts on labels marked uncertain: left out of every figure above",
    "consistency": "0–1: (game, test) pairs with the same verdict in every repeat; NULL with one evaluation per game",
    "eval_s_median": "median wall time of one evaluation, seconds (two ran at once)",
    "eval_s_max": "longest wall time of one evaluation, seconds (two ran at once)",
}
GROUPS = {
    "breakdown": "`renderer` or `author`",
    "group_name": "the group: a renderer (`canvas`, `dom`, `svg`, `webgl`, `unknown`, ...) or an author group (`ai`, `human`, `unknown`)",
}
_ACCURACY_GROUP_COLUMNS = [
    "source_file",
    "bot_version",
    "measured_at",
    "corpus",
    "split",
    "breakdown",
    "group_name",
    "test_id",
    "n_games",
    "n_labelled",
    "n_verdicts",
    "label_pass",
    "label_fail",
    "agreement",
    "working_right",
    "defects_caught",
    "false_pass",
    "false_fail",
    "inconclusive",
    "n_uncertain",
]


@dataclass(frozen=True)
class TableDoc:
    name: str
    kind: str  # "source", "reference", "meta", "view", "table", "analysis"
    description: str
    columns: tuple[tuple[str, str], ...]
    origin: str  # where this documentation lives

    def column(self, name: str) -> str | None:
        return dict(self.columns).get(name)


# The tables the loader (build.py) and the effects analysis (analysis/stage.py) write.
LOADER_TABLES: dict[str, tuple[str, str, dict[str, str]]] = {
    "raw_design_cells": (
        "source",
        "One row per (experiment, cell) of every design stored (designs/*.json): the cell's "
        "config, which designs produced it, and whether it is in the experiment's current design.",
        {
            "experiment": EXPERIMENT,
            "cell_id": CELL_ID,
            "designs": "the design types that produced the cell (`main_effects`, `plackett_burman`, `interaction`, ...)",
            "config_json": "the full config as JSON (all 16 axes)",
            "current": "the cell is in the experiment's current design",
        },
    ),
    "raw_design_runs": (
        "source",
        "One row per designed run of every stored design.",
        {
            "experiment": EXPERIMENT,
            "run_id": RUN_ID + "; the Dagster partition key",
            "cell_id": "the run's cell",
            "repeat": "repeat number within the cell, from 0",
            "seed": "the run's seed (stable across machines)",
            "current": "the run is in the experiment's current design",
        },
    ),
    "raw_run_spec": (
        "source",
        "One row per run's frozen specification (records/run_spec/): its cell's config, seed, "
        "and the model's harness and prices as the registry had them when the run was planned.",
        {
            "run_id": RUN_ID,
            "experiment": EXPERIMENT,
            "cell_id": "the run's cell",
            "repeat": "repeat number within the cell, from 0",
            "seed": "the run's seed (stable across machines)",
            "agent": "the harness of the run's cell",
            "model": "the model id of the run's cell",
            "provider": "the model's provider, from the registry",
            "input_usd_per_mtok": "the registry's input price, US dollars per million tokens",
            "output_usd_per_mtok": "the registry's output price, US dollars per million tokens",
            "model_strength": "the latent skill the offline synthetic agent plants (0–1)",
            "config": "the cell's full config (all 16 axes), as a STRUCT",
            "filename": FILENAME.format(stage="run_spec"),
        },
    ),
    "raw_transcript_events": (
        "source",
        "One row per event of every agent transcript, normalised across harnesses "
        "(bench_pipeline/agents/events.py).",
        {
            "run_id": RUN_ID,
            "position": "the event's row in the run's event list, from 0",
            "index": "the transcript line the event came from",
            "kind": "what happened: a message, a tool call, a tool result, ...",
            "tool": "canonical tool name (Claude's names; Codex items mapped onto them)",
            "tool_input": "the gist of the input: path, command, pattern, URL or query (truncated)",
            "is_error": "the tool call failed",
            "text": "a text excerpt",
            "wasted": "the classifier that labelled the event wasted (`reading_docs`, `ascii_art`, `blocking_dev_server`, `repeated_failures`); NULL: not wasted",
            "raw_type": "the event's type in the harness's own transcript",
            "tokens": "tokens the event reported, where the harness says",
            "ref": "the id that ties a tool result to its call",
        },
    ),
    "raw_bot_accuracy": (
        "source",
        "Every published run of the bot accuracy benchmark (<artifacts>/bot_accuracy/*.json): "
        "17 rows per file, one per test and one `all`.",
        ACCURACY,
    ),
    "raw_bot_accuracy_groups": (
        "source",
        "The same published files as raw_bot_accuracy, per renderer and per author group.",
        {c: (GROUPS | ACCURACY)[c] for c in _ACCURACY_GROUP_COLUMNS},
    ),
    "ref_student_t": (
        "reference",
        "t975 of Student's t for 1..1000 degrees of freedom, for the leaderboards' 95 % intervals.",
        {
            "df": "degrees of freedom, 1..1000",
            "t975": "the 97.5 % quantile of Student's t (scipy), for two-sided 95 % intervals",
        },
    ),
    "ref_axes": (
        "reference",
        "The sixteen axes of the catalogue (bench_pipeline/design/axes.py).",
        {
            "position": "the axis's place in the catalogue, 1..16",
            "axis": "axis name",
            "kind": "`categorical`, `bool` or `number`",
            "default_json": 'the catalogue default, as JSON text (`"claude-code"`, `5`, `false`)',
            "description": "what the axis controls",
        },
    ),
    "meta_loaded_parts": (
        "meta",
        "Which parts of the artifact store's columnar mirror this warehouse has loaded, per "
        "source table: what the next update reads (docs/warehouse.md, How it is built).",
        {
            "source": "the raw table",
            "mirror_id": "the mirror the parts belong to (a new mirror means a full load)",
            "loaded_seq": "the last part sequence number loaded",
        },
    ),
    "mart_main_effects": (
        "analysis",
        "One row per (experiment, metric, axis, level): the level's effect against the baseline, "
        "other axes held equal, with its interval and adjusted p (docs/analysis.md).",
        {
            "experiment": EXPERIMENT,
            "metric": "the outcome analysed",
            "axis": "the axis varied",
            "level": "the level compared with the baseline (as text)",
            "baseline": "the axis's baseline level in the experiment",
            "estimate": "level − baseline with every other axis held equal (coefficient of one additive OLS over all axes, treatment-coded), in the metric's unit",
            "std_error": "its standard error",
            "t_value": "estimate / std_error",
            "ci_low": "lower end of the 95 % interval of the estimate (ci_method)",
            "ci_high": "upper end of the 95 % interval of the estimate (ci_method)",
            "p_value": "unadjusted p-value",
            "p_adjusted": "adjusted for the experiment's many comparisons (method in `correction`)",
            "significant": "p_adjusted below alpha (0.05); NULL when no p-value could be computed",
            "meaningful": "significant and the absolute estimate above the within-cell noise SD; NULL when the noise is unknown",
            "n_level": "runs at the level",
            "n_baseline": "runs at the baseline",
            "noise_sd": "within-cell (repeat-to-repeat) SD of the metric, pooled over cells",
            "correction": "`holm` (default) or `bh` (Benjamini–Hochberg)",
            "ci_method": "how ci_low and ci_high were computed",
            "instrument_suspect": "on gameplay_score and score rows: the effect may be the bot reading these games worse or better (its INCONCLUSIVE share moves with it), not the games changing; NULL when it cannot be judged (docs/analysis.md, Instrument bias)",
            "instrument_note": "one line for an analyst on why the effect may, or does not seem to, be the bot's; NULL otherwise",
            "instrument_axis": "the axis plausibly changes what the bot reads (`framework`, `language`, `human_language`)",
        },
    ),
    "mart_interactions": (
        "analysis",
        "One row per (experiment, metric, interaction) the design allows testing.",
        {
            "experiment": EXPERIMENT,
            "metric": "the outcome analysed",
            "axes": "the interacting axes, e.g. `model × prompt_style`",
            "order": '2 or 3 (write `"order"` in SQL: it is a keyword)',
            "df": "the interaction term's degrees of freedom",
            "f_value": "nested-model F statistic (with vs without the term)",
            "p_value": "unadjusted p-value",
            "p_adjusted": "p adjusted as in mart_main_effects.correction",
            "significant": "p_adjusted below alpha",
            "test_method": "how the interaction was tested",
        },
    ),
    "mart_effect_noise": (
        "analysis",
        "One row per (experiment, metric): the within-cell noise and the power of the sweep.",
        {
            "experiment": EXPERIMENT,
            "metric": "the outcome analysed",
            "n_runs": "scored runs analysed",
            "n_cells": "cells analysed",
            "noise_sd": 'pooled within-cell SD (the "noise" of `meaningful`)',
            "noise_df": "its degrees of freedom",
            "repeats_per_cell": "mean repeats per cell",
            "effect_size": "the effect the power figures are for (5 points for scores, $0.10, 60 s)",
            "repeats_needed": "repeats per cell to detect effect_size (alpha 0.05, power 0.8)",
            "detectable_effect": "the smallest effect detectable with the current repeats",
            "reason": "why a figure is missing, else NULL",
        },
    ),
    "mart_not_estimable": (
        "analysis",
        "Terms the effects analysis could not estimate, and why.",
        {
            "experiment": EXPERIMENT,
            "metric": "the outcome analysed",
            "term": "the axis level (`axis=level`) or interaction; `*` when the whole analysis could not run",
            "reason": "why: aliased with other terms (named), no runs at that level, no variance, ...",
        },
    ),
}


def _record_docs() -> list[TableDoc]:
    docs = []
    for stage, model in RECORDS.items():
        columns = {**source_docs(model), "filename": FILENAME.format(stage=stage)}
        docs.append(
            TableDoc(
                f"raw_{stage}",
                "source",
                f"One row per run's {stage} record (records/{stage}/ in the artifact store): "
                f"{(model.__doc__ or '').strip()}",
                tuple(columns.items()),
                f"bench_pipeline/records.py ({model.__name__})",
            )
        )
    return docs


def table_docs(models: Iterable[SqlModel] | None = None) -> list[TableDoc]:
    """Every table the warehouse holds, documented; SQL models from `dbt_like_sql/`."""
    if models is None:
        from bench_pipeline import settings

        models = load_models(settings.sql_models_dir())
    docs = []
    for name, (kind, description, columns) in LOADER_TABLES.items():
        cols = dict(columns)
        if name == "raw_design_cells":
            cols.update(axis_columns())
        origin = "bench_pipeline/warehouse/catalog.py (LOADER_TABLES)"
        docs.append(TableDoc(name, kind, description, tuple(cols.items()), origin))
    docs += _record_docs()
    for model in models:
        docs.append(
            TableDoc(
                model.name,
                model.materialized,
                model.description,
                model.columns,
                f"dbt_like_sql/{model.path.name}",
            )
        )
    # Sources first, then staging, facts, dimensions and marts; by name within each.
    return sorted(
        docs, key=lambda d: (_ORDER.index(d.name[:4]) if d.name[:4] in _ORDER else 9, d.name)
    )


_ORDER = ["raw_", "ref_", "meta", "stg_", "fct_", "dim_", "mart"]


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def apply_comments(
    con: duckdb.DuckDBPyConnection, docs: Iterable[TableDoc], only: Iterable[str] | None = None
) -> list[str]:
    """Write each documented table's comment and its columns' comments. A raw_<stage>
    column without a Doc (an extra field of the record) gets EXTRA_FIELD. Returns the
    columns left without a comment (`table.column`): none, when the docs are complete."""
    wanted = set(only) if only is not None else None
    present = {
        name: kind
        for name, kind in con.execute(
            "SELECT table_name, 'TABLE' FROM duckdb_tables() WHERE NOT internal "
            "UNION ALL SELECT view_name, 'VIEW' FROM duckdb_views() WHERE NOT internal"
        ).fetchall()
    }
    columns: dict[str, list[str]] = {}
    for table, column in con.execute(
        "SELECT table_name, column_name FROM duckdb_columns() WHERE NOT internal "
        "ORDER BY table_name, column_index"
    ).fetchall():
        columns.setdefault(table, []).append(column)
    missing = []
    statements = []
    for doc in docs:
        if doc.name not in present or (wanted is not None and doc.name not in wanted):
            continue
        statements.append(
            f'COMMENT ON {present[doc.name]} "{doc.name}" IS {_quote(doc.description)}'
        )
        known = dict(doc.columns)
        stage = doc.name.removeprefix("raw_")
        for column in columns.get(doc.name, []):
            text = known.get(column)
            if text is None and (stage in RECORDS or stage == "run_spec"):
                text = EXTRA_FIELD.format(stage=stage)
            if text is None:
                missing.append(f"{doc.name}.{column}")
                continue
            statements.append(f'COMMENT ON COLUMN "{doc.name}"."{column}" IS {_quote(text)}')
    # One transaction: ~550 comments each committed on its own took 1.3-2.5 s here; together,
    # 0.2 s (benchmarks/warehouse_comments.py).
    if statements:
        con.execute("BEGIN TRANSACTION")
        try:
            con.execute(";\n".join(statements))
        except BaseException:
            con.execute("ROLLBACK")
            raise
        con.execute("COMMIT")
    return missing


_KIND_TITLE = {
    "source": "source table",
    "reference": "reference table",
    "meta": "bookkeeping table",
    "view": "view",
    "table": "table",
    "analysis": "table written by the effects analysis",
}
BEGIN = (
    "<!-- BEGIN GENERATED TABLE REFERENCE: python -m bench_pipeline.warehouse.catalog --write -->"
)
END = "<!-- END GENERATED TABLE REFERENCE -->"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(docs: Iterable[TableDoc]) -> str:
    """The table reference of docs/warehouse.md: every table, what it is, every column."""
    docs = list(docs)
    lines = [
        BEGIN,
        "",
        "## Every table and column",
        "",
        "Generated from the same source as the warehouse's own comments (see *Comments in the "
        "file* above); do not edit by hand. In DuckDB: "
        "`select table_name, comment from duckdb_tables()`, "
        "`select column_name, comment from duckdb_columns() where table_name = 'fct_runs'`.",
        "",
        "| table | kind | what it holds |",
        "|---|---|---|",
    ]
    lines += [f"| `{d.name}` | {_KIND_TITLE[d.kind]} | {_cell(d.description)} |" for d in docs]
    for d in docs:
        lines += ["", f"### `{d.name}` ({_KIND_TITLE[d.kind]})", "", _cell(d.description), ""]
        lines += [f"Documented in `{d.origin}`.", "", "| column | meaning |", "|---|---|"]
        lines += [f"| {name} | {_cell(text)} |" for name, text in d.columns]
        if d.name.removeprefix("raw_") in {*RECORDS, "run_spec"}:
            lines.append(f"| *any other field* | {_cell(EXTRA_FIELD.format(stage=d.name[4:]))} |")
    lines += ["", END]
    return "\n".join(lines) + "\n"


def updated_page(page: str, docs: Iterable[TableDoc]) -> str:
    """docs/warehouse.md with its generated reference replaced (or appended)."""
    block = render_markdown(docs)
    pattern = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END) + r"\n?", re.DOTALL)
    if pattern.search(page):
        return pattern.sub(lambda _: block, page)
    return page.rstrip("\n") + "\n\n" + block


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite docs/warehouse.md")
    args = parser.parse_args(argv)
    from bench_pipeline import settings

    page = settings.project_root() / "docs" / "warehouse.md"
    new = updated_page(page.read_text(encoding="utf-8"), table_docs())
    if args.write:
        page.write_text(new, encoding="utf-8")
        print(f"wrote {page}")
        return 0
    sys.stdout.write(new)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

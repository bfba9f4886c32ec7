"""The pages that explain the numbers rather than show them: methodology.html (how they
are made) and accuracy.html (how far to trust the bot's verdicts).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench_pipeline.bot.accuracy import BREAKDOWNS, OVERALL, all_tests, trust_sentence
from bench_pipeline.bot.contract import BOT_VERSION, TESTS
from bench_pipeline.report.data import Row, Warehouse
from bench_pipeline.report.methodology import methodology_context
from bench_pipeline.report.site_base import _Site

# ------------------------------------------------------------------------------------------
# Methodology


def _write_methodology(site: _Site, sql_models_dir: Path) -> None:
    context, warnings = methodology_context(sql_models_dir)
    site.warnings.extend(warnings)
    site.write(
        "methodology.html",
        "methodology.html",
        nav="methodology",
        page_title="Methodology",
        **context,
    )


# ------------------------------------------------------------------------------------------
# Bot accuracy (mart_bot_accuracy: the latest published accuracy benchmark per corpus, split)

# The held-out games first: they were not looked at while the bot was tuned.
_ACCURACY_ORDER = [("real", "heldout"), ("real", "tune"), ("real", "all"), ("repo", "all")]
_CORPUS_NAMES = {
    "real": "public games written by people and agents (the real corpus)",
    "repo": "the repository's own test games (tests/bot/games), which the bot was developed "
    "against",
}
_SPLIT_NAMES = {
    "heldout": "held-out games, never looked at while the bot was tuned: the fair measure",
    "tune": "tuning games, the ones the bot was developed against: expect it to look better here",
    "all": "every game",
}


_BREAKDOWN_TITLES = {"renderer": "By renderer", "author": "By author"}
_BREAKDOWN_NOTES = {
    "renderer": "The same figures over the games drawn each way (the renderer the corpus "
    "records for each game): the bot finds the field in a canvas's draw calls, in the page's "
    "elements (DOM, SVG) or in screenshots (WebGL), so it can read one kind of page worse "
    "than another.",
    "author": "The same figures over the games written by AI agents (ai: any ai-* author of "
    "the corpus, where the repository says an agent wrote it) and by people (human). The "
    "benchmark's runs are games written by agents: the ai row is the one that applies to them.",
}


def _group_sections(rows: list[Row]) -> list[dict[str, Any]]:
    """The breakdown tables of one (corpus, split): overall rows of mart_bot_accuracy_groups."""
    order = {b: i for i, b in enumerate(BREAKDOWNS)}
    by: dict[str, list[Row]] = defaultdict(list)
    for row in rows:
        by[row["breakdown"]].append(row)
    sections = []
    for breakdown in sorted(by, key=lambda b: (order.get(b, len(order)), b)):
        fixed = BREAKDOWNS.get(breakdown, ())
        # The fixed groups in their order (canvas, dom, svg, webgl; ai, human), others after.
        rank = {name: i for i, name in enumerate(fixed)}
        ranked = sorted(
            by[breakdown], key=lambda r: (rank.get(r["group_name"], len(rank)), r["group_name"])
        )
        sections.append(
            {
                "breakdown": breakdown,
                "title": _BREAKDOWN_TITLES.get(breakdown, f"By {breakdown}"),
                "note": _BREAKDOWN_NOTES.get(breakdown, ""),
                "groups": [
                    {
                        "row": r,
                        "trust": trust_sentence(r)
                        if r["n_games"]
                        else "No game of this group in the measurement: not measured.",
                    }
                    for r in ranked
                ],
            }
        )
    return sections


def _accuracy_sections(rows: list[Row], group_rows: Sequence[Row] = ()) -> list[dict[str, Any]]:
    groups: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for row in rows:
        groups[(row["corpus"], row["split"])].append(row)
    breakdowns: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for row in group_rows:
        breakdowns[(row["corpus"], row["split"])].append(row)
    known = [k for k in _ACCURACY_ORDER if k in groups]
    sections = []
    for corpus, split in known + sorted(k for k in groups if k not in _ACCURACY_ORDER):
        ordered = all_tests(groups[(corpus, split)])
        overall = next((r for r in ordered if r["test_id"] == OVERALL), ordered[0])
        measured = overall["measured_at"]
        sections.append(
            {
                "id": f"{corpus}-{split}",
                "corpus": corpus,
                "split": split,
                "title": f"{corpus.capitalize()} corpus, "
                + ("every game" if split == "all" else f"{split} split"),
                "corpus_name": _CORPUS_NAMES.get(corpus, corpus),
                "split_name": _SPLIT_NAMES.get(split, split),
                "meta": overall,
                "date": measured.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
                if isinstance(measured, datetime)
                else str(measured),
                "outdated": overall["bot_version"] != BOT_VERSION,
                "overall_trust": trust_sentence(overall),
                "tests": [
                    {"row": r, "what": TESTS.get(r["test_id"], ""), "trust": trust_sentence(r)}
                    for r in ordered
                    if r["test_id"] != OVERALL
                ],
                "breakdowns": _group_sections(breakdowns.get((corpus, split), [])),
            }
        )
    return sections


def _write_accuracy(site: _Site, data: Warehouse) -> None:
    sections = _accuracy_sections(data.accuracy, data.accuracy_groups)
    # Without real-corpus figures the page shows what is at hand, the in-repository
    # corpus's, and says so: those games are the ones the bot was developed against.
    only_repo = bool(sections) and all(s["corpus"] == "repo" for s in sections)
    site.write(
        "accuracy.html",
        "accuracy.html",
        nav="accuracy",
        page_title="Bot accuracy",
        sections=sections,
        only_repo=only_repo,
        bot_version=BOT_VERSION,
    )

"""The pages that explain the numbers rather than show them: methodology.html (how they
are made) and accuracy.html (how far to trust the bot's verdicts).
"""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench_pipeline.bot.accuracy import OVERALL, all_tests, trust_sentence
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


def _accuracy_sections(rows: list[Row]) -> list[dict[str, Any]]:
    groups: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for row in rows:
        groups[(row["corpus"], row["split"])].append(row)
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
            }
        )
    return sections


def _write_accuracy(site: _Site, data: Warehouse) -> None:
    site.write(
        "accuracy.html",
        "accuracy.html",
        nav="accuracy",
        page_title="Bot accuracy",
        sections=_accuracy_sections(data.accuracy),
        bot_version=BOT_VERSION,
    )

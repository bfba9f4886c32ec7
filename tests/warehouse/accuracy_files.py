"""Bot accuracy output files for the warehouse and site tests, made by the benchmark's own
`summarize` from fabricated verdicts (the figures are checked in tests/bot/test_accuracy.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench_pipeline.bot.accuracy import LabelledGame, Outcome, summarize
from bench_pipeline.bot.contract import TEST_IDS

ALL_PASS = dict.fromkeys(TEST_IDS, "PASS")
# Six games: four working, two without rotation; the bot passes one broken rotation (a false
# PASS), fails one working soft drop (a false FAIL) and gives no verdict on one line clear.
GAMES = [
    LabelledGame(f"working-{i}", Path("/nonexistent"), dict(ALL_PASS), split="tune")
    for i in range(4)
] + [
    LabelledGame(f"no-rotate-{i}", Path("/nonexistent"), {**ALL_PASS, "rotate": "FAIL"})
    for i in range(2)
]
VERDICTS: dict[str, dict[str, str]] = {
    "working-0": {"soft_drop": "FAIL"},
    "working-1": {"line_clear": "INCONCLUSIVE"},
    "no-rotate-0": {"rotate": "FAIL"},
    "no-rotate-1": {"rotate": "PASS"},  # the false PASS
}


def accuracy_summary(
    measured_at: str = "2026-11-30T09:00:00+00:00",
    *,
    corpus: str = "real",
    split: str = "tune",
    bot_version: str = "0.1.1",
    games: int = len(GAMES),
) -> dict[str, Any]:
    chosen = GAMES[:games]
    outcomes = [
        Outcome(
            g.id,
            0,
            {**ALL_PASS, **VERDICTS.get(g.id, {})},
            {t: f"the bot's reason for {t}" for t in TEST_IDS},
            45.0,
            46.0 + i,
        )
        for i, g in enumerate(chosen)
    ]
    return summarize(
        chosen,
        outcomes,
        bot_version=bot_version,
        measured_at=measured_at,
        corpus=corpus,
        split=split,
        endurance_s=30.0,
        repeats=1,
        cores=2,
    )


def write_accuracy_file(artifacts: Path, name: str, **kw: Any) -> dict[str, Any]:
    summary = accuracy_summary(**kw)
    path = artifacts / "bot_accuracy" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(summary))
    return summary

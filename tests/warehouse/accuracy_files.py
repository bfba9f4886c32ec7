"""Bot accuracy output files for the warehouse and site tests, made by the benchmark's own
`summarize` from fabricated verdicts (the figures are checked in tests/bot/test_accuracy.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench_pipeline.bot.accuracy import LabelledGame, Outcome, summarize
from bench_pipeline.bot.contract import TEST_IDS

ALL_PASS = dict.fromkeys(TEST_IDS, "PASS")
# Renderer and author of each game, as the manifest gives them (for the breakdowns).
DRAWN: dict[str, tuple[str, str]] = {
    "working-0": ("canvas", "ai-claude-code"),
    "working-1": ("dom", "human"),
    "working-2": ("canvas", "human"),
    "working-3": ("svg", "ai-codex"),
    "no-rotate-0": ("canvas", "ai-cursor"),
    "no-rotate-1": ("webgl", "human"),
}
# Six games: four working, two without rotation; the bot passes one broken rotation (a false
# PASS, on the WebGL game), fails one working soft drop (a false FAIL, on a canvas game by an
# agent) and gives no verdict on one line clear (the DOM game).
GAMES = [
    LabelledGame(
        game_id,
        Path("/nonexistent"),
        {**ALL_PASS, "rotate": "FAIL"} if game_id.startswith("no-rotate") else dict(ALL_PASS),
        split="tune",
        info={"renderer": renderer, "author": author},
    )
    for game_id, (renderer, author) in DRAWN.items()
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

"""The bot's words (words.json), for Python and for the page probe alike.

Start, close, game-over and score words used to be written twice, in probe.js and in the
Python phases, and had drifted apart. They live in `words.json` now: Python builds its
patterns here, and `probe_script()` hands the same lists to the probe, which is injected
into every page before its scripts.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

HERE = Path(__file__).parent
PLACEHOLDER = "/*BENCH_WORDS*/ null"


@cache
def words() -> dict[str, list[str]]:
    data = json.loads((HERE / "words.json").read_text(encoding="utf-8"))
    return {k: v for k, v in data.items() if not k.startswith("_")}


def pattern(name: str) -> re.Pattern[str]:
    """One list of words.json as a case-insensitive alternation."""
    return re.compile("|".join(words()[name]), re.IGNORECASE)


GAME_OVER = pattern("game_over")
SCORE_LABEL = pattern("score_label")
NOT_SCORE = pattern("not_score")
LINES_LABEL = pattern("lines_label")


@cache
def probe_script() -> str:
    """probe.js with the word lists in place of its placeholder (inside its closure: a
    global of the bot's could clash with a page's own `const`)."""
    source = (HERE / "probe.js").read_text(encoding="utf-8")
    if source.count(PLACEHOLDER) != 1:
        raise RuntimeError(f"probe.js must hold {PLACEHOLDER!r} once")
    return source.replace(PLACEHOLDER, json.dumps(words(), ensure_ascii=False))

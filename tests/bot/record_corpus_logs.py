"""Record the observation logs that tests/bot/test_rejudged_corpus.py judges again.

Plays every in-repo game (tests/bot/games/) once with the bot, at the corpus test's window,
and keeps the observation log of an evaluation whose verdicts all match the game's labels
(up to three tries a game; a game that never matches is reported and keeps no new log).
Run it by hand after a change to how the bot plays or reads a game; a change to the
verdict rules alone needs no new recording (that is what the re-judging catches).

    .venv/bin/python tests/bot/record_corpus_logs.py [--only SLUG ...]
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
from pathlib import Path

from bench_pipeline.bot import evaluate

HERE = Path(__file__).parent
GAMES = HERE / "games"
RECORDED = HERE / "recorded"
sys.path.insert(0, str(HERE.parent.parent))
from tests.bot.test_bot_on_corpus import ENDURANCE_S, _wrong  # noqa: E402


def record(slug: str, tries: int = 3) -> str:
    expected = json.loads((GAMES / slug / "expected.json").read_text())
    wrong: dict[str, str] = {}
    for attempt in range(1, tries + 1):
        with tempfile.TemporaryDirectory() as tmp:
            result = evaluate(str(GAMES / slug), endurance_s=ENDURANCE_S, artifacts=Path(tmp))
            wrong = _wrong(expected, result.to_json())
            if not wrong:
                log = (Path(tmp) / "observations.json").read_bytes()
                (RECORDED / f"{slug}.observations.json.gz").write_bytes(gzip.compress(log, mtime=0))
                return f"recorded (try {attempt}, {len(log) // 1024} kB)"
    return f"NOT recorded, still wrong after {tries} tries: {json.dumps(wrong)[:300]}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=None)
    args = parser.parse_args()
    RECORDED.mkdir(exist_ok=True)
    slugs = args.only or sorted(p.name for p in GAMES.iterdir() if (p / "expected.json").is_file())
    for slug in slugs:
        print(f"{slug:40s} {record(slug)}", flush=True)


if __name__ == "__main__":
    main()

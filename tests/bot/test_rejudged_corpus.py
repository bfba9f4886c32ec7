"""The verdict rules against recorded play: every in-repo game's observation log, judged
again with today's rules, gives the game's labels (no browser: the whole corpus in about
a second). A change to verdicts.py or crosscheck.py that turns a right verdict wrong fails
here at once; the live corpus test (test_bot_on_corpus.py) checks the playing.

The logs are recorded by tests/bot/record_corpus_logs.py from evaluations whose verdicts
matched the labels."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from bench_pipeline.bot import TEST_IDS
from bench_pipeline.bot.observations import ObservationLog
from bench_pipeline.bot.rejudge import rejudge
from tests.bot.test_bot_on_corpus import _wrong

HERE = Path(__file__).parent
GAMES = HERE / "games"
RECORDED = sorted((HERE / "recorded").glob("*.observations.json.gz"))


def _log(path: Path) -> ObservationLog:
    return ObservationLog.from_json(json.loads(gzip.decompress(path.read_bytes())))


def test_every_game_of_the_corpus_has_a_recorded_log() -> None:
    games = {p.name for p in GAMES.iterdir() if (p / "expected.json").is_file()}
    recorded = {p.name.removesuffix(".observations.json.gz") for p in RECORDED}
    assert games == recorded, sorted(games ^ recorded)


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: p.name.split(".")[0])
def test_the_recorded_log_judged_again_gives_the_labels(path: Path) -> None:
    slug = path.name.removesuffix(".observations.json.gz")
    expected = json.loads((GAMES / slug / "expected.json").read_text())
    log = _log(path)
    result = rejudge(log).to_json()
    assert set(result["tests"]) == set(TEST_IDS)
    wrong = _wrong(expected, result)
    assert not wrong, json.dumps(wrong, indent=1)


@pytest.mark.parametrize("path", RECORDED[:3], ids=lambda p: p.name.split(".")[0])
def test_a_log_survives_its_own_json_unchanged(path: Path) -> None:
    log = _log(path)
    again = ObservationLog.from_json(json.loads(json.dumps(log.to_json())))
    assert again.to_json() == log.to_json()


def test_the_recorded_logs_come_from_this_bot_version() -> None:
    """The logs stand in for live play of most of the corpus in `make test`: a new bot
    version (readers or players changed) records them again (tests/bot/record_corpus_logs.py),
    or the re-judging would check today's rules against yesterday's playing."""
    from bench_pipeline.bot.contract import BOT_VERSION

    versions = {
        p.name: json.loads(gzip.decompress(p.read_bytes()))["bot_version"] for p in RECORDED
    }
    stale = {name: v for name, v in versions.items() if v != BOT_VERSION}
    assert not stale, f"recorded by another bot version than {BOT_VERSION}: {stale}"

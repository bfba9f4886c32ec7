"""Judge saved observation logs again, offline: no browser, milliseconds a game.

An evaluation keeps the log its verdicts came from (`observations.json` in its evidence
folder). Because the verdicts are a pure function of that log (`verdicts.judge`), the
same log judged by today's rules shows what a change to the rules does, on every game
ever recorded, in seconds (`bench rejudge`; the in-repo corpus's recorded logs are
re-judged by the test suite).
"""

from __future__ import annotations

import json
from pathlib import Path

from bench_pipeline.bot.contract import Evaluation
from bench_pipeline.bot.evaluate import OBSERVATIONS_FILE, calibration_of
from bench_pipeline.bot.observations import ObservationLog
from bench_pipeline.bot.verdicts import judge

# A recorded log is small (tens of kB for a 30 s window); far more is no log of ours.
MAX_LOG_BYTES = 64 * 1024 * 1024
MAX_LOGS = 10_000


class LogError(ValueError):
    """A file that is no observation log; the message names it."""


def find_logs(path: Path) -> list[Path]:
    """The observation logs at `path`: the file itself, or every `observations.json`
    (or `*.observations.json`) below a folder, in order."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise LogError(f"{path}: no such file or folder")
    found = sorted(
        p
        for p in path.rglob("*observations.json")
        if p.is_file() and not p.is_symlink() and p.name.endswith(OBSERVATIONS_FILE)
    )
    if not found:
        raise LogError(f"{path}: no {OBSERVATIONS_FILE} in it")
    return found[:MAX_LOGS]


def read_log(path: Path) -> ObservationLog:
    """The log saved at `path`; a LogError naming the file when it is not one."""
    try:
        size = path.stat().st_size
        if size > MAX_LOG_BYTES:
            raise LogError(f"{path}: {size} bytes, more than any observation log")
        return ObservationLog.from_json(json.loads(path.read_bytes()))
    except (OSError, ValueError, KeyError, TypeError) as error:
        if isinstance(error, LogError):
            raise
        raise LogError(f"{path}: not a readable observation log ({error})") from None


def rejudge(log: ObservationLog) -> Evaluation:
    """The evaluation today's verdict rules give the observations of `log`."""
    judgement = judge(log)
    return Evaluation(
        target=log.target,
        calibration=calibration_of(log, judgement.score_source),
        results=judgement.results,
        duration_s=log.duration_s,
        notes=[f"{t:.2f}s {text}" for t, text in log.notes],
    )

"""The evidence of one evaluation stays bounded in lines and bytes whatever the page does:
a console flood, a page whose own state holds megabytes, a log of every kind overfull."""

from __future__ import annotations

import json

from bench_pipeline.bot.observations import LIMITS, ObservationLog, console_text
from bench_pipeline.bot.verdicts import no_errors


def _flooded_log() -> ObservationLog:
    log = ObservationLog(t0=0.0)
    log.loaded = True
    for i in range(50_000):
        log.console_errors.append((i * 0.001, f"flood {i} " + "x" * 5000))
        log.page_errors.append((i * 0.001, f"boom {i}\nat line {i}"))
        log.ignored_console.append((i * 0.001, "Failed to load resource " + "z" * 900))
    return log


def test_a_console_flood_keeps_first_and_last_with_counts() -> None:
    log = _flooded_log()
    assert len(log.console_errors) == LIMITS.console
    assert log.overflow.counts["console_errors"] == 50_000 - LIMITS.console
    text = console_text(log)
    assert len(text.encode()) <= LIMITS.console_bytes
    lines = text.splitlines()
    assert len(lines) <= 3 * (LIMITS.console + 1) + 1
    assert all(len(line) <= LIMITS.text_chars + 30 for line in lines)
    assert f"... {50_000 - LIMITS.console} more console.error messages not kept" in text
    # The first and the last are both there, each on one line.
    assert "flood 0 " in text and "flood 49999 " in text
    assert "boom 49999 at line 49999" in text


def test_console_text_is_cut_at_its_byte_limit_and_says_so() -> None:
    text = console_text(_flooded_log(), limit=4096)
    assert len(text.encode()) <= 4096
    assert text.splitlines()[-1].startswith("... cut at 4096 bytes")


def test_the_saved_log_is_bounded_in_bytes_and_still_reads() -> None:
    log = _flooded_log()
    # A page whose own state holds megabytes, deep nesting and long lists.
    deep: dict = {}
    node = deep
    for _ in range(100):
        node["next"] = {}
        node = node["next"]
    for i in range(LIMITS.state_samples):
        log.state_samples.append((i * 0.1, {"board": "#" * 100_000, "deep": deep}))
    log.state = {"boards": [list(range(10))] * 100_000}
    for i in range(LIMITS.frames * 3):
        log.reads.append(i * 0.01)
    limit = 2 * 1024 * 1024
    text = log.bounded_json(limit)
    assert len(text.encode()) <= limit
    data = json.loads(text)
    assert len(data["state"]["boards"]) <= LIMITS.value_items
    assert all(len(s[1]["board"]) <= LIMITS.value_chars for s in data["state_samples"])
    assert data["overflow"]["state_samples"] > 0
    again = ObservationLog.from_json(data)
    assert again.overflow.counts["console_errors"] == 50_000 - LIMITS.console
    # Unbounded, the same log is far bigger: the bound did the work.
    assert len(json.dumps(log.to_json())) > 10 * limit


def test_a_small_log_is_saved_whole() -> None:
    log = ObservationLog(t0=0.0)
    log.console_errors.append((1.0, "one"))
    assert json.loads(log.bounded_json()) == json.loads(json.dumps(log.to_json()))


def test_a_muted_console_leaves_no_errors_open_unless_an_error_was_heard() -> None:
    log = ObservationLog(t0=0.0)
    log.loaded = True
    log.facts.started_at = 1.0
    log.facts.locks = 3
    log.console_muted_at = 2.5
    verdict = no_errors(log)
    assert verdict.verdict.value == "INCONCLUSIVE" and "stopped listening" in verdict.reason
    log.console_errors.append((2.0, "TypeError: x is undefined"))
    assert no_errors(log).verdict.value == "FAIL"
    again = ObservationLog.from_json(json.loads(log.bounded_json()))
    assert again.console_muted_at == 2.5


def test_a_probe_recording_without_end_keeps_first_and_last_episodes() -> None:
    log = ObservationLog(t0=0.0)
    for i in range(10_000):
        log.evidence.add(i * 0.01, "gravity", "pass", f"episode {i}")
    kept = log.evidence.items["gravity"]
    assert len(kept) == LIMITS.episodes
    assert kept[0].detail == "episode 0" and kept[-1].detail == "episode 9999"
    assert log.overflow.counts["evidence:gravity"] == 10_000 - LIMITS.episodes
    again = ObservationLog.from_json(json.loads(log.bounded_json()))
    assert again.evidence.items["gravity"] == kept

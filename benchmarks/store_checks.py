"""What the store's row checks cost (issue 32): the count of each table's runs against their
files that every full rebuild now makes, and streaming a long session's transcript events.

1. A store of --runs runs (benchmarks/warehouse.py's `generate`), compacted once; then the
   compaction a full rebuild starts with, timed with the check (`check=True`: each part
   opened, each table's files listed and counted against the mirror's runs) and without,
   best of three each; and one rebuild after a part was deleted (the check reads its runs
   again from JSON).
2. A transcript events file of --events events written by the quality stage's
   `write_events`, read by the loader's stream (`iter_checked_array`) and, for comparison,
   by `json.loads` of the whole file, each with the process's peak memory.

Prints figures; asserts nothing (shared, noisy machines).
    .venv/bin/python benchmarks/store_checks.py [--runs 20000] [--events 120000]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from warehouse import _PeakRss, generate

from bench_pipeline.quality.stage import write_events
from bench_pipeline.warehouse import columnar
from bench_pipeline.warehouse.artifacts import ArtifactStore
from bench_pipeline.warehouse.build import SOURCE_SCHEMAS
from bench_pipeline.warehouse.integrity import iter_checked_array


def _best(action, times: int = 3) -> float:
    best = float("inf")
    for _ in range(times):
        started = time.monotonic()
        action()
        best = min(best, time.monotonic() - started)
    return best


def rows(n_runs: int) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-store-checks-") as tmp:
        store = ArtifactStore(Path(tmp) / "artifacts")
        generate(store, n_runs)
        columnar.compact(store, SOURCE_SCHEMAS)
        columnar.mirror_id(store.root)  # as a build does after its first compaction
        plain = _best(lambda: columnar.compact(store, SOURCE_SCHEMAS))
        checked = _best(lambda: columnar.compact(store, SOURCE_SCHEMAS, check=True))
        print(
            f"{n_runs} runs: compaction with nothing to do {plain:.2f} s, "
            f"with the row check {checked:.2f} s (+{checked - plain:.2f} s)"
        )
        columnar.parts(store.root, "bot_evaluation")[0].path.unlink()
        notices: list[str] = []
        with _PeakRss() as rss:
            started = time.monotonic()
            columnar.compact(store, SOURCE_SCHEMAS, check=True, notices=notices)
            took = time.monotonic() - started
        print(
            f"  after deleting the bot_evaluation part: {took:.2f} s, peak RSS "
            f"{rss.peak_mb:.0f} MB; {notices[0]}"
        )


def events(n_events: int) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-store-events-") as tmp:
        path = Path(tmp) / "transcript_events.json"
        event = {
            "run_id": "x.c1.r0",
            "index": 1,
            "kind": "tool_call",
            "raw_type": "assistant:tool_use",
            "tool": "Bash",
            "tool_input": "npm run build -- --step 1 && ls -la dist/assets/js",
            "is_error": False,
            "text": "Checking the build output once more " * 4,
            "tokens": 5,
            "ref": None,
            "wasted": None,
        }
        write_events(path, [{**event, "position": i} for i in range(n_events)])
        size = path.stat().st_size / 1e6
        with _PeakRss() as rss:
            started = time.monotonic()
            count = sum(1 for _ in iter_checked_array(path))
            streamed = time.monotonic() - started
        stream_mb = rss.peak_mb
        with _PeakRss() as rss:
            started = time.monotonic()
            whole = len(json.loads(path.read_text()))
            loaded = time.monotonic() - started
        assert count == whole
        print(
            f"{count} events, {size:.0f} MB: streamed {streamed:.2f} s (peak RSS "
            f"{stream_mb:.0f} MB), json.loads of the whole file {loaded:.2f} s (peak RSS "
            f"{rss.peak_mb:.0f} MB)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20_000)
    parser.add_argument("--events", type=int, default=120_000)
    args = parser.parse_args()
    events(args.events)
    rows(args.runs)


if __name__ == "__main__":
    main()

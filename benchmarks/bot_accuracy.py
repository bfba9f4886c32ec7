"""How often the gameplay bot's verdicts agree with hand labels (docs/bot.md, *Accuracy*).

Runs the bot over whatever part of a labelled corpus is present, two evaluations at once,
and prints per test the confusion table, false PASS / false FAIL / INCONCLUSIVE counts, the
overall figures, the same per renderer (canvas, dom, svg, webgl) and per author group (ai,
human), every wrong verdict with the bot's reason, consistency across repeats and evaluation
times; writes all of it to a JSON file (the warehouse's `raw_bot_accuracy` and
`raw_bot_accuracy_groups`).

    .venv/bin/python benchmarks/bot_accuracy.py --corpus repo             # tests/bot/games
    .venv/bin/python benchmarks/bot_accuracy.py --corpus real --split tune  # the manifest's games
    .venv/bin/python benchmarks/bot_accuracy.py --corpus real --publish      # + into the artifact store
    .venv/bin/python benchmarks/bot_accuracy.py --publish-existing out.json  # publish an earlier run

With the contract's 30 s window one evaluation takes about 45 s and two run at once: the
23 in-repo games took 9 minutes on the 2-core development machine.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench_pipeline import settings
from bench_pipeline.bot import BOT_VERSION, TEST_IDS
from bench_pipeline.bot.accuracy import (
    SPLITS,
    LabelError,
    LabelledGame,
    Outcome,
    format_text,
    group_warehouse_rows,
    load_manifest,
    load_repo_corpus,
    summarize,
    warehouse_rows,
)
from bench_pipeline.warehouse.artifacts import atomic_write_json

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = ROOT / "benchmarks" / "bot_corpus" / "manifest.yaml"
REPO_GAMES = ROOT / "tests" / "bot" / "games"
DEFAULT_CORPUS_DIR = Path("/work/corpus")
WORKERS = 2  # evaluations at once: what the bot is specified for on a 2-core machine
PUBLISHED = "bot_accuracy"  # the artifact store's folder the warehouse loads


def corpus_dir() -> Path:
    return Path(os.environ.get("BENCH_CORPUS_DIR") or DEFAULT_CORPUS_DIR)


def _evaluate(
    game: str, target: str, repeat: int, endurance_s: float, evidence: str | None
) -> dict[str, Any]:
    """One evaluation, in its own process (a pool worker): the verdicts, or why not."""
    from bench_pipeline.bot import evaluate

    started = time.monotonic()
    artifacts = Path(evidence) / game / f"r{repeat}" if evidence else None
    try:
        result = evaluate(target, endurance_s=endurance_s, artifacts=artifacts).to_json()
    except Exception as err:  # the bot could not run on this game: say so, go on
        return {
            "game": game,
            "repeat": repeat,
            "error": f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}",
            "wall_s": time.monotonic() - started,
        }
    return {
        "game": game,
        "repeat": repeat,
        "tests": result["tests"],
        "reasons": result["reasons"],
        "duration_s": result["duration_s"],
        "wall_s": time.monotonic() - started,
    }


def _outcome(raw: dict[str, Any]) -> Outcome:
    if raw.get("error"):
        why = f"the evaluation failed: {raw['error']}"
        return Outcome(
            raw["game"],
            raw["repeat"],
            dict.fromkeys(TEST_IDS, "INCONCLUSIVE"),
            dict.fromkeys(TEST_IDS, why),
            None,
            round(raw["wall_s"], 2),
            raw["error"],
        )
    return Outcome(
        raw["game"],
        raw["repeat"],
        raw["tests"],
        raw["reasons"],
        raw["duration_s"],
        round(raw["wall_s"], 2),
    )


def run_all(
    games: list[LabelledGame], repeats: int, endurance_s: float, evidence: Path | None
) -> list[Outcome]:
    jobs = [(g, r) for r in range(repeats) for g in games]
    outcomes = []
    # spawn: each worker is a fresh interpreter (Playwright and the bot's threads do not
    # survive a fork); one task per worker: each evaluation gets a process of its own, so
    # nothing a game left behind (a stuck thread, a leaked Chromium) reaches the next.
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(WORKERS, mp_context=context, max_tasks_per_child=1) as pool:
        futures = [
            pool.submit(
                _evaluate, g.id, str(g.target), r, endurance_s, str(evidence) if evidence else None
            )
            for g, r in jobs
        ]
        for done, future in enumerate(as_completed(futures), 1):
            outcome = _outcome(future.result())
            outcomes.append(outcome)
            status = outcome.error or " ".join(
                f"{v[0]}" for v in (outcome.tests[t] for t in TEST_IDS)
            )
            print(
                f"[{done}/{len(jobs)}] {outcome.game} #{outcome.repeat} "
                f"{outcome.wall_s:.0f}s {status}",
                flush=True,
            )
    return outcomes


def publish(summary: dict[str, Any], artifacts: Path) -> Path:
    """Copy an output file into the artifact store, where the warehouse build loads it."""
    if summary.get("only"):
        raise ValueError("a run limited with --only measures part of the corpus: not published")
    # Refuse what the warehouse could not load (it loads a file's two tables or neither).
    warehouse_rows(summary, "check")
    group_warehouse_rows(summary, "check")
    stamp = datetime.fromisoformat(summary["measured_at"]).strftime("%Y%m%dT%H%M%SZ")
    path = artifacts / PUBLISHED / f"{summary['corpus']}-{summary['split']}-{stamp}.json"
    atomic_write_json(path, summary)
    return path


def _games(args: argparse.Namespace) -> tuple[list[LabelledGame], list[str]]:
    if args.corpus == "repo":
        if args.split != "all":
            raise LabelError("the in-repo corpus has no splits: use --split all")
        games, absent = load_repo_corpus(args.games_dir), []
    else:
        if not args.manifest.is_file():
            raise LabelError(f"no manifest at {args.manifest}")
        games, absent = load_manifest(args.manifest, args.corpus_dir, args.split)
    if args.only:
        unknown = set(args.only) - {g.id for g in games}
        if unknown:
            raise LabelError(f"--only: no present game {', '.join(sorted(unknown))}")
        games = [g for g in games if g.id in args.only]
    return games, absent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", choices=("real", "repo"), help="required unless publishing")
    parser.add_argument("--split", choices=SPLITS, default="all")
    parser.add_argument("--repeat", type=int, default=1, help="evaluations of each game")
    parser.add_argument("--endurance-seconds", type=float, default=30.0, dest="endurance")
    parser.add_argument("--only", nargs="+", metavar="ID", help="only these games")
    parser.add_argument("--out", type=Path, help="the JSON output file")
    parser.add_argument("--manifest", type=Path, default=MANIFEST)
    parser.add_argument(
        "--corpus-dir",
        type=Path,
        default=None,
        help="where the real games are checked out ($BENCH_CORPUS_DIR, else /work/corpus)",
    )
    parser.add_argument("--games-dir", type=Path, default=REPO_GAMES, help="the in-repo corpus")
    parser.add_argument("--evidence", type=Path, help="keep each evaluation's evidence here")
    parser.add_argument(
        "--publish", action="store_true", help="copy the output into the artifact store"
    )
    parser.add_argument("--publish-existing", type=Path, metavar="FILE", help="publish only")
    parser.add_argument(
        "--artifacts",
        type=Path,
        default=None,
        help="artifact store to publish into ($BENCH_ARTIFACTS_DIR, else data/artifacts)",
    )
    args = parser.parse_args(argv)
    artifacts = args.artifacts or settings.artifacts_dir()
    args.corpus_dir = args.corpus_dir or corpus_dir()

    if args.publish_existing:
        try:
            path = publish(json.loads(args.publish_existing.read_text()), artifacts)
        except (OSError, ValueError, KeyError, TypeError) as err:
            print(f"error: {args.publish_existing}: cannot publish: {err}", file=sys.stderr)
            return 2
        print(f"published: {path}")
        return 0
    if args.corpus is None:
        parser.error("--corpus real|repo is required")
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    try:
        games, absent = _games(args)
    except LabelError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if not games:
        print(f"error: no game of the {args.corpus} corpus is present", file=sys.stderr)
        return 2
    measured_at = datetime.now(UTC).isoformat(timespec="seconds")
    print(
        f"{len(games)} games x {args.repeat}, {WORKERS} at once, endurance {args.endurance:g} s"
        + (f"; {len(absent)} without a checkout" if absent else ""),
        flush=True,
    )
    outcomes = run_all(games, args.repeat, args.endurance, args.evidence)
    summary = summarize(
        games,
        outcomes,
        bot_version=BOT_VERSION,
        measured_at=measured_at,
        corpus=args.corpus,
        split=args.split,
        endurance_s=args.endurance,
        repeats=args.repeat,
        cores=os.cpu_count(),
        only=args.only or (),
        absent=absent,
    )
    print()
    print(format_text(summary))
    out = args.out or settings.data_dir() / f"bot_accuracy-{args.corpus}-{args.split}.json"
    atomic_write_json(out, summary)
    print(f"\nwritten: {out}")
    if args.publish:
        try:
            print(f"published: {publish(summary, artifacts)}")
        except ValueError as err:
            print(f"error: not published: {err}", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

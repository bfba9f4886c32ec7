"""Speed, cadence, concurrency and repeatability of the gameplay bot on the corpus.

Prints figures; asserts nothing. About 15 minutes on a 2-core machine.
    .venv/bin/python benchmarks/bot_evaluation.py [--games N] [--endurance 30]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

GAMES = Path(__file__).resolve().parents[1] / "tests" / "bot" / "games"
BENCH = Path(sys.executable).with_name("bench")


def evaluate(game: Path, endurance: float) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            [
                str(BENCH),
                "evaluate",
                str(game),
                "--json",
                "--artifacts",
                tmp,
                "--endurance-seconds",
                str(endurance),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        result = json.loads(out.stdout)
        events = json.loads((Path(tmp) / "observations.json").read_text())
    result["read_interval_ms"] = events["read_interval_ms"]
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=10, help="how many corpus games")
    parser.add_argument("--endurance", type=float, default=30.0)
    parser.add_argument("--repeats", type=int, default=3, help="runs of the repeatability games")
    args = parser.parse_args()

    games = sorted(p for p in GAMES.iterdir() if (p / "expected.json").is_file())
    working = [
        g
        for g in games
        if set(json.loads((g / "expected.json").read_text())["tests"].values()) == {"PASS"}
    ]
    chosen = (working + [g for g in games if g not in working])[: args.games]

    print(f"one at a time ({len(chosen)} games, {args.endurance:.0f}s endurance):", flush=True)
    alone = {}
    for game in chosen:
        alone[game.name] = evaluate(game, args.endurance)
        r = alone[game.name]
        cadence = r["read_interval_ms"]
        p95 = f"{cadence['p95']:.0f} ms" if cadence else "no reads (no field)"
        print(
            f"  {game.name:26s} {r['duration_s']:5.1f}s  score {r['gameplay_score']:5.1f}  "
            f"reads p95 {p95}",
            flush=True,
        )
    durations = [alone[g.name]["duration_s"] for g in chosen if g in working]
    p95s = [r["read_interval_ms"]["p95"] for r in alone.values() if r["read_interval_ms"]]
    print(f"working games: median {statistics.median(durations):.1f}s, max {max(durations):.1f}s")
    print(
        f"read interval p95: median over games {statistics.median(p95s):.0f} ms, worst {max(p95s):.0f} ms"
    )

    print("two at once:", flush=True)
    with ThreadPoolExecutor(2) as pool:
        paired = dict(
            zip(
                [g.name for g in chosen],
                pool.map(lambda g: evaluate(g, args.endurance), chosen),
                strict=True,
            )
        )
    same = [n for n in paired if paired[n]["tests"] == alone[n]["tests"]]
    print(f"  same verdicts as alone: {len(same)}/{len(paired)}")
    for name in paired:
        if name not in same:
            diff = {
                t: (alone[name]["tests"][t], paired[name]["tests"][t])
                for t in alone[name]["tests"]
                if alone[name]["tests"][t] != paired[name]["tests"][t]
            }
            print(f"  {name}: {diff}")
    pair_durations = [paired[g.name]["duration_s"] for g in chosen if g in working]
    print(
        f"  working games two at once: median {statistics.median(pair_durations):.1f}s, max {max(pair_durations):.1f}s"
    )

    print(f"repeatability ({args.repeats} runs each):", flush=True)
    for game in chosen[:3]:
        runs = [alone[game.name]] + [
            evaluate(game, args.endurance) for _ in range(args.repeats - 1)
        ]
        identical = all(r["tests"] == runs[0]["tests"] for r in runs)
        print(f"  {game.name:26s} identical verdicts: {identical}")


if __name__ == "__main__":
    main()

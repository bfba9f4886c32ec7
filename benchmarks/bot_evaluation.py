"""Speed, cadence, concurrency and repeatability of the gameplay bot on the corpus, and
what its second reader (the game's code and state, read through the DevTools protocol)
costs.

Prints figures; asserts nothing. About 15 minutes on a 2-core machine.
    .venv/bin/python benchmarks/bot_evaluation.py [--games N] [--endurance 30]
    .venv/bin/python benchmarks/bot_evaluation.py --from-evidence DIR   # costs of saved runs
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
    result["state_cost"] = state_cost(events)
    return result


def state_cost(log: dict) -> dict:
    """What the second reader cost in one evaluation: the heap scan, the samples (each a
    few DevTools round trips) and how many there were."""
    state = log.get("state") or {}
    samples = [s.get("ms") for _t, s in log.get("state_samples", []) if isinstance(s, dict)]
    samples = [float(ms) for ms in samples if isinstance(ms, int | float)]
    return {
        "scan_ms": state.get("scan_ms"),
        "sample_ms": samples,
        "found": bool(state.get("boards") or state.get("scalars")),
    }


def print_state_costs(costs: list[dict]) -> None:
    scans = [c["scan_ms"] for c in costs if isinstance(c.get("scan_ms"), int | float)]
    samples = [ms for c in costs for ms in c["sample_ms"]]
    per_run = [len(c["sample_ms"]) for c in costs if c["sample_ms"]]
    print(
        f"state reader over {len(costs)} evaluations ({sum(c['found'] for c in costs)} found state):"
    )
    if scans:
        print(
            f"  heap scan: median {statistics.median(scans):.0f} ms, "
            f"p90 {sorted(scans)[int(0.9 * (len(scans) - 1))]:.0f} ms, max {max(scans):.0f} ms"
        )
    if samples:
        print(
            f"  one sample: median {statistics.median(samples):.1f} ms, "
            f"p90 {sorted(samples)[int(0.9 * (len(samples) - 1))]:.1f} ms, max {max(samples):.0f} ms; "
            f"{statistics.median(per_run):.0f} samples per evaluation (median), "
            f"{statistics.median(samples) * statistics.median(per_run) / 1000:.1f} s of sampling"
        )


def from_evidence(folder: Path) -> None:
    """The second reader's costs in evaluations saved before (their observations.json)."""
    costs = [
        state_cost(json.loads(path.read_text()))
        for path in sorted(folder.rglob("observations.json"))
    ]
    print_state_costs(costs)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=10, help="how many corpus games")
    parser.add_argument("--endurance", type=float, default=30.0)
    parser.add_argument("--repeats", type=int, default=3, help="runs of the repeatability games")
    parser.add_argument(
        "--from-evidence", type=Path, help="only report the state reader's costs of saved runs"
    )
    args = parser.parse_args()
    if args.from_evidence:
        from_evidence(args.from_evidence)
        return

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
    print_state_costs([r["state_cost"] for r in alone.values()])

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

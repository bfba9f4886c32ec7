"""How long measure_quality takes on typical synthetic projects, and which tool dominates.

Prints figures; asserts nothing. About 2 minutes on a 2-core machine.
    .venv/bin/python benchmarks/quality.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from bench_pipeline.agents.synthetic.game import GameSpec, write_game
from bench_pipeline.quality import measure_quality
from bench_pipeline.sandbox import get_sandbox


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    sandbox = get_sandbox("bubblewrap")
    for language in ("javascript", "typescript"):
        with tempfile.TemporaryDirectory() as tmp:
            project = Path(tmp)
            write_game(GameSpec(language=language, seed=1), project)  # type: ignore[arg-type]
            runs = [measure_quality(project, sandbox) for _ in range(args.repeats)]
        totals = [r.tool_seconds["total"] for r in runs]
        tools = sorted({k for r in runs for k in r.tool_seconds} - {"total"})
        per_tool = {t: statistics.median(r.tool_seconds.get(t, 0.0) for r in runs) for t in tools}
        print(
            f"{language}: median {statistics.median(totals):.2f} s over {len(runs)} runs "
            f"(min {min(totals):.2f}, max {max(totals):.2f}); score {runs[0].quality_score}"
        )
        for tool, seconds in sorted(per_tool.items(), key=lambda item: -item[1]):
            share = seconds / statistics.median(totals) * 100
            print(f"  {tool:14} {seconds:6.2f} s  {share:4.0f} %")


if __name__ == "__main__":
    main()

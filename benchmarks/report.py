"""Speed and size of the static results site for 100 and 5,000 runs.

For each size, writes a throwaway artifact store of fake runs (tests/report/fake_site.py:
the default experiment's 51 cells repeated to N runs, every stage's record, two
screenshots, the bot's timeline, a build log, a prompt and a workspace archive per run),
builds the warehouse and the effects marts from it (not timed), then times `build_site`
and prints its page count and size. Deletes everything at the end; asserts nothing.
CPU time (all threads) is printed beside wall time: on a shared machine it is the steadier
figure. The load average is printed too.

    .venv/bin/python benchmarks/report.py [--runs 100 5000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ is not installed

from bench_pipeline.report import build_site
from tests.report.fake_site import make_warehouse


def _du(path: Path) -> tuple[int, int]:
    files = [p for p in path.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, nargs="+", default=[100, 5000])
    parser.add_argument("--keep", type=Path, help="keep the sites under this folder")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs", flush=True)
    for n in args.runs:
        with tempfile.TemporaryDirectory(prefix="bench-report-") as tmp:
            root = Path(tmp)
            started = time.perf_counter()
            fake = make_warehouse(root, runs=n, small_experiments=False, evil=False)
            prepared = time.perf_counter() - started
            timings = []
            for _attempt in range(2):  # the second build replaces the first (a rebuild)
                out = root / "site"
                t0, c0 = time.perf_counter(), time.process_time()
                summary = build_site(fake.db, fake.artifacts, out)
                timings.append((time.perf_counter() - t0, time.process_time() - c0))
            files, size = _du(out)
            html_files, html_size = _du_html(out)
            (wall, cpu), (rewall, recpu) = timings
            print(
                f"{len(fake.run_ids):>6} runs: build_site {wall:.2f} s wall, {cpu:.2f} s CPU "
                f"(rebuild {rewall:.2f} s wall, {recpu:.2f} s CPU); {summary.pages} pages, "
                f"{files} files, "
                f"{size / 1e6:.1f} MB ({html_size / 1e6:.1f} MB of HTML in {html_files} "
                f"pages); fake store and warehouse took {prepared:.0f} s",
                flush=True,
            )
            if args.keep:
                target = args.keep / f"site-{n}"
                shutil.rmtree(target, ignore_errors=True)
                shutil.copytree(out, target)


def _du_html(path: Path) -> tuple[int, int]:
    pages = list(path.rglob("*.html"))
    return len(pages), sum(p.stat().st_size for p in pages)


if __name__ == "__main__":
    main()

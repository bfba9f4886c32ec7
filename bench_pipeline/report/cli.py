"""`bench report`: argparse pieces the command line owner wires in.

parser = argparse.ArgumentParser(prog="bench report")
add_report_arguments(parser)
sys.exit(report_command(parser.parse_args()))
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bench_pipeline import settings
from bench_pipeline.report.data import ReportError
from bench_pipeline.report.site import ARCHIVE_MAX_BYTES, PAGE_SIZE, build_site

DESCRIPTION = (
    "Build the static results site (leaderboard, comparisons, one page per run, methodology, "
    "bot accuracy) from the warehouse; it opens from disk or any static host. See docs/report.md."
)


def add_report_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="DIR",
        help="Folder to write the site into (created; an earlier site there is replaced).",
    )
    parser.add_argument(
        "--db",
        type=Path,
        default=None,
        metavar="PATH",
        help="Warehouse file (default: $BENCH_WAREHOUSE or data/warehouse.duckdb).",
    )
    parser.add_argument(
        "--artifacts",
        type=Path,
        default=None,
        metavar="DIR",
        help="Artifact store (default: $BENCH_ARTIFACTS_DIR or data/artifacts).",
    )
    parser.add_argument("--title", default="bench_pipeline results", help="Site title.")
    parser.add_argument(
        "--page-size",
        type=int,
        default=PAGE_SIZE,
        metavar="N",
        help="Runs per page of the runs index.",
    )
    parser.add_argument(
        "--archive-max-mb",
        type=float,
        default=ARCHIVE_MAX_BYTES / 1e6,
        metavar="MB",
        help="Copy workspace archives up to this size (MB) into the site; larger ones are "
        "named, not copied.",
    )


def report_command(args: argparse.Namespace) -> int:
    """Build the site; 0 on success, 2 with one line on stderr when it cannot be built."""
    db = args.db or settings.warehouse_path()
    artifacts = args.artifacts or settings.artifacts_dir()
    if args.page_size < 1:
        print("error: --page-size must be at least 1", file=sys.stderr)
        return 2
    try:
        summary = build_site(
            db,
            artifacts,
            args.out,
            title=args.title,
            page_size=args.page_size,
            archive_max_bytes=int(args.archive_max_mb * 1e6),
        )
    except ReportError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except OSError as err:
        print(f"error: cannot write the site to {args.out}: {err}", file=sys.stderr)
        return 2
    print(summary.line())
    for warning in summary.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(f"open: {summary.index}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench report", description=DESCRIPTION)
    add_report_arguments(parser)
    return report_command(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())

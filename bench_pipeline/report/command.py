"""What `bench report` does once typer has parsed its options.

The options themselves are declared with the command in bench_pipeline/cli.py: importing
this package costs seconds, and `bench --help` must not pay that to list the command.
`python -m bench_pipeline.report` runs that same command (see __main__.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

from bench_pipeline import settings
from bench_pipeline.report.data import ReportError
from bench_pipeline.report.site import ARCHIVE_MAX_BYTES, PAGE_SIZE, build_site


def report_command(
    out: Path,
    *,
    db: Path | None = None,
    artifacts: Path | None = None,
    title: str = "bench_pipeline results",
    page_size: int = PAGE_SIZE,
    archive_max_mb: float = ARCHIVE_MAX_BYTES / 1e6,
) -> int:
    """Build the site; 0 on success, 2 with one line on stderr when it cannot be built."""
    db = db or settings.warehouse_path()
    artifacts = artifacts or settings.artifacts_dir()
    if page_size < 1:
        print("error: --page-size must be at least 1", file=sys.stderr)
        return 2
    try:
        summary = build_site(
            db,
            artifacts,
            out,
            title=title,
            page_size=page_size,
            archive_max_bytes=int(archive_max_mb * 1e6),
        )
    except ReportError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except OSError as err:
        print(f"error: cannot write the site to {out}: {err}", file=sys.stderr)
        return 2
    print(summary.line())
    for warning in summary.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(f"open: {summary.index}")
    return 0

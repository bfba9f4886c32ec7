"""The static results site: leaderboard, comparisons, one page per run, methodology.

Pure Python (DuckDB, Jinja2), no Dagster: `build_site` reads the warehouse read-only and
the artifact store, and writes a folder that opens from disk or any static host.
See docs/report.md.
"""

from bench_pipeline.report.command import report_command
from bench_pipeline.report.data import ReportError
from bench_pipeline.report.site import SiteSummary, build_site

__all__ = ["ReportError", "SiteSummary", "build_site", "report_command"]

"""Build the static results site from the warehouse and the artifact store.

The site is written into a fresh folder beside `out_dir` and swapped in at the end, so a
failed build never leaves half a site and pages of runs that no longer exist disappear.
An existing `out_dir` is replaced only when it is empty or a site this module wrote (it
holds the marker file), so `--out ~` can never wipe a home folder.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from bench_pipeline import settings
from bench_pipeline.report.about import _write_accuracy, _write_methodology
from bench_pipeline.report.compare import _write_compare
from bench_pipeline.report.data import ReportError, load_warehouse
from bench_pipeline.report.files import Slugs
from bench_pipeline.report.leaderboard import _write_index
from bench_pipeline.report.run_state import RunInfo, _problems
from bench_pipeline.report.runs import _write_run_pages, _write_runs_index
from bench_pipeline.report.site_base import HERE, _environment, _Site

MARKER = ".bench-report"
PAGE_SIZE = 200
ARCHIVE_MAX_BYTES = 5_000_000


@dataclass(frozen=True)
class SiteSummary:
    out_dir: Path
    pages: int
    runs: int
    models: int
    index: Path
    warnings: tuple[str, ...] = ()
    bytes: int = 0
    seconds: float = 0.0

    def line(self) -> str:
        return (
            f"report: {self.pages} pages, {self.runs} runs, {self.models} models, "
            f"{self.bytes / 1e6:.1f} MB in {self.seconds:.1f} s"
            + (f", {len(self.warnings)} warnings" if self.warnings else "")
        )


def build_site(
    db_path: Path,
    artifacts_root: Path,
    out_dir: Path,
    *,
    title: str = "bench_pipeline results",
    page_size: int = PAGE_SIZE,
    archive_max_bytes: int = ARCHIVE_MAX_BYTES,
    sql_models_dir: Path | None = None,
) -> SiteSummary:
    """Write the static site for the warehouse at `db_path` into `out_dir`.

    Raises ReportError (one readable line) when the warehouse is missing or empty, or when
    `out_dir` holds something that is not a site this function wrote.
    """
    started = time.monotonic()
    db_path, artifacts_root, out_dir = Path(db_path), Path(artifacts_root), Path(out_dir)
    out_dir = out_dir.absolute()
    _check_out_dir(out_dir)
    data = load_warehouse(db_path)
    staging = out_dir.parent / f".{out_dir.name}.building-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    site: _Site | None = None
    try:
        site = _Site(
            staging,
            _environment(),
            title,
            previous=out_dir if (out_dir / MARKER).is_file() else None,
            common={
                "site_title": title,
                "generated": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
                "db_name": db_path.name,
            },
        )
        if data.missing:
            site.warnings.append(
                "the warehouse lacks " + ", ".join(data.missing) + ": those sections are empty"
            )
        _write_static(staging)
        slugs = Slugs()
        runs = [
            RunInfo(
                r,
                slugs(r["run_id"]),
                data.verdicts.get(r["run_id"], {}),
                *_problems(r, data.verdicts.get(r["run_id"], {}), data.bot.get(r["run_id"])),
            )
            for r in data.runs
        ]
        exp_slugs = Slugs()
        experiments = {e: exp_slugs(e) for e in data.experiments}
        _write_index(site, data, runs, experiments)
        _write_compare(site, data, experiments, artifacts_root)
        _write_methodology(site, sql_models_dir or settings.sql_models_dir())
        _write_accuracy(site, data)
        _write_runs_index(site, runs, page_size)
        _write_run_pages(site, data, runs, artifacts_root, archive_max_bytes)
        site.close()
        (staging / MARKER).write_text("written by bench_pipeline.report; safe to replace\n")
        _swap(staging, out_dir)
    except BaseException:
        if site is not None:
            with contextlib.suppress(Exception):  # the first error is the one to report
                site.close()
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return SiteSummary(
        out_dir=out_dir,
        pages=site.pages,
        runs=len(runs),
        models=len({(m["agent"], m["model"]) for m in data.models}),
        index=out_dir / "index.html",
        warnings=tuple(site.warnings),
        bytes=site.bytes,
        seconds=time.monotonic() - started,
    )


def _check_out_dir(out_dir: Path) -> None:
    if out_dir.exists() and not out_dir.is_dir():
        raise ReportError(f"--out {out_dir} is a file, not a folder")
    if out_dir.is_dir() and any(out_dir.iterdir()) and not (out_dir / MARKER).is_file():
        raise ReportError(
            f"--out {out_dir} is not empty and is not a site this command wrote "
            f"(no {MARKER} file): choose an empty or new folder"
        )


def _swap(staging: Path, out_dir: Path) -> None:
    old = out_dir.parent / f".{out_dir.name}.old-{os.getpid()}"
    if out_dir.exists():
        try:
            out_dir.rename(old)
        except OSError:  # a mount point: replace its contents instead
            for child in out_dir.iterdir():
                if child.is_dir() and not child.is_symlink():
                    shutil.rmtree(child)
                else:
                    child.unlink()
            for child in staging.iterdir():  # across filesystems: move copies
                shutil.move(str(child), str(out_dir / child.name))
            staging.rmdir()
            return
    staging.rename(out_dir)
    shutil.rmtree(old, ignore_errors=True)


def _write_static(root: Path) -> None:
    static = root / "static"
    static.mkdir()
    for name in ("style.css", "site.js"):
        shutil.copyfile(HERE / "static" / name, static / name)

"""Build the static results site from the warehouse and the artifact store.

The site is written into a fresh folder beside `out_dir` and swapped in at the end, so a
failed build never leaves half a site and pages of runs that no longer exist disappear.
An existing `out_dir` is replaced only when it is empty or a site this module wrote (it
holds the marker file), so `--out ~` can never wipe a home folder.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, get_args

import jinja2
from markupsafe import Markup, escape

from bench_pipeline import settings
from bench_pipeline.agents.base import AgentStatus
from bench_pipeline.agents.stage import ARCHIVE
from bench_pipeline.analysis.render import p_text
from bench_pipeline.analysis.stage import MAX_INTERACTION_CHARTS, METRICS
from bench_pipeline.bot.accuracy import OVERALL, all_tests, trust_sentence
from bench_pipeline.bot.contract import BOT_VERSION, TEST_IDS, TESTS
from bench_pipeline.design import AXES
from bench_pipeline.quality.metrics import CONTRACT_KEYS
from bench_pipeline.report import readings, svg
from bench_pipeline.report.data import ReportError, Row, Warehouse, load_warehouse
from bench_pipeline.report.definitions import (
    METRIC_TITLES,
    methodology_context,
)
from bench_pipeline.report.files import (
    SAFE_FILE,
    Evidence,
    Slugs,
    inside,
    png_size,
    run_evidence,
    runs_root_ok,
    tail_text,
)

MARKER = ".bench-report"
IO_THREADS = 4
IO_BACKLOG = 256
PAGE_SIZE = 200
ARCHIVE_MAX_BYTES = 5_000_000
SCREENSHOT_MAX_BYTES = 5_000_000
SCREENSHOTS_PER_RUN = 6
NOTES_PER_RUN = 80
INTERACTIONS_SHOWN = 8  # per outcome, beyond the significant ones
PROMPT_MAX_BYTES = 20_000
PENDING_STATES = ("not run yet", "not scored yet")
CORRECTION_NAMES = {"holm": "Holm", "bh": "Benjamini-Hochberg"}
# Every agent outcome but success (the agents' own list of statuses).
AGENT_FAILURES = tuple(s for s in get_args(AgentStatus) if s != "completed")
HERE = Path(__file__).parent

# Known evidence files of the bot, described for alt text.
SCREENSHOT_ALT = {
    "01-loaded": "the page just after it loaded, before the bot pressed anything",
    "02-end": "the page at the end of the bot's session",
}
# Quality metrics shown on a run page beyond the contract's, when a record has them.
QUALITY_EXTRAS = (
    "ts_errors",
    "cognitive_complexity_max",
    "source_lines",
    "modules",
    "single_file",
    "largest_file_share",
    "html_warnings",
    "sonar_cognitive_complexity",
    "sonar_bugs",
    "sonar_code_smells",
)


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


# ------------------------------------------------------------------------------------------
# Formatting filters


def _num(value: Any, digits: int | None = None) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if digits is not None:
        return f"{value:,.{digits}f}"
    if isinstance(value, int):
        return f"{value:,}"
    return readings.fmt(float(value))


def _money(value: Any) -> str:
    if value is None:
        return "–"
    return f"${value:,.2f}" if abs(value) >= 1 else f"${value:.3f}"


def _seconds(value: Any) -> str:
    if value is None:
        return "–"
    if value >= 3600:
        return f"{value / 3600:.1f} h"
    if value >= 120:
        return f"{value / 60:.1f} min"
    return f"{value:.0f} s" if value >= 10 else f"{value:.1f} s"


def _pct(value: Any) -> str:
    return "–" if value is None else f"{100 * value:.0f} %"


def _bytes(value: Any) -> str:
    if value is None:
        return "–"
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if value >= size:
            return f"{value / size:.1f} {unit}"
    return f"{value} B"


def _yesno(value: Any) -> str:
    return "–" if value is None else ("yes" if value else "no")


def _sortv(value: Any) -> str:
    """data-v for numeric sorting: empty for missing values (sorted last)."""
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, int | float) and math.isfinite(value):
        return repr(float(value))
    return ""


_BADGES: dict[str, Markup] = {}


def _badge(verdict: str | None) -> Markup:
    """A verdict as a badge (a filter, not a macro: 16 per run page)."""
    if not verdict:
        return Markup('<span class="muted">–</span>')
    if verdict not in _BADGES:
        _BADGES[verdict] = Markup(
            f'<span class="badge v-{escape(verdict.lower())}">{escape(verdict)}</span>'
        )
    return _BADGES[verdict]


def _state_badge(run: RunInfo) -> Markup:
    kind = "ok" if run.state == "ok" else "pending" if run.state in PENDING_STATES else "bad"
    return Markup(f'<span class="badge s-{kind}">{escape(run.state)}</span>')


def _table_start(
    table_id: str, caption: str, sortable: bool = False, filter: bool = False
) -> Markup:
    """A table in a horizontally scrolling, labelled, focusable region, with its caption."""
    i = escape(table_id)
    classes = ' class="sortable"' if sortable else ""
    data = " data-filter" if filter else ""
    return Markup(
        f'<div class="table-wrap" role="region" aria-labelledby="{i}-cap" tabindex="0">\n'
        f'<table id="{i}"{classes}{data}>\n<caption id="{i}-cap">{escape(caption)}</caption>'
    )


TABLE_END = Markup("</table>\n</div>")


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        num=_num,
        money=_money,
        secs=_seconds,
        pct=_pct,
        size=_bytes,
        yesno=_yesno,
        sortv=_sortv,
        ptext=p_text,
        signed=lambda v: readings.amount("", v, signed=True),
        interval=readings.interval_text,
        badge=_badge,
        state_badge=_state_badge,
    )
    env.globals.update(table_start=_table_start, table_end=TABLE_END)
    return env


# ------------------------------------------------------------------------------------------
# Runs: what went wrong, in one line


@dataclass
class RunInfo:
    row: Row
    slug: str
    verdicts: dict[str, str]
    problems: list[str]
    severity: int  # 0 agent failed, 1 build failed, 2 gameplay tests failed, 9 none

    @property
    def run_id(self) -> str:
        return self.row["run_id"]

    @property
    def failing(self) -> bool:
        return bool(self.problems)

    @property
    def state(self) -> str:
        status = self.row["status"]
        if status == "pending":
            return "not run yet"
        if self.severity == 0:
            return f"agent {status}"
        if self.severity == 1:
            return "build failed"
        if self.severity == 2:
            return "tests failed"
        if self.row.get("score") is None:
            return "not scored yet"
        return "ok"


def _problems(row: Row, verdicts: Mapping[str, str], bot: Row | None) -> tuple[list[str], int]:
    out: list[str] = []
    severity = 9
    status = row.get("status")
    if status in AGENT_FAILURES:
        out.append(f"the agent ended {status}: {row.get('agent_message') or 'no message'}")
        severity = 0
    if row.get("build_ok") is False:
        out.append(f"the build failed: {row.get('build_message') or 'no message'}")
        severity = min(severity, 1)
    failed = [t for t in TEST_IDS if verdicts.get(t) == "FAIL"]
    if failed:
        reasons = (bot or {}).get("reasons") or {}
        first = reasons.get(failed[0]) if isinstance(reasons, Mapping) else None
        why = f" ({failed[0]}: {first})" if first else ""
        out.append(
            f"{len(failed)} of {len(TEST_IDS)} gameplay tests failed: {', '.join(failed)}{why}"
        )
        severity = min(severity, 2)
    return out, severity


# ------------------------------------------------------------------------------------------
# The writer


def _write_page(path: Path, data: bytes, old: Path | None) -> None:
    """Write a page; a page the previous site has byte for byte is hard-linked from it
    instead (a nightly rebuild rewrites only the pages that changed)."""
    if old is not None:
        try:
            if old.stat().st_size == len(data) and old.read_bytes() == data:
                os.link(old, path)
                return
        except OSError:
            pass
    path.write_bytes(data)


def _copy_file(src: Path, dst: Path, old: Path | None) -> None:
    """Copy evidence with its modification time; an unchanged file (same size and time as
    the previous site's copy) is hard-linked from the previous site instead of copied.
    Links point only between site folders, never into the artifact store."""
    st = src.stat()
    if old is not None:
        try:
            prev = old.stat()
            if prev.st_size == st.st_size and prev.st_mtime_ns == st.st_mtime_ns:
                os.link(old, dst)
                return
        except OSError:
            pass
    shutil.copyfile(src, dst)
    os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns))


@dataclass
class _Site:
    """Renders pages and hands file writes and copies to a few threads: they are system
    calls that release the GIL, so they overlap with the rendering (thousands of files)."""

    root: Path  # the staging folder
    env: jinja2.Environment
    title: str
    common: dict[str, Any]
    pages: int = 0
    bytes: int = 0
    warnings: list[str] = field(default_factory=list)
    previous: Path | None = None  # the site being replaced: unchanged files are linked from it
    _pool: ThreadPoolExecutor = field(default_factory=lambda: ThreadPoolExecutor(IO_THREADS))
    _pending: list[Future[None]] = field(default_factory=list)
    _dirs: set[Path] = field(default_factory=set)

    def _folder(self, path: Path) -> None:
        if path.parent not in self._dirs:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._dirs.add(path.parent)

    def _submit(self, fn: Any, *args: Any) -> None:
        self._pending.append(self._pool.submit(fn, *args))
        if len(self._pending) > 4 * IO_BACKLOG:  # bound the memory held by queued pages
            self._drain(IO_BACKLOG)

    def _drain(self, keep: int = 0) -> None:
        done, self._pending = (
            self._pending[: len(self._pending) - keep],
            self._pending[-keep:] if keep else [],
        )
        for future in done:
            future.result()  # re-raises the first failed write here

    def _old(self, rel: str) -> Path | None:
        return self.previous / rel if self.previous is not None else None

    def write(self, rel: str, template: str, **context: Any) -> None:
        depth = rel.count("/")
        html = self.env.get_template(template).render(
            **self.common, root="../" * depth, rel=rel, **context
        )
        data = html.encode("utf-8")
        path = self.root / rel
        self._folder(path)
        self._submit(_write_page, path, data, self._old(rel))
        self.pages += 1
        self.bytes += len(data)

    def copy(self, src: Path, rel: str, size: int) -> None:
        """Copy an evidence file into the site (new file, default permissions)."""
        dst = self.root / rel
        self._folder(dst)
        self._submit(_copy_file, src, dst, self._old(rel))
        self.bytes += size

    def close(self) -> None:
        try:
            self._drain()
        finally:
            self._pool.shutdown(wait=True, cancel_futures=True)


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


# ------------------------------------------------------------------------------------------
# Leaderboard (index.html)


def _group(rows: Iterable[Row], key: str = "experiment") -> dict[str, list[Row]]:
    out: dict[str, list[Row]] = defaultdict(list)
    for r in rows:
        out[r[key]].append(r)
    return out


def _write_index(
    site: _Site, data: Warehouse, runs: list[RunInfo], experiments: dict[str, str]
) -> None:
    models = _group(data.models)
    cells = _group(data.cell_board)
    spent = {(c["experiment"], c["model"]): c for c in data.cost}
    score_effects = [r for r in data.main_effects if r["metric"] == "score"]
    strongest = readings.strongest(score_effects)
    weak = None if strongest else readings.strongest(score_effects, meaningful_only=False)
    failing = sorted((r for r in runs if r.failing), key=lambda r: (r.severity, r.run_id))
    tally = {
        "agent": sum(1 for r in runs if r.severity == 0),
        "build": sum(1 for r in runs if r.severity == 1),
        "tests": sum(1 for r in runs if r.severity == 2),
        "pending": sum(1 for r in runs if r.row["status"] == "pending"),
        "unscored": sum(1 for r in runs if r.state == "not scored yet"),
    }
    sections = []
    for experiment, slug in experiments.items():
        exp_runs = [r for r in runs if r.row["experiment"] == experiment]
        sections.append(
            {
                "name": experiment,
                "slug": slug,
                "models": [
                    Row(m, spent=(spent.get((experiment, m["model"])) or {}).get("total_cost_usd"))
                    for m in models.get(experiment, [])
                ],
                "cells": cells.get(experiment, []),
                "best": readings.best_model_reading(models.get(experiment, [])),
                "n_runs": len(exp_runs),
                "n_scored": sum(1 for r in exp_runs if r.row.get("score") is not None),
            }
        )
    site.write(
        "index.html",
        "index.html",
        nav="index",
        page_title="Leaderboard",
        sections=sections,
        n_runs=len(runs),
        n_scored=sum(1 for r in runs if r.row.get("score") is not None),
        strongest=strongest,
        strongest_reading=readings.effect_reading(strongest) if strongest else None,
        strongest_slug=experiments.get(strongest["experiment"]) if strongest else None,
        weak_reading=readings.effect_reading(weak) if weak else None,
        weak=weak,
        weak_slug=experiments.get(weak["experiment"]) if weak else None,
        has_effects=bool(score_effects),
        failing=failing[:5],
        n_failing=len(failing),
        tally=tally,
    )


# ------------------------------------------------------------------------------------------
# Compare (compare.html and compare/<experiment>.html)


def _chart_png(
    site: _Site, artifacts_root: Path, experiment: str, slug: str, name: str
) -> Row | None:
    """Copy analysis/<experiment>/<name> into charts/<slug>/ when it is there."""
    src = artifacts_root / "analysis" / experiment / name
    if not inside(src, artifacts_root):
        return None
    size = png_size(src)
    if size is None:
        return None
    rel = f"charts/{slug}/{name}"
    site.copy(src, rel, src.stat().st_size)
    return Row(src=rel, width=size[0], height=size[1])


def _t_crit(noise: Row | None, n_effects: int, alpha: float = 0.05) -> float | None:
    if noise is None or not noise.get("n_runs"):
        return None
    df = noise["n_runs"] - 1 - n_effects
    from scipy import stats  # on first use: it is a large import for every run process

    return float(stats.t.ppf(1 - alpha / 2, df)) if df > 0 else None


def _level(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _cell_means(
    cells: list[Row], metric: str, a: str, b: str
) -> tuple[dict[tuple[str, str], float], list[str], list[str]]:
    sums: dict[tuple[str, str], list[float]] = defaultdict(list)
    for c in cells:
        if c.get("in_current_design") is False or c.get(f"{metric}_mean") is None:
            continue
        if a not in c or b not in c:
            continue
        sums[(_level(c[a]), _level(c[b]))].append(c[f"{metric}_mean"])
    means = {k: sum(v) / len(v) for k, v in sums.items()}
    xs = sorted({k[0] for k in means})
    ss = sorted({k[1] for k in means})
    return means, xs, ss


def _metric_section(
    site: _Site,
    artifacts_root: Path,
    experiment: str,
    slug: str,
    designs: list[str],
    metric: str,
    rows: list[Row],
    noise: Row | None,
    gaps: list[Row],
    interactions: list[Row],
    cells: list[Row],
) -> dict[str, Any]:
    """Everything the compare page shows for one experiment and outcome."""
    label = readings.metric_label(metric)
    reason = next((r["reason"] for r in gaps if r["term"] == "*"), None)
    where = f"on {label} in experiment {experiment}"
    # Main effects: the analysis's PNG, else an SVG from the rows.
    main_alt = (
        f"Main effects {where}: each level's difference from its baseline with its 95 % "
        "interval; the grey band is ± the noise SD"
    )
    main_png = _chart_png(site, artifacts_root, experiment, slug, f"{metric}.main_effects.png")
    main_svg = None
    if main_png is None and rows:
        main_svg = svg.main_effects_svg(rows, (noise or {}).get("noise_sd"), main_alt)
    # Pareto: when the analysis drew one, or drawn here for a Plackett-Burman experiment.
    pareto_alt = f"Pareto chart of the two-level effects {where}: |t| of each effect, largest first"
    pareto_png = _chart_png(site, artifacts_root, experiment, slug, f"{metric}.pareto.png")
    pareto_svg = None
    two_level = _two_level(rows)
    if pareto_png is None and "plackett_burman" in designs and two_level:
        estimated = sum(1 for r in rows if r.get("estimate") is not None)
        pareto_svg = svg.pareto_svg(two_level, _t_crit(noise, estimated), pareto_alt)
    # Interactions: the significant ones and the strongest few in the table; plots for the
    # strongest (as many as the analysis draws).
    plots = []
    for r in interactions[:MAX_INTERACTION_CHARTS]:
        axes = [a.strip() for a in r["axes"].split("×")]
        alt = f"Interaction plot of {r['axes']} {where}: mean per combination of levels"
        name = f"{metric}.interaction_{'_x_'.join(axes)}.png"
        png = _chart_png(site, artifacts_root, experiment, slug, name)
        chart = None
        if png is None and len(axes) == 2:
            means, xs, series = _cell_means(cells, metric, axes[0], axes[1])
            chart = svg.interaction_svg(means, xs, series, axes[0], axes[1], alt)
        if png or chart:
            plots.append(Row(alt=alt, png=png, svg=chart, reading=readings.interaction_reading(r)))
    return {
        "metric": metric,
        "title": METRIC_TITLES.get(metric, metric),
        "label": label,
        "summary": readings.metric_summary(metric, rows, reason),
        "effects": [Row(r, reading=readings.effect_reading(r)) for r in rows],
        "noise": noise,
        "noise_reading": readings.noise_reading(noise) if noise else None,
        "main_png": main_png,
        "main_svg": main_svg,
        "main_alt": main_alt,
        "pareto_png": pareto_png,
        "pareto_svg": pareto_svg,
        "pareto_alt": pareto_alt,
        "interactions": [
            Row(r, reading=readings.interaction_reading(r))
            for i, r in enumerate(interactions)
            if r.get("significant") or i < INTERACTIONS_SHOWN
        ],
        "n_interactions": len(interactions),
        "plots": plots,
        "not_estimable": [r for r in gaps if r["term"] != "*"],
        "reason": reason,
    }


def _write_compare(
    site: _Site, data: Warehouse, experiments: dict[str, str], artifacts_root: Path
) -> None:
    effects = _group(data.main_effects)
    inter = _group(data.interactions)
    noise = {(r["experiment"], r["metric"]): r for r in data.noise}
    gaps = _group(data.not_estimable)
    cells = _group(data.cell_board)
    overview = []
    for experiment, slug in experiments.items():
        designs = data.designs.get(experiment, [])
        metrics = [
            _metric_section(
                site,
                artifacts_root,
                experiment,
                slug,
                designs,
                metric,
                [r for r in effects.get(experiment, []) if r["metric"] == metric],
                noise.get((experiment, metric)),
                [r for r in gaps.get(experiment, []) if r["metric"] == metric],
                [r for r in inter.get(experiment, []) if r["metric"] == metric],
                cells.get(experiment, []),
            )
            for metric in METRICS
        ]
        overview.append({"name": experiment, "slug": slug, "designs": designs, "metrics": metrics})
        correction = next(
            (r["correction"] for r in effects.get(experiment, []) if r.get("correction")), "holm"
        )
        site.write(
            f"compare/{slug}.html",
            "experiment.html",
            nav="compare",
            page_title=f"Compare: {experiment}",
            experiment=experiment,
            designs=designs,
            metrics=metrics,
            correction=CORRECTION_NAMES.get(correction, correction),
        )
    site.write(
        "compare.html", "compare.html", nav="compare", page_title="Compare", overview=overview
    )


def _two_level(rows: list[Row]) -> list[Row]:
    per_axis = Counter(r["axis"] for r in rows)
    return [r for r in rows if per_axis[r["axis"]] == 1 and r.get("t_value") is not None]


# ------------------------------------------------------------------------------------------
# Methodology


def _write_methodology(site: _Site, sql_models_dir: Path) -> None:
    context, warnings = methodology_context(sql_models_dir)
    site.warnings.extend(warnings)
    site.write(
        "methodology.html",
        "methodology.html",
        nav="methodology",
        page_title="Methodology",
        **context,
    )


# ------------------------------------------------------------------------------------------
# Bot accuracy (mart_bot_accuracy: the latest published accuracy benchmark per corpus, split)

# The held-out games first: they were not looked at while the bot was tuned.
_ACCURACY_ORDER = [("real", "heldout"), ("real", "tune"), ("real", "all"), ("repo", "all")]
_CORPUS_NAMES = {
    "real": "public games written by people and agents (the real corpus)",
    "repo": "the repository's own test games (tests/bot/games), which the bot was developed "
    "against",
}
_SPLIT_NAMES = {
    "heldout": "held-out games, never looked at while the bot was tuned: the fair measure",
    "tune": "tuning games, the ones the bot was developed against: expect it to look better here",
    "all": "every game",
}


def _accuracy_sections(rows: list[Row]) -> list[dict[str, Any]]:
    groups: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for row in rows:
        groups[(row["corpus"], row["split"])].append(row)
    known = [k for k in _ACCURACY_ORDER if k in groups]
    sections = []
    for corpus, split in known + sorted(k for k in groups if k not in _ACCURACY_ORDER):
        ordered = all_tests(groups[(corpus, split)])
        overall = next((r for r in ordered if r["test_id"] == OVERALL), ordered[0])
        measured = overall["measured_at"]
        sections.append(
            {
                "id": f"{corpus}-{split}",
                "corpus": corpus,
                "split": split,
                "title": f"{corpus.capitalize()} corpus, "
                + ("every game" if split == "all" else f"{split} split"),
                "corpus_name": _CORPUS_NAMES.get(corpus, corpus),
                "split_name": _SPLIT_NAMES.get(split, split),
                "meta": overall,
                "date": measured.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
                if isinstance(measured, datetime)
                else str(measured),
                "outdated": overall["bot_version"] != BOT_VERSION,
                "overall_trust": trust_sentence(overall),
                "tests": [
                    {"row": r, "what": TESTS.get(r["test_id"], ""), "trust": trust_sentence(r)}
                    for r in ordered
                    if r["test_id"] != OVERALL
                ],
            }
        )
    return sections


def _write_accuracy(site: _Site, data: Warehouse) -> None:
    site.write(
        "accuracy.html",
        "accuracy.html",
        nav="accuracy",
        page_title="Bot accuracy",
        sections=_accuracy_sections(data.accuracy),
        bot_version=BOT_VERSION,
    )


# ------------------------------------------------------------------------------------------
# Runs index (runs/index.html, runs/page-N.html, runs/failing.html, runs/failing-N.html)


def _page_name(prefix: str, n: int) -> str:
    if n == 1:
        return "index.html" if prefix == "page" else "failing.html"
    return f"{prefix}-{n}.html"


def _pager(prefix: str, current: int, total: int) -> list[dict[str, Any]]:
    shown = sorted({1, total, *range(max(1, current - 2), min(total, current + 2) + 1)})
    out: list[dict[str, Any]] = []
    last = 0
    for n in shown:
        if n - last > 1:
            out.append({"gap": True})
        out.append({"n": n, "href": _page_name(prefix, n), "current": n == current, "gap": False})
        last = n
    return out


def _write_runs_index(site: _Site, runs: list[RunInfo], page_size: int) -> None:
    failing = sorted((r for r in runs if r.failing), key=lambda r: (r.severity, r.run_id))
    for prefix, subset, label in (("page", runs, "All runs"), ("failing", failing, "Failing runs")):
        pages = max(1, math.ceil(len(subset) / page_size))
        for n in range(1, pages + 1):
            chunk = subset[(n - 1) * page_size : n * page_size]
            site.write(
                f"runs/{_page_name(prefix, n)}",
                "runs.html",
                nav="runs",
                page_title=f"{label}" + (f" (page {n} of {pages})" if pages > 1 else ""),
                view=prefix,
                runs=chunk,
                first=(n - 1) * page_size + 1,
                n_total=len(runs),
                n_failing=len(failing),
                n_subset=len(subset),
                pager=_pager(prefix, n, pages) if pages > 1 else [],
                prev=_page_name(prefix, n - 1) if n > 1 else None,
                next=_page_name(prefix, n + 1) if n < pages else None,
            )


# ------------------------------------------------------------------------------------------
# Run pages (runs/<run>.html, evidence in runs/<run>/)


def _screenshots(site: _Site, run: RunInfo, bot: Evidence | None) -> list[Row]:
    if bot is None:
        return []
    names = [n for n in bot.names if n.lower().endswith(".png")][:SCREENSHOTS_PER_RUN]
    shots = []
    for i, name in enumerate(names):
        src = bot.folder / name
        size_bytes = bot.size(name)
        if size_bytes is None or size_bytes > SCREENSHOT_MAX_BYTES:
            continue
        size = png_size(src)
        if size is None:
            continue
        stem = name[: -len(".png")]
        target = name if SAFE_FILE.match(name) else f"screenshot-{i + 1}.png"
        rel = f"{run.slug}/{target}"
        site.copy(src, f"runs/{rel}", size_bytes)
        what = SCREENSHOT_ALT.get(stem, f"the bot's screenshot {stem}")
        shots.append(
            Row(
                src=rel,
                width=size[0],
                height=size[1],
                alt=f"Screenshot of run {run.run_id}: {what}",
                caption=f"{name}: {what}",
            )
        )
    return shots


def _bot_notes(bot: Evidence | None) -> list[str]:
    path = bot.path("evaluation.json") if bot else None
    if path is None:
        return []
    try:
        notes = json.loads(path.read_text(encoding="utf-8", errors="replace")).get("notes") or []
    except (OSError, ValueError, AttributeError):
        return []
    return [str(n) for n in notes[:NOTES_PER_RUN]]


def _archive(site: _Site, run: RunInfo, gen: Evidence | None, cap: int) -> Row:
    store_path = f"runs/{run.run_id}/agent_generation/{ARCHIVE}"
    src = gen.path(ARCHIVE) if gen else None
    size = gen.size(ARCHIVE) if gen and src else None
    if src is None or size is None:
        return Row(status="missing", store_path=store_path)
    if size > cap:
        return Row(status="too_big", bytes=size, cap=cap, store_path=store_path)
    rel = f"{run.slug}/{ARCHIVE}"
    site.copy(src, f"runs/{rel}", size)
    return Row(status="copied", href=rel, bytes=size, cap=cap)


def _prompt(gen: Evidence | None) -> str | None:
    path = gen.path("prompt.md") if gen else None
    if path is None:
        return None
    try:
        with path.open("rb") as fh:
            data = fh.read(PROMPT_MAX_BYTES + 1)
    except OSError:
        return None
    text = data[:PROMPT_MAX_BYTES].decode("utf-8", errors="replace")
    return text + ("\n…" if len(data) > PROMPT_MAX_BYTES else "")


def _quality_rows(q: Row | None) -> list[Row]:
    if not q:
        return []
    breakdown = _dict(q.get("quality_breakdown"))
    unavailable = dict(_dict(q.get("unavailable")))
    for key, why in _dict(q.get("sonar_unavailable")).items():
        unavailable.setdefault(f"sonar_{key}", why)
    rows = []
    for key in (*CONTRACT_KEYS, *QUALITY_EXTRAS):
        if key not in q and key not in unavailable:
            continue
        rows.append(
            Row(
                metric=key,
                value=q.get(key),
                penalty=breakdown.get(key),
                why_missing=unavailable.get(key) if q.get(key) is None else None,
            )
        )
    return rows


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _write_run_page(
    site: _Site,
    data: Warehouse,
    run: RunInfo,
    neighbours: tuple[RunInfo | None, RunInfo | None],
    artifacts_root: Path,
    archive_cap: int,
    store_ok: bool,
) -> tuple[bool, bool]:
    """One run's page and evidence; returns (archive over the cap, no evidence folder)."""
    run_id = run.run_id
    row = run.row
    cell = data.cells.get(row["cell_id"]) or Row()
    config = [
        (name, _level(row.get(name, cell.get(name))), AXES[name].description) for name in AXES
    ]
    bot = data.bot.get(run_id)
    quality = data.quality.get(run_id)
    build = data.build.get(run_id) or Row()
    stages = run_evidence(artifacts_root, run_id) if store_ok else {}
    bot_dir = stages.get("bot_evaluation")
    gen_dir = stages.get("agent_generation")
    build_dir = stages.get("sandboxed_build")
    reasons = _dict((bot or {}).get("reasons"))
    verdicts = [
        Row(test=t, what=TESTS[t], verdict=run.verdicts.get(t), reason=reasons.get(t))
        for t in TEST_IDS
    ]
    log = build.get("log_tail") or None
    log_file = build_dir.path("build.log") if build_dir else None
    if not log and log_file is not None:
        log = tail_text(log_file) or None
    archive = _archive(site, run, gen_dir, archive_cap)
    transcript = Row(
        (k[len("transcript_") :], v)
        for k, v in (quality or {}).items()
        if k.startswith("transcript_")
    )
    site.write(
        f"runs/{run.slug}.html",
        "run.html",
        nav="runs",
        page_title=f"Run {run_id}",
        run=run,
        r=row,
        cell=cell,
        config=config,
        verdicts=verdicts,
        bot=bot,
        controls=_dict((bot or {}).get("controls")),
        shots=_screenshots(site, run, bot_dir),
        notes=_bot_notes(bot_dir),
        quality=quality,
        quality_rows=_quality_rows(quality),
        transcript=transcript,
        tool_breakdown=sorted(
            _dict(transcript.get("tool_breakdown")).items(), key=lambda kv: -(kv[1] or 0)
        ),
        wasted_breakdown=sorted(_dict(transcript.get("wasted_breakdown")).items()),
        wasted_events=data.wasted_events.get(run_id, []),
        agent=data.agent.get(run_id) or Row(),
        build=build,
        log=log,
        archive=archive,
        prompt=_prompt(gen_dir),
        prev=neighbours[0],
        next=neighbours[1],
    )
    return archive["status"] == "too_big", row["status"] != "pending" and gen_dir is None


def _write_run_pages(
    site: _Site,
    data: Warehouse,
    runs: list[RunInfo],
    artifacts_root: Path,
    archive_cap: int,
) -> None:
    store_ok = runs_root_ok(artifacts_root)
    too_big = missing_evidence = 0
    by_experiment: dict[str, list[RunInfo]] = defaultdict(list)
    for run in runs:
        by_experiment[run.row["experiment"]].append(run)
    for rows in by_experiment.values():  # previous / next: within the run's experiment
        for i, run in enumerate(rows):
            neighbours = (
                rows[i - 1] if i > 0 else None,
                rows[i + 1] if i + 1 < len(rows) else None,
            )
            big, missing = _write_run_page(
                site, data, run, neighbours, artifacts_root, archive_cap, store_ok
            )
            too_big += big
            missing_evidence += missing
    if too_big:
        site.warnings.append(
            f"{too_big} workspace archives are over the {archive_cap / 1e6:.0f} MB cap and were "
            "not copied (their run pages say where they are in the artifact store)"
        )
    ran = sum(1 for r in runs if r.row["status"] != "pending")
    if ran and missing_evidence == ran:
        site.warnings.append(
            f"none of the {ran} runs that ran has an evidence folder under {artifacts_root}/runs "
            "(no screenshots, logs or archives on their pages): is --artifacts the store the "
            "warehouse was built from?"
        )

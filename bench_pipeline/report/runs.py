"""The runs pages: the paged lists of all and of failing runs (runs/index.html,
runs/failing.html, ...) and one page per run (runs/<run>.html) with its evidence copied
into runs/<run>/.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench_pipeline.agents.stage import ARCHIVE
from bench_pipeline.bot.contract import TEST_IDS, TESTS
from bench_pipeline.design import AXES
from bench_pipeline.quality.metrics import CONTRACT_KEYS
from bench_pipeline.report.data import Row, Warehouse
from bench_pipeline.report.files import (
    SAFE_FILE,
    Evidence,
    png_size,
    run_evidence,
    runs_root_ok,
    tail_text,
)
from bench_pipeline.report.run_state import RunInfo
from bench_pipeline.report.site_base import _level, _Site

SCREENSHOT_MAX_BYTES = 5_000_000
SCREENSHOTS_PER_RUN = 6
NOTES_PER_RUN = 80
PROMPT_MAX_BYTES = 20_000

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

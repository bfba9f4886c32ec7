"""The leaderboard page (index.html): the models per experiment, the strongest effect and
the failing runs at a glance.
"""

from __future__ import annotations

from bench_pipeline.report import readings
from bench_pipeline.report.data import Row, Warehouse
from bench_pipeline.report.run_state import RunInfo
from bench_pipeline.report.site_base import _group, _Site


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

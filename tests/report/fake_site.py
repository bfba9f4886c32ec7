"""A real warehouse (build_warehouse + the effects analysis) over fake runs, for the site.

`make_warehouse(root, runs=...)` writes an artifact store with:

- experiment `study` (experiments/study.yaml here: the default study's 51 cells, every design
  type but fractional factorial, 16 axes), repeated until there are about `runs` runs, with
  planted effects (the model and prompt_style move the gameplay score, the model the cost),
  some failed agents and builds, every stage's record, and the evidence a run page shows:
  screenshots, the bot's timeline, build log, prompt, workspace archive;
- optionally experiment `planted` (3 models x 2 prompt styles, little noise: meaningful
  effects and a clear leader) and the small experiments x and y of
  tests/warehouse/fake_runs.py (pending, failed and unscored runs, an earlier design's cell);
- optionally a run whose id and messages hold HTML special characters;

then builds the warehouse, runs the effects analysis, writes its marts, and draws the
analysis PNGs for the score only (the other outcomes exercise the site's SVG fallback).
Used by tests/report and benchmarks/report.py.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import random
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

from PIL import Image

from bench_pipeline import settings
from bench_pipeline.analysis.stage import (
    analyse_experiment,
    read_current_runs,
    run_effects_analysis,
)
from bench_pipeline.bot.contract import BOT_VERSION, TEST_IDS
from bench_pipeline.design import design_experiment, load_experiment
from bench_pipeline.design.cells import canonical_config, cell_id_for
from bench_pipeline.warehouse.artifacts import ArtifactStore, atomic_write_bytes, atomic_write_json
from bench_pipeline.warehouse.build import build_warehouse
from bench_pipeline.warehouse.marts import MART_SCHEMAS
from bench_pipeline.warehouse.writer import replace_table, updating
from tests.warehouse.fake_runs import _record, write_store

EXPERIMENTS = Path(__file__).parent / "experiments"  # copies: the project's files change
# Planted: points of gameplay per level (the rest is noise), dollars per run per model.
GAMEPLAY_EFFECT = {
    "claude-opus-4-6": 20.0,
    "gpt-5-codex": -15.0,
    "claude-haiku-4-5": -25.0,
    "terse": -10.0,
}
COST = {
    "claude-sonnet-4-6": 0.8,
    "claude-opus-4-6": 2.5,
    "gpt-5-codex": 1.2,
    "claude-haiku-4-5": 0.2,
}
EVIL_EXPERIMENT = "evil"
EVIL_RUN = 'evil.<b>"x"&amp;</b>\'.r0'
EVIL_TEXT = '<script>alert("pwned")</script> & <img src=x onerror=alert(1)>'


@dataclass(frozen=True)
class FakeWarehouse:
    db: Path
    artifacts: Path
    run_ids: list[str]
    failed_agent: str  # a run whose agent failed
    failed_build: str  # a run whose build failed
    evil_run: str | None


def _png(width: int, height: int, seed: int) -> bytes:
    rng = random.Random(seed)
    image = Image.new("RGB", (width, height), (20, 22, 30))
    pixels = image.load()
    for x in range(0, width, 8):  # some texture, so the PNG is not trivially small
        for y in range(0, height, 8):
            if rng.random() < 0.3:
                colour = (rng.randrange(256), rng.randrange(256), rng.randrange(256))
                for dx in range(7):
                    for dy in range(7):
                        if x + dx < width and y + dy < height:
                            pixels[x + dx, y + dy] = colour
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def _archive(run_id: str) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        data = f"<!doctype html><title>{run_id}</title><canvas></canvas>\n".encode()
        info = tarfile.TarInfo("index.html")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def _write_experiment(
    store: ArtifactStore, name: str, runs: int, seed: int, *, failures: bool, noise: float
) -> tuple[list[str], str, str]:
    """experiments/<name>.yaml's design, repeated to about `runs` runs, every stage written."""
    experiment = load_experiment(EXPERIMENTS / f"{name}.yaml")
    cells = len(design_experiment(experiment).cells)
    repeats = max(2, round(runs / cells))
    experiment = dataclasses.replace(experiment, repeats=repeats)
    design = design_experiment(experiment)
    store.save_design({**design.to_json_dict(), "baselines": experiment.baseline_config()})
    configs = {c.cell_id: c.config for c in design.cells}
    rng = random.Random(seed)
    shots = [_png(320, 640, seed), _png(320, 640, seed + 1)]
    ids: list[str] = []
    failed_agent = failed_build = ""
    for i, run in enumerate(design.runs):
        config = configs[run.cell_id]
        ids.append(run.run_id)
        agent_failed = failures and i % 37 == 5
        build_failed = failures and not agent_failed and i % 41 == 7
        failed_agent = failed_agent or (run.run_id if agent_failed else "")
        failed_build = failed_build or (run.run_id if build_failed else "")
        _write_run(store, rng, run.run_id, config, agent_failed, build_failed, shots, noise)
    return ids, failed_agent, failed_build


def _write_run(
    store: ArtifactStore,
    rng: random.Random,
    run_id: str,
    config: dict[str, Any],
    agent_failed: bool,
    build_failed: bool,
    shots: list[bytes],
    noise: float,
) -> None:
    model = config["model"]
    cost = round(max(0.01, COST.get(model, 1.0) + rng.gauss(0, 0.1)), 4)
    gen_dir = store.run_dir(run_id, "agent_generation")
    atomic_write_bytes(gen_dir / "workspace.tar.gz", _archive(run_id))
    atomic_write_bytes(gen_dir / "prompt.md", b"Build a playable Tetris in the browser.\n")
    store.write_record(
        "agent_generation",
        run_id,
        _record(
            "raw_agent_generation",
            agent=config["agent"],
            adapter=config["agent"],
            model=model,
            status="failed" if agent_failed else "completed",
            message="the agent CLI exited with status 1" if agent_failed else "done",
            input_tokens=rng.randint(10_000, 90_000),
            output_tokens=rng.randint(1_000, 9_000),
            cost_usd=cost,
            cost_source="reported",
            turns=rng.randint(5, 40),
            tool_calls=rng.randint(5, 60),
            duration_s=round(rng.uniform(60, 900), 2),
            archive_path=str(gen_dir / "workspace.tar.gz"),
            details=json.dumps({}),
        ),
    )
    build_ok = not (agent_failed or build_failed)
    build_dir = store.run_dir(run_id, "sandboxed_build")
    log = "npm install\nadded 12 packages\nnpm run build\n" + (
        "error TS2304: Cannot find name 'board'.\n" if not build_ok else "built dist/index.html\n"
    )
    atomic_write_bytes(build_dir / "build.log", log.encode())
    store.write_record(
        "sandboxed_build",
        run_id,
        _record(
            "raw_sandboxed_build",
            build_ok=build_ok,
            kind="npm",
            message="built" if build_ok else "npm run build failed (exit 2)",
            duration_s=round(rng.uniform(1, 30), 2),
            entry_point="index.html" if build_ok else None,
            log_path=str(build_dir / "build.log"),
        ),
    )
    planted = GAMEPLAY_EFFECT.get(model, 0.0) + GAMEPLAY_EFFECT.get(config["prompt_style"], 0.0)
    passed = (
        0 if not build_ok else max(0, min(16, round(11 + planted / 6.25 + rng.gauss(0, noise))))
    )
    verdicts = {
        t: "PASS" if k < passed else ("FAIL" if k % 3 else "INCONCLUSIVE")
        for k, t in enumerate(TEST_IDS)
    }
    if not build_ok:
        verdicts = dict.fromkeys(TEST_IDS, "INCONCLUSIVE") | {"loads": "FAIL"}
    reasons = {
        t: ("observed" if v == "PASS" else "no key did it" if v == "FAIL" else "not observed")
        for t, v in verdicts.items()
    }
    bot_dir = store.run_dir(run_id, "bot_evaluation")
    if build_ok:
        for name, data in zip(("01-loaded.png", "02-end.png"), shots, strict=True):
            atomic_write_bytes(bot_dir / name, data)
        atomic_write_json(
            bot_dir / "evaluation.json",
            {"notes": ["0.50s navigated to the game", "1.20s started: key:Enter"]},
        )
    store.write_record(
        "bot_evaluation",
        run_id,
        _record(
            "raw_bot_evaluation",
            bot_version=BOT_VERSION,
            gameplay_score=round(100 * sum(v == "PASS" for v in verdicts.values()) / 16, 2),
            duration_s=40.0,
            renderer="canvas" if build_ok else "none",
            passed=sum(v == "PASS" for v in verdicts.values()),
            failed=sum(v == "FAIL" for v in verdicts.values()),
            inconclusive=sum(v == "INCONCLUSIVE" for v in verdicts.values()),
            tests=verdicts,
            reasons=reasons,
            grid_cols=10 if build_ok else None,
            grid_rows=20 if build_ok else None,
            start="key:Enter" if build_ok else None,
            controls={
                "left": "ArrowLeft",
                "right": "ArrowRight",
                "down": "ArrowDown",
                "rotate": "ArrowUp",
                "hard_drop": " ",
            },
            score_source="dom:#score" if build_ok else None,
            artifacts_dir=str(bot_dir),
        ),
    )
    quality = round(min(100.0, max(0.0, 75 + rng.gauss(0, 5) - (20 if not build_ok else 0))), 1)
    store.write_record(
        "quality_metrics",
        run_id,
        _record(
            "raw_quality_metrics",
            quality_score=quality,
            eslint_errors=rng.randint(0, 5),
            eslint_warnings=rng.randint(0, 5),
            file_count=rng.randint(1, 9),
            unavailable=json.dumps({"ts_compiles": "not a TypeScript project"}),
            quality_breakdown=json.dumps({"eslint_errors": 2.0}),
            transcript_tool_calls=12,
            transcript_wasted_turns=1,
            transcript_productivity_ratio=0.83,
            transcript_self_tested=True,
            transcript_tool_breakdown=json.dumps({"Bash": 5, "Write": 7}),
            transcript_wasted_breakdown=json.dumps({"reading_docs": 1}),
        ),
    )


def _write_evil(store: ArtifactStore) -> str:
    """A run whose id (in the design only: records refuse such names) and texts are HTML."""
    config = canonical_config({})
    cell = cell_id_for(config)
    store.save_design(
        {
            "experiment": EVIL_EXPERIMENT,
            "cells": [{"cell_id": cell, "designs": ["main_effects"], "config": config}],
            "runs": [{"run_id": EVIL_RUN, "cell_id": cell, "repeat": 0, "seed": 1}],
        }
    )
    return EVIL_RUN


def _poison_texts(store: ArtifactStore, run_id: str) -> None:
    """Agent message, bot reasons and build log of a real run hold markup."""
    record = store.read_record("agent_generation", run_id) or {}
    store.write_record("agent_generation", run_id, {**record, "message": EVIL_TEXT})
    bot = store.read_record("bot_evaluation", run_id) or {}
    reasons = {t: EVIL_TEXT for t in TEST_IDS}
    store.write_record("bot_evaluation", run_id, {**bot, "reasons": reasons})
    log = store.run_dir(run_id, "sandboxed_build") / "build.log"
    atomic_write_bytes(log, EVIL_TEXT.encode())


def make_warehouse(
    root: Path,
    runs: int = 100,
    *,
    seed: int = 3,
    small_experiments: bool = True,
    evil: bool = True,
    charts: bool = True,
) -> FakeWarehouse:
    store = ArtifactStore(root / "artifacts")
    ids: list[str] = []
    # Test data, not pipeline output: no fsync per file (thousands of files, minutes of it).
    with mock.patch.object(os, "fsync", lambda _fd: None):
        if small_experiments:  # first: write_store writes records for every stored design
            ids += list(write_store(store)["run_id"])
        study_ids, failed_agent, failed_build = _write_experiment(
            store, "study", runs, seed, failures=True, noise=1.0
        )
        ids += study_ids
        if small_experiments:  # clean planted effects: meaningful ones to find
            ids += _write_experiment(store, "planted", 24, seed + 1, failures=False, noise=0.3)[0]
        evil_run = _write_evil(store) if evil else None
        if evil:
            ids.append(EVIL_RUN)
            _poison_texts(store, failed_agent)
    db = root / "warehouse.duckdb"
    build_warehouse(store, db, settings.sql_models_dir())
    outcome = run_effects_analysis(db, store, charts=False)
    with updating(db) as con:
        for name, frame in outcome.tables.items():
            replace_table(con, name, frame, MART_SCHEMAS[name])
    if charts:  # the analysis's PNGs for the score of the study only
        current = read_current_runs(db)
        part = current[current["experiment"] == "study"].reset_index(drop=True)
        analyse_experiment(
            part,
            "study",
            store.read_design("study").get("baselines") or {},
            {"score": 5.0},
            store.root / "analysis",
        )
    return FakeWarehouse(db, store.root, ids, failed_agent, failed_build, evil_run)

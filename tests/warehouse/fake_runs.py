"""A small artifact store with designs and every stage's per-run records, for the mart tests.

Returns the runs as a DataFrame of the values written, so that tests can compute what the
marts should hold with pandas, independently of the SQL.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pandas as pd

from bench_pipeline.bot.contract import TEST_IDS
from bench_pipeline.design.cells import canonical_config, cell_id_for
from bench_pipeline.warehouse.artifacts import ArtifactStore
from bench_pipeline.warehouse.build import SOURCE_SCHEMAS

SONNET, OPUS, GPT = "claude-sonnet-4-6", "claude-opus-4-6", "gpt-5-codex"

# name -> config (missing axes at their defaults); the name is only for the tests' reading.
CONFIGS: dict[str, dict[str, Any]] = {
    "base": {},
    "opus": {"model": OPUS},
    "terse": {"prompt_style": "terse"},
    "codex": {"agent": "codex", "model": GPT},
    "codex_detailed": {"agent": "codex", "model": GPT, "prompt_style": "detailed"},
    "opus_high": {"model": OPUS, "effort": "high"},
    "dropped": {"human_language": "de"},
}
CELL = {name: cell_id_for(canonical_config(cfg)) for name, cfg in CONFIGS.items()}

# Runs with something special about them (everything else ran every stage and was scored).
PENDING = f"x.{CELL['base']}.r3"  # designed, nothing ran yet
AGENT_FAILED = f"x.{CELL['terse']}.r0"  # the agent failed: no build, the bot scores 0
UNSCORED = f"x.{CELL['opus']}.r1"  # ran and cost money, but no bot evaluation yet
Y_PENDING = f"y.{CELL['opus_high']}.r1"  # leaves opus_high in y with one scored run


def _cell(name: str, designs: list[str]) -> dict[str, Any]:
    return {"cell_id": CELL[name], "designs": designs, "config": canonical_config(CONFIGS[name])}


def _runs(experiment: str, names: list[str], repeats: int) -> list[dict[str, Any]]:
    return [
        {
            "run_id": f"{experiment}.{CELL[n]}.r{i}",
            "cell_id": CELL[n],
            "repeat": i,
            "seed": 1000 + i,
        }
        for n in names
        for i in range(repeats)
    ]


def _record(table: str, **values: Any) -> dict[str, Any]:
    # Every column the staging views read, so that they compile whatever the test writes.
    return {**dict.fromkeys(SOURCE_SCHEMAS[table]), **values}


def write_store(store: ArtifactStore, seed: int = 7) -> pd.DataFrame:
    """Two experiments sharing the default cell; x also has a cell its redesign dropped."""
    rng = random.Random(seed)
    x_names = ["base", "opus", "terse", "codex", "codex_detailed"]
    # A first design of x with one more cell; saving the second keeps it as current=false.
    store.save_design(
        {
            "experiment": "x",
            "cells": [_cell(n, ["main_effects"]) for n in [*x_names, "dropped"]],
            "runs": _runs("x", [*x_names, "dropped"], 4),
        }
    )
    store.save_design(
        {
            "experiment": "x",
            "cells": [
                _cell(n, ["main_effects", "interaction"] if n == "codex" else ["main_effects"])
                for n in x_names
            ],
            "runs": _runs("x", x_names, 4),
        }
    )
    store.save_design(
        {
            "experiment": "y",
            "cells": [_cell("base", ["interaction"]), _cell("opus_high", ["interaction"])],
            "runs": _runs("y", ["base", "opus_high"], 2),
        }
    )
    rows: list[dict[str, Any]] = []
    for design in store.designs():
        configs = {c["cell_id"]: c["config"] for c in design["cells"]}
        for run in design["runs"]:
            config = configs[run["cell_id"]]
            row = _write_run(store, rng, design["experiment"], run, config)
            rows.append(row)
    _write_transcript(store, rows[0]["run_id"])
    return pd.DataFrame(rows)


def _write_run(
    store: ArtifactStore,
    rng: random.Random,
    experiment: str,
    run: dict[str, Any],
    config: dict[str, Any],
) -> dict[str, Any]:
    run_id = run["run_id"]
    row: dict[str, Any] = {
        "run_id": run_id,
        "experiment": experiment,
        "cell_id": run["cell_id"],
        "agent": config["agent"],
        "model": config["model"],
        "prompt_style": config["prompt_style"],
        "in_current_design": run["current"],
        "status": "pending",
        "build_ok": None,
        "gameplay_score": None,
        "quality_score": None,
        "cost_usd": None,
        "duration_s": None,
        "verdicts": None,
    }
    if run_id in {PENDING, Y_PENDING}:
        return row
    failed = run_id == AGENT_FAILED
    status = "failed" if failed else "completed"
    cost = round(rng.uniform(0.2, 3.0), 4)
    duration = round(rng.uniform(60, 900), 3)
    store.write_record(
        "agent_generation",
        run_id,
        _record(
            "raw_agent_generation",
            agent=config["agent"],
            adapter=config["agent"],
            model=config["model"],
            status=status,
            message="done",
            input_tokens=rng.randint(1000, 90000),
            output_tokens=rng.randint(100, 9000),
            cost_usd=cost,
            cost_source="reported",
            turns=rng.randint(1, 40),
            duration_s=duration,
            details=json.dumps({}),
        ),
    )
    build_ok = not failed
    store.write_record(
        "sandboxed_build",
        run_id,
        _record(
            "raw_sandboxed_build",
            build_ok=build_ok,
            kind="static",
            message="ok" if build_ok else "no entry point",
            duration_s=1.5,
            entry_point="index.html" if build_ok else None,
        ),
    )
    quality = 10.0 if failed else round(rng.uniform(20, 95), 1)
    store.write_record(
        "quality_metrics", run_id, _record("raw_quality_metrics", quality_score=quality)
    )
    row.update(status=status, build_ok=build_ok, cost_usd=cost, duration_s=duration)
    row["quality_score"] = quality
    if run_id == UNSCORED:
        return row
    passed = 0 if failed else rng.randint(4, 16)
    verdicts = {
        t: "PASS" if i < passed else ("FAIL" if i % 2 else "INCONCLUSIVE")
        for i, t in enumerate(TEST_IDS)
    }
    gameplay = round(100.0 * passed / len(TEST_IDS), 2)
    store.write_record(
        "bot_evaluation",
        run_id,
        _record(
            "raw_bot_evaluation",
            bot_version="0.1.1",
            gameplay_score=gameplay,
            duration_s=40.0,
            renderer="canvas",
            passed=passed,
            failed=sum(v == "FAIL" for v in verdicts.values()),
            inconclusive=sum(v == "INCONCLUSIVE" for v in verdicts.values()),
            tests=verdicts,
        ),
    )
    row.update(gameplay_score=gameplay, verdicts=verdicts)
    return row


def _write_transcript(store: ArtifactStore, run_id: str) -> None:
    events = [
        {
            "run_id": run_id,
            "position": i,
            "index": i // 2,
            "kind": "tool_use",
            "tool": "Bash",
            "tool_input": "ls",
            "is_error": False,
            "text": "",
            "wasted": None,
        }
        for i in range(3)
    ]
    path = store.run_dir(run_id, "quality_metrics") / "transcript_events.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(events))
    store.note_change("transcript_events", run_id)


def expected_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """The runs with the headline score, 50 % gameplay + 50 % quality (before fct_runs
    rounds it to 2 decimals: ties round differently in DuckDB and pandas)."""
    out = runs.copy()
    both = out["gameplay_score"].notna() & out["quality_score"].notna()
    score = 0.5 * out["gameplay_score"].astype(float) + 0.5 * out["quality_score"].astype(float)
    out["score"] = score.where(both)
    for col in ("gameplay_score", "quality_score", "cost_usd", "duration_s"):
        out[col] = out[col].astype(float)
    return out

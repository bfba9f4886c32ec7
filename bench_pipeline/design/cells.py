"""Cells (distinct configs), runs (repeats of a cell), their ids, and `design_experiment()`."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bench_pipeline.design.axes import AXES, AxisValueError, DesignError
from bench_pipeline.design.designs import MAX_CELLS_PER_DESIGN, design_configs
from bench_pipeline.design.experiment import Experiment

CELL_ID_PREFIX = "c"
CELL_ID_HEX_CHARS = 12
# Run seeds fit a signed 32-bit integer so every RNG and database column can take them.
RUN_SEED_MASK = 0x7FFF_FFFF
# Runs one experiment may list (cells x repeats): the warehouse is measured up to 100,000
# runs (docs/warehouse.md), and beyond that a design is more likely a typo than a plan.
MAX_RUNS = 100_000
_CONFIG_PATH = "<config>"


def canonical_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """All 16 axes in catalogue order: missing ones at their default, values normalized.

    Raises DesignError (path `<config>`, key = axis name) for unknown axes or values of the
    wrong kind. Model ids are only checked to be strings: the registry is not consulted, so
    ids of configs recorded under an older registry stay computable.
    """
    for name in config:
        if name not in AXES:
            raise DesignError(_CONFIG_PATH, str(name), f"unknown axis {name!r}")
    canonical: dict[str, Any] = {}
    for name, axis in AXES.items():
        try:
            canonical[name] = axis.normalize(config.get(name, axis.default))
        except AxisValueError as exc:
            raise DesignError(_CONFIG_PATH, name, str(exc)) from None
    return canonical


def canonical_json(config: Mapping[str, Any]) -> str:
    """The exact text hashed into a cell id: sorted keys, no whitespace, ASCII only."""
    return json.dumps(
        canonical_config(config), sort_keys=True, separators=(",", ":"), ensure_ascii=True
    )


def cell_id_for(config: Mapping[str, Any]) -> str:
    """`c` + the first 12 hex digits of sha256(canonical JSON of the full config)."""
    digest = hashlib.sha256(canonical_json(config).encode("ascii")).hexdigest()
    return CELL_ID_PREFIX + digest[:CELL_ID_HEX_CHARS]


def run_id_for(experiment: str, cell_id: str, repeat: int) -> str:
    """`<experiment>.<cell_id>.r<repeat>`; valid as a Dagster dynamic partition key."""
    return f"{experiment}.{cell_id}.r{repeat}"


def run_seed_for(experiment_seed: int, cell_id: str, repeat: int) -> int:
    """A per-run seed that is stable across machines and Python versions (unlike `hash()`)."""
    digest = hashlib.sha256(f"{experiment_seed}:{cell_id}:{repeat}".encode("ascii")).digest()
    return int.from_bytes(digest[:4], "big") & RUN_SEED_MASK


@dataclass(frozen=True, slots=True)
class Cell:
    """A distinct config. `designs` lists the design types that produced it, in file order."""

    cell_id: str
    config: dict[str, Any]
    designs: tuple[str, ...]

    def to_json_dict(self) -> dict[str, Any]:
        return {"cell_id": self.cell_id, "designs": list(self.designs), "config": dict(self.config)}


@dataclass(frozen=True, slots=True)
class Run:
    """One repeat of one cell within one experiment."""

    run_id: str
    cell_id: str
    repeat: int
    seed: int
    experiment: str

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "cell_id": self.cell_id,
            "repeat": self.repeat,
            "seed": self.seed,
        }


@dataclass(frozen=True, slots=True)
class DesignSummary:
    """What one `designs:` entry contributed: its distinct cells and how many were new."""

    index: int
    type: str
    label: str
    cells: int
    new_cells: int


@dataclass(frozen=True, slots=True)
class DesignResult:
    """All cells and runs of an experiment, in deterministic order."""

    experiment: str
    cells: list[Cell]
    runs: list[Run]
    summaries: tuple[DesignSummary, ...] = ()

    def to_json_dict(self) -> dict[str, Any]:
        """The `bench design --json` document."""
        return {
            "experiment": self.experiment,
            "cells": [cell.to_json_dict() for cell in self.cells],
            "runs": [run.to_json_dict() for run in self.runs],
        }

    def counts_by_design(self) -> dict[str, int]:
        """Distinct cells per design type (a cell shared by two types counts for both)."""
        counts: dict[str, int] = {}
        for summary in self.summaries:
            counts.setdefault(summary.type, 0)
        for cell in self.cells:
            for design_type in cell.designs:
                counts[design_type] = counts.get(design_type, 0) + 1
        return counts

    def cell(self, cell_id: str) -> Cell:
        """The cell with this id; KeyError if the experiment has none."""
        for cell in self.cells:
            if cell.cell_id == cell_id:
                return cell
        raise KeyError(cell_id)


def design_experiment(exp: Experiment) -> DesignResult:
    """Expand every design, merge identical configs into one cell, and list the runs.

    Cells appear in order of first appearance (designs in file order, rows in pyDOE3 order);
    runs are listed cell by cell, repeats 0..repeats-1.
    """
    baseline = exp.baseline_config()
    configs: dict[str, dict[str, Any]] = {}
    designs_of: dict[str, list[str]] = {}
    summaries: list[DesignSummary] = []
    for index, spec in enumerate(exp.designs):
        spec_cells: set[str] = set()
        new_cells = 0
        raw_configs = design_configs(spec, exp.axes, baseline)
        if len(raw_configs) > MAX_CELLS_PER_DESIGN:
            raise DesignError(
                str(exp.path),
                f"designs[{index}]",
                f"{spec.label} gives {len(raw_configs)} cells; at most {MAX_CELLS_PER_DESIGN} "
                "per design",
            )
        for raw_config in raw_configs:
            config = canonical_config(raw_config)
            cell_id = cell_id_for(config)
            spec_cells.add(cell_id)
            if cell_id not in configs:
                configs[cell_id] = config
                designs_of[cell_id] = []
                new_cells += 1
            if spec.type not in designs_of[cell_id]:
                designs_of[cell_id].append(spec.type)
        summaries.append(
            DesignSummary(
                index=index,
                type=spec.type,
                label=spec.label,
                cells=len(spec_cells),
                new_cells=new_cells,
            )
        )

    cells = [
        Cell(cell_id=cell_id, config=config, designs=tuple(designs_of[cell_id]))
        for cell_id, config in configs.items()
    ]
    if len(cells) * exp.repeats > MAX_RUNS:
        raise DesignError(
            str(exp.path),
            "repeats",
            f"{len(cells)} cells x {exp.repeats} repeats = {len(cells) * exp.repeats} runs; "
            f"at most {MAX_RUNS} per experiment",
        )
    runs = [
        Run(
            run_id=run_id_for(exp.name, cell.cell_id, repeat),
            cell_id=cell.cell_id,
            repeat=repeat,
            seed=run_seed_for(exp.seed, cell.cell_id, repeat),
            experiment=exp.name,
        )
        for cell in cells
        for repeat in range(exp.repeats)
    ]
    return DesignResult(experiment=exp.name, cells=cells, runs=runs, summaries=tuple(summaries))

"""Experiment design: the axis catalogue, the model registry, experiment files, and their
expansion into cells (distinct configs) and runs (repeats of a cell).

Pure Python: reads YAML, writes nothing, and knows nothing about Dagster.
"""

from bench_pipeline.design.axes import AXES, Axis, AxisSpec, DesignError, default_config
from bench_pipeline.design.cells import (
    Cell,
    DesignResult,
    DesignSummary,
    Run,
    canonical_config,
    canonical_json,
    cell_id_for,
    design_experiment,
    run_id_for,
    run_seed_for,
)
from bench_pipeline.design.designs import DESIGN_TYPES, DesignSpec
from bench_pipeline.design.experiment import Experiment, find_experiment, load_experiment
from bench_pipeline.design.models import ModelInfo, ModelRegistry, load_model_registry

__all__ = [
    "AXES",
    "DESIGN_TYPES",
    "Axis",
    "AxisSpec",
    "Cell",
    "DesignError",
    "DesignResult",
    "DesignSpec",
    "DesignSummary",
    "Experiment",
    "ModelInfo",
    "ModelRegistry",
    "Run",
    "canonical_config",
    "canonical_json",
    "cell_id_for",
    "default_config",
    "design_experiment",
    "find_experiment",
    "load_experiment",
    "load_model_registry",
    "run_id_for",
    "run_seed_for",
]

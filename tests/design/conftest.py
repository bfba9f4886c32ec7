"""Shared helpers for the design tests: write small experiment files into a temp directory."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from bench_pipeline.design import Experiment, load_experiment

# Test modules define their own paths: importing from conftest breaks under importlib mode.
FIXTURES = Path(__file__).parent / "fixtures"

WriteExperiment = Callable[..., Path]
MakeExperiment = Callable[..., Experiment]


@pytest.fixture
def write_experiment(tmp_path: Path) -> WriteExperiment:
    """Write an experiment (with the fixture registry beside it) and return its path."""
    shutil.copy(FIXTURES / "models.yaml", tmp_path / "models.yaml")

    def write(
        axes: dict[str, Any],
        designs: list[dict[str, Any]],
        filename: str = "experiment.yaml",
        **top_level: Any,
    ) -> Path:
        document = {"name": "t", **top_level, "axes": axes, "designs": designs}
        path = tmp_path / filename
        path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
        return path

    return write


@pytest.fixture
def make_experiment(write_experiment: WriteExperiment) -> MakeExperiment:
    """Write and load an experiment in one step."""

    def make(axes: dict[str, Any], designs: list[dict[str, Any]], **kwargs: Any) -> Experiment:
        return load_experiment(write_experiment(axes, designs, **kwargs))

    return make

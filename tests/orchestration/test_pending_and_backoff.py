"""Which runs a launch still needs, and the back-off of retries."""

from __future__ import annotations

import random

import pytest

from bench_pipeline import settings
from bench_pipeline.design import DesignError, design_experiment, find_experiment, load_experiment
from bench_pipeline.orchestration import backoff_seconds, pending_runs

STANDARD = settings.experiments_dir() / "standard.yaml"


def test_the_standard_sweep_covers_every_registry_model() -> None:
    experiment = load_experiment(STANDARD)
    assert experiment.axes["model"].levels == experiment.registry.ids
    design = design_experiment(experiment)
    models = {cell.config["model"] for cell in design.cells}
    assert models == set(experiment.registry.ids)


def test_pending_runs_group_by_model_and_name_new_models() -> None:
    design = design_experiment(load_experiment(STANDARD))
    model_of = {c.cell_id: c.config["model"] for c in design.cells}
    nothing = pending_runs(design, [r.run_id for r in design.runs])
    assert not nothing and nothing.run_ids == []
    assert nothing.describe() == f"standard: all {len(design.runs)} runs are registered"

    sonnet = [r.run_id for r in design.runs if model_of[r.cell_id] == "claude-sonnet-4-6"]
    todo = pending_runs(design, sonnet)
    assert set(todo.run_ids) == {r.run_id for r in design.runs} - set(sonnet)
    assert "claude-sonnet-4-6" not in todo.by_model
    assert todo.new_models == sorted(set(model_of.values()) - {"claude-sonnet-4-6"})
    # Part of a model's runs missing (a new repeat): pending, but not a new model.
    some = pending_runs(design, [r.run_id for r in design.runs][1:])
    assert len(some.run_ids) == 1 and some.new_models == []


def test_an_experiment_is_found_by_name_or_path() -> None:
    folder = settings.experiments_dir()
    root = settings.project_root()
    assert find_experiment("demo", folder, root) == folder / "demo.yaml"
    assert (
        find_experiment("experiments/smoke.yaml", folder, root) == root / "experiments/smoke.yaml"
    )
    with pytest.raises(DesignError, match=r"no experiment named 'nope'.*known: .*demo"):
        find_experiment("nope", folder, root)
    with pytest.raises(DesignError, match="experiment file not found"):
        find_experiment("elsewhere/nope.yaml", folder, root)
    with pytest.raises(DesignError, match="no experiment given"):
        find_experiment("  ", folder, root)


def test_registry_levels_are_for_the_model_axis_only(tmp_path) -> None:
    bad = tmp_path / "x.yaml"
    bad.write_text(
        "name: x\naxes:\n  effort: {levels: registry}\ndesigns:\n  - type: main_effects\n"
        f"models_file: {settings.experiments_dir() / 'models.yaml'}\n"
    )
    with pytest.raises(DesignError, match="only allowed on the model axis"):
        load_experiment(bad)


def test_backoff_doubles_with_jitter_and_a_cap() -> None:
    rng = random.Random(1)
    waits = [backoff_seconds(n, 10.0, cap_s=100.0, rng=rng) for n in range(6)]
    for n, wait in enumerate(waits[:4]):
        assert 0.8 * 10 * 2**n <= wait <= 1.2 * 10 * 2**n
    assert max(waits) <= 100.0
    # Jitter: two runs rate-limited together do not retry at the same instant.
    assert backoff_seconds(0, 60.0, rng=random.Random(1)) != backoff_seconds(
        0, 60.0, rng=random.Random(2)
    )

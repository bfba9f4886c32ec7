"""The run spec: everything a later stage needs to know about one run, frozen at planning.

Prices are copied from the model registry so that a later price change does not
silently re-cost a run that already happened.
"""

from __future__ import annotations

from typing import Any

from bench_pipeline import stages
from bench_pipeline.warehouse.artifacts import ArtifactStore

RUN_SPEC_STAGE = stages.RUN_SPEC.name


class UnknownRunError(LookupError):
    """A run id that no stored design knows (a partition from a deleted design file)."""


def experiment_of(run_id: str) -> str:
    return run_id.split(".", 1)[0]


def build_run_spec(store: ArtifactStore, run_id: str) -> dict[str, Any]:
    experiment = experiment_of(run_id)
    if not store.design_path(experiment).is_file():
        raise UnknownRunError(
            f"run {run_id}: no design stored for experiment {experiment!r} "
            f"(expected {store.design_path(experiment)}); materialize experiment_design first"
        )
    design = store.read_design(experiment)
    run = next((r for r in design["runs"] if r["run_id"] == run_id), None)
    if run is None:
        raise UnknownRunError(f"run {run_id}: not in the stored design of {experiment!r}")
    cell = next(c for c in design["cells"] if c["cell_id"] == run["cell_id"])
    model = design.get("models", {}).get(cell["config"]["model"], {})
    return {
        "run_id": run_id,
        "experiment": experiment,
        "cell_id": run["cell_id"],
        "repeat": run["repeat"],
        "seed": run.get("seed"),
        "agent": cell["config"]["agent"],
        "model": cell["config"]["model"],
        "provider": model.get("provider"),
        "input_usd_per_mtok": model.get("input_usd_per_mtok"),
        "output_usd_per_mtok": model.get("output_usd_per_mtok"),
        "model_strength": model.get("strength"),
        "config": cell["config"],
    }

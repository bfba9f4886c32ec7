"""Which runs of an experiment still need launching, and for which models."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field

from bench_pipeline.design import DesignResult


@dataclass(frozen=True)
class PendingRuns:
    """Runs of a design that are not in a given set of keys (unregistered, or not run yet)."""

    experiment: str
    total_runs: int
    run_ids: list[str] = field(default_factory=list)
    # model id → how many of its runs are pending; models with no run at all are listed in
    # `new_models` too.
    by_model: dict[str, int] = field(default_factory=dict)
    new_models: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.run_ids)

    def describe(self) -> str:
        if not self.run_ids:
            return f"{self.experiment}: all {self.total_runs} runs are registered"
        models = ", ".join(f"{m} ({n})" for m, n in sorted(self.by_model.items()))
        new = f"; new models: {', '.join(self.new_models)}" if self.new_models else ""
        return f"{self.experiment}: {len(self.run_ids)} runs to launch: {models}{new}"


def pending_runs(design: DesignResult, present: Collection[str]) -> PendingRuns:
    """The design's runs whose ids are not in `present` (e.g. the registered partitions)."""
    model_of = {cell.cell_id: str(cell.config["model"]) for cell in design.cells}
    present = set(present)
    missing = [run for run in design.runs if run.run_id not in present]
    by_model = Counter(model_of[run.cell_id] for run in missing)
    total = Counter(model_of[run.cell_id] for run in design.runs)
    return PendingRuns(
        experiment=design.experiment,
        total_runs=len(design.runs),
        run_ids=[run.run_id for run in missing],
        by_model=dict(by_model),
        new_models=sorted(m for m, n in by_model.items() if n == total[m]),
    )

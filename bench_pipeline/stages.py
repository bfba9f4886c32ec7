"""The pipeline's stages, in order: one record per stage, read by the Dagster definitions
(group names, pools, the per-run partitioning), `bench run`, the sweep launcher, the
"run complete" rule and the warehouse.

Each name is the stage's asset (or, for the warehouse, its multi-asset), its Dagster group
and its folder under `assets/`. Plain Python, so the pure stage logic can name the stages
without importing Dagster.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Stage:
    """One stage of the pipeline, as data."""

    name: str  # asset, Dagster group and folder under assets/
    per_run: bool  # one Dagster partition per designed run
    # Its record exists for every run that has been through the whole pipeline: a run is
    # complete when every such stage has materialized it.
    completes_run: bool = False
    # A quarantined record of it is computed again by `bench run` (never the agent's: an
    # agent run costs money).
    repairable: bool = False
    # The automation recomputes it when its inputs or code changed.
    automated: bool = False
    pool: str | None = None  # the Dagster concurrency pool its steps take a slot of
    group: str | None = None  # its Dagster group, when not its own name

    @property
    def group_name(self) -> str:
        return self.group or self.name


EXPERIMENT_DESIGN = Stage("experiment_design", per_run=False)
# The frozen per-run specification, in the experiment_design group.
RUN_SPEC = Stage("run_spec", per_run=True, repairable=True, group="experiment_design")
AGENT_GENERATION = Stage("agent_generation", per_run=True, pool="agents")
SANDBOXED_BUILD = Stage(
    "sandboxed_build", per_run=True, repairable=True, automated=True, pool="builds"
)
BOT_EVALUATION = Stage(
    "bot_evaluation", per_run=True, completes_run=True, repairable=True, automated=True,
    pool="browser",
)  # fmt: skip
QUALITY_METRICS = Stage(
    "quality_metrics", per_run=True, completes_run=True, repairable=True, automated=True,
    pool="builds",
)  # fmt: skip
# Built once over every run, after them: the DuckDB warehouse (its sources and SQL models),
# the effects analysis marts, and the static results site.
WAREHOUSE = Stage("warehouse", per_run=False, pool="warehouse")
EFFECTS_ANALYSIS = Stage("effects_analysis", per_run=False, pool="warehouse")
RESULTS_SITE = Stage("results_site", per_run=False)

ALL: tuple[Stage, ...] = (
    EXPERIMENT_DESIGN,
    RUN_SPEC,
    AGENT_GENERATION,
    SANDBOXED_BUILD,
    BOT_EVALUATION,
    QUALITY_METRICS,
    WAREHOUSE,
    EFFECTS_ANALYSIS,
    RESULTS_SITE,
)
BY_NAME = {s.name: s for s in ALL}

# The names, as the rest of the code has always read them.
DESIGN = EXPERIMENT_DESIGN.name
# One Dagster partition per designed run, in the order a run goes through them.
PER_RUN = tuple(s.name for s in ALL if s.per_run)
ACROSS_RUNS = tuple(s.name for s in ALL if not s.per_run and s is not EXPERIMENT_DESIGN)
STAGES = tuple(s.name for s in ALL)
# Per-run stages whose records `bench run` checks and repairs, in the order a quarantined
# record's stage is computed again.
REPAIRABLE = tuple(s.name for s in ALL if s.repairable)
AUTOMATED_PER_RUN = tuple(s.name for s in ALL if s.per_run and s.automated)
COMPLETES_RUN = tuple(s.name for s in ALL if s.completes_run)


def complete_runs(materialized: dict[str, Iterable[str]]) -> set[str]:
    """The runs that have been through the whole pipeline, given each stage's materialized
    partitions: the one "run complete" rule (every stage that completes a run has it)."""
    done: set[str] | None = None
    for name in COMPLETES_RUN:
        runs = set(materialized.get(name, ()))
        done = runs if done is None else done & runs
    return done or set()

"""The pipeline's stages, in order: the one list that the Dagster definitions, `bench run`,
the sweep launcher and the warehouse read.

Each name is the stage's asset (or, for the warehouse, its multi-asset), its Dagster group
and its folder under `assets/`. Plain Python, so the pure stage logic can name the stages
without importing Dagster.
"""

from __future__ import annotations

DESIGN = "experiment_design"

# One Dagster partition per designed run, in the order a run goes through them. run_spec
# (the frozen per-run specification) belongs to the experiment_design group.
PER_RUN = ("run_spec", "agent_generation", "sandboxed_build", "bot_evaluation", "quality_metrics")

# Built once over every run, after them: the DuckDB warehouse (its sources and SQL models),
# the effects analysis marts, and the static results site.
ACROSS_RUNS = ("warehouse", "effects_analysis", "results_site")

STAGES = (DESIGN, *PER_RUN, *ACROSS_RUNS)

# Per-run stages whose records `bench run` checks and repairs, in the order a quarantined
# record's stage is computed again (agent_generation is never redone for that: it costs money).
REPAIRABLE = tuple(s for s in PER_RUN if s != "agent_generation")

# Per-run stages the automation recomputes when their inputs or their code changed: not
# run_spec (fixed when the run is designed) and never agent_generation (it costs money).
AUTOMATED_PER_RUN = tuple(s for s in REPAIRABLE if s != "run_spec")

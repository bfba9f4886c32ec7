"""What the automation would launch next, for `bench status` and `bench pools`.

Spending is always asked for: the one schedule that can request agent runs is
`new_model_backfill_schedule`, and this says what its next tick would launch and what that
would cost at the registry's prices; the automation sensor never requests an agent run
(agent_generation has no automation condition), which is checked here from the definitions
rather than promised.
"""

from __future__ import annotations

from typing import Any

import dagster as dg

from assets.sweeps.schedules import (
    NEW_MODEL_CRON,
    new_model_backfill_schedule,
    next_launch,
    standard_sweep,
)
from bench_pipeline import stages


def _schedule_status(instance: dg.DagsterInstance) -> str:
    """RUNNING or STOPPED as the instance has it (a person may have switched it in the UI),
    else the schedule's default."""
    for state in instance.all_instigator_state():
        if state.name == new_model_backfill_schedule.name:
            return "RUNNING" if state.is_running else "STOPPED"
    return new_model_backfill_schedule.default_status.value  # type: ignore[union-attr]


def _sensor_targets(defs: dg.Definitions) -> list[str]:
    """The assets that carry an automation condition: all the sensor can ever request."""
    graph = defs.resolve_asset_graph()
    return sorted(
        key.to_user_string()
        for key in graph.get_all_asset_keys()
        if graph.get(key).automation_condition is not None
    )


def automation_outlook(instance: dg.DagsterInstance, defs: dg.Definitions) -> dict[str, Any]:
    plan = next_launch(instance, standard_sweep())
    targets = _sensor_targets(defs)
    return {
        "schedule": {
            "name": new_model_backfill_schedule.name,
            "cron": NEW_MODEL_CRON,
            "timezone": "UTC",
            "status": _schedule_status(instance),
            "experiment": plan.experiment,
            "would_launch_runs": len(plan.run_ids),
            "new_models": plan.new_models,
            "next_tick": plan.describe(),
            "estimate": plan.estimate.to_json_dict() if plan.estimate is not None else None,
            "estimate_error": plan.estimate_error,
        },
        "automation_sensor": {
            "name": "automation_condition_sensor",
            "may_recompute": targets,
            "runs_agents": "agent_generation" in targets,
        },
    }


def outlook_lines(outlook: dict[str, Any]) -> list[str]:
    """The outlook in a few plain lines."""
    schedule, sensor = outlook["schedule"], outlook["automation_sensor"]
    lines = [
        f"{schedule['name']} ({schedule['cron']} {schedule['timezone']}, "
        f"{schedule['status'].lower()}): next tick {schedule['next_tick']}",
    ]
    agents = "RUNS AGENTS" if sensor["runs_agents"] else "never runs an agent"
    per_run = [s for s in stages.PER_RUN if s in sensor["may_recompute"]]
    others = len(sensor["may_recompute"]) - len(per_run)
    lines.append(
        f"{sensor['name']}: recomputes stale {', '.join(per_run)} per run and {others} "
        f"warehouse, analysis and site assets; {agents}"
    )
    return lines

"""Declarative automation: what recomputes by itself, and what never does.

A stage whose code changes (its `code_version`: the bot's BOT_VERSION, the quality formula's
version, the hash of a SQL model) becomes stale, and so does everything downstream of it.
`automation_condition_sensor` recomputes those, for the runs that already have their
inputs, and nothing upstream. Agent generation has no condition at all: agent runs cost
money and are only run by a launch (a sweep, a backfill) or an explicit `rerun`.
"""

import dagster as dg

AC = dg.AutomationCondition

# `eager()` does not react to a new code version (checked on Dagster 1.13), so the change
# is composed in. Partitions without inputs yet (registered, not run) are left alone.
per_run_stage = (
    AC.eager()
    | (AC.code_version_changed() & ~AC.missing() & ~AC.any_deps_missing() & ~AC.in_progress())
).with_label("upstream run updated or this stage's code changed")

# The warehouse and the analysis read every run: a run that was registered but never
# launched must not hold them back (eager's any_deps_missing would, forever), only
# work still in progress does.
whole_warehouse = (
    (AC.newly_missing() | AC.any_deps_updated() | AC.code_version_changed()).since_last_handled()
    & ~AC.any_deps_in_progress()
    & ~AC.in_progress()
).with_label("a run was updated or this model's code changed, and nothing upstream is running")


def automation_condition_sensor(
    selection: dg.AssetSelection,
) -> dg.AutomationConditionSensorDefinition:
    """The one sensor that evaluates the conditions above. Running by default: Dagster
    starts automation sensors stopped, and a stopped one silently leaves results stale."""
    return dg.AutomationConditionSensorDefinition(
        "automation_condition_sensor",
        target=selection,
        default_status=dg.DefaultSensorStatus.RUNNING,
        minimum_interval_seconds=30,
        description="Recomputes stale stages (new bot, quality formula or SQL model) and "
        "refreshes the warehouse after runs finish. Never runs an agent.",
    )

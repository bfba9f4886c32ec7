"""Checks on what each per-run stage wrote, run in the same step as the stage.

Every stage has `one_record`; the other checks come from the model of its record
(`bench_pipeline/records.py`), where each guarded field declares its check.

They look only at the step's own runs (so a sweep of ten thousand runs is not re-read at
every step) and are blocking: a stage output that breaks them must not feed the warehouse.
The warehouse's SQL models add their own data tests (dbt_like_sql headers) on top.
"""

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import dagster as dg

from bench_pipeline.records import RECORDS, FieldCheck, field_checks
from bench_pipeline.warehouse.artifacts import ArtifactStore

Record = Mapping[str, Any]
# A check looks at one run's record and returns what is wrong with it, or None.
Rule = Callable[[str, Record | None], str | None]


def one_record(run_id: str, record: Record | None) -> str | None:
    """Every run of the step has exactly its own record."""
    if record is None:
        return "no record was written"
    if record.get("run_id") != run_id:
        return f"the record names run {record.get('run_id')!r}"
    return None


def _field_rule(field_check: FieldCheck) -> Rule:
    def rule(run_id: str, record: Record | None) -> str | None:
        return field_check.problem(dict(record) if record is not None else None)

    rule.__name__ = field_check.check.name
    rule.__doc__ = field_check.check.description
    return rule


def stage_rules(stage: str) -> list[Rule]:
    """The checks of a stage's step: its own record for every run, then the field checks
    its record's model declares (bench_pipeline/records.py)."""
    return [one_record, *(_field_rule(c) for c in field_checks(RECORDS[stage]))]


_FIELD_RULES = {rule.__name__: rule for stage in RECORDS for rule in stage_rules(stage)[1:]}
cost_non_negative = _FIELD_RULES["cost_non_negative"]
sixteen_verdicts = _FIELD_RULES["sixteen_verdicts"]
gameplay_score_in_range = _FIELD_RULES["gameplay_score_in_range"]
quality_score_in_range = _FIELD_RULES["quality_score_in_range"]


def specs(asset: str, rules: Iterable[Rule]) -> list[dg.AssetCheckSpec]:
    return [
        dg.AssetCheckSpec(
            name=rule.__name__,
            asset=asset,
            blocking=True,
            description=(rule.__doc__ or rule.__name__.replace("_", " ")).strip(),
        )
        for rule in rules
    ]


def check_step(
    store: ArtifactStore, asset: str, run_ids: Iterable[str], rules: Iterable[Rule]
) -> list[dg.AssetCheckResult]:
    """The rules over the records the step just wrote (the asset's name is its stage's)."""
    return results(asset, rules, {r: store.read_record(asset, r) for r in run_ids})


def results(
    asset: str, rules: Iterable[Rule], records: Mapping[str, Record | None]
) -> list[dg.AssetCheckResult]:
    """One result per rule over the step's runs, naming the runs that break it."""
    out = []
    for rule in rules:
        problems = {
            run_id: problem
            for run_id, record in records.items()
            if (problem := rule(run_id, record)) is not None
        }
        out.append(
            dg.AssetCheckResult(
                asset_key=asset,
                check_name=rule.__name__,
                passed=not problems,
                severity=dg.AssetCheckSeverity.ERROR,
                description=(
                    f"{len(problems)} of {len(records)} runs: "
                    + "; ".join(f"{r}: {p}" for r, p in list(problems.items())[:5])
                )
                if problems
                else f"all {len(records)} runs pass",
                metadata={"runs_checked": len(records), "failing_runs": len(problems)},
            )
        )
    return out

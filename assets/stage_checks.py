"""Checks on what each per-run stage wrote, run in the same step as the stage.

They look only at the step's own runs (so a sweep of ten thousand runs is not re-read at
every step) and are blocking: a stage output that breaks them must not feed the warehouse.
The warehouse's SQL models add their own data tests (dbt_like_sql headers) on top.
"""

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import dagster as dg

from bench_pipeline.bot import TEST_IDS
from bench_pipeline.bot.contract import Verdict
from bench_pipeline.warehouse.artifacts import ArtifactStore

VERDICTS = {v.value for v in Verdict}
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


def cost_non_negative(run_id: str, record: Record | None) -> str | None:
    """Cost is unknown (NULL) or at least zero, never negative."""
    cost = (record or {}).get("cost_usd")
    return f"cost_usd is {cost}" if cost is not None and cost < 0 else None


def sixteen_verdicts(run_id: str, record: Record | None) -> str | None:
    """Sixteen verdicts per run, each PASS, FAIL or INCONCLUSIVE."""
    tests = (record or {}).get("tests") or {}
    if set(tests) != set(TEST_IDS):
        return f"{len(tests)} verdicts, not the sixteen of docs/interfaces.md §1"
    bad = sorted(v for v in tests.values() if v not in VERDICTS)
    return f"unknown verdicts {bad}" if bad else None


def _in_range(field: str) -> Rule:
    def rule(run_id: str, record: Record | None) -> str | None:
        value = (record or {}).get(field)
        if value is None or 0 <= value <= 100:
            return None
        return f"{field} {value} is outside 0–100"

    rule.__name__ = f"{field}_in_range"
    rule.__doc__ = f"{field} is unknown (NULL) or within 0–100."
    return rule


gameplay_score_in_range = _in_range("gameplay_score")
quality_score_in_range = _in_range("quality_score")


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

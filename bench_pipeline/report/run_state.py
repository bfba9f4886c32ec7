"""A run's state for the site: its verdicts and what went wrong with it, in one line
(`RunInfo`, built per run by `build_site`, shown on the leaderboard and the run pages).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import get_args

from bench_pipeline.agents.base import AgentStatus
from bench_pipeline.bot.contract import TEST_IDS
from bench_pipeline.report.data import Row

PENDING_STATES = ("not run yet", "not scored yet")
# Every agent outcome but success (the agents' own list of statuses).
AGENT_FAILURES = tuple(s for s in get_args(AgentStatus) if s != "completed")


@dataclass
class RunInfo:
    row: Row
    slug: str
    verdicts: dict[str, str]
    problems: list[str]
    severity: int  # 0 agent failed, 1 build failed, 2 gameplay tests failed, 9 none

    @property
    def run_id(self) -> str:
        return self.row["run_id"]

    @property
    def failing(self) -> bool:
        return bool(self.problems)

    @property
    def state(self) -> str:
        status = self.row["status"]
        if status == "pending":
            return "not run yet"
        if self.severity == 0:
            return f"agent {status}"
        if self.severity == 1:
            return "build failed"
        if self.severity == 2:
            return "tests failed"
        if self.row.get("score") is None:
            return "not scored yet"
        return "ok"


def _problems(row: Row, verdicts: Mapping[str, str], bot: Row | None) -> tuple[list[str], int]:
    out: list[str] = []
    severity = 9
    status = row.get("status")
    if status in AGENT_FAILURES:
        out.append(f"the agent ended {status}: {row.get('agent_message') or 'no message'}")
        severity = 0
    if row.get("build_ok") is False:
        out.append(f"the build failed: {row.get('build_message') or 'no message'}")
        severity = min(severity, 1)
    failed = [t for t in TEST_IDS if verdicts.get(t) == "FAIL"]
    if failed:
        reasons = (bot or {}).get("reasons") or {}
        first = reasons.get(failed[0]) if isinstance(reasons, Mapping) else None
        why = f" ({failed[0]}: {first})" if first else ""
        out.append(
            f"{len(failed)} of {len(TEST_IDS)} gameplay tests failed: {', '.join(failed)}{why}"
        )
        severity = min(severity, 2)
    return out, severity

"""What a set of runs would cost before anything is launched.

Used wherever spending is decided: the nightly schedule's description of its next tick,
`bench pools` / `bench status`, and a sweep's dry run. The price per token is the model
registry's; the tokens per run are the mean of the runs of that model already recorded in
the artifact store (else of any model), else an assumption stated in the estimate
(`BENCH_ESTIMATE_TOKENS="INPUT,OUTPUT"`). The cells' `budget_usd` caps bound it from above:
an agent is stopped at its cap, so the caps are the most the runs can spend.
"""

from __future__ import annotations

import glob
import itertools
import json
import os
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from bench_pipeline.design import DesignResult
from bench_pipeline.design.models import ModelRegistry

# A Claude Code / Codex session that writes a small browser game: mostly cached context
# re-read on every turn, a few tens of thousands of tokens written. Only used when no run
# of any model is recorded yet, and the estimate says so.
ASSUMED_TOKENS = (1_500_000, 40_000)
# Harnesses that spend nothing whatever the registry's prices (offline, replayed).
FREE_HARNESSES = frozenset({"synthetic", "replay"})
# Recorded runs read per model for the mean: enough for a stable mean, bounded on big stores.
HISTORY_RUNS = 200


def assumed_tokens() -> tuple[int, int]:
    """`BENCH_ESTIMATE_TOKENS="INPUT,OUTPUT"`, else ASSUMED_TOKENS; a bad value is an error."""
    raw = os.environ.get("BENCH_ESTIMATE_TOKENS", "").strip()
    if not raw:
        return ASSUMED_TOKENS
    try:
        tokens_in, tokens_out = (int(part) for part in raw.split(","))
    except ValueError:
        raise ValueError(
            f"BENCH_ESTIMATE_TOKENS={raw!r}: expected two whole numbers, INPUT,OUTPUT"
        ) from None
    if tokens_in < 0 or tokens_out < 0:
        raise ValueError(f"BENCH_ESTIMATE_TOKENS={raw!r}: token counts cannot be negative")
    return tokens_in, tokens_out


@dataclass(frozen=True)
class TokenHistory:
    """Mean tokens per run of the recorded agent runs, per model and over all models."""

    by_model: dict[str, tuple[float, float, int]] = field(default_factory=dict)
    overall: tuple[float, float, int] | None = None

    def tokens(self, model: str) -> tuple[float, float, str]:
        if model in self.by_model:
            tokens_in, tokens_out, n = self.by_model[model]
            return tokens_in, tokens_out, f"mean of {n} recorded runs of {model}"
        if self.overall is not None:
            tokens_in, tokens_out, n = self.overall
            return tokens_in, tokens_out, f"mean of {n} recorded runs of other models"
        tokens_in, tokens_out = assumed_tokens()
        return tokens_in, tokens_out, f"assumed {tokens_in:,} input / {tokens_out:,} output tokens"


def token_history(records: Iterable[Mapping[str, Any]]) -> TokenHistory:
    """Means over agent_generation records that report both token counts."""
    sums: dict[str, list[float]] = {}
    for record in records:
        tokens_in, tokens_out = record.get("input_tokens"), record.get("output_tokens")
        if not isinstance(tokens_in, int | float) or not isinstance(tokens_out, int | float):
            continue
        entry = sums.setdefault(str(record.get("model")), [0.0, 0.0, 0])
        entry[0] += tokens_in
        entry[1] += tokens_out
        entry[2] += 1
    by_model = {m: (s[0] / s[2], s[1] / s[2], int(s[2])) for m, s in sums.items()}
    total = sum(s[2] for s in sums.values())
    overall = None
    if total:
        overall = (
            sum(s[0] for s in sums.values()) / total,
            sum(s[1] for s in sums.values()) / total,
            int(total),
        )
    return TokenHistory(by_model, overall)


def recorded_agent_runs(record_glob: str, limit: int = HISTORY_RUNS * 10) -> list[dict[str, Any]]:
    """Up to `limit` agent_generation records (`ArtifactStore.record_glob`); unreadable ones
    are skipped: an estimate must not fail on one half-written file."""
    records = []
    for path in itertools.islice(glob.iglob(record_glob), limit):
        try:
            with open(path, encoding="utf-8") as handle:
                records.append(json.load(handle))
        except (OSError, ValueError):
            continue
    return records


@dataclass(frozen=True)
class ModelCost:
    model: str
    agent: str
    runs: int
    usd_per_run: float
    cap_usd: float
    basis: str

    @property
    def usd(self) -> float:
        return self.usd_per_run * self.runs

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "agent": self.agent,
            "runs": self.runs,
            "usd_per_run": round(self.usd_per_run, 4),
            "usd": round(self.usd, 2),
            "cap_usd": round(self.cap_usd, 2),
            "basis": self.basis,
        }


@dataclass(frozen=True)
class CostEstimate:
    """The runs to launch per model and agent, at the registry's prices."""

    experiment: str
    models: list[ModelCost]

    @property
    def runs(self) -> int:
        return sum(m.runs for m in self.models)

    @property
    def usd(self) -> float:
        return sum(m.usd for m in self.models)

    @property
    def cap_usd(self) -> float:
        return sum(m.cap_usd for m in self.models)

    @property
    def free_runs(self) -> int:
        """Runs whose harness spends nothing (synthetic, replay) whatever the prices say."""
        return sum(m.runs for m in self.models if m.agent in FREE_HARNESSES)

    def describe(self) -> str:
        if not self.models:
            return f"{self.experiment}: no runs"
        text = (
            f"{self.experiment}: {self.runs} runs, about ${self.usd:,.2f} at the registry's "
            f"prices (at most ${self.cap_usd:,.2f}, the runs' budget caps)"
        )
        if self.free_runs:
            text += f"; {self.free_runs} of them with an offline agent that spends nothing"
        return text

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "experiment": self.experiment,
            "runs": self.runs,
            "usd": round(self.usd, 2),
            "cap_usd": round(self.cap_usd, 2),
            "free_runs": self.free_runs,
            "by_model": [m.to_json_dict() for m in self.models],
        }


def estimate_cost(
    design: DesignResult,
    run_ids: Collection[str],
    registry: ModelRegistry,
    history: TokenHistory,
    budget_cap_usd: float | None = None,
) -> CostEstimate:
    """What launching `run_ids` (runs of `design`) would cost. `budget_cap_usd` lowers each
    run's cap (a sweep's launch-time setting); the estimate per run never exceeds its cap."""
    cells = {cell.cell_id: cell for cell in design.cells}
    wanted = set(run_ids)
    groups: dict[tuple[str, str], list[float]] = {}
    for run in design.runs:
        if run.run_id not in wanted:
            continue
        config = cells[run.cell_id].config
        cap = float(config.get("budget_usd", 5))
        if budget_cap_usd is not None:
            cap = min(cap, budget_cap_usd)
        groups.setdefault((str(config["model"]), str(config.get("agent", ""))), []).append(cap)
    models = []
    for (model, agent), caps in sorted(groups.items()):
        info = registry.get(model)
        tokens_in, tokens_out, basis = history.tokens(model)
        per_run = info.cost_usd(int(tokens_in), int(tokens_out)) if info is not None else 0.0
        if info is None:
            basis = f"{model} is not in the registry: no price"
        mean_cap = sum(caps) / len(caps)
        models.append(ModelCost(model, agent, len(caps), min(per_run, mean_cap), sum(caps), basis))
    return CostEstimate(design.experiment, models)

"""Stage 2: an agent builds Tetris for each run. The expensive stage: never redone silently."""

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import dagster as dg

from assets.experiment_design import run_spec
from assets.metadata import log_step_summary, run_result
from assets.partitions import run_partitions
from assets.stage_checks import check_step, specs, stage_rules
from assets.sweeps.launch import BUDGET_CAP_TAG, run_tags
from bench_pipeline import stages
from bench_pipeline.agents.base import AgentSetupError
from bench_pipeline.agents.stage import STAGE, record_failure, run_generation
from bench_pipeline.orchestration import backoff_seconds
from bench_pipeline.run_spec import RUN_SPEC_STAGE
from bench_pipeline.sandbox.egress import egress_refused
from resources import AgentResource, ArtifactStoreResource, SandboxResource

# Fixed on purpose: a change to this code must never make agent runs stale (they cost
# money). Rerun one explicitly with the `rerun` config.
GENERATION_CODE_VERSION = "1"
CHECKS = stage_rules(STAGE)


class AgentGenerationConfig(dg.Config):
    rerun: bool = False  # True: run the agent again; the earlier attempt is kept aside
    # A rate limit or an overloaded API is worth retrying, after this many seconds (doubled
    # at each retry, with jitter); a deterministic failure (crash, budget) is a result.
    retry_base_delay_s: float = 60.0
    max_retries: int = 3


@dg.asset(
    partitions_def=run_partitions,
    deps=[run_spec],
    group_name=stages.AGENT_GENERATION.group_name,
    kinds={"python"},
    code_version=GENERATION_CODE_VERSION,
    pool=stages.AGENT_GENERATION.pool,
    check_specs=specs("agent_generation", CHECKS),
    backfill_policy=dg.BackfillPolicy.multi_run(max_partitions_per_run=10),
    description="The agent of the run's cell builds Tetris in a sandboxed workspace: "
    "transcript, workspace archive, tokens, cost, turns and time. A run that already has "
    "its output is reused unless `rerun` is set.",
)
def agent_generation(
    context: dg.AssetExecutionContext,
    config: AgentGenerationConfig,
    artifact_store: ArtifactStoreResource,
    agent: AgentResource,
    sandbox: SandboxResource,
) -> dg.MaterializeResult:
    store = artifact_store.store()
    box = sandbox.sandbox()
    per_run: dict[str, dict[str, Any]] = {}
    setup_errors: list[str] = []
    transient: list[str] = []
    cap = budget_cap_for(run_tags(context))
    for run_id in context.partition_keys:
        spec = store.read_record(RUN_SPEC_STAGE, run_id)
        if spec is None:
            setup_errors.append(f"{run_id}: no run_spec record; materialize run_spec first")
            continue
        try:
            result = run_generation(
                spec,
                store,
                lambda harness, rid=run_id: agent.adapter(harness, rid),
                box,
                rerun=config.rerun,
                budget_cap_usd=cap,
            )
        except AgentSetupError as exc:
            # The machine's problem (CLI not installed): the other runs still go ahead.
            setup_errors.append(f"{run_id}: {exc}")
            continue
        except Exception as exc:  # one bad run must not fail the others of its chunk
            message = f"run {run_id}: agent_generation failed: {type(exc).__name__}: {exc}"
            context.log.error(message)
            record = record_failure(spec, store, message)
            per_run[run_id] = run_metadata(record, False, store.run_dir(run_id, STAGE))
            continue
        record = result.record
        if record.get("retryable"):
            transient.append(f"{run_id}: {record['message']}")
        verb = "reused" if result.reused else record["status"]
        context.log.info(f"{run_id}: {verb}: {record['message']}")
        per_run[run_id] = run_metadata(record, result.reused, store.run_dir(run_id, STAGE))
    if setup_errors:
        # Fail the step after the other runs went through: their outputs are stored, and a
        # retry reuses them (agent runs are never redone), so only the broken ones remain.
        raise dg.Failure(description="\n".join(setup_errors), allow_retries=False)
    if transient:
        # The other runs' outputs are stored; the retry runs only these again.
        if context.retry_number >= config.max_retries:
            raise dg.Failure(
                description=f"still failing after {context.retry_number} retries "
                "(rate limit or provider outage):\n" + "\n".join(transient),
                allow_retries=False,
            )
        wait = backoff_seconds(context.retry_number, config.retry_base_delay_s)
        context.log.warning(f"retrying {len(transient)} runs in {wait:.0f}s: {transient[0]}")
        raise dg.RetryRequested(max_retries=config.max_retries, seconds_to_wait=wait)
    _log_summary(context, per_run)
    return run_result(
        context,
        store,
        STAGE,
        per_run,
        check_results=check_step(store, STAGE, context.partition_keys, CHECKS),
    )


def budget_cap_for(tags: Mapping[str, str]) -> float | None:
    """The sweep's cap on one run's spending (its launch-time setting), or None."""
    raw = tags.get(BUDGET_CAP_TAG)
    if not raw:
        return None
    try:
        return float(raw)
    except ValueError:
        raise dg.Failure(
            description=f"tag {BUDGET_CAP_TAG}={raw!r} is not an amount in US dollars",
            allow_retries=False,
        ) from None


def run_metadata(record: dict[str, Any], reused: bool, workspace: Path) -> dict[str, Any]:
    """What one run's partition shows: the agent's outcome, tokens, cost and time."""
    return {
        "status": record.get("status"),
        "reused": reused,
        "agent": record.get("agent"),
        "model": record.get("model"),
        "input_tokens": record.get("input_tokens"),
        "output_tokens": record.get("output_tokens"),
        "cost_usd": record.get("cost_usd"),
        "cost_source": record.get("cost_source"),
        "duration_s": record.get("duration_s"),
        "wall_s": record.get("wall_s"),
        "turns": record.get("turns"),
        "files": record.get("files"),
        # Connections the sandbox's egress proxy refused (details.egress lists them).
        "egress_refused": egress_refused(record),
        "message": record.get("message"),
        "workspace": dg.MetadataValue.path(str(workspace)),
    }


def _log_summary(context: dg.AssetExecutionContext, per_run: dict[str, dict[str, Any]]) -> None:
    rows = [
        {
            "run": run_id,
            **{k: m[k] for k in ("status", "reused", "cost_usd", "input_tokens", "output_tokens")},
        }
        for run_id, m in per_run.items()
    ]
    costs = [r["cost_usd"] for r in rows if r["cost_usd"] is not None]
    log_step_summary(
        context,
        f"agent_generation: {len(rows)} runs, "
        f"{sum(1 for r in rows if r['status'] == 'completed')} completed, "
        f"{sum(1 for r in rows if r['reused'])} reused, ${sum(costs):.4f}",
        rows,
    )

"""Stage 5: code quality, transcript analysis and SonarQube, per run."""

import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import dagster as dg

from assets.agent_generation import agent_generation
from assets.automation import per_run_stage
from assets.metadata import log_step_summary, run_result
from assets.partitions import run_partitions
from assets.sandboxed_build import sandboxed_build
from assets.stage_checks import check_step, specs, stage_rules
from bench_pipeline import stages
from bench_pipeline.agents.stage import NoGenerationRecord
from bench_pipeline.quality.metrics import CONTRACT_KEYS
from bench_pipeline.quality.stage import (
    STAGE,
    NoBuildYet,
    record_quality_failure,
    run_quality,
)
from resources import ArtifactStoreResource, SandboxResource, SonarQubeResource

# Bump when a metric or the score formula changes: quality (and what reads it) recomputes;
# agent runs and builds do not.
QUALITY_CODE_VERSION = "2"  # 2: no entry point, no quality credit
CHECKS = stage_rules(STAGE)


@dg.asset(
    partitions_def=run_partitions,
    deps=[agent_generation, sandboxed_build],
    group_name=stages.QUALITY_METRICS.group_name,
    kinds={"eslint", "typescript"},
    code_version=QUALITY_CODE_VERSION,
    pool=stages.QUALITY_METRICS.pool,
    check_specs=specs("quality_metrics", CHECKS),
    automation_condition=per_run_stage,
    backfill_policy=dg.BackfillPolicy.multi_run(max_partitions_per_run=10),
    description="ESLint, tsc, bundle size, duplication, HTML validation and code analysis of "
    "the agent's project, run in the sandbox without network, combined into the quality "
    "score; plus the transcript analysis and SonarQube's measures when a server is set.",
)
def quality_metrics(
    context: dg.AssetExecutionContext,
    artifact_store: ArtifactStoreResource,
    sandbox: SandboxResource,
    sonar: SonarQubeResource,
) -> dg.MaterializeResult:
    store = artifact_store.store()
    box = sandbox.sandbox()
    sonar_config = sonar.config()

    def measure(run_id: str) -> dict | str:
        try:
            return run_quality(run_id, store, box, sonar_config)
        except (NoGenerationRecord, NoBuildYet) as exc:
            return str(exc)
        except Exception as exc:  # one bad run must not fail the others of its chunk
            message = f"run {run_id}: quality_metrics failed: {type(exc).__name__}: {exc}"
            context.log.error(message)
            return record_quality_failure(run_id, store, message)

    # Two runs at a time: each tool is mostly node starting up, one core per run suffices.
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="quality") as pool:
        measured = list(pool.map(measure, context.partition_keys))
    records = {r["run_id"]: r for r in measured if isinstance(r, dict)}
    for run_id, record in records.items():
        context.log.info(f"{run_id}: quality score {record['quality_score']}")
    missing = [r for r in measured if isinstance(r, str)]
    if missing:
        raise dg.Failure(description="\n".join(missing), allow_retries=False)
    rows = [
        {
            "run": run_id,
            "quality": r["quality_score"],
            "eslint_errors": r.get("eslint_errors"),
            "ts_compiles": r.get("ts_compiles"),
            "wasted_turns": r.get("transcript_wasted_turns"),
        }
        for run_id, r in records.items()
    ]
    scores = [r["quality"] for r in rows if r["quality"] is not None]
    mean = f"{sum(scores) / len(scores):.2f}" if scores else "none"
    log_step_summary(context, f"quality_metrics: {len(rows)} runs, mean quality {mean}", rows)
    return run_result(
        context,
        store,
        STAGE,
        {run_id: run_metadata(record) for run_id, record in records.items()},
        common={
            "sonarqube": f"server {sonar_config.url}"
            if sonar_config.url and sonar_config.token
            else "not configured (set BENCH_SONAR_URL and BENCH_SONAR_TOKEN): the sonar_* "
            "columns stay NULL, never 0",
        },
        check_results=check_step(store, STAGE, context.partition_keys, CHECKS),
    )


def run_metadata(record: dict[str, Any]) -> dict[str, Any]:
    """What one run's partition shows: the quality score, the main metrics, how the score
    was made up and which metrics could not be measured (and why)."""
    return {
        "quality_score": record.get("quality_score"),
        **{key: record.get(key) for key in CONTRACT_KEYS},
        "wasted_turns": record.get("transcript_wasted_turns"),
        "quality_breakdown": _json(record.get("quality_breakdown")),
        "unavailable": _json(record.get("unavailable")),
    }


def _json(text: Any) -> dg.MetadataValue | None:
    """A nested value the record keeps as JSON text, shown as JSON again."""
    if not isinstance(text, str):
        return None
    try:
        return dg.MetadataValue.json(json.loads(text))
    except ValueError:
        return dg.MetadataValue.text(text)

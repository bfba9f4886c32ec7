"""Stage 5: code quality, transcript analysis and SonarQube, per run."""

from concurrent.futures import ThreadPoolExecutor

import dagster as dg

from assets.build import sandboxed_build
from assets.generation import agent_generation
from assets.metadata import markdown_table
from assets.partitions import run_partitions
from assets.stage_checks import check_step, one_record, quality_score_in_range, specs
from assets.sweeps.automation import per_run_stage
from bench_pipeline.agents.stage import NoGenerationRecord
from bench_pipeline.quality.stage import NoBuildYet, record_quality_failure, run_quality
from resources import ArtifactStoreResource, SandboxResource, SonarQubeResource

# Bump when a metric or the score formula changes: quality (and what reads it) recomputes;
# agent runs and builds do not.
QUALITY_CODE_VERSION = "2"  # 2: no entry point, no quality credit
CHECKS = [one_record, quality_score_in_range]


@dg.asset(
    partitions_def=run_partitions,
    deps=[agent_generation, sandboxed_build],
    group_name="quality_metrics",
    kinds={"eslint", "typescript"},
    code_version=QUALITY_CODE_VERSION,
    pool="builds",
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
    rows = []
    missing = [r for r in measured if isinstance(r, str)]
    for record in measured:
        if isinstance(record, str):
            continue
        context.log.info(f"{record['run_id']}: quality score {record['quality_score']}")
        rows.append(
            {
                "run": record["run_id"],
                "quality": record["quality_score"],
                "eslint_errors": record.get("eslint_errors"),
                "ts_compiles": record.get("ts_compiles"),
                "wasted_turns": record.get("transcript_wasted_turns"),
            }
        )
    if missing:
        raise dg.Failure(description="\n".join(missing), allow_retries=False)
    scores = [r["quality"] for r in rows if r["quality"] is not None]
    return dg.MaterializeResult(
        check_results=check_step(store, "quality_metrics", context.partition_keys, CHECKS),
        metadata={
            "runs": len(rows),
            "mean_quality_score": round(sum(scores) / len(scores), 2) if scores else None,
            "quality": markdown_table(rows, 50),
            "sonarqube": f"server {sonar_config.url}"
            if sonar_config.url and sonar_config.token
            else "not configured (set BENCH_SONAR_URL and BENCH_SONAR_TOKEN): the sonar_* "
            "columns stay NULL, never 0",
        },
    )

"""Stage 4: the gameplay bot plays each run's game and returns sixteen verdicts."""

import json

import dagster as dg

from assets.design import run_spec
from assets.metadata import markdown_table
from assets.partitions import run_partitions
from bench_pipeline.bot import BOT_VERSION, TEST_IDS, evaluate
from bench_pipeline.bot.record import (
    STAGE,
    NoBuildRecord,
    no_page_evaluation,
    served_dir,
    to_record,
)
from resources import ArtifactStoreResource

SANDBOXED_BUILD = dg.AssetKey("sandboxed_build")
VERDICTS = {"PASS", "FAIL", "INCONCLUSIVE"}


class BotEvaluationConfig(dg.Config):
    endurance_seconds: float = 30.0


@dg.asset(
    partitions_def=run_partitions,
    deps=[run_spec, SANDBOXED_BUILD],
    group_name="bot_evaluation",
    kinds={"playwright", "chromium"},
    # A new bot version makes every evaluation stale; agent runs upstream are untouched.
    code_version=BOT_VERSION,
    # Two cores: at most two browsers at once across all runs (see dagster.yaml).
    pool="browser",
    retry_policy=dg.RetryPolicy(max_retries=1, delay=5, backoff=dg.Backoff.EXPONENTIAL),
    description="The Playwright bot plays the run's built game (from the sandboxed_build "
    "record) and records the sixteen verdicts of contracts §1, with screenshots and the "
    "event log as evidence.",
)
def bot_evaluation(
    context: dg.AssetExecutionContext,
    config: BotEvaluationConfig,
    artifact_store: ArtifactStoreResource,
) -> dg.MaterializeResult:
    store = artifact_store.store()
    run_id = context.partition_key
    try:
        target = served_dir(store, run_id)
    except NoBuildRecord as missing:
        raise dg.Failure(description=str(missing), allow_retries=False) from missing
    evidence = store.run_dir(run_id, STAGE)
    if target is None:
        # A failed build is a result: the run scores what it earns.
        result = no_page_evaluation(run_id, "the build produced no page to play")
    else:
        result = evaluate(str(target), config.endurance_seconds, evidence)
    record = to_record(result, evidence)
    store.write_record(STAGE, run_id, record)
    rows = [
        {"test": t, "verdict": result.results[t].verdict.value, "why": result.results[t].reason}
        for t in TEST_IDS
    ]
    return dg.MaterializeResult(
        metadata={
            "gameplay_score": record["gameplay_score"],
            "passed": record["passed"],
            "failed": record["failed"],
            "inconclusive": record["inconclusive"],
            "renderer": record["renderer"],
            "start": str(record["start"]),
            "duration_s": record["duration_s"],
            "verdicts": markdown_table(rows, 16),
            "evidence": dg.MetadataValue.path(str(evidence)),
        }
    )


@dg.asset_check(asset=bot_evaluation, blocking=True, description="Sixteen valid verdicts.")
def bot_evaluation_has_sixteen_verdicts(
    artifact_store: ArtifactStoreResource,
) -> dg.AssetCheckResult:
    store = artifact_store.store()
    problems = []
    for path in sorted(store.record_path(STAGE, "x").parent.glob("*.json")):
        tests = json.loads(path.read_text()).get("tests") or {}
        if set(tests) != set(TEST_IDS) or not set(tests.values()) <= VERDICTS:
            problems.append(path.stem)
    return dg.AssetCheckResult(
        passed=not problems, metadata={"runs_with_bad_verdicts": dg.MetadataValue.json(problems)}
    )

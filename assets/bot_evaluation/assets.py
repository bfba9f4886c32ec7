"""Stage 4: the gameplay bot plays each run's game and returns sixteen verdicts."""

from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import dagster as dg

from assets.automation import per_run_stage
from assets.experiment_design import run_spec
from assets.metadata import log_step_summary, run_result, verdicts_table
from assets.partitions import run_partitions
from assets.sandboxed_build import sandboxed_build
from assets.stage_checks import check_step, specs, stage_rules
from assets.sweeps.launch import ENDURANCE_TAG, run_tags
from bench_pipeline import settings, stages
from bench_pipeline.bot import BOT_VERSION, TEST_IDS, evaluate
from bench_pipeline.bot.evaluate import BrowserMissingError
from bench_pipeline.bot.record import (
    STAGE,
    NoBuildRecord,
    no_page_evaluation,
    served_dir,
    to_record,
)
from bench_pipeline.warehouse.artifacts import ArtifactStore
from resources import ArtifactStoreResource

CHECKS = stage_rules(STAGE)


class BotEvaluationConfig(dg.Config):
    endurance_seconds: float = settings.bot_endurance_s()
    # The evaluation's whole process tree ends by then, whatever the page does (None:
    # BENCH_BOT_HARD_CAP_S, else 60; read when the step runs, so a bad value fails the step
    # with its one-line reason instead of the code location).
    hard_cap_seconds: float | None = None
    # Browsers at once when one step evaluates several runs (a partition range).
    parallel_browsers: int = 2


def endurance_for(tags: Mapping[str, str], default: float) -> float:
    """The sweep's bot window (its launch-time setting, a tag of its runs), else `default`."""
    raw = tags.get(ENDURANCE_TAG)
    try:
        return float(raw) if raw else default
    except ValueError:
        raise dg.Failure(
            description=f"tag {ENDURANCE_TAG}={raw!r} is not a number of seconds",
            allow_retries=False,
        ) from None


def _evaluate_run(
    store: ArtifactStore, run_id: str, endurance_s: float, hard_cap_s: float
) -> dict[str, Any]:
    target = served_dir(store, run_id)
    evidence = store.run_dir(run_id, STAGE)
    if target is None:
        # A failed build is a result: the run scores what it earns.
        result = no_page_evaluation(run_id, "the build produced no page to play")
    else:
        result = evaluate(str(target), endurance_s, evidence, hard_cap_s)
    record = to_record(result, evidence)
    store.write_record(STAGE, run_id, record)
    record["why"] = {t: result.results[t].reason for t in TEST_IDS}
    return record


@dg.asset(
    partitions_def=run_partitions,
    deps=[run_spec, sandboxed_build],
    group_name=stages.BOT_EVALUATION.group_name,
    kinds={"playwright", "chromium"},
    # A new bot version makes every evaluation stale; agent runs upstream are untouched.
    code_version=BOT_VERSION,
    # Two cores: at most two browsers at once across all runs (see dagster.yaml).
    pool=stages.BOT_EVALUATION.pool,
    check_specs=specs("bot_evaluation", CHECKS),
    automation_condition=per_run_stage,
    backfill_policy=dg.BackfillPolicy.multi_run(max_partitions_per_run=10),
    # A browser that crashed or hung is worth another go (the bot's own verdicts about the
    # game are results, never retried); a missing browser or build is not (dg.Failure).
    retry_policy=dg.RetryPolicy(
        max_retries=2, delay=10, backoff=dg.Backoff.EXPONENTIAL, jitter=dg.Jitter.PLUS_MINUS
    ),
    description="The Playwright bot plays the run's built game (from the sandboxed_build "
    "record) and records the sixteen verdicts of docs/interfaces.md §1, with screenshots and the "
    "event log as evidence.",
)
def bot_evaluation(
    context: dg.AssetExecutionContext,
    config: BotEvaluationConfig,
    artifact_store: ArtifactStoreResource,
) -> dg.MaterializeResult:
    store = artifact_store.store()
    run_ids = context.partition_keys
    try:
        hard_cap_s = (
            settings.bot_hard_cap_s()
            if config.hard_cap_seconds is None
            else settings.check_bot_hard_cap(config.hard_cap_seconds, "hard_cap_seconds")
        )
    except ValueError as error:
        raise dg.Failure(description=str(error), allow_retries=False) from None
    for run_id in run_ids:
        try:
            served_dir(store, run_id)
        except NoBuildRecord as missing:
            raise dg.Failure(description=str(missing), allow_retries=False) from missing
    workers = max(1, min(config.parallel_browsers, len(run_ids)))
    endurance_s = endurance_for(run_tags(context), config.endurance_seconds)
    if endurance_s != config.endurance_seconds:
        context.log.info(f"bot endurance window {endurance_s:g} s, set by the sweep's launch")
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="bot") as pool:
        futures = {
            run_id: pool.submit(_evaluate_run, store, run_id, endurance_s, hard_cap_s)
            for run_id in run_ids
        }
    # Every run is evaluated (and its record written) before one failure is raised: a game
    # that crashes the bot must not cost the other runs of the step their verdicts.
    failed: dict[str, BaseException] = {}
    records = []
    for run_id, future in futures.items():
        error = future.exception()
        if error is None:
            records.append(future.result())
        else:
            failed[run_id] = error
    missing_browser = [e for e in failed.values() if isinstance(e, BrowserMissingError)]
    if missing_browser:
        raise dg.Failure(description=str(missing_browser[0]), allow_retries=False)
    if failed:
        # Retried by the step's RetryPolicy (a crashed browser is worth another go).
        raise dg.Failure(
            description="the bot could not evaluate "
            + "; ".join(f"run {r}: {type(e).__name__}: {e}" for r, e in failed.items())
            + f" ({len(records)} other run(s) of this step were evaluated and recorded)",
            allow_retries=True,
        )
    by_run = dict(zip(run_ids, records, strict=True))
    rows = [
        {"run": r, **{k: rec[k] for k in ("gameplay_score", "passed", "failed", "inconclusive")}}
        for r, rec in by_run.items()
    ]
    mean = sum(r["gameplay_score"] for r in rows) / len(rows)
    log_step_summary(
        context, f"bot_evaluation: {len(rows)} runs, mean gameplay score {mean:.2f}", rows
    )
    for run_id, record in by_run.items():
        context.log.info(f"{run_id}: gameplay score {record['gameplay_score']}")
    return run_result(
        context,
        store,
        STAGE,
        {run_id: run_metadata(record) for run_id, record in by_run.items()},
        check_results=check_step(store, STAGE, context.partition_keys, CHECKS),
    )


def run_metadata(record: dict[str, Any]) -> dict[str, Any]:
    """What one run's partition shows: its sixteen verdicts (with the bot's reasons), the
    counts, the gameplay score and the bot version that judged it."""
    return {
        "gameplay_score": record["gameplay_score"],
        "passed": record["passed"],
        "failed": record["failed"],
        "inconclusive": record["inconclusive"],
        "verdicts": verdicts_table(record["tests"], record.get("why") or {}, TEST_IDS),
        "bot_version": record["bot_version"],
        "renderer": record["renderer"],
        "start": str(record["start"]),
        "duration_s": record["duration_s"],
        "evidence": dg.MetadataValue.path(record["artifacts_dir"])
        if record.get("artifacts_dir")
        else None,
    }

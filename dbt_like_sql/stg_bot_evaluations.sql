-- materialized: view
-- description: One row per bot evaluation: the gameplay score, verdict counts and what the bot found.
-- test: unique(run_id)
-- test: not_null(run_id)
-- test: accepted_range(gameplay_score, 0, 100)
-- column: run_id: `<experiment>.<cell_id>.r<repeat>`; the Dagster partition key
-- column: bot_version: the bot that evaluated it
-- column: gameplay_score: 0–100, the bot's share of passed tests
-- column: tests_passed: tests judged PASS
-- column: tests_failed: tests judged FAIL
-- column: tests_inconclusive: tests judged INCONCLUSIVE (the bot could not observe enough)
-- column: renderer: what the bot found the page drawn with (`canvas`, `dom`, `svg`, `webgl`, …; `none` when there was no page)
-- column: eval_duration_s: bot evaluation time
select
    run_id,
    bot_version,
    try_cast(gameplay_score as double) as gameplay_score,
    try_cast(passed as integer) as tests_passed,
    try_cast(failed as integer) as tests_failed,
    try_cast(inconclusive as integer) as tests_inconclusive,
    renderer,
    try_cast(duration_s as double) as eval_duration_s
from raw_bot_evaluation

-- materialized: view
-- description: One row per bot evaluation: the gameplay score, verdict counts and what the bot found.
-- test: unique(run_id)
-- test: not_null(run_id)
-- test: accepted_range(gameplay_score, 0, 100)
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

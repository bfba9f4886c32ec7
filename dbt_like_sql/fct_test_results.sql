-- materialized: table
-- incremental: run_id
-- description: Sixteen rows per evaluated run: run_id, test_id, verdict (PASS, FAIL or INCONCLUSIVE), docs/interfaces.md §5, and the bot's reason for the verdict.
-- test: unique(run_id, test_id) blocking
-- test: not_null(run_id, test_id, verdict) blocking
-- test: rows_per(run_id, 16)
-- test: accepted_values(verdict, 'PASS', 'FAIL', 'INCONCLUSIVE')
-- test: accepted_values(test_id, 'loads', 'starts', 'gravity', 'move_left', 'move_right', 'soft_drop', 'rotate', 'hard_drop', 'walls', 'lock', 'spawn', 'line_clear', 'score', 'game_over', 'endurance', 'no_errors')
-- test: expect_empty(every_result_has_a_run): select t.run_id from fct_test_results as t anti join fct_runs as r using (run_id)
-- column: run_id: the run → `fct_runs`
-- column: test_id: one of the 16 tests: `loads`, `starts`, `gravity`, `move_left`, `move_right`, `soft_drop`, `rotate`, `hard_drop`, `walls`, `lock`, `spawn`, `line_clear`, `score`, `game_over`, `endurance`, `no_errors` (docs/bot.md)
-- column: verdict: `PASS`, `FAIL` or `INCONCLUSIVE`
-- column: reason: the bot's reason for its verdict (its record's `reasons`); NULL for a record written without one
select
    e.run_id,
    t.key as test_id,
    t.value ->> '$' as verdict,
    -- Why the bot judged so (its record's `reasons`); NULL for a record written without.
    json_extract_string(e.reasons, '$."' || t.key || '"') as reason
from raw_bot_evaluation as e,
    json_each(to_json(e.tests)) as t

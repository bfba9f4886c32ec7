-- materialized: table
-- incremental: run_id
-- description: Sixteen rows per evaluated run: run_id, test_id, verdict (PASS, FAIL or INCONCLUSIVE), docs/interfaces.md §5.
-- test: unique(run_id, test_id) blocking
-- test: not_null(run_id, test_id, verdict) blocking
-- test: rows_per(run_id, 16)
-- test: accepted_values(verdict, 'PASS', 'FAIL', 'INCONCLUSIVE')
-- test: accepted_values(test_id, 'loads', 'starts', 'gravity', 'move_left', 'move_right', 'soft_drop', 'rotate', 'hard_drop', 'walls', 'lock', 'spawn', 'line_clear', 'score', 'game_over', 'endurance', 'no_errors')
-- test: expect_empty(every_result_has_a_run): select t.run_id from fct_test_results as t anti join fct_runs as r using (run_id)
select
    e.run_id,
    t.key as test_id,
    t.value ->> '$' as verdict
from raw_bot_evaluation as e,
    json_each(to_json(e.tests)) as t

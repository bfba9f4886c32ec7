-- materialized: table
-- description: Sixteen rows per evaluated run: run_id, test_id, verdict (PASS, FAIL or INCONCLUSIVE), contracts §5.
select
    e.run_id,
    t.key as test_id,
    t.value ->> '$' as verdict
from raw_bot_evaluation as e,
    json_each(to_json(e.tests)) as t

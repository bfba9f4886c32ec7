-- materialized: table
-- description: How often the gameplay bot's verdicts agree with hand labels, from the latest published run of the bot accuracy benchmark per corpus (real: public games; repo: tests/bot/games) and split (tune, heldout, all): one row per test id plus the row test_id = 'all' that sums the sixteen. agreement = verdicts equal to the label / labelled verdicts; working_right = label PASS judged PASS / label PASS; defects_caught = label FAIL judged FAIL / label FAIL (fractions 0-1, NULL when nothing to count); false_pass, false_fail and inconclusive count verdicts; uncertain labels are left out (n_uncertain). Earlier runs stay in raw_bot_accuracy.
-- test: unique(corpus, split, test_id) blocking
-- test: not_null(bot_version, measured_at, corpus, split, test_id)
-- test: accepted_range(agreement, 0, 1)
-- test: accepted_range(working_right, 0, 1)
-- test: accepted_range(defects_caught, 0, 1)
-- test: non_negative(false_pass)
-- test: non_negative(false_fail)
-- test: non_negative(inconclusive)
-- test: expect_empty(counts_add_up): select corpus, split, test_id from mart_bot_accuracy where n_verdicts <> label_pass + label_fail or false_pass + false_fail + inconclusive > n_verdicts
select
    bot_version,
    measured_at,
    corpus,
    split,
    test_id,
    n_games,
    repeats,
    endurance_s,
    n_labelled,
    n_verdicts,
    label_pass,
    label_fail,
    agreement,
    working_right,
    defects_caught,
    false_pass,
    false_fail,
    inconclusive,
    n_uncertain,
    consistency,
    eval_s_median,
    eval_s_max,
    source_file
from raw_bot_accuracy
-- The latest file of each (corpus, split); two files with the same time: the later name.
qualify dense_rank() over (
    partition by corpus, split order by measured_at desc, source_file desc
) = 1

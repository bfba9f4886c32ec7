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
-- column: bot_version: the bot that was measured
-- column: measured_at: when the benchmark started
-- column: corpus: `real` (public games, `benchmarks/bot_corpus/manifest.yaml`) or `repo` (`tests/bot/games`)
-- column: split: `tune` (games the bot was developed against), `heldout` (never looked at: the fair figure) or `all`
-- column: test_id: one of the sixteen, or `all`
-- column: n_games: games evaluated
-- column: repeats: evaluations per game
-- column: endurance_s: the endurance window used
-- column: n_labelled: games with a PASS/FAIL label for this test (the sum over tests on the `all` row)
-- column: n_verdicts: labelled verdicts compared (= label_pass + label_fail)
-- column: label_pass: of those, labelled PASS (the mechanic works)
-- column: label_fail: of those, labelled FAIL (the mechanic is broken)
-- column: agreement: 0–1: verdicts equal to their label / n_verdicts
-- column: working_right: 0–1: label PASS judged PASS / label_pass (NULL when label_pass = 0)
-- column: defects_caught: 0–1: label FAIL judged FAIL / label_fail (NULL when label_fail = 0)
-- column: false_pass: label FAIL judged PASS: a defect hidden
-- column: false_fail: label PASS judged FAIL: the game blamed for the bot's mistake
-- column: inconclusive: labelled verdicts the bot left INCONCLUSIVE
-- column: n_uncertain: verdicts on labels marked uncertain: left out of every figure above
-- column: consistency: 0–1: (game, test) pairs with the same verdict in every repeat; NULL with one evaluation per game
-- column: eval_s_median: median wall time of one evaluation, seconds (two ran at once)
-- column: eval_s_max: longest wall time of one evaluation, seconds (two ran at once)
-- column: source_file: the published file the row came from
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

-- materialized: table
-- description: How often the gameplay bot's verdicts agree with hand labels per renderer (breakdown = 'renderer': canvas, dom, svg, webgl) and per author group (breakdown = 'author': ai = any ai-* author of the corpus manifest, human; unknown when a game does not say), from the latest published run of the bot accuracy benchmark per corpus and split: one row per (breakdown, group, test id) plus the row test_id = 'all' summing the sixteen, with the figures of mart_bot_accuracy counted over that group's games alone. A group without a game has n_games = 0 and NULL rates (not measured). Earlier runs stay in raw_bot_accuracy_groups.
-- test: unique(corpus, split, breakdown, group_name, test_id) blocking
-- test: not_null(bot_version, measured_at, corpus, split, breakdown, group_name, test_id)
-- test: accepted_values(breakdown, 'renderer', 'author')
-- test: accepted_range(agreement, 0, 1)
-- test: accepted_range(working_right, 0, 1)
-- test: accepted_range(defects_caught, 0, 1)
-- test: non_negative(n_games)
-- test: non_negative(false_pass)
-- test: non_negative(false_fail)
-- test: non_negative(inconclusive)
-- test: expect_empty(counts_add_up): select corpus, split, breakdown, group_name, test_id from mart_bot_accuracy_groups where n_verdicts <> label_pass + label_fail or false_pass + false_fail + inconclusive > n_verdicts
-- test: expect_empty(groups_sum_to_the_whole): select g.corpus, g.split, g.breakdown from mart_bot_accuracy_groups as g join mart_bot_accuracy as a using (corpus, split, test_id) where g.test_id = 'all' group by g.corpus, g.split, g.breakdown, a.n_verdicts, a.n_games having sum(g.n_verdicts) <> a.n_verdicts or sum(g.n_games) <> a.n_games
-- column: bot_version: as in `mart_bot_accuracy`
-- column: measured_at: as in `mart_bot_accuracy`
-- column: corpus: as in `mart_bot_accuracy`
-- column: split: as in `mart_bot_accuracy`
-- column: breakdown: `renderer` or `author`
-- column: group_name: renderer: `canvas`, `dom`, `svg`, `webgl` (always listed), `unknown` (a game that does not say) or another renderer the corpus names; author: `ai` (any `ai-*` author of the manifest: `ai-claude-code`, `ai-codex`, `ai-cursor`, `ai-copilot`, `ai-other`), `human`, `unknown` (the in-repo games)
-- column: test_id: as in `mart_bot_accuracy`
-- column: n_games: games of the group evaluated; 0: the group is listed but not measured (every rate NULL)
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
-- column: n_uncertain: as in `mart_bot_accuracy`, over the group's games
-- column: source_file: the published file the row came from
select
    bot_version,
    measured_at,
    corpus,
    split,
    breakdown,
    group_name,
    test_id,
    n_games,
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
    source_file
from raw_bot_accuracy_groups
-- The same file mart_bot_accuracy keeps: the latest of each (corpus, split); two files with
-- the same time: the later name.
qualify dense_rank() over (
    partition by corpus, split order by measured_at desc, source_file desc
) = 1

-- materialized: table
-- incremental: run_id
-- description: One row per designed run (docs/interfaces.md §5): its axes, the agent's outcome, tokens, cost and time, the build and the scores (score = 50 % gameplay + 50 % quality). status is the agent's outcome, or 'pending' before the agent ran. inconclusive_share is the share of the sixteen bot verdicts that are INCONCLUSIVE (0-1), renderer what the bot found the game drawn with.
-- test: unique(run_id) blocking
-- test: not_null(run_id, cell_id, experiment) blocking
-- test: not_null(status)
-- test: accepted_values(status, 'completed', 'failed', 'budget_exceeded', 'timed_out', 'max_turns', 'error', 'pending')
-- test: accepted_range(gameplay_score, 0, 100)
-- test: accepted_range(quality_score, 0, 100)
-- test: accepted_range(score, 0, 100)
-- test: accepted_range(inconclusive_share, 0, 1)
-- test: non_negative(cost_usd)
-- test: non_negative(input_tokens)
-- test: non_negative(output_tokens)
-- test: non_negative(duration_s)
-- test: expect_empty(verdict_counts_add_up_to_16): select run_id, tests_passed, tests_failed, tests_inconclusive from fct_runs where tests_passed + tests_failed + tests_inconclusive <> 16
-- column: run_id: the run
-- column: cell_id: its cell → `dim_cells`
-- column: experiment: its experiment
-- column: repeat: repeat number within the cell
-- column: seed: the run's seed
-- column: in_current_design: the run is in its experiment's current design
-- column: status: the agent's outcome (`completed`, `failed`, `budget_exceeded`, `timed_out`, `max_turns`, `error`), or `pending` before the agent ran
-- column: agent_message: the agent stage's one-line summary
-- column: adapter: the adapter that ran the agent
-- column: build_ok: the build succeeded (NULL: not built yet)
-- column: build_kind: what the build detected
-- column: entry_point_exists: the build produced a page to serve
-- column: build_message: the build's one-line summary
-- column: gameplay_score: 0–100, the bot's share of passed tests
-- column: quality_score: 0–100, the code-quality score; 0 when there is no entry point (no page to serve: no credit), NULL when the quality stage could not measure the run (docs/quality.md)
-- column: score: **the headline**: round(0.5 · gameplay + 0.5 · quality, 2); NULL until both exist
-- column: cost_usd: what the agent run cost
-- column: cost_source: where the cost came from
-- column: input_tokens: input tokens the run used, cache reads and writes included
-- column: output_tokens: output tokens the run produced
-- column: cache_read_tokens: input tokens read from the prompt cache
-- column: turns: as the agent reported them
-- column: tool_calls: as the agent reported them
-- column: duration_s: the agent's run time, seconds
-- column: budget_hit: the run stopped at its budget
-- column: files: files the agent wrote
-- column: planted_faults: synthetic agent's planted faults
-- column: build_duration_s: build time
-- column: output_bytes: size of the built output
-- column: tests_passed: tests judged PASS
-- column: tests_failed: tests judged FAIL
-- column: tests_inconclusive: tests judged INCONCLUSIVE (the bot could not observe enough)
-- column: inconclusive_share: 0–1: the share of the bot's verdicts that are INCONCLUSIVE (tests_inconclusive over the three counts, 16 in a valid record); NULL when the bot has not evaluated the run. An INCONCLUSIVE is never a PASS, so this is how much of the gameplay score the bot could not judge; the effects analysis treats it as an outcome (docs/analysis.md, *Instrument bias*)
-- column: renderer: what the bot found the page drawn with (`canvas`, `dom`, `svg`, `webgl`, …; `none` when there was no page)
-- column: bot_version: the bot that evaluated it
-- column: eval_duration_s: bot evaluation time
-- column: eslint_errors: ESLint errors
-- column: ts_compiles: TypeScript compiles (NULL for a project without TypeScript)
-- column: wasted_turns: wasted tool calls in the transcript
-- column: productivity_ratio: useful share of tool calls
-- column: self_tested: the agent tested its own game
-- columns: axes
select
    r.run_id,
    r.cell_id,
    r.experiment,
    r."repeat",
    r.seed,
    r.in_current_design,
    coalesce(a.agent_status, 'pending') as status,
    a.agent_message,
    a.adapter,
    b.build_ok,
    b.build_kind,
    b.entry_point is not null as entry_point_exists,
    b.build_message,
    e.gameplay_score,
    q.quality_score,
    -- The headline: half what the game delivers, half how clean its code is (NULL until
    -- both stages measured the run; never a zero standing in for a missing half).
    round(0.5 * e.gameplay_score + 0.5 * q.quality_score, 2) as score,
    a.cost_usd,
    a.cost_source,
    a.input_tokens,
    a.output_tokens,
    a.cache_read_tokens,
    a.turns,
    a.tool_calls,
    a.duration_s,
    a.budget_hit,
    a.files,
    a.planted_faults,
    b.build_duration_s,
    b.output_bytes,
    e.tests_passed,
    e.tests_failed,
    e.tests_inconclusive,
    -- How much of the game the bot could not judge: an INCONCLUSIVE is never a PASS, so a
    -- level the bot reads worse loses gameplay points without the game being worse. The
    -- effects analysis estimates each axis's effect on it to tell the two apart
    -- (docs/analysis.md, *Instrument bias*). Over the verdicts counted, not a fixed 16, so
    -- a malformed record cannot give a share above 1.
    e.tests_inconclusive::double
    / nullif(e.tests_passed + e.tests_failed + e.tests_inconclusive, 0) as inconclusive_share,
    -- What the bot found the page drawn with (canvas, dom, svg, webgl): its accuracy
    -- differs per renderer (mart_bot_accuracy_groups).
    e.renderer,
    e.bot_version,
    e.eval_duration_s,
    q.eslint_errors,
    q.ts_compiles,
    q.wasted_turns,
    q.productivity_ratio,
    q.self_tested,
    r.* exclude (run_id, cell_id, experiment, "repeat", seed, in_current_design)
from stg_runs as r
left join stg_agent_runs as a using (run_id)
left join stg_builds as b using (run_id)
left join stg_bot_evaluations as e using (run_id)
left join stg_quality as q using (run_id)

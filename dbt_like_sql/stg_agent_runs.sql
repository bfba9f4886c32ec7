-- materialized: view
-- description: One row per agent run (agent_generation records): harness, model, outcome, tokens, cost, turns and time.
-- test: unique(run_id)
-- test: not_null(run_id)
-- test: non_negative(cost_usd)
-- column: run_id: `<experiment>.<cell_id>.r<repeat>`; the Dagster partition key
-- columns: axes
-- column: adapter: the adapter that ran it (`replay` when a transcript was replayed)
-- column: agent_status: `completed`, `failed`, `budget_exceeded`, `timed_out`, `max_turns`, `error`
-- column: agent_message: one readable line: what happened
-- column: exit_code: the agent CLI's exit code
-- column: input_tokens: input tokens the run used, cache reads and writes included
-- column: output_tokens: output tokens the run produced
-- column: cache_read_tokens: input tokens read from the prompt cache
-- column: cache_creation_tokens: input tokens written to the prompt cache
-- column: cost_usd: what the run cost, US dollars
-- column: cost_source: `reported` by the CLI, `priced` from the registry, or `unknown`
-- column: turns: model turns
-- column: tool_calls: tool calls the agent reported
-- column: duration_s: the agent's own run time, seconds
-- column: wall_s: the stage's wall time, seconds
-- column: budget_hit: the run stopped at its budget
-- column: files: files in the workspace
-- column: workspace_bytes: total size of those files, bytes
-- column: started_at: when the agent started (ISO 8601 text, UTC)
-- column: finished_at: when the agent finished (ISO 8601 text, UTC)
-- column: prompt_version: version of the prompt templates
-- column: transcript_path: the raw transcript (JSON lines) in the artifact store
-- column: archive_path: the archive of the workspace the agent left
-- column: planted_faults: synthetic agent only: the gameplay faults it planted (ground truth)
-- column: planted_quality_faults: synthetic agent only: the code-quality faults it planted
select
    run_id,
    agent,
    adapter,
    model,
    status as agent_status,
    message as agent_message,
    try_cast(exit_code as integer) as exit_code,
    try_cast(input_tokens as bigint) as input_tokens,
    try_cast(output_tokens as bigint) as output_tokens,
    try_cast(cache_read_tokens as bigint) as cache_read_tokens,
    try_cast(cache_creation_tokens as bigint) as cache_creation_tokens,
    try_cast(cost_usd as double) as cost_usd,
    cost_source,
    try_cast(turns as integer) as turns,
    try_cast(tool_calls as integer) as tool_calls,
    try_cast(duration_s as double) as duration_s,
    try_cast(wall_s as double) as wall_s,
    try_cast(budget_usd as double) as budget_usd,
    coalesce(try_cast(budget_hit as boolean), false) as budget_hit,
    try_cast(files as integer) as files,
    try_cast(workspace_bytes as bigint) as workspace_bytes,
    try_cast(started_at as timestamptz) as started_at,
    try_cast(finished_at as timestamptz) as finished_at,
    prompt_version,
    transcript_path,
    archive_path,
    -- The synthetic agent's ground truth: the faults it planted (NULL for real agents).
    try_cast(json_extract(details, '$.plan.faults') as varchar[]) as planted_faults,
    try_cast(json_extract(details, '$.plan.quality_faults') as varchar[]) as planted_quality_faults
from raw_agent_generation

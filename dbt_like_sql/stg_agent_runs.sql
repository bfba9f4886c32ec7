-- materialized: view
-- description: One row per agent run (agent_generation records): harness, model, outcome, tokens, cost, turns and time.
-- test: unique(run_id)
-- test: not_null(run_id)
-- test: non_negative(cost_usd)
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

-- materialized: view
-- description: Every agent's transcript as one normalized table (Claude Code and Codex alike): one row per event, its kind, tool, input summary, error flag, text excerpt and the wasted-turn classifier that labelled it (NULL: not wasted).
-- test: unique(run_id, position)
-- test: not_null(run_id, position)
select
    run_id,
    position,
    "index" as line,
    kind,
    tool,
    tool_input,
    try_cast(is_error as boolean) as is_error,
    "text",
    wasted
from raw_transcript_events

-- materialized: view
-- description: Every agent's transcript as one normalized table (Claude Code and Codex alike): one row per event, its kind, tool, input summary, error flag, text excerpt and the wasted-turn classifier that labelled it (NULL: not wasted).
-- test: unique(run_id, position)
-- test: not_null(run_id, position)
-- column: run_id: `<experiment>.<cell_id>.r<repeat>`; the Dagster partition key
-- column: position: the event's row in the run's event list (orders the events)
-- column: line: the transcript line it came from (several events can share one)
-- column: kind: `init`, `assistant_text`, `thinking`, `tool_call`, `tool_result`, `result`, `error`, `unknown`, `garbage`
-- column: tool: canonical tool name (Claude's names; Codex items mapped onto them)
-- column: tool_input: the gist of the input: path, command, pattern, URL or query (truncated)
-- column: is_error: the tool call failed
-- column: text: a text excerpt
-- column: wasted: the classifier that labelled the event wasted (`reading_docs`, `ascii_art`, `blocking_dev_server`, `repeated_failures`); NULL: not wasted
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

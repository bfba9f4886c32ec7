-- materialized: table
-- description: One row per cell (a distinct config; its id is a hash of the config, so the same in every experiment): its 16 axis values, a readable label naming the axes that differ from the catalogue defaults, the experiments and designs that hold it, and how many of its runs were designed and scored.
-- test: unique(cell_id) blocking
-- test: not_null(cell_id, config_json, label, n_runs_designed)
-- test: non_negative(n_runs_scored)
-- test: expect_empty(scored_runs_were_designed): select cell_id from dim_cells where n_runs_scored > n_runs_designed
-- column: cell_id: the cell (hash of its config: the same in every experiment)
-- column: label: the axes that differ from the catalogue defaults, in catalogue order (`model=claude-opus-4-6, effort=high`), or `all defaults`
-- columns: axes
-- column: experiments: the experiments holding the cell, sorted
-- column: designs: the design types that produced it, over all experiments, sorted
-- column: n_runs_designed: its runs in any design (current or earlier) of any experiment
-- column: n_runs_current: of those, the runs in current designs
-- column: n_runs_scored: its runs with a `score`
-- column: in_current_design: the cell is in at least one experiment's current design
-- column: config_json: the full config
with cells as (
    select
        cell_id,
        -- The id hashes the config, so every experiment stores the same config for it;
        -- min() merely picks one deterministically.
        min(config_json) as config_json,
        list_sort(list_distinct(list(experiment))) as experiments,
        list_sort(list_distinct(flatten(list(designs)))) as designs,
        bool_or("current") as in_current_design
    from raw_design_cells
    group by cell_id
),

axis_values as (
    select
        c.cell_id,
        j.key as axis,
        j.value
    from cells as c, json_each(c.config_json) as j
),

labels as (
    -- The axes read from config_json, not from the design's columns: those exist only
    -- once a design is stored, and this model must compile on an empty warehouse too.
    select
        v.cell_id,
        string_agg(v.axis || '=' || (v.value ->> '$'), ', ' order by a.position) as label
    from axis_values as v
    join ref_axes as a on a.axis = v.axis
    where v.value::varchar <> json(a.default_json)::varchar
    group by v.cell_id
),

runs as (
    select
        cell_id,
        count(*) as n_runs_designed,
        count(*) filter (where in_current_design) as n_runs_current,
        count(score) as n_runs_scored
    from fct_runs
    group by cell_id
)

select
    c.cell_id,
    coalesce(l.label, 'all defaults') as label,
    c.config_json ->> '$.agent' as agent,
    c.config_json ->> '$.model' as model,
    c.config_json ->> '$.effort' as effort,
    c.config_json ->> '$.prompt_style' as prompt_style,
    c.config_json ->> '$.language' as "language",
    c.config_json ->> '$.human_language' as human_language,
    try_cast(c.config_json ->> '$.budget_usd' as double) as budget_usd,
    try_cast(c.config_json ->> '$.max_turns' as integer) as max_turns,
    try_cast(c.config_json ->> '$.tool_web_search' as boolean) as tool_web_search,
    try_cast(c.config_json ->> '$.tool_browser' as boolean) as tool_browser,
    try_cast(c.config_json ->> '$.tool_subagents' as boolean) as tool_subagents,
    c.config_json ->> '$.framework' as framework,
    try_cast(c.config_json ->> '$.context_file' as boolean) as context_file,
    try_cast(c.config_json ->> '$.self_test' as boolean) as self_test,
    try_cast(c.config_json ->> '$.time_limit_min' as double) as time_limit_min,
    try_cast(c.config_json ->> '$.plan_first' as boolean) as plan_first,
    c.experiments,
    c.designs,
    coalesce(r.n_runs_designed, 0) as n_runs_designed,
    coalesce(r.n_runs_current, 0) as n_runs_current,
    coalesce(r.n_runs_scored, 0) as n_runs_scored,
    c.in_current_design,
    c.config_json
from cells as c
left join labels as l using (cell_id)
left join runs as r using (cell_id)

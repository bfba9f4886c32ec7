-- materialized: table
-- description: Leaderboard per experiment × cell (one config): the cell's label and 16 axis values, whether the cell is in the experiment's current design, run counts, and for score, gameplay_score, quality_score, cost_usd and duration_s the mean, sample SD and 95 % interval (logit-transformed for the 0–100 scores, log-transformed for cost and duration, as in mart_leaderboard_models; ci_method names them); the build success rate, cost per point and the rank by mean score within the experiment.
-- test: unique(experiment, cell_id) blocking
-- test: not_null(experiment, cell_id, label)
-- test: accepted_range(score_mean, 0, 100)
-- test: accepted_range(build_ok_rate, 0, 1)
-- test: accepted_range(score_ci_low, 0, 100)
-- test: accepted_range(score_ci_high, 0, 100)
-- test: accepted_range(gameplay_score_ci_low, 0, 100)
-- test: accepted_range(gameplay_score_ci_high, 0, 100)
-- test: accepted_range(quality_score_ci_low, 0, 100)
-- test: accepted_range(quality_score_ci_high, 0, 100)
-- test: non_negative(cost_usd_ci_low)
-- test: non_negative(cost_usd_mean)
-- column: experiment: experiment name (the YAML file's `name`)
-- column: cell_id: `c` + 12 hex digits of sha256 of the canonical config
-- column: label: the axes that differ from the catalogue defaults, in catalogue order (`model=claude-opus-4-6, effort=high`), or `all defaults`
-- columns: axes
-- column: in_current_design: the run is in its experiment's current design
-- column: n_runs: designed runs of the group (pending ones included)
-- column: n_scored: of those, runs with a `score`
-- column: score_mean: mean of the headline score (0–100) over the runs where it is not NULL
-- column: score_sd: sample standard deviation of the headline score (0–100) (NULL below two values)
-- column: score_ci_low: lower end of the 95 % interval of the mean of the headline score (0–100) (ci_method; NULL below two values)
-- column: score_ci_high: upper end of the 95 % interval of the mean of the headline score (0–100) (ci_method; NULL below two values)
-- column: gameplay_score_mean: mean of the gameplay score (0–100) over the runs where it is not NULL
-- column: gameplay_score_sd: sample standard deviation of the gameplay score (0–100) (NULL below two values)
-- column: gameplay_score_ci_low: lower end of the 95 % interval of the mean of the gameplay score (0–100) (ci_method; NULL below two values)
-- column: gameplay_score_ci_high: upper end of the 95 % interval of the mean of the gameplay score (0–100) (ci_method; NULL below two values)
-- column: quality_score_mean: mean of the quality score (0–100) over the runs where it is not NULL
-- column: quality_score_sd: sample standard deviation of the quality score (0–100) (NULL below two values)
-- column: quality_score_ci_low: lower end of the 95 % interval of the mean of the quality score (0–100) (ci_method; NULL below two values)
-- column: quality_score_ci_high: upper end of the 95 % interval of the mean of the quality score (0–100) (ci_method; NULL below two values)
-- column: cost_usd_mean: mean of the agent's cost (US dollars) over the runs where it is not NULL
-- column: cost_usd_sd: sample standard deviation of the agent's cost (US dollars) (NULL below two values)
-- column: cost_usd_ci_low: lower end of the 95 % interval of the mean of the agent's cost (US dollars) (ci_method; NULL below two values)
-- column: cost_usd_ci_high: upper end of the 95 % interval of the mean of the agent's cost (US dollars) (ci_method; NULL below two values)
-- column: duration_s_mean: mean of the agent's duration (seconds) over the runs where it is not NULL
-- column: duration_s_sd: sample standard deviation of the agent's duration (seconds) (NULL below two values)
-- column: duration_s_ci_low: lower end of the 95 % interval of the mean of the agent's duration (seconds) (ci_method; NULL below two values)
-- column: duration_s_ci_high: upper end of the 95 % interval of the mean of the agent's duration (seconds) (ci_method; NULL below two values)
-- column: ci_method: how the 95 % intervals were computed: logit-transformed t interval for the 0–100 scores, log-transformed t interval for cost and duration (docs/analysis.md)
-- column: build_ok_rate: share of the runs that reached the build stage whose build succeeded
-- column: cost_per_point: cost_usd_mean / score_mean: dollars per point; NULL when score_mean is 0 or NULL
-- column: rank: by score_mean within the experiment, best = 1 (ties share a rank; NULL scores last)
with runs as (
    select
        experiment,
        cell_id,
        score,
        gameplay_score,
        quality_score,
        cost_usd,
        duration_s,
        build_ok
    from fct_runs
),

stats as (
    select
        experiment,
        cell_id,
        count(*) as n_runs,
        count(score) as n_scored,
        avg(score) as score_mean,
        stddev_samp(score) as score_sd,
        count(score) as score_n,
        avg(gameplay_score) as gameplay_score_mean,
        stddev_samp(gameplay_score) as gameplay_score_sd,
        count(gameplay_score) as gameplay_score_n,
        avg(quality_score) as quality_score_mean,
        stddev_samp(quality_score) as quality_score_sd,
        count(quality_score) as quality_score_n,
        avg(cost_usd) as cost_usd_mean,
        stddev_samp(cost_usd) as cost_usd_sd,
        count(cost_usd) as cost_usd_n,
        avg(duration_s) as duration_s_mean,
        stddev_samp(duration_s) as duration_s_sd,
        count(duration_s) as duration_s_n,
        -- Share of the runs that reached the build stage whose build succeeded.
        avg(case when build_ok then 1.0 when not build_ok then 0.0 end) as build_ok_rate
    from runs
    group by experiment, cell_id
),

t as (
    -- t975 for df 1..1000 as one list: t.t975[n - 1] is the quantile for n values. An
    -- index past the end gives NULL, hence coalesce(…, 1.96) for n > 1001.
    select list(t975 order by df) as t975 from ref_student_t
),

halves as (
    -- Half the width of each 95 % interval (NULL below two values: the SD is NULL then).
    select
        s.*,
        coalesce(t.t975[s.score_n - 1], 1.96) * s.score_sd / sqrt(s.score_n) as score_half,
        coalesce(t.t975[s.gameplay_score_n - 1], 1.96) * s.gameplay_score_sd
        / sqrt(s.gameplay_score_n) as gameplay_score_half,
        coalesce(t.t975[s.quality_score_n - 1], 1.96) * s.quality_score_sd
        / sqrt(s.quality_score_n) as quality_score_half,
        coalesce(t.t975[s.cost_usd_n - 1], 1.96) * s.cost_usd_sd
        / sqrt(s.cost_usd_n) as cost_usd_half,
        coalesce(t.t975[s.duration_s_n - 1], 1.96) * s.duration_s_sd
        / sqrt(s.duration_s_n) as duration_s_half
    from stats as s
    cross join t
)

select
    h.experiment,
    h.cell_id,
    c.label,
    c.agent,
    c.model,
    c.effort,
    c.prompt_style,
    c."language",
    c.human_language,
    c.budget_usd,
    c.max_turns,
    c.tool_web_search,
    c.tool_browser,
    c.tool_subagents,
    c.framework,
    c.context_file,
    c.self_test,
    c.time_limit_min,
    c.plan_first,
    d."current" as in_current_design,
    h.n_runs,
    h.n_scored,
    h.score_mean,
    h.score_sd,
    case when h.score_half is null then null when h.score_mean <= 0 or h.score_mean >= 100 then h.score_mean else 100 / (1 + exp(-least(700, greatest(-700, ln(h.score_mean / (100 - h.score_mean)) - h.score_half * 100 / (h.score_mean * (100 - h.score_mean)))))) end as score_ci_low,
    case when h.score_half is null then null when h.score_mean <= 0 or h.score_mean >= 100 then h.score_mean else 100 / (1 + exp(-least(700, greatest(-700, ln(h.score_mean / (100 - h.score_mean)) + h.score_half * 100 / (h.score_mean * (100 - h.score_mean)))))) end as score_ci_high,
    h.gameplay_score_mean,
    h.gameplay_score_sd,
    case when h.gameplay_score_half is null then null when h.gameplay_score_mean <= 0 or h.gameplay_score_mean >= 100 then h.gameplay_score_mean else 100 / (1 + exp(-least(700, greatest(-700, ln(h.gameplay_score_mean / (100 - h.gameplay_score_mean)) - h.gameplay_score_half * 100 / (h.gameplay_score_mean * (100 - h.gameplay_score_mean)))))) end as gameplay_score_ci_low,
    case when h.gameplay_score_half is null then null when h.gameplay_score_mean <= 0 or h.gameplay_score_mean >= 100 then h.gameplay_score_mean else 100 / (1 + exp(-least(700, greatest(-700, ln(h.gameplay_score_mean / (100 - h.gameplay_score_mean)) + h.gameplay_score_half * 100 / (h.gameplay_score_mean * (100 - h.gameplay_score_mean)))))) end as gameplay_score_ci_high,
    h.quality_score_mean,
    h.quality_score_sd,
    case when h.quality_score_half is null then null when h.quality_score_mean <= 0 or h.quality_score_mean >= 100 then h.quality_score_mean else 100 / (1 + exp(-least(700, greatest(-700, ln(h.quality_score_mean / (100 - h.quality_score_mean)) - h.quality_score_half * 100 / (h.quality_score_mean * (100 - h.quality_score_mean)))))) end as quality_score_ci_low,
    case when h.quality_score_half is null then null when h.quality_score_mean <= 0 or h.quality_score_mean >= 100 then h.quality_score_mean else 100 / (1 + exp(-least(700, greatest(-700, ln(h.quality_score_mean / (100 - h.quality_score_mean)) + h.quality_score_half * 100 / (h.quality_score_mean * (100 - h.quality_score_mean)))))) end as quality_score_ci_high,
    h.cost_usd_mean,
    h.cost_usd_sd,
    case when h.cost_usd_half is null then null when h.cost_usd_mean <= 0 then h.cost_usd_mean else exp(least(700, greatest(-700, ln(h.cost_usd_mean) - h.cost_usd_half / h.cost_usd_mean))) end as cost_usd_ci_low,
    case when h.cost_usd_half is null then null when h.cost_usd_mean <= 0 then h.cost_usd_mean else exp(least(700, greatest(-700, ln(h.cost_usd_mean) + h.cost_usd_half / h.cost_usd_mean))) end as cost_usd_ci_high,
    h.duration_s_mean,
    h.duration_s_sd,
    case when h.duration_s_half is null then null when h.duration_s_mean <= 0 then h.duration_s_mean else exp(least(700, greatest(-700, ln(h.duration_s_mean) - h.duration_s_half / h.duration_s_mean))) end as duration_s_ci_low,
    case when h.duration_s_half is null then null when h.duration_s_mean <= 0 then h.duration_s_mean else exp(least(700, greatest(-700, ln(h.duration_s_mean) + h.duration_s_half / h.duration_s_mean))) end as duration_s_ci_high,
    'score, gameplay_score, quality_score: logit-transformed t interval; cost_usd, duration_s: log-transformed t interval' as ci_method,
    h.build_ok_rate,
    h.cost_usd_mean / nullif(h.score_mean, 0) as cost_per_point,
    rank() over (partition by h.experiment order by h.score_mean desc nulls last) as "rank"
from halves as h
join dim_cells as c using (cell_id)
left join raw_design_cells as d on d.experiment = h.experiment and d.cell_id = h.cell_id

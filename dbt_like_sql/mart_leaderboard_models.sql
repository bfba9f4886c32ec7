-- materialized: table
-- description: Leaderboard per experiment × agent × model, over every run of the experiment (earlier designs' runs included): run counts, and for score, gameplay_score, quality_score, cost_usd and duration_s the mean, sample SD and 95 % interval over the runs where that metric is not NULL (NULL below two runs): for the 0–100 scores a logit-transformed t interval (the t interval mean ± t975(n−1)·sd/√n taken on the logit scale of mean/100 by the delta method and mapped back, so it stays inside 0–100), for cost and duration a log-transformed one (stays above 0) (ci_method names them); the build success rate, cost per point and the rank by mean score.
-- test: unique(experiment, agent, model) blocking
-- test: not_null(experiment, n_runs)
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
-- test: expect_empty(interval_holds_the_mean): select * from mart_leaderboard_models where score_ci_low > score_mean or score_ci_high < score_mean
-- column: experiment: experiment name (the YAML file's `name`)
-- columns: axes
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
    -- agent and model come from the cell's config (dim_cells), which always has them,
    -- rather than from fct_runs' design columns, which exist only once a design does.
    select
        f.experiment,
        c.agent,
        c.model,
        f.score,
        f.gameplay_score,
        f.quality_score,
        f.cost_usd,
        f.duration_s,
        f.build_ok
    from fct_runs as f
    join dim_cells as c using (cell_id)
),

stats as (
    select
        experiment,
        agent,
        model,
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
    group by experiment, agent, model
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
    experiment,
    agent,
    model,
    n_runs,
    n_scored,
    score_mean,
    score_sd,
    case when score_half is null then null when score_mean <= 0 or score_mean >= 100 then score_mean else 100 / (1 + exp(-least(700, greatest(-700, ln(score_mean / (100 - score_mean)) - score_half * 100 / (score_mean * (100 - score_mean)))))) end as score_ci_low,
    case when score_half is null then null when score_mean <= 0 or score_mean >= 100 then score_mean else 100 / (1 + exp(-least(700, greatest(-700, ln(score_mean / (100 - score_mean)) + score_half * 100 / (score_mean * (100 - score_mean)))))) end as score_ci_high,
    gameplay_score_mean,
    gameplay_score_sd,
    case when gameplay_score_half is null then null when gameplay_score_mean <= 0 or gameplay_score_mean >= 100 then gameplay_score_mean else 100 / (1 + exp(-least(700, greatest(-700, ln(gameplay_score_mean / (100 - gameplay_score_mean)) - gameplay_score_half * 100 / (gameplay_score_mean * (100 - gameplay_score_mean)))))) end as gameplay_score_ci_low,
    case when gameplay_score_half is null then null when gameplay_score_mean <= 0 or gameplay_score_mean >= 100 then gameplay_score_mean else 100 / (1 + exp(-least(700, greatest(-700, ln(gameplay_score_mean / (100 - gameplay_score_mean)) + gameplay_score_half * 100 / (gameplay_score_mean * (100 - gameplay_score_mean)))))) end as gameplay_score_ci_high,
    quality_score_mean,
    quality_score_sd,
    case when quality_score_half is null then null when quality_score_mean <= 0 or quality_score_mean >= 100 then quality_score_mean else 100 / (1 + exp(-least(700, greatest(-700, ln(quality_score_mean / (100 - quality_score_mean)) - quality_score_half * 100 / (quality_score_mean * (100 - quality_score_mean)))))) end as quality_score_ci_low,
    case when quality_score_half is null then null when quality_score_mean <= 0 or quality_score_mean >= 100 then quality_score_mean else 100 / (1 + exp(-least(700, greatest(-700, ln(quality_score_mean / (100 - quality_score_mean)) + quality_score_half * 100 / (quality_score_mean * (100 - quality_score_mean)))))) end as quality_score_ci_high,
    cost_usd_mean,
    cost_usd_sd,
    case when cost_usd_half is null then null when cost_usd_mean <= 0 then cost_usd_mean else exp(least(700, greatest(-700, ln(cost_usd_mean) - cost_usd_half / cost_usd_mean))) end as cost_usd_ci_low,
    case when cost_usd_half is null then null when cost_usd_mean <= 0 then cost_usd_mean else exp(least(700, greatest(-700, ln(cost_usd_mean) + cost_usd_half / cost_usd_mean))) end as cost_usd_ci_high,
    duration_s_mean,
    duration_s_sd,
    case when duration_s_half is null then null when duration_s_mean <= 0 then duration_s_mean else exp(least(700, greatest(-700, ln(duration_s_mean) - duration_s_half / duration_s_mean))) end as duration_s_ci_low,
    case when duration_s_half is null then null when duration_s_mean <= 0 then duration_s_mean else exp(least(700, greatest(-700, ln(duration_s_mean) + duration_s_half / duration_s_mean))) end as duration_s_ci_high,
    'score, gameplay_score, quality_score: logit-transformed t interval; cost_usd, duration_s: log-transformed t interval' as ci_method,
    build_ok_rate,
    -- Mean dollars per run over mean points per run; NULL when nothing scored above 0.
    cost_usd_mean / nullif(score_mean, 0) as cost_per_point,
    rank() over (partition by experiment order by score_mean desc nulls last) as "rank"
from halves

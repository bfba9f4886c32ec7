-- materialized: view
-- description: Cost per point per experiment × model, cheapest per point first: total and mean cost, mean score, cost_per_point (mean cost per run / mean score) and points_per_dollar. A failed or unscored run still cost money: its cost counts in the total and mean cost, while its NULL score stays out of the mean score (a failed run that was scored, e.g. 0 for a game that never loads, counts in both).
-- test: unique(experiment, model) blocking
-- test: not_null(experiment, n_runs)
-- test: non_negative(total_cost_usd)
-- test: non_negative(cost_per_point)
-- column: experiment: experiment name (the YAML file's `name`)
-- columns: axes
-- column: n_runs: designed runs
-- column: n_with_cost: runs with a known cost
-- column: n_scored: runs with a score
-- column: total_cost_usd: everything the group's runs cost, **failed and unscored runs included**
-- column: unscored_cost_usd: the part spent on runs without a score (yet)
-- column: mean_cost_usd: mean cost per run, over the runs with a cost
-- column: score_mean: mean score over the scored runs
-- column: cost_per_point: mean_cost_usd / score_mean (NULL when score_mean is 0 or NULL)
-- column: points_per_dollar: score_mean / mean_cost_usd
-- column: rank: by cost_per_point within the experiment, cheapest = 1
with runs as (
    select
        f.experiment,
        c.model,
        f.score,
        f.cost_usd
    from fct_runs as f
    join dim_cells as c using (cell_id)
),

per_model as (
    select
        experiment,
        model,
        count(*) as n_runs,
        count(cost_usd) as n_with_cost,
        count(score) as n_scored,
        sum(cost_usd) as total_cost_usd,
        -- What the runs without a score cost: spent, but no points (yet) to show for it.
        coalesce(sum(cost_usd) filter (where score is null), 0) as unscored_cost_usd,
        avg(cost_usd) as mean_cost_usd,
        avg(score) as score_mean
    from runs
    group by experiment, model
)

select
    experiment,
    model,
    n_runs,
    n_with_cost,
    n_scored,
    total_cost_usd,
    unscored_cost_usd,
    mean_cost_usd,
    score_mean,
    mean_cost_usd / nullif(score_mean, 0) as cost_per_point,
    score_mean / nullif(mean_cost_usd, 0) as points_per_dollar,
    rank() over (
        partition by experiment order by mean_cost_usd / nullif(score_mean, 0) asc nulls last
    ) as "rank"
from per_model
order by experiment, "rank", model

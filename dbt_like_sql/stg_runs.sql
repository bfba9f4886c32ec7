-- materialized: view
-- description: One row per designed run with its cell's axis values; the spine every later stage joins to.
-- test: unique(run_id) blocking
-- test: not_null(run_id, cell_id, experiment)
select
    r.run_id,
    r.experiment,
    r.cell_id,
    r."repeat",
    r.seed,
    r."current" as in_current_design,
    c.* exclude (experiment, cell_id, designs, config_json, "current")
from raw_design_runs as r
join raw_design_cells as c
    on c.experiment = r.experiment and c.cell_id = r.cell_id

-- materialized: view
-- description: One row per designed run with its cell's axis values; the spine every later stage joins to.
-- test: unique(run_id) blocking
-- test: not_null(run_id, cell_id, experiment)
-- column: run_id: `<experiment>.<cell_id>.r<repeat>`; the Dagster partition key
-- column: experiment: experiment name (the YAML file's `name`)
-- column: cell_id: `c` + 12 hex digits of sha256 of the canonical config
-- column: repeat: repeat number within the cell, from 0
-- column: seed: the run's seed (stable across machines)
-- column: in_current_design: the run is in its experiment's current design
-- columns: axes
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

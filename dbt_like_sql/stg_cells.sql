-- materialized: view
-- description: One row per (experiment, cell): the cell's designs and one column per axis.
-- test: unique(experiment, cell_id) blocking
-- test: not_null(experiment, cell_id)
-- column: experiment: experiment name (the YAML file's `name`)
-- column: cell_id: `c` + 12 hex digits of sha256 of the canonical config
-- column: designs: the design types that produced the cell (`main_effects`, `plackett_burman`, `interaction`, ...)
-- column: config_json: the full config as JSON (all 16 axes)
-- column: current: the cell is in the experiment's current design
-- columns: axes
select *
from raw_design_cells

-- materialized: view
-- description: One row per (experiment, cell): the cell's designs and one column per axis.
-- test: unique(experiment, cell_id) blocking
-- test: not_null(experiment, cell_id)
select *
from raw_design_cells

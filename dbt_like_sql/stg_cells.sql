-- materialized: view
-- description: One row per (experiment, cell): the cell's designs and one column per axis.
select *
from raw_design_cells

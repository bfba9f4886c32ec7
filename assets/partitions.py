import dagster as dg

# One partition per designed run ("<experiment>.<cell_id>.r<repeat>"). The experiment
# design asset adds keys; nothing ever removes one, so results are never orphaned.
run_partitions = dg.DynamicPartitionsDefinition(name="runs")

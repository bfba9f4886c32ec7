-- materialized: view
-- description: One row per sandboxed build: what was detected, whether it built, how long it took and what it serves.
-- test: unique(run_id)
-- test: not_null(run_id)
select
    run_id,
    try_cast(build_ok as boolean) as build_ok,
    kind as build_kind,
    message as build_message,
    try_cast(duration_s as double) as build_duration_s,
    served_dir,
    entry_point,
    try_cast(output_bytes as bigint) as output_bytes,
    sandbox,
    log_path as build_log_path
from raw_sandboxed_build

-- materialized: view
-- description: One row per sandboxed build: what was detected, whether it built, how long it took and what it serves.
-- test: unique(run_id)
-- test: not_null(run_id)
-- column: run_id: `<experiment>.<cell_id>.r<repeat>`; the Dagster partition key
-- column: build_ok: the build succeeded (NULL: not built yet)
-- column: build_kind: what the build detected
-- column: build_message: the build's one-line summary
-- column: build_duration_s: build time
-- column: served_dir: the folder the bot serves the game from
-- column: entry_point: the page the bot opens (`index.html`, `dist/index.html`, ...)
-- column: output_bytes: size of the built output
-- column: sandbox: the sandbox back end that ran the build (`bubblewrap`, `docker`)
-- column: build_log_path: the build log in the artifact store
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

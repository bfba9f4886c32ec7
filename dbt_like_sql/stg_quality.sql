-- materialized: view
-- description: One row per measured run: the code-quality metrics of docs/interfaces.md §6, the quality score, the transcript analysis and SonarQube's measures (NULL when no server is configured).
-- test: unique(run_id)
-- test: not_null(run_id)
-- test: accepted_range(quality_score, 0, 100)
-- column: run_id: `<experiment>.<cell_id>.r<repeat>`; the Dagster partition key
-- column: quality_score: 0–100, the code-quality score; 0 when there is no entry point (no page to serve: no credit), NULL when the quality stage could not measure the run (docs/quality.md)
-- column: eslint_errors: ESLint errors
-- column: eslint_warnings: ESLint warnings
-- column: ts_compiles: TypeScript compiles (NULL for a project without TypeScript)
-- column: bundle_bytes: size of the built page and its scripts, bytes
-- column: function_length_max: lines of the longest function
-- column: nesting_depth_max: deepest block nesting
-- column: naming_consistency: 0–1: share of identifiers in the project's dominant naming style
-- column: file_count: source files
-- column: duplication_pct: percentage of duplicated lines (jscpd)
-- column: html_errors: HTML validation errors
-- column: magic_numbers: numeric literals without a name
-- column: tool_calls: tool calls the agent reported
-- column: wasted_turns: wasted tool calls in the transcript
-- column: productivity_ratio: useful share of tool calls
-- column: self_tested: the agent tested its own game
-- column: sonar_cognitive_complexity: SonarQube cognitive complexity (NULL without a server)
-- column: sonar_bugs: SonarQube bugs (NULL without a server)
-- column: sonar_code_smells: SonarQube code smells (NULL without a server)
-- column: unavailable_json: metric → why it could not be measured, JSON text
select
    run_id,
    try_cast(quality_score as double) as quality_score,
    try_cast(eslint_errors as integer) as eslint_errors,
    try_cast(eslint_warnings as integer) as eslint_warnings,
    try_cast(ts_compiles as boolean) as ts_compiles,
    try_cast(bundle_bytes as bigint) as bundle_bytes,
    try_cast(function_length_max as integer) as function_length_max,
    try_cast(nesting_depth_max as integer) as nesting_depth_max,
    try_cast(naming_consistency as double) as naming_consistency,
    try_cast(file_count as integer) as file_count,
    try_cast(duplication_pct as double) as duplication_pct,
    try_cast(html_errors as integer) as html_errors,
    try_cast(magic_numbers as integer) as magic_numbers,
    try_cast(transcript_tool_calls as integer) as tool_calls,
    try_cast(transcript_wasted_turns as integer) as wasted_turns,
    try_cast(transcript_productivity_ratio as double) as productivity_ratio,
    try_cast(transcript_self_tested as boolean) as self_tested,
    try_cast(sonar_cognitive_complexity as integer) as sonar_cognitive_complexity,
    try_cast(sonar_bugs as integer) as sonar_bugs,
    try_cast(sonar_code_smells as integer) as sonar_code_smells,
    unavailable as unavailable_json
from raw_quality_metrics

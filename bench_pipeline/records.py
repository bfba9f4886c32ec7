"""Each per-run stage's record, defined once.

A stage writes one JSON record per run into the artifact store (`ArtifactStore.write_record`).
The model of that record here says, for every field the warehouse reads, its Python type
and its DuckDB column type (`Column`), and for the fields a blocking check guards, the check
(`Check`: its name, what it promises and how a value breaks it). From these:

- `source_schema(model)` is the warehouse's `raw_<stage>` table (`warehouse/build.py`);
- `field_checks(model)` are the stage's blocking asset checks (`assets/stage_checks.py`);
- `model.model_json_schema()` is the record's JSON schema, for anyone reading the files.

A stage writes more than the warehouse reads (evidence paths, reasons, details), so the
models allow extra fields. The store validates every record against its model when it is
written (`ArtifactStore.write_record` refuses one that breaks it, with the field named), so
no stage can leave a row the warehouse would load wrong.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict

from bench_pipeline import stages
from bench_pipeline.bot.contract import TEST_IDS, Verdict


@dataclass(frozen=True)
class Column:
    """The DuckDB type of the field's column in the stage's `raw_<stage>` table."""

    sql: str


@dataclass(frozen=True)
class Check:
    """A blocking check on the field: `problem(value)` says what is wrong, or None."""

    name: str
    description: str
    problem: Callable[[Any], str | None]


@dataclass(frozen=True)
class Bound:
    """The values the field can take (inclusive; None: open). The warehouse's loader
    quarantines a record with a number outside them (warehouse/columnar.py), as it does a
    record it cannot parse: a hand-edited `-1` token count or a `1e300` score would
    otherwise load and turn every mean and interval of its cell into nonsense or infinity.
    """

    low: float | None = None
    high: float | None = None

    def problem(self, field: str, value: Any) -> str | None:
        if value is None or isinstance(value, bool) or not isinstance(value, int | float):
            return None
        if self.low is not None and value < self.low:
            return f"{field} is {value!r}, below {self.low:g}"
        if self.high is not None and value > self.high:
            return f"{field} is {value!r}, above {self.high:g}"
        return None


# No number a stage measures comes near this (a petabyte, a trillion dollars, tokens or
# seconds); beyond it a number is a mistake or an attack, and the sums and squares the
# marts take of it overflow a double into infinite intervals.
MAX_MAGNITUDE = 1e15
COUNT = Bound(0, MAX_MAGNITUDE)  # tokens, costs, durations, sizes, counts: never negative
PERCENT = Bound(0, 100)


def _non_negative(field: str) -> Callable[[Any], str | None]:
    return lambda value: f"{field} is {value}" if value is not None and value < 0 else None


def _percent(field: str) -> Check:
    def problem(value: Any) -> str | None:
        if value is None or 0 <= value <= 100:
            return None
        return f"{field} {value} is outside 0–100"

    return Check(f"{field}_in_range", f"{field} is unknown (NULL) or within 0–100.", problem)


_VERDICTS = {v.value for v in Verdict}


def _sixteen(tests: Any) -> str | None:
    tests = tests or {}
    if set(tests) != set(TEST_IDS):
        return f"{len(tests)} verdicts, not the sixteen of docs/interfaces.md §1"
    bad = sorted(v for v in tests.values() if v not in _VERDICTS)
    return f"unknown verdicts {bad}" if bad else None


@dataclass(frozen=True)
class Doc:
    """What the field means: the comment of its column in `raw_<stage>` (DuckDB's
    `duckdb_columns().comment`) and its line in docs/warehouse.md."""

    text: str


VARCHAR = Column("VARCHAR")
INTEGER = Column("INTEGER")
BIGINT = Column("BIGINT")
DOUBLE = Column("DOUBLE")
BOOLEAN = Column("BOOLEAN")
TESTS_STRUCT = Column("STRUCT(" + ", ".join(f"{t} VARCHAR" for t in TEST_IDS) + ")")


class StageRecord(BaseModel):
    model_config = ConfigDict(extra="allow")

    run_id: Annotated[str, VARCHAR, Doc("the run: `<experiment>.<cell_id>.r<repeat>`")]


class AgentGenerationRecord(StageRecord):
    """What the agent did in its sandbox: outcome, tokens, cost, time (docs/agents.md)."""

    agent: Annotated[
        str | None,
        VARCHAR,
        Doc("the harness that drove the model (`claude-code`, `codex`, `command`, `synthetic`)"),
    ] = None
    adapter: Annotated[
        str | None,
        VARCHAR,
        Doc("the adapter that ran it (`replay` when a recorded transcript was replayed)"),
    ] = None
    model: Annotated[str | None, VARCHAR, Doc("the model id of the registry")] = None
    status: Annotated[
        str | None,
        VARCHAR,
        Doc(
            "the agent's outcome: `completed`, `failed`, `budget_exceeded`, `timed_out`, `max_turns` or `error`"
        ),
    ] = None
    message: Annotated[str | None, VARCHAR, Doc("one line on how the agent run ended")] = None
    exit_code: Annotated[
        int | None, INTEGER, Doc("the agent CLI's exit code (NULL when no process ran)")
    ] = None
    input_tokens: Annotated[
        int | None, BIGINT, COUNT, Doc("input tokens the run used, cache reads and writes included")
    ] = None
    output_tokens: Annotated[int | None, BIGINT, COUNT, Doc("output tokens the run produced")] = (
        None
    )
    cache_read_tokens: Annotated[
        int | None, BIGINT, COUNT, Doc("input tokens read from the prompt cache")
    ] = None
    cache_creation_tokens: Annotated[
        int | None, BIGINT, COUNT, Doc("input tokens written to the prompt cache")
    ] = None
    cost_usd: Annotated[
        float | None,
        DOUBLE,
        COUNT,
        Doc("what the run cost, US dollars (NULL when unknown)"),
        Check(
            "cost_non_negative",
            "Cost is unknown (NULL) or at least zero, never negative.",
            _non_negative("cost_usd"),
        ),
    ] = None
    cost_source: Annotated[
        str | None,
        VARCHAR,
        Doc("`reported` by the CLI, `priced` from the registry's prices, or `unknown`"),
    ] = None
    turns: Annotated[int | None, INTEGER, COUNT, Doc("model turns")] = None
    tool_calls: Annotated[int | None, INTEGER, COUNT, Doc("tool calls the agent reported")] = None
    duration_s: Annotated[float | None, DOUBLE, COUNT, Doc("the agent's own run time, seconds")] = (
        None
    )
    wall_s: Annotated[
        float | None, DOUBLE, COUNT, Doc("the stage's wall time for this run, seconds")
    ] = None
    budget_usd: Annotated[
        float | None, DOUBLE, COUNT, Doc("the spending cap the run had, US dollars")
    ] = None
    budget_hit: Annotated[bool | None, BOOLEAN, Doc("the run was stopped at its spending cap")] = (
        None
    )
    files: Annotated[int | None, INTEGER, COUNT, Doc("files in the workspace the agent left")] = (
        None
    )
    workspace_bytes: Annotated[
        int | None, BIGINT, COUNT, Doc("total size of those files, bytes")
    ] = None
    started_at: Annotated[
        str | None, VARCHAR, Doc("when the agent started (ISO 8601 text, UTC)")
    ] = None
    finished_at: Annotated[
        str | None, VARCHAR, Doc("when the agent finished (ISO 8601 text, UTC)")
    ] = None
    prompt_version: Annotated[
        str | None, VARCHAR, Doc("version of the prompt templates the run was given")
    ] = None
    transcript_path: Annotated[
        str | None, VARCHAR, Doc("the raw transcript (JSON lines) in the artifact store")
    ] = None
    archive_path: Annotated[
        str | None, VARCHAR, Doc("the archive of the workspace the agent left")
    ] = None
    details: Annotated[str | None, VARCHAR, Doc("adapter-specific details, JSON text")] = None


class SandboxedBuildRecord(StageRecord):
    """What building the agent's project in the sandbox gave (docs/agents.md)."""

    build_ok: Annotated[bool | None, BOOLEAN, Doc("the build produced a page to play")] = None
    kind: Annotated[
        str | None,
        VARCHAR,
        Doc("what the build detected and ran: a static page, an npm project, ..."),
    ] = None
    message: Annotated[str | None, VARCHAR, Doc("the build's one-line summary")] = None
    duration_s: Annotated[float | None, DOUBLE, COUNT, Doc("build time, seconds")] = None
    served_dir: Annotated[str | None, VARCHAR, Doc("the folder the bot serves the game from")] = (
        None
    )
    entry_point: Annotated[
        str | None, VARCHAR, Doc("the page the bot opens (`index.html`, `dist/index.html`, ...)")
    ] = None
    output_bytes: Annotated[int | None, BIGINT, COUNT, Doc("size of the built output, bytes")] = (
        None
    )
    sandbox: Annotated[
        str | None, VARCHAR, Doc("the sandbox back end that ran the build (`bubblewrap`, `docker`)")
    ] = None
    log_path: Annotated[str | None, VARCHAR, Doc("the build log in the artifact store")] = None


class BotEvaluationRecord(StageRecord):
    """The gameplay bot's sixteen verdicts and score (docs/bot.md)."""

    bot_version: Annotated[str | None, VARCHAR, Doc("the bot version that judged the game")] = None
    gameplay_score: Annotated[
        float | None,
        DOUBLE,
        PERCENT,
        Doc("0–100: 100 × the share of the sixteen tests that passed"),
        _percent("gameplay_score"),
    ] = None
    duration_s: Annotated[
        float | None, DOUBLE, COUNT, Doc("the bot's evaluation time, seconds")
    ] = None
    renderer: Annotated[
        str | None,
        VARCHAR,
        Doc(
            "what the bot found the page drawn with (`canvas`, `dom`, `svg`, `webgl`, ...; `none` without a page)"
        ),
    ] = None
    passed: Annotated[int | None, INTEGER, Bound(0, len(TEST_IDS)), Doc("tests judged PASS")] = None
    failed: Annotated[int | None, INTEGER, Bound(0, len(TEST_IDS)), Doc("tests judged FAIL")] = None
    inconclusive: Annotated[
        int | None,
        INTEGER,
        Bound(0, len(TEST_IDS)),
        Doc("tests judged INCONCLUSIVE (the bot could not observe enough)"),
    ] = None
    tests: Annotated[
        dict[str, str] | None,
        TESTS_STRUCT,
        Doc("test id → verdict (PASS, FAIL or INCONCLUSIVE) for the sixteen tests"),
        Check(
            "sixteen_verdicts",
            "Sixteen verdicts per run, each PASS, FAIL or INCONCLUSIVE.",
            _sixteen,
        ),
    ] = None
    # JSON rather than a STRUCT: an older record may lack some tests' reasons.
    reasons: Annotated[
        dict[str, str | None] | None,
        Column("JSON"),
        Doc("test id → the bot's reason for its verdict, JSON (fct_test_results.reason)"),
    ] = None


class QualityMetricsRecord(StageRecord):
    """Code quality, the quality score and the transcript analysis (docs/quality.md)."""

    quality_score: Annotated[
        float | None,
        DOUBLE,
        PERCENT,
        Doc("0–100, the code-quality score (docs/quality.md)"),
        _percent("quality_score"),
    ] = None
    eslint_errors: Annotated[int | None, INTEGER, COUNT, Doc("ESLint errors")] = None
    eslint_warnings: Annotated[int | None, INTEGER, COUNT, Doc("ESLint warnings")] = None
    ts_compiles: Annotated[
        bool | None, BOOLEAN, Doc("TypeScript compiles (NULL for a project without TypeScript)")
    ] = None
    bundle_bytes: Annotated[
        int | None, BIGINT, COUNT, Doc("size of the built page and its scripts, bytes")
    ] = None
    function_length_max: Annotated[
        int | None, INTEGER, COUNT, Doc("lines of the longest function")
    ] = None
    nesting_depth_max: Annotated[int | None, INTEGER, COUNT, Doc("deepest block nesting")] = None
    naming_consistency: Annotated[
        float | None,
        DOUBLE,
        Doc("0–1: share of identifiers in the project's dominant naming style"),
    ] = None
    file_count: Annotated[int | None, INTEGER, COUNT, Doc("source files")] = None
    duplication_pct: Annotated[
        float | None, DOUBLE, PERCENT, Doc("percentage of duplicated lines (jscpd)")
    ] = None
    html_errors: Annotated[int | None, INTEGER, COUNT, Doc("HTML validation errors")] = None
    magic_numbers: Annotated[int | None, INTEGER, COUNT, Doc("numeric literals without a name")] = (
        None
    )
    transcript_tool_calls: Annotated[
        int | None, INTEGER, COUNT, Doc("tool calls in the agent's transcript")
    ] = None
    transcript_wasted_turns: Annotated[
        int | None,
        INTEGER,
        COUNT,
        Doc("turns that achieved nothing (failed or repeated tool calls)"),
    ] = None
    transcript_productivity_ratio: Annotated[
        float | None, DOUBLE, Doc("0–1: share of tool calls that were useful")
    ] = None
    transcript_self_tested: Annotated[
        bool | None, BOOLEAN, Doc("the agent ran or opened its own game")
    ] = None
    sonar_cognitive_complexity: Annotated[
        int | None, INTEGER, COUNT, Doc("SonarQube cognitive complexity (NULL without a server)")
    ] = None
    sonar_bugs: Annotated[
        int | None, INTEGER, COUNT, Doc("SonarQube bugs (NULL without a server)")
    ] = None
    sonar_code_smells: Annotated[
        int | None, INTEGER, COUNT, Doc("SonarQube code smells (NULL without a server)")
    ] = None
    unavailable: Annotated[
        str | None, VARCHAR, Doc("metric → why it could not be measured, JSON text")
    ] = None


# Stage name → the model of its record (the stages of bench_pipeline/stages.py that the
# warehouse loads; run_spec is the design's, see warehouse/build.py).
RECORDS: dict[str, type[StageRecord]] = {
    stages.AGENT_GENERATION.name: AgentGenerationRecord,
    stages.SANDBOXED_BUILD.name: SandboxedBuildRecord,
    stages.BOT_EVALUATION.name: BotEvaluationRecord,
    stages.QUALITY_METRICS.name: QualityMetricsRecord,
}


def _metadata(model: type[StageRecord], kind: type) -> list[tuple[str, Any]]:
    return [
        (name, item)
        for name, info in model.model_fields.items()
        for item in info.metadata
        if isinstance(item, kind)
    ]


def source_docs(model: type[StageRecord]) -> dict[str, str]:
    """Column → what it means, for the model's `raw_<stage>` table."""
    return {name: doc.text for name, doc in _metadata(model, Doc)}


def source_schema(model: type[StageRecord]) -> dict[str, str]:
    """Column → DuckDB type of the model's `raw_<stage>` table, in field order."""
    return {name: column.sql for name, column in _metadata(model, Column)}


@dataclass(frozen=True)
class FieldCheck:
    """One blocking check of a stage: the field it looks at and the check."""

    field: str
    check: Check

    def problem(self, record: dict[str, Any] | None) -> str | None:
        return self.check.problem((record or {}).get(self.field))


def field_checks(model: type[StageRecord]) -> list[FieldCheck]:
    return [FieldCheck(name, check) for name, check in _metadata(model, Check)]


def value_bounds(model: type[StageRecord]) -> dict[str, Bound]:
    """Numeric column -> its bounds: the field's own `Bound`, else within ±MAX_MAGNITUDE."""
    declared = dict(_metadata(model, Bound))
    any_number = Bound(-MAX_MAGNITUDE, MAX_MAGNITUDE)
    return {
        name: declared.get(name, any_number)
        for name, column in _metadata(model, Column)
        if column.sql in ("DOUBLE", "BIGINT", "INTEGER")
    }


def bound_problem(bounds: dict[str, Bound], record: dict[str, Any]) -> str | None:
    """The first number of `record` outside its column's bounds, said in one line."""
    for name, bound in bounds.items():
        problem = bound.problem(name, record.get(name))
        if problem:
            return f"{problem} (the bounds of the stage's own numbers)"
    return None

"""What the methodology page says, taken from the code that does the work.

Test ids and descriptions come from `bench_pipeline.bot.contract`, the quality weights from
`bench_pipeline.quality.score.DEFAULT_WEIGHTS`, the design types from
`bench_pipeline.design.DESIGN_TYPES`, the metrics and effect sizes from
`bench_pipeline.analysis.stage.METRICS`, alpha / power / correction from the defaults of
`bench_pipeline.analysis.analyze`, and the headline formula from `dbt_like_sql/fct_runs.sql`.
What existed only as prose (what each design is, what each quality penalty applies to, the
statistics rules, known limitations) is a constant here, checked against the code's keys by
tests/report/test_methodology.py so that a new test, weight, design or metric cannot be left
out silently.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench_pipeline.analysis.instrument import INSTRUMENT_AXES, SCORE_METRICS
from bench_pipeline.analysis.stage import MAX_INTERACTION_CHARTS, METRICS
from bench_pipeline.bot.contract import TEST_IDS, TESTS, Calibration, Evaluation, TestResult
from bench_pipeline.bot.contract import Verdict as BotVerdict
from bench_pipeline.design import AXES, DESIGN_TYPES
from bench_pipeline.quality.score import DEFAULT_WEIGHTS, Penalty, ScoreWeights

# The headline (fct_runs.score): the weights of its two halves. The SQL is the definition;
# `headline_formula` reads it from fct_runs.sql and the tests check that the two agree.
HEADLINE_WEIGHTS: dict[str, float] = {"gameplay_score": 0.5, "quality_score": 0.5}

# What each metric is called in a sentence, and its unit.
METRIC_LABELS: dict[str, str] = {
    "score": "the score",
    "gameplay_score": "the gameplay score",
    "quality_score": "the quality score",
    "cost_usd": "the cost",
    "duration_s": "the duration",
    "inconclusive_share": "the share of INCONCLUSIVE verdicts",
}
METRIC_TITLES: dict[str, str] = {
    "score": "Headline score",
    "gameplay_score": "Gameplay score",
    "quality_score": "Quality score",
    "cost_usd": "Cost per run",
    "duration_s": "Agent duration",
    "inconclusive_share": "INCONCLUSIVE share (the bot's)",
}
# (prefix, suffix) of a value in the metric's unit: "10 points", "$0.12", "45 s".
METRIC_UNITS: dict[str, tuple[str, str]] = {
    "score": ("", " points"),
    "gameplay_score": ("", " points"),
    "quality_score": ("", " points"),
    "cost_usd": ("$", ""),
    "duration_s": ("", " s"),
    # A 0-1 share of the sixteen verdicts: read as a fraction ("0.18"), no unit.
    "inconclusive_share": ("", ""),
}

# What the pipeline's verdicts mean (docs/interfaces.md §1).
VERDICT_MEANINGS: dict[str, str] = {
    "PASS": "the bot observed the behaviour (grid or DOM state), never assumed",
    "FAIL": "the bot tried and the behaviour did not happen",
    "INCONCLUSIVE": "the bot could not observe enough to decide (e.g. no playfield was found); "
    "never a polite FAIL, never counted as a PASS",
}

# The design types of bench_pipeline.design, in words (docs/experiments.md has the details).
DESIGN_DESCRIPTIONS: dict[str, str] = {
    "main_effects": "One factor at a time: the baseline cell, then one cell per non-baseline "
    "level of each axis with every other axis at its baseline. Cells = 1 + Σ (levels − 1). "
    "Estimates every main effect; no interaction can be estimated from it alone.",
    "plackett_burman": "Two-level screening (pyDOE3 pbdesign): few cells screen many two-level "
    "axes at once. Main effects are estimated with every other screened axis varying; pairs "
    "are confounded with main effects. Shown as a Pareto chart of |t|.",
    "interaction": "Full factorial over 2–4 axes (pyDOE3 fullfact), other axes at baseline: "
    "every combination of their levels, so their interactions can be tested (Type II F tests).",
    "fractional_factorial": "Two-level 2^(k−p) design of a chosen resolution (pyDOE3 "
    "fracfact_by_res): main effects (resolution ≥ 3) and, at resolution ≥ 5, pairs, in a "
    "fraction of the full factorial's cells.",
}

# What each field of ScoreWeights applies to (the penalty is subtracted from 100).
QUALITY_WEIGHT_NOTES: dict[str, str] = {
    "eslint_errors": "per ESLint error",
    "eslint_warnings": "per ESLint warning",
    "ts_not_compiling": "flat, when a TypeScript project does not compile (ts_compiles false)",
    "ts_errors": "per TypeScript compiler error",
    "build_failed": "flat, when the project does not build (build_ok false)",
    "bundle_bytes": "per byte the page downloads beyond the threshold (1 point per 100 kB)",
    "function_length_max": "per line of the longest function beyond the threshold",
    "nesting_depth_max": "per nesting level beyond the threshold in the deepest function",
    "naming_inconsistency": "per unit of (1 − naming_consistency)",
    "duplication_pct": "per percent of duplicated lines",
    "html_errors": "per html-validate error",
    "magic_numbers": "per magic number (numeric literal other than -1, 0, 1, 2 outside consts)",
    "single_file": "flat, when everything is in one file of at least single_file_min_lines lines",
    "single_file_min_lines": "lines from which a single-file project is penalised",
    "no_entry_point": "flat, the whole score, when there is no page to play (no index.html, "
    "dist/index.html or build/index.html): no project, no quality credit",
}

# The statistics rules, as the analysis applies them (docs/analysis.md has the derivations).
STATISTICS_RULES: tuple[str, ...] = (
    "Each experiment's current-design runs are analysed separately, for each outcome.",
    "A main effect is the difference in the outcome's mean between a level and the axis's "
    "baseline with every other axis held equal: one additive OLS over all varying axes, "
    "treatment-coded, with a 95 % Student-t interval.",
    "p-values are corrected for the number of effects tested in the experiment and outcome "
    "(the correction named below; Holm controls the family-wise error).",
    "Significant means the corrected p-value is below alpha.",
    "Meaningful means significant AND larger than the noise: |estimate| above the within-cell "
    "standard deviation of repeats of the same configuration (pooled over cells). A "
    "significant effect inside the noise is reported as such, not as a finding.",
    "Interactions are tested only where the design can estimate them (nested-model F test, "
    "equal to the Type II ANOVA test for the highest-order term), with the same correction.",
    "Aliased terms (two columns that always change together in the design) get no number: "
    "they are listed as not estimable, with the partner that carries both effects.",
    "Power: the repeats per cell needed to detect the effect size below between a level's cell "
    "and the baseline cell (two-sample t test at alpha with the power below), and the smallest "
    "effect the current repeats detect. Both are per comparison: after correction the real "
    "power is lower.",
    "Leaderboard intervals are 95 % Student-t intervals of a mean over the runs where that "
    "metric was measured, taken on the logit scale for the 0–100 scores (so they stay inside "
    "0–100) and on the log scale for cost and duration (so they stay above 0); two models "
    "whose intervals overlap are not shown apart by the data.",
    "NULL means not measured, never zero: a run without a bot evaluation has no gameplay score "
    "and no headline score, and stays out of the means (its cost still counts in the cost "
    "per point).",
    # From the code that applies it (bench_pipeline/analysis/instrument.py).
    "Instrument bias: the share of the sixteen verdicts the bot left INCONCLUSIVE is analysed "
    "as an outcome like the others. An effect on "
    + " or ".join(SCORE_METRICS)
    + " is marked as possibly the bot's (instrument_suspect) when it is meaningful and the same "
    "level's effect on that share is meaningful in the direction that would explain it (more "
    "INCONCLUSIVE with a lower score, fewer with a higher one); its note bounds how much of the "
    "effect the shift can account for. Axes that change what the bot reads ("
    + ", ".join(INSTRUMENT_AXES)
    + ") get a note on every meaningful effect on those scores.",
)

KNOWN_LIMITATIONS: tuple[str, ...] = (
    "The bot reads canvas-drawn digits from the fillText/strokeText calls that draw them, not "
    "by OCR: a score drawn from a bitmap font is not read (score FAIL or INCONCLUSIVE).",
    "WebGL canvases have no draw calls to learn from: only a 1:2 canvas is found as the playfield.",
    "The start-key list is finite (Enter, Space, S, P, Down, N); a game that starts only on "
    "another key is reported as not starting.",
    "line_clear needs the bot to complete a row while it plays: in short windows it may "
    "complete none, and the verdict is then INCONCLUSIVE.",
    "A crash and a freeze look alike from outside: both FAIL endurance.",
    "The quality score rates what could be measured: an unmeasured metric costs nothing "
    "(its reason is listed on the run's page).",
    "Main effects from a one-factor-at-a-time sweep assume additivity; the analysis warns when "
    "the lack-of-fit test says the additive model leaves structure unexplained.",
    "With few repeats per cell only large effects are detectable: see each outcome's power "
    "figure before reading 'no detectable effect' as 'no effect'.",
    "Costs are what the agent CLI reported, or priced from the model registry when it did not "
    "report one; a synthetic or replayed run may have no cost.",
)


@dataclass(frozen=True)
class WeightRow:
    name: str
    per_unit: float | None
    threshold: float | None
    cap: float | None
    flat: float | None
    note: str


def quality_weight_rows(weights: ScoreWeights = DEFAULT_WEIGHTS) -> list[WeightRow]:
    """One row per field of the quality score's weights, in declaration order."""
    rows = []
    for f in dataclasses.fields(weights):
        value = getattr(weights, f.name)
        note = QUALITY_WEIGHT_NOTES.get(f.name, "")
        if isinstance(value, Penalty):
            rows.append(WeightRow(f.name, value.per_unit, value.threshold, value.cap, None, note))
        else:
            rows.append(WeightRow(f.name, None, None, None, float(value), note))
    return rows


def gameplay_example(passed: int = 12) -> float:
    """The gameplay score the bot's own code gives `passed` PASS verdicts out of 16."""
    results = {
        t: TestResult(BotVerdict.PASS if i < passed else BotVerdict.FAIL)
        for i, t in enumerate(TEST_IDS)
    }
    return Evaluation("example", Calibration(), results, 0.0).gameplay_score


_SCORE_EXPR = re.compile(
    r"(round\s*\(\s*([0-9.]+)\s*\*\s*\w+\.gameplay_score\s*\+\s*([0-9.]+)\s*\*\s*\w+\."
    r"quality_score\s*,\s*(\d+)\s*\))\s+as\s+score\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class HeadlineFormula:
    sql: str  # the expression as fct_runs.sql has it
    gameplay_weight: float
    quality_weight: float
    digits: int


def headline_formula(sql_models_dir: Path) -> HeadlineFormula | None:
    """The `score` expression of fct_runs.sql, or None when it is not the expected shape."""
    try:
        text = (sql_models_dir / "fct_runs.sql").read_text()
    except OSError:
        return None
    match = _SCORE_EXPR.search(text)
    if match is None:
        return None
    sql = " ".join(match.group(1).split())
    return HeadlineFormula(sql, float(match.group(2)), float(match.group(3)), int(match.group(4)))


def analysis_defaults() -> dict[str, Any]:
    """alpha, power and correction as `analyze` applies them by default."""
    from bench_pipeline.analysis.effects import analyze  # scipy/statsmodels: on first use

    params = inspect.signature(analyze).parameters
    return {name: params[name].default for name in ("alpha", "power", "correction")}


def methodology_context(sql_models_dir: Path) -> tuple[dict[str, Any], list[str]]:
    """Everything the methodology page shows, and warnings for what could not be read."""
    warnings: list[str] = []
    formula = headline_formula(sql_models_dir)
    if formula is None:
        warnings.append(
            f"methodology: the score expression was not found in {sql_models_dir}/fct_runs.sql;"
            " the page shows HEADLINE_WEIGHTS instead"
        )
    elif (formula.gameplay_weight, formula.quality_weight) != (
        HEADLINE_WEIGHTS["gameplay_score"],
        HEADLINE_WEIGHTS["quality_score"],
    ):
        warnings.append(
            "methodology: fct_runs.sql weighs the score "
            f"{formula.gameplay_weight}/{formula.quality_weight}, HEADLINE_WEIGHTS says "
            f"{HEADLINE_WEIGHTS}: the page shows the SQL"
        )
    weights = (
        {"gameplay_score": formula.gameplay_weight, "quality_score": formula.quality_weight}
        if formula
        else HEADLINE_WEIGHTS
    )
    context = {
        "tests": [(t, TESTS[t]) for t in TEST_IDS],
        "n_tests": len(TEST_IDS),
        "verdicts": [(v.value, VERDICT_MEANINGS.get(v.value, "")) for v in BotVerdict],
        "gameplay_example": gameplay_example(12),
        "headline": formula,
        "headline_weights": weights,
        "quality_weights": quality_weight_rows(),
        "designs": [(d, DESIGN_DESCRIPTIONS.get(d, "")) for d in DESIGN_TYPES],
        "metrics": [
            (m, METRIC_TITLES.get(m, m), size, METRIC_UNITS.get(m, ("", "")))
            for m, size in METRICS.items()
        ],
        "stats": analysis_defaults(),
        "rules": STATISTICS_RULES,
        "limitations": KNOWN_LIMITATIONS,
        "axes": [
            (a.name, a.kind, a.default, a.description, a.allowed_text()) for a in AXES.values()
        ],
        "max_interaction_charts": MAX_INTERACTION_CHARTS,
    }
    return context, warnings

"""One plain-English sentence per number the site shows, generated from the mart rows.

e.g. "claude-opus-4-6 raises the score by 10.2 ± 4.10 points vs claude-sonnet-4-6
(significant and larger than the noise)" or "... : no detectable effect on the score".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from bench_pipeline.analysis.render import number, p_text
from bench_pipeline.report.methodology import METRIC_LABELS, METRIC_UNITS

Row = Mapping[str, Any]

# Fewer scored runs than this per model: the leaderboard reading says it is tentative.
TENTATIVE_BELOW = 3

# Axes whose levels read as names on their own ("claude-opus-4-6 raises ...").
NAMED_LEVEL_AXES = frozenset({"model", "agent"})


def metric_label(metric: str) -> str:
    return METRIC_LABELS.get(metric, metric)


def fmt(value: float | None) -> str:
    """Three significant figures, whole numbers without decimals, a real minus sign."""
    if value is None:
        return "–"
    if float(value).is_integer() and abs(value) < 1e15:
        text = f"{int(value):,}"
    else:
        text = number(float(value))
    return text.replace("-", "−")


def amount(metric: str, value: float | None, *, signed: bool = False, unit: bool = True) -> str:
    """A value in the metric's unit: "10.2 points", "−$0.120", "45 s" ("–" when None)."""
    if value is None:
        return "–"
    prefix, suffix = METRIC_UNITS.get(metric, ("", ""))
    sign = "+" if signed and value > 0 else "−" if value < 0 else ""
    return f"{sign}{prefix}{fmt(abs(value))}{suffix if unit else ''}"


def span(metric: str, low: float, high: float) -> str:
    """An interval in the metric's unit: "−29.0 to 2.94 points", "−$0.264 to −$0.0486"."""
    suffix = METRIC_UNITS.get(metric, ("", ""))[1]
    return f"{amount(metric, low, unit=False)} to {amount(metric, high, unit=False)}{suffix}"


def level_text(axis: str, level: Any) -> str:
    return str(level) if axis in NAMED_LEVEL_AXES else f"{axis} = {level}"


def significance(row: Row) -> str:
    """significant and larger than the noise / significant but within the noise / ..."""
    if row.get("significant") is None:
        return "no p-value"
    if not row["significant"]:
        return "not significant"
    if row.get("meaningful") is None:
        return "significant; the noise is unknown, so its size is not judged"
    if row["meaningful"]:
        return "significant and larger than the noise"
    return f"significant but within the noise (SD {fmt(row.get('noise_sd'))})"


def effect_reading(row: Row) -> str:
    """One main-effects row of the mart as a sentence."""
    metric = row["metric"]
    subject = level_text(row["axis"], row["level"])
    baseline = row["baseline"]
    label = metric_label(metric)
    estimate = row.get("estimate")
    if estimate is None:
        return f"{subject} vs {baseline}: not estimated"
    if row.get("significant") is None:
        return (
            f"{subject} vs {baseline}: {amount(metric, estimate, signed=True)} on {label}, "
            "with no interval or p-value (no residual degrees of freedom)"
        )
    low, high = row.get("ci_low"), row.get("ci_high")
    if not row["significant"]:
        interval = (
            f", 95 % interval {span(metric, low, high)}"
            if low is not None and high is not None
            else ""
        )
        return (
            f"{subject} vs {baseline}: no detectable effect on {label} "
            f"(estimate {amount(metric, estimate, signed=True)}{interval})"
        )
    verb = "raises" if estimate > 0 else "lowers"
    prefix, suffix = METRIC_UNITS.get(metric, ("", ""))
    size = f"{prefix}{fmt(abs(estimate))}"
    if low is not None and high is not None:
        size += f" ± {fmt((high - low) / 2)}"
    return f"{subject} {verb} {label} by {size}{suffix} vs {baseline} ({significance(row)})"


def strongest(rows: Iterable[Row], *, meaningful_only: bool = True) -> Row | None:
    """The effect with the largest |estimate| among the meaningful (or significant) ones."""
    key = "meaningful" if meaningful_only else "significant"
    chosen = [r for r in rows if r.get(key) and r.get("estimate") is not None]
    return max(chosen, key=lambda r: abs(r["estimate"]), default=None)


def metric_summary(metric: str, effects: list[Row], reason: str | None = None) -> str:
    """The one line at the top of an outcome's section."""
    label = metric_label(metric)
    if not effects:
        return f"{label.capitalize()} was not analysed" + (
            f": {reason.rstrip('.')}." if reason else "."
        )
    best = strongest(effects)
    if best is not None:
        n = sum(1 for r in effects if r.get("meaningful"))
        others = f" ({n} meaningful effects in all)" if n > 1 else ""
        return f"Strongest: {effect_reading(best)}{others}."
    weak = strongest(effects, meaningful_only=False)
    if weak is not None:
        return f"No effect is larger than the noise; strongest significant one: {effect_reading(weak)}."
    return f"No detectable effect of any axis on {label}."


def noise_reading(row: Row | None) -> str:
    if row is None:
        return "No noise estimate."
    metric = row["metric"]
    sd = row.get("noise_sd")
    if sd is None:
        why = row.get("reason") or "no cell has repeats"
        return f"The noise could not be estimated: {why}."
    cells = row.get("n_cells")
    text = (
        f"Repeats of the same configuration differ by a standard deviation of "
        f"{amount(metric, sd)} (pooled over {cells} cells)."
    )
    needed = row.get("repeats_needed")
    size = row.get("effect_size")
    per_cell = row.get("repeats_per_cell")
    if needed is not None and size is not None:
        now = f" (now {fmt(per_cell)})" if per_cell is not None else ""
        text += (
            f" Detecting an effect of {amount(metric, size)} needs {needed} repeats per cell{now}"
        )
        detectable = row.get("detectable_effect")
        if detectable is not None:
            text += f"; the current repeats detect {amount(metric, detectable)} or more."
        else:
            text += "."
    elif row.get("reason"):
        text += f" No power figure: {row['reason']}."
    return text


def interaction_reading(row: Row) -> str:
    axes = row["axes"]
    if row.get("significant") is None:
        return f"{axes}: not tested (no p-value)"
    if row["significant"]:
        return (
            f"{axes}: the effect of one depends on the other "
            f"(F = {fmt(row.get('f_value'))}, p_adj {p_text(row.get('p_adjusted'))})"
        )
    return f"{axes}: no detectable interaction (p_adj {p_text(row.get('p_adjusted'))})"


def interval_text(mean: float | None, low: float | None, high: float | None) -> str:
    if mean is None:
        return "–"
    if low is None or high is None:
        return fmt(mean)
    return f"{fmt(mean)} [{fmt(low)}, {fmt(high)}]"


def best_model_reading(models: list[Row]) -> str | None:
    """The experiment's leader by mean score, and whether its interval clears the next."""
    ranked = [m for m in models if m.get("score_mean") is not None]
    ranked.sort(key=lambda m: -m["score_mean"])
    if not ranked:
        return None
    best = ranked[0]
    text = f"{best['model']} ({best['agent']}) leads with a mean score of {fmt(best['score_mean'])}"
    low, high = best.get("score_ci_low"), best.get("score_ci_high")
    if low is not None and high is not None:
        text += f" (95 % interval {fmt(low)} to {fmt(high)}, {best['n_scored']} runs)"
    else:
        text += (
            f" ({best['n_scored']} scored run{'s' if best['n_scored'] != 1 else ''}, no interval)"
        )
    few = best["n_scored"] is not None and best["n_scored"] < TENTATIVE_BELOW
    caveat = (
        f" With fewer than {TENTATIVE_BELOW} scored runs per model the ranking is tentative;"
        " the Compare page tests the differences."
        if few
        else ""
    )
    if len(ranked) == 1:
        return text + "; it is the only model scored." + caveat
    second = ranked[1]
    s_high = second.get("score_ci_high")
    if low is None or s_high is None:
        return text + f"; runner-up {second['model']} at {fmt(second['score_mean'])}." + caveat
    if s_high >= low:
        return (
            text + f"; its interval overlaps runner-up {second['model']}'s "
            f"({fmt(second['score_mean'])}), so it is not clearly ahead." + caveat
        )
    return (
        text + f"; ahead of runner-up {second['model']} "
        f"({fmt(second['score_mean'])}): the intervals do not overlap." + caveat
    )


def instrument_reading(metric: str, effects: Iterable[Row]) -> str | None:
    """The outcome's effects that may be the bot's rather than the games' (the rows with
    `instrument_suspect`, docs/analysis.md *Instrument bias*), as one sentence; None when
    there is none (or the mart predates the flag)."""
    suspects = [r for r in effects if r.get("instrument_suspect")]
    if not suspects:
        return None
    terms = ", ".join(f"{r['axis']} = {r['level']}" for r in suspects)
    count = "1 effect" if len(suspects) == 1 else f"{len(suspects)} effects"
    return (
        f"{count} on {metric_label(metric)} may be the bot's rather than the games' "
        f"({terms}): the same levels change how many verdicts the bot leaves INCONCLUSIVE, "
        "which can move the score without the game changing (or come from games too broken "
        "to judge). Read each note before crediting the agents."
    )

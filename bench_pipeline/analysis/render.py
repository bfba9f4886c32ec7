"""The report in plain sentences, for `bench analyze` without --json.

Each line is (style, text): the CLI prints the text with the rich style; the text itself is
plain so it reads the same in a log file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the report site only formats; the types are for annotations
    from bench_pipeline.analysis.results import EffectsReport, Interaction, MainEffect

Line = tuple[str, str]


def number(value: float | None, *, signed: bool = False) -> str:
    """Three significant figures without scientific notation for everyday magnitudes."""
    if value is None:
        return "-"
    sign = "+" if signed else ""
    magnitude = abs(value)
    if magnitude >= 100:
        return f"{value:{sign}.0f}"
    if magnitude >= 10:
        return f"{value:{sign}.1f}"
    if magnitude >= 1 or magnitude == 0:
        return f"{value:{sign}.2f}"
    return f"{value:{sign}.3g}"


def p_text(p: float | None) -> str:
    if p is None:
        return "-"
    return "<0.0001" if p < 0.0001 else f"{p:.2g}"


def main_effect_reading(effect: MainEffect, noise_sd: float | None) -> str:
    """E.g. `model = opus vs sonnet: +10.2 [6.1, 14.3], p_adj 0.0008 — significant, larger
    than the noise`."""
    head = f"{effect.axis} = {effect.level} vs {effect.baseline}: {number(effect.estimate, signed=True)}"
    if effect.p_adjusted is None:
        text = f"{head} (no interval or p-value: no residual degrees of freedom)"
    else:
        interval = f"[{number(effect.ci_low)}, {number(effect.ci_high)}]"
        text = (
            f"{head} {interval}, p_adj {p_text(effect.p_adjusted)} — {_verdict(effect, noise_sd)}"
        )
    if effect.aliased_with:
        text += f" (includes the effect of {', '.join(effect.aliased_with)}: aliased)"
    return text


def _verdict(effect: MainEffect, noise_sd: float | None) -> str:
    if not effect.significant:
        return "not significant"
    if effect.meaningful is None:
        return "significant (noise SD unknown, so size not judged)"
    if effect.meaningful:
        return "significant, larger than the noise"
    return f"significant, but within the noise (SD {number(noise_sd)})"


def interaction_reading(interaction: Interaction) -> str:
    verdict = "significant" if interaction.significant else "not significant"
    return (
        f"{interaction.term}: F({interaction.df}, {interaction.df_resid}) = "
        f"{number(interaction.f_value)}, p {p_text(interaction.p_value)}, p_adj "
        f"{p_text(interaction.p_adjusted)} — {verdict}"
    )


def report_lines(report: EffectsReport) -> list[Line]:
    correction = {"holm": "Holm", "bh": "Benjamini-Hochberg"}[report.correction]
    lines: list[Line] = [
        (
            "bold",
            f"{report.metric}: {report.n_runs} runs in {report.n_cells} cells "
            f"({report.n_dropped} dropped), {len(report.axes)} axes",
        )
    ]
    noise = report.noise
    if noise.noise_sd is None:
        lines.append(("", f"noise: unknown — {noise.reason}"))
    else:
        lines.append(
            (
                "",
                f"noise: SD {number(noise.noise_sd)} within cells ({noise.noise_df} df; "
                f"{noise.n_cells_with_repeats} of {noise.n_cells} cells have repeats, median "
                f"{noise.repeats_per_cell:g} runs per cell)",
            )
        )
    power = report.power
    if power.repeats_needed is None:
        lines.append(("", f"power: not computed — {power.reason}"))
    else:
        text = (
            f"power: to detect ±{number(power.effect_size)} between a level and its baseline "
            f"(alpha {power.alpha:g}, power {power.power:.0%}) a cell needs "
            f"{power.repeats_needed} runs"
        )
        if power.detectable_effect is not None:
            text += (
                f"; with {noise.repeats_per_cell:g} runs per cell the smallest detectable "
                f"effect is {number(power.detectable_effect)}"
            )
        lines.append(("", text))

    lines.append(("bold", f"main effects (vs baseline, 95 % interval, {correction}-adjusted p)"))
    for effect in report.main_effects:
        style = ""
        if effect.significant:
            style = "green" if effect.meaningful is not False else "yellow"
        lines.append((style, "  " + main_effect_reading(effect, report.noise_sd)))
    if not report.main_effects:
        lines.append(("", "  (none estimable)"))

    if report.pareto_method == "lenth" and report.pareto_t_crit is not None:
        # Without residual df the main effects have no p-values: the screening view is the
        # only yardstick a saturated design offers.
        lines.append(
            (
                "bold",
                "screening (two-level axes by |t| on Lenth's pseudo standard error; line at "
                f"|t| = {number(report.pareto_t_crit)})",
            )
        )
        for item in report.pareto:
            above = item.abs_t is not None and item.abs_t > report.pareto_t_crit
            lines.append(
                (
                    "green" if above else "",
                    f"  {item.axis} = {item.level} vs {item.baseline}: "
                    f"{number(item.estimate, signed=True)}, |t| {number(item.abs_t)}"
                    + (" — above the line" if above else ""),
                )
            )
    lines.append(("bold", f"interactions ({correction}-adjusted over the interactions tested)"))
    for interaction in report.interactions:
        style = "green" if interaction.significant else ""
        lines.append((style, "  " + interaction_reading(interaction)))
    if not report.interactions:
        lines.append(("", "  (none estimable in this design)"))

    if report.not_estimable:
        lines.append(("bold", "not estimable"))
        lines.extend(("", f"  {item.term}: {item.reason}") for item in report.not_estimable)
    if report.warnings:
        lines.append(("bold", "warnings"))
        lines.extend(("yellow", f"  {warning}") for warning in report.warnings)
    return lines

"""Which effects on the scores may be the instrument's: the bot reading some games worse.

The gameplay score counts PASS verdicts, and an INCONCLUSIVE verdict ("the bot could not
observe enough to decide") is never a PASS. So a level of an axis that makes the bot unable
to judge more of a game lowers its gameplay score, and the headline score (half gameplay),
without the game being any worse; a level it reads better raises them. The effects analysis
estimates every axis's main effect on `inconclusive_share` (the share of the sixteen
verdicts that are INCONCLUSIVE) with the same model, intervals and correction as on the
scores, and this module holds the two against each other (docs/analysis.md, *Instrument
bias*):

* `instrument_suspect` is true for a level whose effect on `gameplay_score` or `score` is
  meaningful **and** whose effect on `inconclusive_share` is meaningful in the direction
  that would explain it (more INCONCLUSIVE with a lower score, or fewer with a higher one);
  false when either is not meaningful or the directions disagree; None when it cannot be
  judged (the noise is unknown, or the share was not estimated for that level).
* `instrument_axis` marks the axes that plausibly change what the bot reads: `framework` and
  `language` (what the page is drawn with), `human_language` (the page's words, which the bot
  reads to find start and game-over controls).
* `instrument_note` is one line for an analyst: for a suspect level, how far the INCONCLUSIVE
  shift could account for the score effect; for a meaningful score effect of an instrument
  axis that is not suspect, why it does not look like the bot's. When the warehouse holds
  the bot's accuracy per renderer (`mart_bot_accuracy_groups`) and the runs say what their
  pages were drawn with, the note cites the accuracy on the level's and baseline's renderers.

Pure: no warehouse access (the stage reads what it needs and passes it in).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from bench_pipeline.analysis.render import number
from bench_pipeline.analysis.results import MainEffect
from bench_pipeline.analysis.runs import to_level

SHARE_METRIC = "inconclusive_share"
# The metrics an INCONCLUSIVE verdict moves, with the weight of the gameplay score in each:
# one more INCONCLUSIVE of the sixteen costs at most 100/16 gameplay points (if it would
# have been a PASS), half that on the headline score (fct_runs.sql: 0.5 gameplay + 0.5
# quality; tests/analysis/test_instrument.py checks this against the SQL's weights).
SCORE_METRICS: dict[str, float] = {"gameplay_score": 1.0, "score": 0.5}
# Axes that plausibly change what the bot reads, and what they change.
INSTRUMENT_AXES: dict[str, str] = {
    "framework": "what the page is drawn with",
    "language": "what the build serves, and with it how the page is drawn",
    "human_language": "the page's words, which the bot reads to find start and game-over controls",
}
# Renderers the bot reports that say nothing about how a page is drawn.
_NO_RENDERER = frozenset({"", "none", "unknown"})
# Which accuracy measurement to cite: the held-out games are the fair measure.
ACCURACY_PREFERENCE: tuple[tuple[str, str], ...] = (
    ("real", "heldout"),
    ("real", "all"),
    ("real", "tune"),
    ("repo", "all"),
)


@dataclass(frozen=True, slots=True)
class RendererAccuracy:
    """The bot's figures on the corpus's games of one renderer (all sixteen tests)."""

    renderer: str
    n_games: int
    n_verdicts: int
    agreement: float | None
    inconclusive: int


@dataclass(frozen=True, slots=True)
class BotAccuracy:
    """One published accuracy measurement, per renderer (mart_bot_accuracy_groups)."""

    corpus: str
    split: str
    bot_version: str
    renderers: dict[str, RendererAccuracy]

    def figures(self, renderer: str | None) -> str | None:
        """The figures for a note, like "dom 62 % right, 27 % INCONCLUSIVE" (of the labelled
        verdicts on the corpus's games of that renderer); None when it is not measured."""
        measured = self.renderers.get(renderer) if renderer else None
        if measured is None or not measured.n_verdicts or measured.agreement is None:
            return None
        share = measured.inconclusive / measured.n_verdicts
        return (
            f"{renderer} {100 * measured.agreement:.0f} % right, {100 * share:.0f} % INCONCLUSIVE"
        )

    @property
    def source(self) -> str:
        return f"{self.corpus} corpus, {self.split} games, bot {self.bot_version}"


@dataclass(frozen=True, slots=True)
class InstrumentFlag:
    suspect: bool | None
    note: str | None
    axis: bool  # the axis plausibly changes what the bot reads


def pick_accuracy(rows: Iterable[Mapping[str, Any]]) -> BotAccuracy | None:
    """The measurement to cite, from overall rows (test_id 'all') of mart_bot_accuracy_groups:
    per renderer, of the preferred (corpus, split) that has any renderer measured."""
    by_source: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for row in rows:
        if row.get("breakdown") == "renderer" and row.get("test_id") == "all":
            by_source.setdefault((str(row["corpus"]), str(row["split"])), []).append(row)
    for source in ACCURACY_PREFERENCE:
        measured = [r for r in by_source.get(source, []) if r.get("n_games")]
        if measured:
            return BotAccuracy(
                corpus=source[0],
                split=source[1],
                bot_version=str(measured[0].get("bot_version")),
                renderers={
                    str(r["group_name"]): RendererAccuracy(
                        str(r["group_name"]),
                        int(r["n_games"]),
                        int(r.get("n_verdicts") or 0),
                        None if r.get("agreement") is None else float(r["agreement"]),
                        int(r.get("inconclusive") or 0),
                    )
                    for r in measured
                },
            )
    return None


def level_renderers(runs: pd.DataFrame, axes: Sequence[str]) -> dict[tuple[str, str], str]:
    """(axis, level) -> the renderer most of that level's evaluated runs were drawn with
    (fct_runs.renderer); levels with no renderer known are left out."""
    if "renderer" not in runs.columns:
        return {}
    known = runs[runs["renderer"].notna()]
    known = known[~known["renderer"].astype(str).str.lower().isin(_NO_RENDERER)]
    out: dict[tuple[str, str], str] = {}
    for axis in axes:
        if axis not in known.columns:
            continue
        counts: dict[str, Counter[str]] = {}
        for value, renderer in zip(known[axis], known["renderer"], strict=True):
            counts.setdefault(to_level(value), Counter())[str(renderer).lower()] += 1
        for level, counter in counts.items():
            # Ties: the first renderer in name order, so the note does not change run to run.
            out[(axis, level)] = min(counter, key=lambda r: (-counter[r], r))
    return out


def _suspect(effect: MainEffect, share: MainEffect | None) -> bool | None:
    """Three-valued: the score effect meaningful, the share's meaningful and opposite."""
    if effect.meaningful is False:
        return False
    if share is None or share.meaningful is None:
        return None
    if share.meaningful is False:
        return False
    if effect.meaningful is None:
        return None
    return effect.estimate * share.estimate < 0


def _points(share: float) -> str:
    """A change of the 0-1 share in percentage points: "18 points"."""
    return f"{number(abs(100 * share))} points"


def _renderer_citation(
    effect: MainEffect,
    renderers: Mapping[tuple[str, str], str],
    accuracy: BotAccuracy | None,
) -> str | None:
    """What the level's and the baseline's games were drawn with, and the bot's accuracy on
    each when a measurement per renderer is published."""
    level = renderers.get((effect.axis, effect.level))
    baseline = renderers.get((effect.axis, effect.baseline))
    if level is None:
        return None
    drawn = f"its games draw on {level}" + (
        " as the baseline's do"
        if baseline == level
        else f", the baseline's on {baseline}"
        if baseline
        else ""
    )
    if accuracy is None:
        return f"{drawn}; no bot accuracy per renderer is published to say how well it reads them"
    shown = [level] if baseline in (None, level) else [level, baseline]
    figures = [f for f in (accuracy.figures(r) for r in shown) if f]
    if not figures:
        return f"{drawn}; the bot's accuracy on {' or '.join(shown)} is not measured"
    missing = [r for r in shown if accuracy.figures(r) is None]
    unmeasured = f", {missing[0]} not measured" if missing else ""
    return f"{drawn}; bot accuracy ({accuracy.source}): {'; '.join(figures)}{unmeasured}"


def _note(
    metric: str,
    effect: MainEffect,
    share: MainEffect | None,
    suspect: bool | None,
    renderers: Mapping[tuple[str, str], str],
    accuracy: BotAccuracy | None,
) -> str | None:
    term = f"{effect.axis}={effect.level}"
    on = f"{number(effect.estimate, signed=True)} on {metric}"
    axis_reason = INSTRUMENT_AXES.get(effect.axis)
    # The page's words do not depend on the renderer: no per-renderer figure to cite.
    citation = (
        _renderer_citation(effect, renderers, accuracy)
        if axis_reason and effect.axis != "human_language"
        else None
    )
    if suspect and share is not None:
        verb, reading = ("raises", "worse") if share.estimate > 0 else ("lowers", "better")
        # At most every extra INCONCLUSIVE was a PASS: 100 gameplay points per unit of share,
        # times the gameplay score's weight in the metric.
        bound = abs(share.estimate) * 100 * SCORE_METRICS[metric]
        games = "worse" if effect.estimate < 0 else "better"
        if bound >= abs(effect.estimate):
            share_of = f"enough to account for all of its {on}: it may be"
        else:
            share_of = f"which can account for up to {number(bound)} of its {on}: part of it may be"
        note = (
            f"{term} {verb} INCONCLUSIVE verdicts by {_points(share.estimate)}, {share_of} "
            f"the bot reading these games {reading}, not the games being {games}"
        )
        if axis_reason:
            note += f"; {effect.axis} changes {axis_reason}"
        return note + (f"; {citation}" if citation else "")
    if not axis_reason or not effect.meaningful:
        return None
    # A meaningful effect of an axis that changes what the bot reads, yet not suspect: why.
    if share is None:
        why = "its effect on INCONCLUSIVE verdicts was not estimated, so the bot's part is unknown"
    else:
        moved = f"{number(100 * share.estimate, signed=True)} points"
        if share.meaningful is None:
            why = f"whether its INCONCLUSIVE verdicts move beyond the noise ({moved}) is unknown"
        elif not share.meaningful:
            why = (
                f"its INCONCLUSIVE verdicts do not move beyond the noise ({moved}), so the "
                "effect looks like the games'"
            )
        else:
            why = (
                f"its INCONCLUSIVE verdicts move with the score, not against it ({moved}), "
                "which cannot explain it"
            )
    note = f"{effect.axis} changes {axis_reason}, but {why} ({term}: {on})"
    return note + (f"; {citation}" if citation else "")


def instrument_flags(
    effects: Mapping[str, Sequence[MainEffect]],
    *,
    renderers: Mapping[tuple[str, str], str] | None = None,
    accuracy: BotAccuracy | None = None,
) -> dict[tuple[str, str, str], InstrumentFlag]:
    """(metric, axis, level) -> the flag, for every main effect of one experiment.

    `effects` maps each analysed metric to its main effects (`EffectsReport.main_effects`);
    the rows of metrics other than SCORE_METRICS get `suspect` and `note` None (the bot does
    not measure them, or they are the share itself) and `axis` as every row does."""
    share_of = {(e.axis, e.level): e for e in effects.get(SHARE_METRIC, ())}
    flags: dict[tuple[str, str, str], InstrumentFlag] = {}
    for metric, rows in effects.items():
        for effect in rows:
            axis = effect.axis in INSTRUMENT_AXES
            if metric not in SCORE_METRICS:
                flags[(metric, effect.axis, effect.level)] = InstrumentFlag(None, None, axis)
                continue
            share = share_of.get((effect.axis, effect.level))
            suspect = _suspect(effect, share)
            note = _note(metric, effect, share, suspect, renderers or {}, accuracy)
            flags[(metric, effect.axis, effect.level)] = InstrumentFlag(suspect, note, axis)
    return flags

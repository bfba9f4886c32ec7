"""The instrument-bias flags: effects on the scores held against effects on the share of
INCONCLUSIVE verdicts (bench_pipeline.analysis.instrument), on simulated runs with planted
effects on the games and on the bot, and on hand-made effects for the edge cases."""

from __future__ import annotations

from collections import Counter

import pandas as pd
import pytest

from bench_pipeline import settings
from bench_pipeline.analysis.effects import analyze
from bench_pipeline.analysis.instrument import (
    SCORE_METRICS,
    SHARE_METRIC,
    BotAccuracy,
    RendererAccuracy,
    instrument_flags,
    level_renderers,
    pick_accuracy,
)
from bench_pipeline.analysis.results import MainEffect
from bench_pipeline.analysis.simulate import simulate_verdicts
from bench_pipeline.analysis.stage import METRICS, MetricAnalysis, mart_rows
from bench_pipeline.report.methodology import headline_formula
from bench_pipeline.warehouse.marts import EFFECT_CI_METHOD, INTERACTION_TEST_METHOD, MART_SCHEMAS

AXES = {
    "model": ("claude-sonnet-4-6", "claude-opus-4-6"),
    "framework": ("vanilla", "react"),
    "prompt_style": ("standard", "terse"),
    "human_language": ("en", "de"),
    "tool_browser": (False, True),
}
# The games: opus makes more mechanics work (a real effect), and so does the browser tool;
# German pages work worse. The bot: it cannot judge 45 % more of React games (an effect on
# the instrument alone), and a little more of the browser tool's (the same direction as
# their better score, so it cannot explain it).
WORKS = {
    ("model", "claude-opus-4-6"): 0.35,
    ("human_language", "de"): -0.3,
    ("tool_browser", True): 0.35,
}
UNREAD = {("framework", "react"): 0.45, ("tool_browser", True): 0.15}
BOT_METRICS = ("gameplay_score", "score", SHARE_METRIC)
SEEDS = range(20)
ACCURACY = BotAccuracy(
    "real",
    "heldout",
    "0.10.0",
    {
        "canvas": RendererAccuracy("canvas", 20, 300, 0.78, 36),
        "dom": RendererAccuracy("dom", 10, 160, 0.62, 40),
    },
)


def _effects(frame: pd.DataFrame, baselines: dict[str, str]) -> dict[str, list[MainEffect]]:
    return {
        m: analyze(frame, m, axes=list(AXES), baselines=baselines).main_effects for m in BOT_METRICS
    }


@pytest.fixture(scope="module")
def flagged() -> Counter[tuple[str, str, str, bool | None]]:
    """How often each (metric, axis, level) got each flag over the seeded tables."""
    counts: Counter[tuple[str, str, str, bool | None]] = Counter()
    for seed in SEEDS:
        sim = simulate_verdicts(axes=AXES, works=WORKS, unread=UNREAD, repeats=12, seed=seed)
        flags = instrument_flags(_effects(sim.frame, sim.truth.baselines))
        counts.update((*key, flag.suspect) for key, flag in flags.items())
    return counts


def test_an_axis_that_only_raises_inconclusive_is_flagged_and_a_real_effect_is_not(
    flagged: Counter[tuple[str, str, str, bool | None]],
) -> None:
    n = len(SEEDS)
    for metric in SCORE_METRICS:
        # React games are no worse: the bot cannot judge them. Its lower score is flagged.
        assert flagged[(metric, "framework", "react", True)] >= 0.9 * n, metric
        # Opus's games really are better, with no more INCONCLUSIVE verdicts: never flagged.
        assert flagged[(metric, "model", "claude-opus-4-6", True)] == 0, metric
        # German pages really work worse (and the bot reads them as well): not flagged.
        assert flagged[(metric, "human_language", "de", True)] == 0, metric
        # More INCONCLUSIVE with a *higher* score cannot explain the score: not flagged.
        assert flagged[(metric, "tool_browser", "true", True)] == 0, metric
        assert flagged[(metric, "prompt_style", "terse", True)] == 0, metric
    # The share's own rows and the other outcomes carry no flag.
    assert flagged[(SHARE_METRIC, "framework", "react", None)] == n


def test_the_simulated_bot_moves_the_share_only_where_it_was_planted() -> None:
    sim = simulate_verdicts(axes=AXES, works=WORKS, unread=UNREAD, repeats=12, seed=1)
    frame = sim.frame
    assert set(BOT_METRICS) <= set(frame.columns)
    assert frame[SHARE_METRIC].between(0, 1).all() and frame["gameplay_score"].between(0, 100).all()
    share = analyze(frame, SHARE_METRIC, axes=list(AXES), baselines=sim.truth.baselines)
    by = {e.term: e for e in share.main_effects}
    assert by["framework=react"].estimate == pytest.approx(0.45, abs=0.08)
    assert by["framework=react"].meaningful
    assert not by["model=claude-opus-4-6"].significant
    # The truth: React's expected gameplay loss, 100 x 0.6 x 0.45 points.
    assert sim.truth.effects[("framework", "react")] == pytest.approx(-27.0)


def test_the_note_says_how_much_the_bot_could_explain_and_cites_the_renderers() -> None:
    sim = simulate_verdicts(axes=AXES, works=WORKS, unread=UNREAD, repeats=12, seed=3)
    renderers = {("framework", "react"): "dom", ("framework", "vanilla"): "canvas"}
    flags = instrument_flags(
        _effects(sim.frame, sim.truth.baselines), renderers=renderers, accuracy=ACCURACY
    )
    react = flags[("gameplay_score", "framework", "react")]
    assert react.suspect and react.axis
    assert react.note is not None and "\n" not in react.note
    assert react.note.startswith("framework=react raises INCONCLUSIVE verdicts by ")
    assert "may be the bot reading these games worse, not the games being worse" in react.note
    assert "on gameplay_score" in react.note
    assert "its games draw on dom, the baseline's on canvas" in react.note
    assert (
        "bot accuracy (real corpus, heldout games, bot 0.10.0): dom 62 % right, "
        "25 % INCONCLUSIVE; canvas 78 % right, 12 % INCONCLUSIVE" in react.note
    )
    # A meaningful effect of an axis that changes what the bot reads, not the bot's: the note
    # says why it does not look like the instrument's.
    german = flags[("gameplay_score", "human_language", "de")]
    assert german.suspect is False and german.axis
    assert german.note is not None
    assert "the page's words" in german.note and "looks like the games'" in german.note
    # An axis that does not change what the bot reads, and is not suspect: nothing to say.
    opus = flags[("gameplay_score", "model", "claude-opus-4-6")]
    assert (opus.suspect, opus.note, opus.axis) == (False, None, False)
    assert flags[("gameplay_score", "prompt_style", "terse")].note is None


def _effect(term: str, estimate: float, meaningful: bool | None) -> MainEffect:
    axis, level = term.split("=")
    return MainEffect(
        axis=axis,
        level=level,
        baseline="base",
        estimate=estimate,
        std_error=1.0,
        t_value=estimate,
        ci_low=estimate - 2,
        ci_high=estimate + 2,
        p_value=0.001,
        p_adjusted=0.01,
        significant=meaningful is not False,
        meaningful=meaningful,
        n_level=10,
        n_baseline=10,
    )


@pytest.mark.parametrize(
    ("score", "share", "suspect"),
    [
        ((-12.0, True), (0.18, True), True),  # more INCONCLUSIVE, lower score
        ((+12.0, True), (-0.18, True), True),  # fewer INCONCLUSIVE, higher score: read better
        ((+12.0, True), (0.18, True), False),  # same direction: cannot explain it
        ((-12.0, True), (0.18, False), False),  # the share does not move beyond the noise
        ((-12.0, False), (0.18, True), False),  # no meaningful effect on the score to explain
        ((-12.0, False), (0.18, None), False),
        ((-12.0, True), (0.18, None), None),  # the share's noise unknown: cannot judge
        ((-12.0, None), (0.18, True), None),  # the score's noise unknown: cannot judge
    ],
)
def test_the_rule_is_three_valued(
    score: tuple[float, bool | None], share: tuple[float, bool | None], suspect: bool | None
) -> None:
    effects = {
        "gameplay_score": [_effect("framework=react", *score)],
        SHARE_METRIC: [_effect("framework=react", *share)],
    }
    assert instrument_flags(effects)[("gameplay_score", "framework", "react")].suspect is suspect


def test_an_instrument_axis_not_suspect_gets_a_note_saying_why() -> None:
    def note(share: tuple[float, bool | None]) -> str | None:
        effects = {
            "gameplay_score": [_effect("language=typescript", 8.0, True)],
            SHARE_METRIC: [_effect("language=typescript", *share)],
        }
        flag = instrument_flags(effects)[("gameplay_score", "language", "typescript")]
        assert flag.suspect is not True and flag.axis
        return flag.note

    assert "move with the score, not against it (+30.0 points)" in str(note((0.3, True)))
    assert "do not move beyond the noise (+1.00 points)" in str(note((0.01, False)))
    assert "is unknown" in str(note((0.3, None)))
    assert str(note((0.3, True))).startswith("language changes what the build serves")
    # Not meaningful on the score: nothing to explain, no note.
    effects = {
        "gameplay_score": [_effect("language=typescript", 8.0, False)],
        SHARE_METRIC: [_effect("language=typescript", 0.3, True)],
    }
    assert instrument_flags(effects)[("gameplay_score", "language", "typescript")].note is None


def test_a_level_whose_share_was_not_estimated_cannot_be_judged() -> None:
    effects = {"gameplay_score": [_effect("framework=react", -12.0, True)], SHARE_METRIC: []}
    flag = instrument_flags(effects)[("gameplay_score", "framework", "react")]
    assert flag.suspect is None
    assert flag.note is not None and "was not estimated" in flag.note


def test_the_note_bounds_the_part_the_bot_can_explain() -> None:
    # 5 more INCONCLUSIVE points can cost at most 5 gameplay points, 2.5 on the headline.
    effects = {
        "gameplay_score": [_effect("model=opus", -12.0, True)],
        "score": [_effect("model=opus", -6.0, True)],
        SHARE_METRIC: [_effect("model=opus", 0.05, True)],
    }
    flags = instrument_flags(effects)
    gameplay, score = flags[("gameplay_score", "model", "opus")], flags[("score", "model", "opus")]
    assert gameplay.note == (
        "model=opus raises INCONCLUSIVE verdicts by 5.00 points, which can account for up to "
        "5.00 of its -12.0 on gameplay_score: part of it may be the bot reading these games "
        "worse, not the games being worse"
    )
    assert score.note is not None and "up to 2.50 of its -6.00 on score" in score.note
    better = instrument_flags(
        {
            "gameplay_score": [_effect("framework=react", 8.0, True)],
            SHARE_METRIC: [_effect("framework=react", -0.3, True)],
        }
    )[("gameplay_score", "framework", "react")]
    assert better.note is not None and better.note.startswith(
        "framework=react lowers INCONCLUSIVE verdicts by 30.0 points, enough to account for all "
        "of its +8.00 on gameplay_score: it may be the bot reading these games better"
    )


def test_the_gameplay_weight_in_the_score_is_the_sql_headline() -> None:
    formula = headline_formula(settings.sql_models_dir())
    assert formula is not None
    assert SCORE_METRICS["score"] == formula.gameplay_weight
    assert SCORE_METRICS["gameplay_score"] == 1.0


def test_renderers_per_level_and_the_accuracy_to_cite() -> None:
    runs = pd.DataFrame(
        {
            "framework": ["vanilla", "vanilla", "vanilla", "react", "react", "react"],
            "tool_browser": [False, True, False, False, False, False],
            "renderer": ["canvas", "canvas", None, "dom", "dom", "none"],
        }
    )
    assert level_renderers(runs, ["framework", "tool_browser"]) == {
        ("framework", "vanilla"): "canvas",
        ("framework", "react"): "dom",
        ("tool_browser", "false"): "dom",  # 2 dom, 1 canvas
        ("tool_browser", "true"): "canvas",
    }
    assert level_renderers(runs.drop(columns="renderer"), ["framework"]) == {}

    def row(corpus: str, split: str, group: str, n_games: int) -> dict[str, object]:
        return {
            "corpus": corpus,
            "split": split,
            "breakdown": "renderer",
            "group_name": group,
            "test_id": "all",
            "bot_version": "0.10.0",
            "n_games": n_games,
            "n_verdicts": 16 * n_games,
            "agreement": 0.75 if n_games else None,
            "inconclusive": n_games,
        }

    # Held-out figures first; a measurement without any game of a renderer is skipped.
    rows = [row("real", "tune", "canvas", 3), row("real", "heldout", "canvas", 2)]
    rows += [row("real", "heldout", "webgl", 0), row("repo", "all", "dom", 4)]
    picked = pick_accuracy(rows)
    assert picked is not None and (picked.corpus, picked.split) == ("real", "heldout")
    assert set(picked.renderers) == {"canvas"}
    assert picked.figures("canvas") == "canvas 75 % right, 6 % INCONCLUSIVE"
    assert picked.figures("webgl") is None
    assert pick_accuracy([row("real", "heldout", "canvas", 0)]) is None


def test_the_mart_rows_carry_the_flags() -> None:
    sim = simulate_verdicts(axes=AXES, works=WORKS, unread=UNREAD, repeats=12, seed=2)
    analyses = [
        MetricAnalysis(
            "sim",
            m,
            analyze(sim.frame, m, axes=list(AXES), baselines=sim.truth.baselines),
            renderers={("framework", "react"): "dom", ("framework", "vanilla"): "canvas"},
        )
        for m in BOT_METRICS
    ]
    effects = mart_rows(analyses, ACCURACY)["mart_main_effects"]
    assert list(effects.columns) == list(MART_SCHEMAS["mart_main_effects"])
    row = effects.set_index(["metric", "axis", "level"])
    react = row.loc[("gameplay_score", "framework", "react")]
    # instrument_suspect holds NULLs (an object column); instrument_axis never does.
    assert react["instrument_suspect"] is True and bool(react["instrument_axis"])
    assert "dom 62 % right" in react["instrument_note"]
    assert row.loc[("score", "model", "claude-opus-4-6")]["instrument_suspect"] is False
    share = row.loc[(SHARE_METRIC, "framework", "react")]
    assert share["instrument_suspect"] is None and bool(share["instrument_axis"])
    assert not row.loc[(SHARE_METRIC, "model", "claude-opus-4-6")]["instrument_axis"]
    # The same machinery as every outcome: intervals and Holm-adjusted p on the share.
    assert {"ci_low", "ci_high", "p_adjusted"} <= set(effects.columns)
    assert (effects[effects["metric"] == SHARE_METRIC]["correction"] == "holm").all()
    # Each effects table says how its intervals / tests were made.
    assert (effects["ci_method"] == EFFECT_CI_METHOD).all()
    assert "statsmodels OLS.conf_int" in EFFECT_CI_METHOD
    interactions = mart_rows(analyses, ACCURACY)["mart_interactions"]
    assert (interactions["test_method"] == INTERACTION_TEST_METHOD).all()
    assert METRICS[SHARE_METRIC] == pytest.approx(1 / 16)
    # Without an accuracy measurement the note still says what the pages are drawn with.
    bare = mart_rows(analyses)["mart_main_effects"]
    note = bare.set_index(["metric", "axis", "level"]).loc[
        ("gameplay_score", "framework", "react")
    ]["instrument_note"]
    assert "no bot accuracy per renderer is published" in note

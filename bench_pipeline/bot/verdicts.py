"""From what was observed to the sixteen verdicts.

Each test has its own function reading the evidence and the event log; one failing
derivation never stops the others (it becomes INCONCLUSIVE with the reason). A PASS is
only ever given on positive evidence.
"""

from __future__ import annotations

import itertools
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from bench_pipeline.bot.contract import TEST_IDS, TestResult, Verdict
from bench_pipeline.bot.geometry import NARROWED
from bench_pipeline.bot.play import Bot
from bench_pipeline.bot.session import EventLog

# Labels in the prompt languages (en, de, es, fr, ja, zh) and others met in real games
# (pt, it, ru, uk, ko, vi).
SCORE_LABEL = re.compile(
    r"score|points|pts|punkte|punktzahl|puntos|puntuaci|pontos|pontua|marcador|punteggio|punti|"
    r"счёт|счет|очки|очков|балл|рахунок|점수|điểm|得点|スコア|ポイント|分数|得分|积分|點數",
    re.IGNORECASE,
)
NOT_SCORE = re.compile(
    r"time|sec|level|lvl|line|row|high|best|hi\b|record|speed|fps|next|zeit|stufe|zeile|reihe|"
    r"rekord|nächst|tiempo|nivel|línea|linea|fila|mejor|temps|niveau|ligne|meilleur|"
    r"nível|linhas|livell|linee|righe|miglior|уров|лини|рекорд|лучш|врем|레벨|라인|최고|다음|시간|"
    r"時間|タイム|レベル|ライン|行|ベスト|ハイ|次|时间|等级|级别|最高|下一",
    re.IGNORECASE,
)
LINES_LABEL = re.compile(
    r"line|row|zeile|reihe|línea|linea|fila|ligne|linhas|linee|righe|лини|рядк|라인|줄|ライン|行|消除",
    re.IGNORECASE,
)
# A number first shown this long after the start, already above zero, rose from nothing.
APPEARED_AFTER_S = 3.0
STILL_GAP_S = 5.0  # the field must change at least this often during the endurance window


@dataclass
class Observed:
    bot: Bot | None
    log: EventLog
    loaded: bool
    load_error: str | None
    endurance_s: float


def died_at(o: Observed) -> float | None:
    """When the game stopped reacting for good (a crash, an endless loop), if it did.

    The field never changed again after that moment although the bot kept pressing keys
    for a while: what was tried afterwards says nothing about the mechanic tried.
    """
    if not o.log.frames:
        return None
    last_change = o.log.frames[-1].t
    presses_after = [t for t, _k, _p in o.log.actions if t > last_change + 0.5]
    observed_until = o.log.reads[-1] if o.log.reads else last_change
    ends = [t for t in (o.log.frozen_at, o.log.crashed_at, o.log.navigated_away_at) if t]
    if ends:
        return min(ends)
    if len(presses_after) >= 3 and observed_until - last_change > 5.0:
        if o.bot is not None and o.bot.evidence.has("game_over", "pass"):
            return None  # a still field after game over is the game over, not a death
        return last_change
    return None


def _from_evidence(o: Observed, test: str, missing: str) -> TestResult:
    assert o.bot is not None
    ev = o.bot.evidence
    dead = died_at(o)
    fails = [(t, d) for t, outcome, d in ev.items.get(test, []) if outcome == "fail"]
    if dead is not None:
        fails = [(t, d) for t, d in fails if t <= dead + 0.5]
    if fails:
        return TestResult(Verdict.FAIL, fails[0][1])
    if dead is not None and ev.has(test, "fail") and not ev.has(test, "pass"):
        return TestResult(
            Verdict.INCONCLUSIVE,
            f"the game had stopped reacting at {dead:.1f}s, before this could be tried",
        )
    if ev.has(test, "pass"):
        return TestResult(Verdict.PASS, ev.first(test, "pass") or "")
    return TestResult(Verdict.INCONCLUSIVE, missing)


def _grid(o: Observed) -> TestResult | None:
    """INCONCLUSIVE for grid-dependent tests when no playfield could be read."""
    if o.bot is None or o.bot.s.geometry is None:
        return TestResult(
            Verdict.INCONCLUSIVE, "no playfield was located, so it could not be observed"
        )
    return None


def loads(o: Observed) -> TestResult:
    if not o.loaded:
        return TestResult(Verdict.FAIL, f"the page did not load: {o.load_error}")
    g = o.bot.s.geometry if o.bot else None
    if g is None:
        return TestResult(
            Verdict.FAIL, "the page loaded but no playfield (canvas, DOM or SVG grid) was found"
        )
    if g.by_shape and not _lattice_confirmed(o):
        shape = "a 1:2 shape" if g.standard else f"room for {g.cols}x{g.rows} square cells"
        return TestResult(
            Verdict.INCONCLUSIVE,
            f"a {g.renderer} area with {shape} was taken for the field ({g.locator}), but "
            f"no piece was seen falling or moving on its {g.cols}x{g.rows} cells to confirm it",
        )
    if not g.standard:
        how = ", counted in square cells of its box" if g.by_shape else ""
        return TestResult(
            Verdict.FAIL, f"the playfield is {g.cols}x{g.rows}{how}, not 10x20 ({g.locator})"
        )
    if g.size_assumed and (missing := _size_unseen(o)):
        # A 10x16 or 9x18 field read as 10x20 still shows pieces falling and moving by
        # whole cells: only its edges tell its size.
        return TestResult(
            Verdict.INCONCLUSIVE,
            f"the field's 10x20 size was assumed, not seen ({g.locator}), and {missing}",
        )
    if (doubt := _pushed_out_of_narrowed_field(o)) is not None:
        return TestResult(Verdict.INCONCLUSIVE, doubt)
    loads = o.bot.loads if o.bot else 1
    again = (
        f"; it took {loads} page loads, the earlier ones threw and did not start"
        if loads > 1
        else ""
    )
    return TestResult(Verdict.PASS, f"{g.renderer} playfield 10x20 ({g.locator}){again}")


def _pushed_out_of_narrowed_field(o: Observed) -> str | None:
    """A canvas lattice too wide for a field was taken as its 10 busiest columns (a field
    beside a panel), and then a piece was pushed out of them sideways: the field may be
    the whole lattice (a 15x20 field looks the same until then). Neither its size nor its
    walls can be told; None when there is no such doubt."""
    g = o.bot.s.geometry if o.bot else None
    if g is None or NARROWED not in g.locator or o.bot is None:
        return None
    out = next(
        (
            detail
            for _t, outcome, detail in o.bot.evidence.items.get("walls", [])
            if outcome == "fail" and "left the field" in detail
        ),
        None,
    )
    if out is None:
        return None
    return (
        f"the field was taken as {g.cols} columns of a wider lattice ({g.locator}), but "
        f"{out.removeprefix('pushing ')}: the field may be the whole lattice"
    )


def _size_unseen(o: Observed) -> str:
    """What did not show the assumed field's edges ('' when all did): a piece stopped by
    the left wall in column 1 and by the right wall in column 10, and a cell in row 20."""
    assert o.bot is not None
    walls = [d for _t, outcome, d in o.bot.evidence.items.get("walls", []) if outcome == "pass"]
    missing = [
        f"no piece was stopped by the {side} wall in its outer column"
        for side in ("left", "right")
        if not any(f"the {side} wall" in d for d in walls)
    ]
    if not any(frame.filled[-1].any() for frame in o.log.frames):
        missing.append("no cell was seen in its bottom row")
    return "; ".join(missing)


def _lattice_confirmed(o: Observed) -> bool:
    """A tetromino was seen falling or moving by whole cells of the field read."""
    ev = o.bot.evidence if o.bot else None
    return ev is not None and any(
        ev.has(test, "pass") for test in ("gravity", "move_left", "move_right")
    )


def starts(o: Observed) -> TestResult:
    if (r := _grid(o)) is not None:
        return r
    assert o.bot is not None
    if o.bot.evidence.has("starts", "pass"):
        return TestResult(
            Verdict.PASS, f"{o.bot.start_mechanism}: {o.bot.evidence.first('starts', 'pass')}"
        )
    if o.log.crashed_at is not None or o.log.frozen_at is not None:
        return TestResult(Verdict.FAIL, "the page crashed or froze before a piece appeared")
    if o.log.blind_at is not None:
        return TestResult(
            Verdict.INCONCLUSIVE,
            "screenshots of the page kept timing out while it still answered, before a piece "
            "appeared: the bot could no longer see it",
        )
    return TestResult(
        Verdict.FAIL,
        o.bot.evidence.first("starts", "fail")
        or "no start mechanism made a piece appear (auto, buttons, keys, click)",
    )


def _needs_start(o: Observed) -> TestResult | None:
    if (r := _grid(o)) is not None:
        return r
    assert o.bot is not None
    if o.bot.started_at is None:
        return TestResult(
            Verdict.INCONCLUSIVE, "the game never started, so this could not be observed"
        )
    return None


def _evidence_test(test: str, missing: str) -> Callable[[Observed], TestResult]:
    def derive(o: Observed) -> TestResult:
        return _needs_start(o) or _from_evidence(o, test, missing)

    derive.__name__ = test
    return derive


def walls(o: Observed) -> TestResult:
    if (r := _needs_start(o)) is not None:
        return r
    assert o.bot is not None
    if not (o.bot.controls["left"] and o.bot.controls["right"]):
        return TestResult(Verdict.INCONCLUSIVE, "left and right controls were not both found")
    if (doubt := _pushed_out_of_narrowed_field(o)) is not None:
        return TestResult(Verdict.INCONCLUSIVE, doubt)
    return _from_evidence(o, "walls", "the piece could not be pushed against a wall")


def line_clear(o: Observed) -> TestResult:
    result = _evidence_test("line_clear", "no row was completed during play")(o)
    if result.verdict is Verdict.FAIL and (doubt := _pushed_out_of_narrowed_field(o)):
        # A row full across the columns taken is not full across a wider field.
        return TestResult(
            Verdict.INCONCLUSIVE, f"{result.reason}; but {doubt}, so the row may not be full"
        )
    return result


def spawn(o: Observed) -> TestResult:
    if (r := _needs_start(o)) is not None:
        return r
    assert o.bot is not None
    if o.bot.evidence.has("spawn", "pass"):
        return TestResult(Verdict.PASS, o.bot.evidence.first("spawn", "pass") or "")
    if o.bot.locks >= 2 and o.log.crashed_at is None and o.log.frozen_at is None:
        return TestResult(
            Verdict.FAIL, f"{o.bot.locks} pieces landed and no new piece appeared at the top"
        )
    return TestResult(Verdict.INCONCLUSIVE, "no piece was seen landing")


def _year_in_small_print(label: str | None, value: int) -> bool:
    """A year with no score or lines label ("© 2022" in a footer scrolled into view): a
    number that shows up late is taken to have risen from nothing, but not this one."""
    label = label or ""
    return 1970 <= value <= 2100 and not (SCORE_LABEL.search(label) or LINES_LABEL.search(label))


def score(o: Observed) -> TestResult:
    if (r := _needs_start(o)) is not None:
        return r
    assert o.bot is not None
    series: dict[str, list[int]] = defaultdict(list)
    labels: dict[str, str] = {}
    started = o.bot.started_at
    assert started is not None
    for t, source, label, value in o.log.numbers:
        if (
            source not in series
            and t > started + APPEARED_AFTER_S
            and value > 0
            and not _year_in_small_print(label, value)
        ):
            # Shown only once it counted something ("Count: 100" written after the first
            # line clear into an element empty until then): it rose from nothing.
            series[source].append(0)
        series[source].append(value)
        labels[source] = label or labels.get(source, "")
    increased = {s for s, v in series.items() if len(v) > 1 and max(v[1:]) > v[0]}
    labelled = [s for s in increased if SCORE_LABEL.search(labels[s])]
    if labelled:
        s = labelled[0]
        o.bot.score_source = s
        return TestResult(
            Verdict.PASS, f"{labels[s]!r} went {series[s][0]} → {max(series[s])} ({s})"
        )
    bare = [s for s in increased if not labels[s] or not NOT_SCORE.search(labels[s])]
    if bare:
        s = bare[0]
        o.bot.score_source = s
        return TestResult(Verdict.PASS, f"a number went {series[s][0]} → {max(series[s])} ({s})")
    # A game whose only counter is the lines cleared ("Lines" rather than "Score"): that
    # counter is its score, unless a score-labelled number is shown as well and stood still.
    lines = [s for s in series if labels[s] and LINES_LABEL.search(labels[s])]
    if lines and not any(SCORE_LABEL.search(labels[s]) for s in series):
        grew = [s for s in lines if s in increased]
        if grew:
            s = grew[0]
            o.bot.score_source = s
            return TestResult(
                Verdict.PASS,
                f"the only counter, {labels[s]!r}, went {series[s][0]} → {max(series[s])} ({s})",
            )
        if not o.bot.rows_cleared:
            return TestResult(
                Verdict.INCONCLUSIVE,
                f"the only counter is {labels[lines[0]]!r} and no line was cleared",
            )
    dead = died_at(o)
    if dead is not None:
        # Only play before the game stopped reacting can show a score that should rise.
        locks = sum(1 for t in o.bot.lock_times if t <= dead)
        if locks < 4:
            return TestResult(
                Verdict.INCONCLUSIVE,
                f"the game stopped reacting at {dead:.1f}s after {locks} placed piece(s): "
                "too little play to judge the score",
            )
    scores = [s for s in series if not labels[s] or not NOT_SCORE.search(labels[s])]
    if scores and not o.bot.rows_cleared:
        # Many games score only line clears: a score shown that stood still while no row
        # was completed says nothing against it.
        s = scores[0]
        return TestResult(
            Verdict.INCONCLUSIVE,
            f"{labels[s] or 'a number'!r} stayed {series[s][-1]} over {o.bot.locks} placed "
            "pieces, but no line was cleared (a game may score only line clears)",
        )
    if o.bot.locks >= 4 or o.bot.rows_cleared:
        seen = ", ".join(f"{labels[s] or s}={series[s][-1]}" for s in list(series)[:4]) or "none"
        return TestResult(
            Verdict.FAIL,
            f"no visible score increased over {o.bot.locks} placed pieces and {o.bot.rows_cleared} cleared lines (numbers seen: {seen})",
        )
    return TestResult(Verdict.INCONCLUSIVE, "too little play to judge the score")


def game_over(o: Observed) -> TestResult:
    if (r := _needs_start(o)) is not None:
        return r
    return _from_evidence(o, "game_over", "the stack never reached the top")


def endurance(o: Observed) -> TestResult:
    if (r := _needs_start(o)) is not None:
        return r
    assert o.bot is not None and o.bot.started_at is not None
    start = o.bot.started_at
    end = start + o.endurance_s
    last_answer = o.log.reads[-1] if o.log.reads else start
    for name, at in (
        ("crashed", o.log.crashed_at),
        ("stopped answering (frozen)", o.log.frozen_at),
        ("navigated away from the game", o.log.navigated_away_at),
    ):
        if at is not None and at < end:
            return TestResult(Verdict.FAIL, f"the page {name} {at - start:.1f}s into play")
        if at is not None and last_answer < end:
            # On a loaded machine the query that notices a hang can time out only after
            # the window; the page last answered inside it and never again: it died there.
            return TestResult(
                Verdict.FAIL,
                f"the page {name}: it last answered {last_answer - start:.1f}s into play "
                "and never again",
            )
    dead = died_at(o)
    if dead is not None and dead < end:
        why = " after an uncaught exception" if o.log.page_errors else ""
        return TestResult(
            Verdict.FAIL,
            f"the game stopped reacting {dead - start:.1f}s into play{why}: the field no longer "
            "changed although keys were pressed",
        )
    changes = [f.t for f in o.log.frames if start <= f.t <= end]
    game_over_at = o.bot.first_game_over_at
    horizon = min(end, game_over_at) if game_over_at is not None else end
    last_read = o.log.reads[-1] if o.log.reads else start
    if last_read < horizon - 1.0:
        return TestResult(
            Verdict.INCONCLUSIVE, f"observation ended {last_read - start:.1f}s into play"
        )
    points = [start, *[t for t in changes if t <= horizon], horizon]
    gravity = o.bot.evidence.has("gravity", "pass")
    gap, gap_at = 0.0, start
    for a, b in itertools.pairwise(points):
        if any(p0 <= a and b <= p1 + 0.5 for p0, p1 in o.bot.pauses):
            continue  # a game over and its restart, not a freeze
        presses = sum(1 for t, _k, _p in o.log.actions if a < t < b)
        # Without gravity a field stands still while nobody plays: only count stillness
        # the bot tried to disturb.
        if (gravity or presses >= 3) and b - a > gap:
            gap, gap_at = b - a, a
    errors = [t for t, _ in o.log.page_errors if start <= t <= horizon]
    if gap > STILL_GAP_S:
        why = " after an uncaught exception" if errors else ""
        return TestResult(
            Verdict.FAIL,
            f"the field stood still for {gap:.1f}s from {gap_at - start:.1f}s into play{why}",
        )
    # The bot's own top-out, timed to end with the window, ending the game a little early
    # is the window played to the game over it brought about, not a game that ended early.
    top_out_began = getattr(o.bot, "top_out_began", None)
    ended_by_top_out = (
        game_over_at is not None and top_out_began is not None and game_over_at >= top_out_began
    )
    if game_over_at is not None and game_over_at < end - 1.0 and not ended_by_top_out:
        return TestResult(
            Verdict.INCONCLUSIVE,
            f"the game ended {game_over_at - start:.1f}s into play and could not be restarted",
        )
    return TestResult(
        Verdict.PASS,
        f"{o.endurance_s:.0f}s of play, field changed at least every {gap:.1f}s, page answering",
    )


def no_errors(o: Observed) -> TestResult:
    if not o.loaded:
        return TestResult(Verdict.INCONCLUSIVE, "the page did not load")
    started = o.bot.started_at if o.bot else None
    if o.log.page_errors:
        t, text = o.log.page_errors[0]
        return TestResult(Verdict.FAIL, f"uncaught exception at {t:.1f}s: {text[:200]}")
    if o.log.console_errors:
        t, text = o.log.console_errors[0]
        return TestResult(Verdict.FAIL, f"console.error at {t:.1f}s: {text[:200]}")
    frozen = o.log.frozen_at
    if frozen is not None and (started is None or frozen < started):
        return TestResult(
            Verdict.INCONCLUSIVE, f"the page stopped answering at {frozen:.1f}s, before any play"
        )
    if o.bot is None or started is None or not o.bot.locks:
        # Most errors come from play (a rotation, a line clear, the top-out): a page whose
        # game never ran, or ran without one piece landing, has not shown it has none.
        ran = "the game never started" if started is None else "no piece was seen landing"
        return TestResult(
            Verdict.INCONCLUSIVE,
            f"no uncaught exception and no console.error, but {ran}: the game's play never "
            "ran far enough to show it raises none",
        )
    ignored = (
        f" ({len(o.log.ignored_console)} failed resource loads or sounds that could not play"
        " ignored)"
        if o.log.ignored_console
        else ""
    )
    return TestResult(Verdict.PASS, "no uncaught exception and no console.error" + ignored)


DERIVATIONS: dict[str, Callable[[Observed], TestResult]] = {
    "loads": loads,
    "starts": starts,
    "gravity": _evidence_test("gravity", "no piece was watched without input"),
    "move_left": _evidence_test("move_left", "no piece was available to move"),
    "move_right": _evidence_test("move_right", "no piece was available to move"),
    "soft_drop": _evidence_test("soft_drop", "no piece was available to soft-drop"),
    "rotate": _evidence_test("rotate", "no non-O piece was available to rotate"),
    "hard_drop": _evidence_test("hard_drop", "no piece was available to hard-drop"),
    "walls": walls,
    "lock": _evidence_test("lock", "no piece was seen landing and the next one appearing"),
    "spawn": spawn,
    "line_clear": line_clear,
    "score": score,
    "game_over": game_over,
    "endurance": endurance,
    "no_errors": no_errors,
}
assert tuple(DERIVATIONS) == TEST_IDS


def derive_all(o: Observed) -> dict[str, TestResult]:
    results: dict[str, TestResult] = {}
    for test, derive in DERIVATIONS.items():
        try:
            results[test] = derive(o)
        except Exception as error:
            results[test] = TestResult(Verdict.INCONCLUSIVE, f"could not be derived: {error!r}")
    return results

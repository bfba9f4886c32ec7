"""From the observation log to the sixteen verdicts: `judge(log)`, a pure function.

Each test has its own function reading the log (observations.py) and nothing else; it
writes nothing back. One failing derivation never stops the others (it becomes
INCONCLUSIVE with the reason). A PASS is only ever given on positive evidence: the
renderer reader's episode for it and, where the state reader found the game's own state,
the same event there (`crosscheck.py`). Because the verdicts read only the log, a saved
`observations.json` is judged again offline (`bench rejudge`) with the rules of the day.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench_pipeline.bot import crosscheck
from bench_pipeline.bot.contract import TEST_IDS, TestResult, Verdict
from bench_pipeline.bot.geometry import ANCHORED, COLS, NARROWED, ROWS
from bench_pipeline.bot.observations import FieldSeen, ObservationLog
from bench_pipeline.bot.readers.state_model import interpret
from bench_pipeline.bot.words import LINES_LABEL, NOT_SCORE, SCORE_LABEL

# Score, not-a-score and lines labels: words.json (shared with the page probe).
# A number first shown this long after the start, already above zero, rose from nothing.
APPEARED_AFTER_S = 3.0
STILL_GAP_S = 5.0  # the field must change at least this often during the endurance window


Observed = ObservationLog  # what every derivation reads


@dataclass(frozen=True)
class Judgement:
    """The sixteen verdicts, and what the score verdict found the score in."""

    results: dict[str, TestResult]
    score_source: str | None


def _standard(g: FieldSeen) -> bool:
    return (g.cols, g.rows) == (COLS, ROWS)


def _size_assumed(g: FieldSeen) -> bool:
    """10x20 was taken, not counted: from a 1:2 shape, or as 10x20 pitches anchored on
    the few cells drawn so far."""
    return g.by_shape or ANCHORED in g.locator


def died_at(o: Observed) -> float | None:
    """When the game stopped reacting for good (a crash, an endless loop), if it did.

    The field never changed again after that moment although the bot kept pressing keys
    for a while: what was tried afterwards says nothing about the mechanic tried.
    """
    if not o.frames:
        return None
    last_change = o.frames[-1].t
    presses_after = [t for t, _k, _p in o.actions if t > last_change + 0.5]
    observed_until = o.reads[-1] if o.reads else last_change
    ends = [t for t in (o.frozen_at, o.crashed_at, o.navigated_away_at) if t]
    if ends:
        return min(ends)
    if len(presses_after) >= 3 and observed_until - last_change > 5.0:
        if o.evidence.has("game_over", "pass"):
            return None  # a still field after game over is the game over, not a death
        return last_change
    return None


def _from_evidence(o: Observed, test: str, missing: str) -> TestResult:
    ev = o.evidence
    dead = died_at(o)
    fails = [(e.t, e.detail) for e in ev.episodes(test, "fail")]
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
        return confirmed(o, test)
    return TestResult(Verdict.INCONCLUSIVE, missing)


def confirmed(o: Observed, test: str) -> TestResult:
    """A PASS the renderer reader claimed, confirmed by the game's own state where the state
    reader found the part the test is about (crosscheck.py): the first episode the state
    does not contradict gives the PASS; when the state contradicts every one, the verdict
    is INCONCLUSIVE with both readings."""
    state = state_of(o)
    contradicted: list[str] = []
    for episode in o.evidence.episodes(test, "pass"):
        word = crosscheck.check(test, episode, state)
        if word.agrees is not False:
            reason = episode.detail + (f"; {word.saw}" if word.agrees else "")
            return TestResult(Verdict.PASS, reason)
        contradicted.append(f"the page showed: {episode.detail}; but {word.saw}")
    return TestResult(
        Verdict.INCONCLUSIVE,
        "the two readers disagree: " + " / ".join(contradicted[:2]),
    )


def state_of(o: Observed) -> crosscheck.StateView | None:
    """The game's own state as the verdicts read it (interpreted once per log), None where
    the state reader found nothing trustworthy (the renderer reader then decides alone)."""
    if not o.state or not o.state_samples:
        return None
    memo = _STATE_VIEWS.get(id(o))
    if memo is not None and memo[0] is o:
        return memo[1]
    view = _trusted(o, state_view(o))
    _STATE_VIEWS.clear()  # one log at a time: no memory kept across logs
    _STATE_VIEWS[id(o)] = (o, view)
    return view


_STATE_VIEWS: dict[int, tuple[ObservationLog, crosscheck.SampledState | None]] = {}
# A finding of the state model below this confidence is no second reader.
MIN_STATE_CONFIDENCE = 0.6
# A part of the state (the piece's x, its y, the board) speaks against a renderer's PASS
# only once it agreed with the renderer on this many episodes of its own tests: a wrong
# guess of the state model (the spawn column or a counter taken for x) then never turns a
# right PASS into INCONCLUSIVE. x and y are trusted apart: a right y (gravity agreed)
# says nothing of the x the model paired with it.
MIN_AGREEMENTS = 2
_ASPECT_TESTS = {
    "x": ("move_left", "move_right"),
    "y": ("gravity", "soft_drop"),
    "board": ("lock", "hard_drop", "line_clear"),
}


def _trusted(o: Observed, view: crosscheck.SampledState | None) -> crosscheck.SampledState | None:
    """`view` whose parts that never agreed with the renderer where both saw play may
    confirm a PASS but no longer contradict one."""
    if view is None:
        return None
    speaks = {}
    for aspect, tests in _ASPECT_TESTS.items():
        agreed = sum(
            crosscheck.check(test, episode, view).agrees is True
            for test in tests
            for episode in o.evidence.episodes(test, "pass")
        )
        speaks[aspect] = agreed >= MIN_AGREEMENTS
    return crosscheck.SampledState(
        piece=view.piece,
        board=view.board,
        scores=view.scores,
        over=view.over,
        board_speaks_against=view.board_speaks_against and speaks["board"],
        x_speaks_against=speaks["x"],
        y_speaks_against=speaks["y"],
    )


def state_view(o: Observed) -> crosscheck.SampledState | None:
    """Interpret the state samples of the log (readers/state_model.py) into the series the
    cross-checks read: the piece's x/y, the board's filled cells, the score, the flag."""
    g = o.field_seen
    grid = (g.rows, g.cols) if g else None
    actions = [(t, key) for t, key, _purpose in o.actions]
    model = interpret(o.state or {}, list(o.state_samples), actions, grid)
    samples = [(t, s) for t, s in o.state_samples if s and s.get("ok", True)]

    def sure(finding: Any) -> bool:
        return finding is not None and finding.confidence >= MIN_STATE_CONFIDENCE

    def series(sid: str | None) -> list[tuple[float, float]]:
        out = []
        for t, s in samples:
            value = (s.get("scalars") or {}).get(sid) if sid else None
            if isinstance(value, int | float) and not isinstance(value, bool):
                out.append((t, float(value)))
        return out

    piece: list[tuple[float, float, float]] = []
    if sure(model.piece) and model.piece.x_id and model.piece.y_id:  # type: ignore[union-attr]
        ys = dict(series(model.piece.y_id))  # type: ignore[union-attr]
        piece = [(t, x, ys[t]) for t, x in series(model.piece.x_id) if t in ys]  # type: ignore[union-attr]
    board = []
    if sure(model.board):
        board = [(t, sum(row.count("#") for row in rows)) for t, rows in model.board.frames]  # type: ignore[union-attr]
    scores = series(model.score.id) if sure(model.score) else []  # type: ignore[union-attr]
    over: list[tuple[float, bool]] = []
    if sure(model.game_over):
        flag = model.game_over
        for t, s in samples:
            scalars = s.get("scalars") or {}
            if flag.id in scalars:  # type: ignore[union-attr]
                over.append((t, scalars[flag.id] == flag.over_value))  # type: ignore[union-attr]
    if not (piece or board or scores or over):
        return None
    named = model.board is not None and not model.board.path.startswith("heap#")
    return crosscheck.SampledState(
        piece=piece, board=board, scores=scores, over=over, board_speaks_against=named
    )


def state_numbers(o: Observed) -> list[float]:
    """Every number the state reader saw in the game's state, for the score's check."""
    out: set[float] = set()
    for _t, sample in o.state_samples:
        for value in ((sample or {}).get("scalars") or {}).values():
            if isinstance(value, int | float) and not isinstance(value, bool):
                out.add(float(value))
    return sorted(out)


def _grid(o: Observed) -> TestResult | None:
    """INCONCLUSIVE for grid-dependent tests when no playfield could be read."""
    if o.field_seen is None:
        return TestResult(
            Verdict.INCONCLUSIVE, "no playfield was located, so it could not be observed"
        )
    return None


def loads(o: Observed) -> TestResult:
    if not o.loaded:
        return TestResult(Verdict.FAIL, f"the page did not load: {o.load_error}")
    g = o.field_seen
    if g is None:
        return TestResult(
            Verdict.FAIL, "the page loaded but no playfield (canvas, DOM or SVG grid) was found"
        )
    if g.by_shape and not _lattice_confirmed(o):
        shape = "a 1:2 shape" if _standard(g) else f"room for {g.cols}x{g.rows} square cells"
        return TestResult(
            Verdict.INCONCLUSIVE,
            f"a {g.renderer} area with {shape} was taken for the field ({g.locator}), but "
            f"no piece was seen falling or moving on its {g.cols}x{g.rows} cells to confirm it",
        )
    if not _standard(g):
        how = ", counted in square cells of its box" if g.by_shape else ""
        return TestResult(
            Verdict.FAIL, f"the playfield is {g.cols}x{g.rows}{how}, not 10x20 ({g.locator})"
        )
    if _size_assumed(g) and (missing := _size_unseen(o)):
        # A 10x16 or 9x18 field read as 10x20 still shows pieces falling and moving by
        # whole cells: only its edges tell its size.
        return TestResult(
            Verdict.INCONCLUSIVE,
            f"the field's 10x20 size was assumed, not seen ({g.locator}), and {missing}",
        )
    if (doubt := _pushed_out_of_narrowed_field(o)) is not None:
        return TestResult(Verdict.INCONCLUSIVE, doubt)
    loads = o.facts.loads
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
    g = o.field_seen
    if g is None or NARROWED not in g.locator:
        return None
    out = next(
        (
            detail
            for _t, outcome, detail, _data in o.evidence.items.get("walls", [])
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
    walls = [e.detail for e in o.evidence.episodes("walls", "pass")]
    missing = [
        f"no piece was stopped by the {side} wall in its outer column"
        for side in ("left", "right")
        if not any(f"the {side} wall" in d for d in walls)
    ]
    if not any(frame.filled[-1].any() for frame in o.frames):
        missing.append("no cell was seen in its bottom row")
    return "; ".join(missing)


def _lattice_confirmed(o: Observed) -> bool:
    """A tetromino was seen falling or moving by whole cells of the field read."""
    ev = o.evidence
    return ev is not None and any(
        ev.has(test, "pass") for test in ("gravity", "move_left", "move_right")
    )


def starts(o: Observed) -> TestResult:
    if (r := _grid(o)) is not None:
        return r
    if o.evidence.has("starts", "pass"):
        return TestResult(
            Verdict.PASS, f"{o.facts.start_mechanism}: {o.evidence.first('starts', 'pass')}"
        )
    if o.crashed_at is not None or o.frozen_at is not None:
        return TestResult(Verdict.FAIL, "the page crashed or froze before a piece appeared")
    if o.blind_at is not None:
        return TestResult(
            Verdict.INCONCLUSIVE,
            "screenshots of the page kept timing out while it still answered, before a piece "
            "appeared: the bot could no longer see it",
        )
    return TestResult(
        Verdict.FAIL,
        o.evidence.first("starts", "fail")
        or "no start mechanism made a piece appear (auto, buttons, keys, click)",
    )


def _needs_start(o: Observed) -> TestResult | None:
    if (r := _grid(o)) is not None:
        return r
    if o.facts.started_at is None:
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
    if not (o.facts.controls["left"] and o.facts.controls["right"]):
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
    if o.evidence.has("spawn", "pass"):
        return TestResult(Verdict.PASS, o.evidence.first("spawn", "pass") or "")
    if o.facts.locks >= 2 and o.crashed_at is None and o.frozen_at is None:
        return TestResult(
            Verdict.FAIL, f"{o.facts.locks} pieces landed and no new piece appeared at the top"
        )
    return TestResult(Verdict.INCONCLUSIVE, "no piece was seen landing")


def _year_in_small_print(label: str | None, value: int) -> bool:
    """A year with no score or lines label ("© 2022" in a footer scrolled into view): a
    number that shows up late is taken to have risen from nothing, but not this one."""
    label = label or ""
    return 1970 <= value <= 2100 and not (SCORE_LABEL.search(label) or LINES_LABEL.search(label))


def _score_as_shown(o: Observed) -> TestResult:
    if (r := _needs_start(o)) is not None:
        return r
    series: dict[str, list[int]] = defaultdict(list)
    labels: dict[str, str] = {}
    started = o.facts.started_at
    assert started is not None
    for t, source, label, value in o.numbers:
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
        return TestResult(
            Verdict.PASS, f"{labels[s]!r} went {series[s][0]} → {max(series[s])} ({s})", found=s
        )
    bare = [s for s in increased if not labels[s] or not NOT_SCORE.search(labels[s])]
    if bare:
        s = bare[0]
        return TestResult(
            Verdict.PASS, f"a number went {series[s][0]} → {max(series[s])} ({s})", found=s
        )
    # A game whose only counter is the lines cleared ("Lines" rather than "Score"): that
    # counter is its score, unless a score-labelled number is shown as well and stood still.
    lines = [s for s in series if labels[s] and LINES_LABEL.search(labels[s])]
    if lines and not any(SCORE_LABEL.search(labels[s]) for s in series):
        grew = [s for s in lines if s in increased]
        if grew:
            s = grew[0]
            return TestResult(
                Verdict.PASS,
                f"the only counter, {labels[s]!r}, went {series[s][0]} → {max(series[s])} ({s})",
                found=s,
            )
        if not o.facts.rows_cleared:
            return TestResult(
                Verdict.INCONCLUSIVE,
                f"the only counter is {labels[lines[0]]!r} and no line was cleared",
            )
    dead = died_at(o)
    if dead is not None:
        # Only play before the game stopped reacting can show a score that should rise.
        locks = sum(1 for t in o.facts.lock_times if t <= dead)
        if locks < 4:
            return TestResult(
                Verdict.INCONCLUSIVE,
                f"the game stopped reacting at {dead:.1f}s after {locks} placed piece(s): "
                "too little play to judge the score",
            )
    scores = [s for s in series if not labels[s] or not NOT_SCORE.search(labels[s])]
    if scores and not o.facts.rows_cleared:
        # Many games score only line clears: a score shown that stood still while no row
        # was completed says nothing against it.
        s = scores[0]
        return TestResult(
            Verdict.INCONCLUSIVE,
            f"{labels[s] or 'a number'!r} stayed {series[s][-1]} over {o.facts.locks} placed "
            "pieces, but no line was cleared (a game may score only line clears)",
        )
    if o.facts.locks >= 4 or o.facts.rows_cleared:
        seen = ", ".join(f"{labels[s] or s}={series[s][-1]}" for s in list(series)[:4]) or "none"
        return TestResult(
            Verdict.FAIL,
            f"no visible score increased over {o.facts.locks} placed pieces and {o.facts.rows_cleared} cleared lines (numbers seen: {seen})",
        )
    return TestResult(Verdict.INCONCLUSIVE, "too little play to judge the score")


def score(o: Observed) -> TestResult:
    """A visible number that rose (as the page shows it), confirmed by the game's own
    score where the state reader found one: the shown values must be values it took."""
    shown = _score_as_shown(o)
    if shown.verdict is not Verdict.PASS or shown.found is None:
        return shown
    values = [float(v) for _t, source, _label, v in o.numbers if source == shown.found]
    word = crosscheck.check_score(values, state_of(o), state_numbers(o))
    if word.agrees is False:
        return TestResult(
            Verdict.INCONCLUSIVE,
            f"the two readers disagree: the page showed {shown.reason}; but {word.saw}",
        )
    if word.agrees:
        return TestResult(Verdict.PASS, f"{shown.reason}; {word.saw}", found=shown.found)
    return shown


def game_over(o: Observed) -> TestResult:
    if (r := _needs_start(o)) is not None:
        return r
    return _from_evidence(o, "game_over", "the stack never reached the top")


def endurance(o: Observed) -> TestResult:
    if (r := _needs_start(o)) is not None:
        return r
    assert o.facts.started_at is not None
    start = o.facts.started_at
    end = start + o.endurance_s
    last_answer = o.reads[-1] if o.reads else start
    for name, at in (
        ("crashed", o.crashed_at),
        ("stopped answering (frozen)", o.frozen_at),
        ("navigated away from the game", o.navigated_away_at),
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
        why = " after an uncaught exception" if o.page_errors else ""
        return TestResult(
            Verdict.FAIL,
            f"the game stopped reacting {dead - start:.1f}s into play{why}: the field no longer "
            "changed although keys were pressed",
        )
    changes = [f.t for f in o.frames if start <= f.t <= end]
    game_over_at = o.facts.first_game_over_at
    horizon = min(end, game_over_at) if game_over_at is not None else end
    last_read = o.reads[-1] if o.reads else start
    if last_read < horizon - 1.0:
        return TestResult(
            Verdict.INCONCLUSIVE, f"observation ended {last_read - start:.1f}s into play"
        )
    points = [start, *[t for t in changes if t <= horizon], horizon]
    gravity = o.evidence.has("gravity", "pass")
    gap, gap_at = 0.0, start
    for a, b in itertools.pairwise(points):
        if any(p0 <= a and b <= p1 + 0.5 for p0, p1 in o.facts.pauses):
            continue  # a game over and its restart, not a freeze
        presses = sum(1 for t, _k, _p in o.actions if a < t < b)
        # Without gravity a field stands still while nobody plays: only count stillness
        # the bot tried to disturb.
        if (gravity or presses >= 3) and b - a > gap:
            gap, gap_at = b - a, a
    errors = [t for t, _ in o.page_errors if start <= t <= horizon]
    if gap > STILL_GAP_S:
        why = " after an uncaught exception" if errors else ""
        return TestResult(
            Verdict.FAIL,
            f"the field stood still for {gap:.1f}s from {gap_at - start:.1f}s into play{why}",
        )
    # The bot's own top-out, timed to end with the window, ending the game a little early
    # is the window played to the game over it brought about, not a game that ended early.
    top_out_began = o.facts.top_out_began
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
    started = o.facts.started_at
    if o.page_errors:
        t, text = o.page_errors[0]
        return TestResult(Verdict.FAIL, f"uncaught exception at {t:.1f}s: {text[:200]}")
    if o.console_errors:
        t, text = o.console_errors[0]
        return TestResult(Verdict.FAIL, f"console.error at {t:.1f}s: {text[:200]}")
    if o.console_muted_at is not None:
        # The bot stopped listening to a flooded console: an error after that went unheard.
        return TestResult(
            Verdict.INCONCLUSIVE,
            f"the page flooded the console and the bot stopped listening at "
            f"{o.console_muted_at:.1f}s; no error was heard before that",
        )
    frozen = o.frozen_at
    if frozen is not None and (started is None or frozen < started):
        return TestResult(
            Verdict.INCONCLUSIVE, f"the page stopped answering at {frozen:.1f}s, before any play"
        )
    if started is None or not o.facts.locks:
        # Most errors come from play (a rotation, a line clear, the top-out): a page whose
        # game never ran, or ran without one piece landing, has not shown it has none.
        ran = "the game never started" if started is None else "no piece was seen landing"
        return TestResult(
            Verdict.INCONCLUSIVE,
            f"no uncaught exception and no console.error, but {ran}: the game's play never "
            "ran far enough to show it raises none",
        )
    ignored = (
        f" ({len(o.ignored_console)} failed resource loads or sounds that could not play ignored)"
        if o.ignored_console
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


def judge(o: ObservationLog) -> Judgement:
    """The sixteen verdicts of one observation log. Pure: reads the log, writes nothing."""
    results: dict[str, TestResult] = {}
    for test, derive in DERIVATIONS.items():
        try:
            results[test] = derive(o)
        except Exception as error:
            results[test] = TestResult(Verdict.INCONCLUSIVE, f"could not be derived: {error!r}")
    return Judgement(results, results["score"].found)


def derive_all(o: ObservationLog) -> dict[str, TestResult]:
    return judge(o).results

"""What a game's JavaScript state means: the board, the piece's x/y, the score, game over.

Pure (no browser): `interpret` takes the state reader's description (`StateReader.scan`),
its samples taken during play, and the keys pressed meanwhile, and decides from shape and
behaviour — never from names alone, which only break ties:

- the **board** is the candidate whose occupancy changes during play, of the renderer's
  size (or its transpose: some games store columns first), oriented rows x cols with the
  top row first (gravity, or where the stack settles, says which way is down), with the
  hidden rows above the field and wall columns/floor rows inside the array noted;
- the piece's **x** is a number that a pair of keys moves by the same step in opposite
  directions (the one that lowers it is "left"); its **y** a number that rises (or falls)
  by a steady step with no key pressed;
- the **score** is a number that rises when rows are cleared (and never falls but to
  restart); a number that rises by the rows cleared is the **lines** counter;
- **game over** is a flag (boolean, number or short string) that changes once, when the
  board tops out.

Each finding carries a confidence in 0..1 and the evidence it rests on; None where nothing
fits (then the renderer reader alone is used, as before).
"""

from __future__ import annotations

import itertools
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

Sample = tuple[float, dict[str, Any]]
Action = tuple[float, str]
Cell = tuple[int, int]

MAX_HIDDEN_ROWS = 6
MAX_WALLS = 2
BOARD_NAMES = re.compile(r"board|grid|field|well|matrix|arena|playfield|map|stage|cells", re.I)
X_NAMES = re.compile(r"(^|[^a-z])(x|col|column|px)$", re.I)
Y_NAMES = re.compile(r"(^|[^a-z])(y|row|py)$", re.I)
SCORE_NAMES = re.compile(r"score|points|pts", re.I)
OVER_NAMES = re.compile(r"over|dead|lost|end|running|playing|alive|state|status", re.I)


@dataclass
class BoardFinding:
    id: str
    path: str
    columns_first: bool  # the array is indexed [col][row]: transposed to rows x cols
    flipped: bool  # the array's first row is the bottom one
    hidden_rows: int  # rows above the visible field (spawn rows)
    walls: tuple[int, int]  # always-filled columns inside the array, left and right
    floor_rows: int  # always-filled rows at the bottom
    array_shape: tuple[int, int]  # as stored (outer, inner)
    shape: tuple[int, int]  # visible field (rows, cols)
    matches_renderer: bool | None
    includes_piece: bool  # the falling piece is written into the array
    confidence: float
    evidence: dict[str, Any]
    frames: list[tuple[float, list[str]]] = field(default_factory=list)  # visible, '#'/'.'


@dataclass
class PieceFinding:
    x_id: str | None
    x_path: str | None
    y_id: str | None
    y_path: str | None
    left_key: str | None
    right_key: str | None
    x_step: float | None
    y_step: float | None
    shape_id: str | None
    confidence: float
    evidence: dict[str, Any]


@dataclass
class ScalarFinding:
    id: str
    path: str
    confidence: float
    evidence: dict[str, Any]


@dataclass
class GameOverFinding:
    id: str
    path: str
    playing_value: Any
    over_value: Any
    confidence: float
    evidence: dict[str, Any]


@dataclass
class StateModel:
    board: BoardFinding | None = None
    piece: PieceFinding | None = None
    score: ScalarFinding | None = None
    lines: ScalarFinding | None = None
    game_over: GameOverFinding | None = None
    notes: list[str] = field(default_factory=list)

    def to_json(self, frames: bool = False) -> dict[str, Any]:
        out = asdict(self)
        if out["board"] is not None and not frames:
            out["board"].pop("frames", None)
        return out


# ---------------------------------------------------------------------------------------
# Board


def _grid_of(board: dict[str, Any], rows: list[str] | None) -> list[str] | None:
    """The sampled rows as stored (a flat board: one string, re-cut later)."""
    if not rows:
        return None
    if board.get("layout") == "flat":
        return ["".join(rows)]
    return list(rows)


def _filled(grid: Sequence[str]) -> set[Cell]:
    return {(r, c) for r, line in enumerate(grid) for c, ch in enumerate(line) if ch != "."}


def _cut(flat: str, width: int) -> list[str]:
    return [flat[i : i + width] for i in range(0, len(flat), width)]


def _keys_between(actions: Sequence[Action], t0: float, t1: float) -> list[str]:
    return [k for t, k in actions if t0 < t <= t1]


def _shift_votes(
    series: list[tuple[float, list[str]]], actions: Sequence[Action]
) -> tuple[Counter[tuple[int, int]], Counter[tuple[int, int]]]:
    """Which way cells move between samples: with no key pressed (gravity), and with keys.
    A vote is (axis, sign): axis 0 = the array's outer index, 1 = inner index."""
    gravity: Counter[tuple[int, int]] = Counter()
    keyed: Counter[tuple[int, int]] = Counter()
    for (t0, g0), (t1, g1) in itertools.pairwise(series):
        a, b = _filled(g0), _filled(g1)
        removed, added = a - b, b - a
        if not removed or not added or len(added) > 8 or len(removed) > 8:
            continue  # nothing moved, or rows cleared / a new game
        # The piece moved by d when every cell it left, moved by d, is filled now and
        # every new cell, moved back, was filled before (a piece moving along its own
        # length, an I falling, leaves one cell and takes one four rows away).
        found: list[tuple[int, int, int]] = []  # (k, axis, sign)
        for axis in (0, 1):
            for sign in (1, -1):
                for k in (1, 2, 3, 4):
                    d = (sign * k, 0) if axis == 0 else (0, sign * k)
                    if all((r + d[0], c + d[1]) in b for r, c in removed) and all(
                        (r - d[0], c - d[1]) in a for r, c in added
                    ):
                        found.append((k, axis, sign))
                        break
        if not found:
            continue
        found.sort()
        if len(found) > 1 and found[0][0] == found[1][0]:
            continue  # two ways fit as well: no vote
        _, axis, sign = found[0]
        (keyed if _keys_between(actions, t0, t1) else gravity)[(axis, sign)] += 1
    return gravity, keyed


@dataclass
class _Orientation:
    columns_first: bool
    flipped: bool
    width: int | None = None  # a flat board's row width as stored


def _orient(grid: list[str], o: _Orientation) -> list[str]:
    """A stored grid (already cut to rows) as rows x cols, top row first."""
    if o.columns_first:
        width = max((len(r) for r in grid), default=0)
        grid = ["".join(col[i] if i < len(col) else "." for col in grid) for i in range(width)]
    if o.flipped:
        grid = grid[::-1]
    return grid


def _board_candidate(
    board: dict[str, Any],
    samples: Sequence[Sample],
    actions: Sequence[Action],
    hint: tuple[int, int] | None,
) -> tuple[float, BoardFinding] | None:
    series: list[tuple[float, list[str]]] = []
    for t, sample in samples:
        grid = _grid_of(board, (sample.get("boards") or {}).get(board["id"]))
        if grid is not None:
            series.append((t, grid))
    if len(series) < 2:
        return None
    states = {tuple(g) for _, g in series}
    if len(states) < 2:
        return None  # never changed during play
    # -- a flat array: the width it is cut at decides its orientation
    widths: list[int | None] = [None]
    if board.get("layout") == "flat":
        length = len(series[0][1][0])
        options = []
        if hint:
            rows, cols = hint
            for width in (cols, cols + 2):
                if length % width == 0:
                    options.append(width)  # stored row by row
            for height in range(rows, rows + MAX_HIDDEN_ROWS + 1):
                if length % height == 0 and length // height in (cols, cols + 2):
                    options.append(height)  # stored column by column
        options += [w for w in (10, 12) if length % w == 0]
        widths = list(dict.fromkeys(options)) or [length]
    best: tuple[float, BoardFinding] | None = None
    for width in widths:
        stored = [(t, _cut(g[0], width) if width else g) for t, g in series]
        found = _judge_orientation(board, stored, actions, hint, width, len(states))
        if found and (best is None or found[0] > best[0]):
            best = found
    return best


def _judge_orientation(
    board: dict[str, Any],
    stored: list[tuple[float, list[str]]],
    actions: Sequence[Action],
    hint: tuple[int, int] | None,
    width: int | None,
    n_states: int,
) -> tuple[float, BoardFinding] | None:
    outer = len(stored[0][1])
    inner = max(len(r) for r in stored[0][1])
    gravity, keyed = _shift_votes(stored, actions)
    evidence: dict[str, Any] = {
        "states": n_states,
        "gravity_votes": {f"{a}{'+' if s > 0 else '-'}": n for (a, s), n in gravity.items()},
        "key_votes": {f"{a}{'+' if s > 0 else '-'}": n for (a, s), n in keyed.items()},
    }

    def fits(vertical: int, horizontal: int) -> bool:
        if hint is None:
            return False
        rows, cols = hint
        return (
            rows <= vertical <= rows + MAX_HIDDEN_ROWS + 1
            and cols <= horizontal <= cols + 2 * MAX_WALLS
        )

    # which axis is vertical: gravity first, then the renderer's size, then the stack
    vertical_axis: int | None = None
    down = 1
    if gravity:
        (axis, sign), votes = gravity.most_common(1)[0]
        other = sum(n for (a, _), n in gravity.items() if a != axis)
        if votes >= 2 and votes >= 2 * other:
            vertical_axis, down = axis, sign
            evidence["vertical_from"] = "gravity"
    if vertical_axis is None:
        if fits(outer, inner) and not fits(inner, outer):
            vertical_axis = 0
        elif fits(inner, outer) and not fits(outer, inner):
            vertical_axis = 1
        else:
            vertical_axis = 0 if outer >= inner else 1
        evidence["vertical_from"] = "size"
        # down: where the cells settle. The cells filled in the most samples are the
        # first locked ones, at the bottom (a falling piece passes, the top fills last).
        held: Counter[Cell] = Counter()
        for _, g in stored:
            held.update(_filled(g))
        if held:
            most = max(held.values())
            settled = [cell for cell, n in held.items() if n >= 0.8 * most]
            span = outer if vertical_axis == 0 else inner
            mean = sum((r if vertical_axis == 0 else c) for r, c in settled) / len(settled)
            down = 1 if mean >= (span - 1) / 2 else -1
            evidence["settled_cells"] = len(settled)
    orientation = _Orientation(columns_first=vertical_axis == 1, flipped=down < 0, width=width)
    frames = [(t, _orient(g, orientation)) for t, g in stored]
    full_rows = len(frames[0][1])
    full_cols = max(len(r) for r in frames[0][1])

    # -- walls: columns filled in every row of every sample; a floor likewise
    def column_always(c: int) -> bool:
        return all(all(c < len(r) and r[c] != "." for r in g) for _, g in frames)

    def row_always(r: int) -> bool:
        return all(all(ch != "." for ch in g[r]) for _, g in frames)

    left = 0
    while left < MAX_WALLS and column_always(left):
        left += 1
    right = 0
    while (
        right < MAX_WALLS and full_cols - 1 - right > left and column_always(full_cols - 1 - right)
    ):
        right += 1
    floor = 0
    while floor < MAX_WALLS and row_always(full_rows - 1 - floor):
        floor += 1
    if hint:
        # walls and a floor the renderer draws as part of the field stay in it: of the
        # ways to trim, the one giving the renderer's size, trimming most
        rows, cols = hint
        fitting = [
            (l_ + r_ + f_, l_, r_, f_)
            for l_ in range(left + 1)
            for r_ in range(right + 1)
            for f_ in range(floor + 1)
            if full_cols - l_ - r_ == cols and 0 <= full_rows - f_ - rows <= MAX_HIDDEN_ROWS
        ]
        if fitting:
            _, left, right, floor = max(fitting)
    vertical = full_rows - floor
    horizontal = full_cols - left - right
    hidden = 0
    matches: bool | None = None
    if hint:
        rows, cols = hint
        if 0 <= vertical - rows <= MAX_HIDDEN_ROWS:
            hidden = vertical - rows
        matches = vertical - hidden == rows and horizontal == cols
    elif horizontal == 10 and 20 < vertical <= 20 + MAX_HIDDEN_ROWS:
        hidden = vertical - 20
    visible = [(t, [r[left : full_cols - right] for r in g[hidden:vertical]]) for t, g in frames]
    visible = [(t, ["".join("#" if ch != "." else "." for ch in r) for r in g]) for t, g in visible]
    # -- how much to believe it
    score = min(n_states, 20) / 20
    if matches:
        score += 2.0
    elif hint is None and (vertical - hidden, horizontal) == (20, 10):
        score += 1.0
    if evidence["vertical_from"] == "gravity":
        score += 1.0
    if keyed:
        score += 0.5
    if BOARD_NAMES.search(board.get("path", "").rsplit(".", 1)[-1]):
        score += 0.1
    if vertical - hidden < 8 or horizontal < 4:
        score -= 1.5  # a preview or a piece's matrix, not a field
    confidence = max(0.0, min(1.0, score / 3.5))
    finding = BoardFinding(
        id=board["id"],
        path=board.get("path", ""),
        columns_first=orientation.columns_first,
        flipped=orientation.flipped,
        hidden_rows=hidden,
        walls=(left, right),
        floor_rows=floor,
        array_shape=(outer, inner),
        shape=(vertical - hidden, horizontal),
        matches_renderer=matches,
        includes_piece=bool(gravity),
        confidence=round(confidence, 2),
        evidence=evidence,
        frames=visible,
    )
    return score, finding


def find_board(
    description: dict[str, Any],
    samples: Sequence[Sample],
    actions: Sequence[Action],
    renderer_grid: tuple[int, int] | None = None,
) -> BoardFinding | None:
    best: tuple[float, BoardFinding] | None = None
    for board in description.get("boards") or []:
        found = _board_candidate(board, samples, actions, renderer_grid)
        if found and (best is None or found[0] > best[0]):
            best = found
    return best[1] if best else None


# ---------------------------------------------------------------------------------------
# Scalars


def _series(scalar_id: str, samples: Sequence[Sample]) -> list[tuple[float, Any]]:
    return [(t, (s.get("scalars") or {}).get(scalar_id)) for t, s in samples]


def _number(v: Any) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def _intervals(samples: Sequence[Sample], actions: Sequence[Action]) -> list[tuple[int, list[str]]]:
    """(index of the interval's first sample, keys pressed before the next sample)."""
    return [
        (i, _keys_between(actions, samples[i][0], samples[i + 1][0]))
        for i in range(len(samples) - 1)
    ]


def _mode(values: list[float]) -> tuple[float, int] | None:
    if not values:
        return None
    value, n = Counter(values).most_common(1)[0]
    return value, n


def _locks(board: BoardFinding | None) -> int:
    """How many times cells were added to the board (pieces locked or spawned)."""
    if board is None:
        return 0
    counts = [sum(r.count("#") for r in g) for _, g in board.frames]
    return sum(1 for a, b in itertools.pairwise(counts) if b > a)


def find_piece(
    description: dict[str, Any],
    samples: Sequence[Sample],
    actions: Sequence[Action],
    board: BoardFinding | None = None,
) -> PieceFinding | None:
    scalars = [s for s in description.get("scalars") or [] if s.get("type") == "number"]
    intervals = _intervals(samples, actions)
    values = {s["id"]: [_number(v) for _, v in _series(s["id"], samples)] for s in scalars}
    paths = {s["id"]: s.get("path", "") for s in scalars}

    def delta(sid: str, i: int) -> float | None:
        a, b = values[sid][i], values[sid][i + 1]
        return None if a is None or b is None else b - a

    # -- x: keys that move it by the same step in opposite directions
    per_key: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    quiet: dict[str, list[float]] = defaultdict(list)
    for i, keys in intervals:
        for sid in values:
            d = delta(sid, i)
            if d is None:
                continue
            if not keys:
                quiet[sid].append(d)
            elif len(set(keys)) == 1:
                per_key[sid][keys[0]].append(d / len(keys))
    x_best: tuple[float, dict[str, Any]] | None = None
    for sid, by_key in per_key.items():
        still = quiet.get(sid, [])
        calm = (sum(1 for d in still if d == 0) / len(still)) if still else 0.5
        if calm < 0.6:
            continue  # moves by itself: not x
        steps = {}
        for key, deltas in by_key.items():
            moved = [d for d in deltas if d != 0]
            m = _mode(moved)
            if m is None or m[1] < 1:
                continue
            steps[key] = (m[0], m[1], len(deltas))
        keys = sorted(steps)
        for a in keys:
            for b in keys:
                if a >= b or steps[a][0] != -steps[b][0]:
                    continue
                hits = steps[a][1] + steps[b][1]
                total = steps[a][2] + steps[b][2]
                score = hits * (hits / total) * calm + (0.5 if X_NAMES.search(paths[sid]) else 0)
                left, right = (a, b) if steps[a][0] < 0 else (b, a)
                item = {
                    "id": sid,
                    "left": left,
                    "right": right,
                    "step": abs(steps[a][0]),
                    "presses_moved": hits,
                    "presses": total,
                    "still_when_idle": round(calm, 2),
                    "score": score,
                }
                if x_best is None or score > x_best[0]:
                    x_best = (score, item)
    # -- y: rises (or falls) by a steady step with no key pressed
    y_best: tuple[float, dict[str, Any]] | None = None
    for sid in values:
        if x_best and sid == x_best[1]["id"]:
            continue
        moves = [d for d in quiet.get(sid, []) if d != 0]
        if x_best:
            # left and right move it opposite ways: another cell's x, not y (gravity
            # moves y the same way whichever key was pressed meanwhile)
            by_key = per_key.get(sid, {})
            left = _mode([d for d in by_key.get(x_best[1]["left"], []) if d != 0])
            right = _mode([d for d in by_key.get(x_best[1]["right"], []) if d != 0])
            if left and right and left[0] * right[0] < 0:
                continue
        if len(moves) < 2:
            continue
        ups = [d for d in moves if d > 0]
        downs = [d for d in moves if d < 0]
        main = ups if len(ups) >= len(downs) else downs
        sign = 1 if main is ups else -1
        if len(main) < 2 * (len(moves) - len(main)):
            continue  # as often up as down by itself: a colour, a random pick
        step = min(abs(d) for d in main)
        steady = sum(1 for d in main if abs(d) / step <= 4 and (abs(d) / step) % 1 == 0)
        distinct = len({abs(d) for d in main})
        if len(main) < 2 or steady / len(main) < 0.7 or distinct > 4:
            continue  # a timer or a score, not a row index
        series = [v for v in values[sid] if v is not None]
        span = (max(series) - min(series)) / step if series else 0
        if span > 64:
            continue  # runs far beyond any board: a counter
        # a new piece starts at the top again: y jumps back (with or without a key)
        every = [
            d for i in range(len(values[sid]) - 1) if (d := delta(sid, i)) is not None and d != 0
        ]
        resets = sum(1 for d in every if d * sign < 0)
        if resets == 0 and _locks(board) >= 3:
            continue  # pieces locked but it never went back: a counter, not a row
        score = len(main) * steady / len(main) + 0.5 * min(resets, 5)
        if Y_NAMES.search(paths[sid]):
            score += 0.5
        item = {
            "id": sid,
            "step": step * sign,
            "idle_moves": len(main),
            "against": len(moves) - len(main),
            "resets": resets,
            "score": score,
        }
        if y_best is None or score > y_best[0]:
            y_best = (score, item)
    if x_best is None and y_best is None:
        return None
    shape_id = None
    x_path = paths[x_best[1]["id"]] if x_best else None
    y_path = paths[y_best[1]["id"]] if y_best else None
    owner = (x_path or y_path or "").rsplit(".", 1)[0]
    for shape in description.get("shapes") or []:
        if owner and shape.get("path", "").rsplit(".", 1)[0] == owner:
            shape_id = shape["id"]
            break
    confidence = 0.0
    if x_best:
        x = x_best[1]
        confidence += 0.5 * min(1.0, x["presses_moved"] / 4) * x["still_when_idle"]
    if y_best:
        confidence += 0.4 * min(1.0, y_best[1]["idle_moves"] / 4)
    if x_best and y_best and x_path and y_path and x_path.rsplit(".", 1)[0] == owner:
        confidence += 0.1 if y_path.rsplit(".", 1)[0] == owner else 0.0
    return PieceFinding(
        x_id=x_best[1]["id"] if x_best else None,
        x_path=x_path,
        y_id=y_best[1]["id"] if y_best else None,
        y_path=y_path,
        left_key=x_best[1]["left"] if x_best else None,
        right_key=x_best[1]["right"] if x_best else None,
        x_step=x_best[1]["step"] if x_best else None,
        y_step=y_best[1]["step"] if y_best else None,
        shape_id=shape_id,
        confidence=round(min(1.0, confidence), 2),
        evidence={"x": x_best[1] if x_best else None, "y": y_best[1] if y_best else None},
    )


def _clears(board: BoardFinding | None) -> list[tuple[int, int]]:
    """(sample index, rows) where rows were cleared: full rows gone, cells removed."""
    if board is None:
        return []
    out = []
    frames = board.frames
    cols = board.shape[1]
    for i in range(len(frames) - 1):
        g0, g1 = frames[i][1], frames[i + 1][1]
        full0 = sum(1 for r in g0 if r and "." not in r)
        n0 = sum(r.count("#") for r in g0)
        n1 = sum(r.count("#") for r in g1)
        if full0 and n0 - n1 >= cols - 4:
            out.append((i, min(full0, max(1, round((n0 - n1 + 4) / cols)))))
    return out


def find_score(
    description: dict[str, Any],
    samples: Sequence[Sample],
    actions: Sequence[Action],
    board: BoardFinding | None,
    exclude: set[str],
) -> tuple[ScalarFinding | None, ScalarFinding | None]:
    clears = _clears(board)
    quiet = {i for i, keys in _intervals(samples, actions) if not keys}
    best: tuple[float, ScalarFinding] | None = None
    lines: tuple[float, ScalarFinding] | None = None
    for scalar in description.get("scalars") or []:
        sid = scalar["id"]
        if scalar.get("type") != "number" or sid in exclude:
            continue
        vals = [_number(v) for _, v in _series(sid, samples)]
        if any(v is not None and (v % 1 or abs(v) >= 1e9) for v in vals):
            continue  # a score is a modest whole number; a time is not
        # between the samples where it could be read (a new piece object is unreadable
        # for a moment: a reset hidden by that gap is still a fall)
        known = [(i, v) for i, v in enumerate(vals) if v is not None]
        deltas = [(j - 1, b - a) for (_, a), (j, b) in itertools.pairwise(known) if b != a]
        rises = [(i, d) for i, d in deltas if d > 0]
        falls = [(i, d) for i, d in deltas if d < 0]
        if not rises or len(falls) > 1:
            continue  # a score only rises (a restart may reset it once)
        at_clears = 0
        by_rows = 0
        for i, rows in clears:
            gained = sum(d for j, d in rises if i - 1 <= j <= i + 1)
            if gained > 0:
                at_clears += 1
                if gained == rows:
                    by_rows += 1
        idle_rises = sum(1 for i, _ in rises if i in quiet)
        if idle_rises >= 3 and idle_rises >= 0.4 * len(quiet):
            continue  # rises by itself, with no key and no clear: a clock or a tick count
        evidence = {
            "rises": len(rises),
            "falls": len(falls),
            "clears": len(clears),
            "rises_at_clears": at_clears,
            "rises_by_rows_cleared": by_rows,
            "rises_with_no_key": idle_rises,
        }
        name_bonus = 0.3 if SCORE_NAMES.search(scalar.get("path", "")) else 0.0
        if clears:
            if at_clears == 0:
                continue
            share = at_clears / len(clears)
            if by_rows == at_clears:
                finding = ScalarFinding(
                    sid, scalar.get("path", ""), round(0.8 * share, 2), evidence
                )
                if lines is None or share > lines[0]:
                    lines = (share, finding)
                continue
            score = 2 * share + name_bonus
            confidence = 0.5 + 0.5 * share
        else:
            if len(rises) < 2 or falls:
                continue  # with no clear seen, only a number that keeps rising is a guess
            if all(d == 1 for _, d in rises):
                continue  # one by one: a count of pieces, ticks or timers, not points
            score = 0.3 + name_bonus + min(len(rises), 5) / 50
            confidence = 0.3
        finding = ScalarFinding(sid, scalar.get("path", ""), round(confidence, 2), evidence)
        if best is None or score > best[0]:
            best = (score, finding)
    return (best[1] if best else None), (lines[1] if lines else None)


def _topped_out(board: BoardFinding | None) -> int | None:
    """The first sample where the stack reaches the top and the board stops changing."""
    if board is None:
        return None
    frames = board.frames
    for i, (_, g) in enumerate(frames):
        if not any("#" in r for r in g[:2]):
            continue
        rest = [tuple(f) for _, f in frames[i:]]
        if len(rest) >= 2 and len(set(rest[1:])) == 1:
            return i
        if len(rest) >= 2 and all("#" not in "".join(f) for f in rest[1:2]):
            return i  # topped out and cleared for a new game
    return None


def find_game_over(
    description: dict[str, Any],
    samples: Sequence[Sample],
    board: BoardFinding | None,
    exclude: set[str],
) -> GameOverFinding | None:
    top = _topped_out(board)
    best: tuple[float, GameOverFinding] | None = None
    for scalar in description.get("scalars") or []:
        sid = scalar["id"]
        if sid in exclude:
            continue
        kind = scalar.get("type")
        series = [v for _, v in _series(sid, samples)]
        known = [(i, v) for i, v in enumerate(series) if v is not None]
        if len(known) < 3:
            continue
        changes = [i for (i, a), (_, b) in itertools.pairwise(known) if a != b]
        # a boolean may flip back for a new game; a number or a string (a state) changes
        # once, and keeps its value: a piece's colour or size changes with every piece
        if not changes or len(changes) > (2 if kind == "boolean" else 1):
            continue
        if kind == "number" and (
            len({v for _, v in known}) > 3 or any(v not in range(10) for _, v in known)
        ):
            continue  # a flag or a state takes a few small values, not a count
        flip = changes[0]
        before, after = known[0][1], known[-1][1]
        if before == after:
            continue
        evidence: dict[str, Any] = {"changed_at_sample": flip + 1, "topped_out_at_sample": top}
        if top is not None:
            near = top - 2 <= flip <= top + 3
            if not near:
                continue
            confidence = 0.9 if kind == "boolean" else 0.7
            score = 2.0 - abs(flip - top) * 0.1
        else:
            # no top-out seen: a boolean that flips once, late, is only a guess
            if kind != "boolean" or flip < len(series) * 0.5:
                continue
            confidence = 0.3
            score = 0.5
        if OVER_NAMES.search(scalar.get("path", "")):
            score += 0.2
        finding = GameOverFinding(
            sid, scalar.get("path", ""), before, after, round(confidence, 2), evidence
        )
        if best is None or score > best[0]:
            best = (score, finding)
    return best[1] if best else None


def interpret(
    description: dict[str, Any],
    samples: Sequence[Sample],
    actions: Sequence[Action],
    renderer_grid: tuple[int, int] | None = None,
) -> StateModel:
    """Decide what the state reader's candidates are. `samples`: [(t, sample)];
    `actions`: [(t, key)] key presses on the same clock; `renderer_grid`: (rows, cols)."""
    model = StateModel()
    if not description or not description.get("ok", True):
        model.notes.append(f"no state: {(description or {}).get('error')}")
        return model
    usable = [(t, s) for t, s in samples if s and s.get("ok", True)]
    usable.sort(key=lambda item: item[0])
    if len(usable) < 2:
        model.notes.append("fewer than two samples")
        return model
    model.board = find_board(description, usable, actions, renderer_grid)
    if model.board is None:
        model.notes.append("no candidate board changed during play")
    model.piece = find_piece(description, usable, actions, model.board)
    used = set()
    if model.piece:
        used |= {i for i in (model.piece.x_id, model.piece.y_id) if i}
    model.score, model.lines = find_score(description, usable, actions, model.board, used)
    used |= {f.id for f in (model.score, model.lines) if f}
    model.game_over = find_game_over(description, usable, model.board, used)
    return model

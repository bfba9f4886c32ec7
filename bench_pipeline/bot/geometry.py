"""Where the playfield is: choosing among candidate boards, and a canvas's cell lattice.

Candidates come from the page probe (probe.js): DOM and SVG lattices of equal boxes,
boxes with the 1:2 shape of a 10x20 field, and canvases with what they drew (rects in
canvas pixels, from hooked fillRect/strokeRect/drawImage/rect calls). No colours and no
game-specific names are assumed.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

COLS, ROWS = 10, 20


@dataclass(frozen=True)
class BoardGeometry:
    """A cols x rows lattice in page CSS pixels."""

    renderer: str  # canvas | dom | svg
    x: float
    y: float
    width: float
    height: float
    cols: int
    rows: int
    locator: str
    # Taken for a 10x20 field from its 1:2 shape alone (no lattice of cells was seen):
    # only pieces moving on its cells confirm it.
    by_shape: bool = False

    @property
    def size_assumed(self) -> bool:
        """10x20 was taken, not counted: from a 1:2 shape, or as 10x20 pitches anchored
        on the few cells drawn so far."""
        return self.by_shape or ANCHORED in self.locator

    @property
    def standard(self) -> bool:
        return (self.cols, self.rows) == (COLS, ROWS)

    def rect(self) -> dict[str, float]:
        return {"x": self.x, "y": self.y, "w": self.width, "h": self.height}


def _near(value: float, target: float, tolerance: float) -> bool:
    return abs(value - target) <= tolerance


def _mode(values: Sequence[float], resolution: float = 1.0) -> tuple[float, int]:
    counts = Counter(round(v / resolution) * resolution for v in values)
    value, count = counts.most_common(1)[0]
    return value, count


# How far (in width / height) a DOM box may be from 1:2 and still be taken for 10x20:
# a border or a little padding; beyond it the box's rows are counted in square cells.
BOX_SHAPE_SLACK = 0.025
# Said in a locator when a field was taken for 10x20 from its 1:2 shape alone.
BY_SHAPE = "1:2 shape"

# Said in a locator when a 10x20 lattice was laid over the cells drawn so far.
ANCHORED = "anchored on drawn cells"

# Said in a locator when a wide lattice was narrowed to the columns holding drawn cells.
NARROWED = "narrowed to the"

# A field inside a canvas: x, y, w, h in canvas pixels, how it was found, cols, rows.
CanvasField = tuple[float, float, float, float, str, int, int]

# A playfield of another size is still played (and fails `loads`): these bound what is
# taken for a field rather than a preview box or a whole page of squares.
MIN_COLS, MAX_COLS, MIN_ROWS, MAX_ROWS = 6, 20, 12, 30


def _whole_cells(length: float, pitch: float) -> int | None:
    """`length` as a whole number of cell pitches (within a fifth of a cell), if it is one."""
    n = round(length / pitch)
    return n if n >= 1 and abs(length / pitch - n) <= 0.2 else None


def _field_columns(
    squares: Sequence[tuple[float, float, float, float]],
    x: float,
    y: float,
    h: float,
    pitch: float,
    cols: int,
) -> tuple[float, float, int]:
    """The window of COLS columns (x, width, COLS) of a wide lattice that holds the most
    drawn cells; among equals, one at an edge of the lattice, then the leftmost."""

    def count(k: int) -> int:
        x0, x1 = x + k * pitch, x + (k + COLS) * pitch
        return sum(
            x0 - 1 <= s[0] and s[0] + s[2] <= x1 + 1 and y - 1 <= s[1] <= y + h for s in squares
        )

    best = min(
        range(cols - COLS + 1),
        key=lambda k: (-count(k), 0 if k in (0, cols - COLS) else 1, k),
    )
    return x + best * pitch, COLS * pitch, COLS


def _pitch(axes: Sequence[Sequence[float]], size: float) -> float:
    """The commonest step between cells of `size` along the given axes (their left or top
    coordinates), or `size` itself when no step near it shows."""
    steps = [
        b - a
        for coords in axes
        for a, b in itertools.pairwise(sorted({round(v) for v in coords}))
        if b - a >= size * 0.85
    ]
    step = _mode(steps)[0] if steps else size
    return step if size * 0.85 <= step <= size * 1.6 else size


def canvas_lattice(
    backing_w: float, backing_h: float, draws: Sequence[Sequence[Any]]
) -> CanvasField | None:
    """The board (x, y, w, h in canvas pixels) inside a canvas, from what it drew.

    Cells are the most common small square drawn; the board is a drawn rectangle (a
    background fill, a frame, a clear) about 10 x 20 cell pitches, or else the whole
    canvas when it has that shape; failing that, a drawn rectangle (or the canvas) that is
    a whole number of pitches of another size (a 12 x 20 field). Returns the rectangle,
    how it was found, and its columns and rows.
    """
    squares = [
        (x, y, w, h)
        for kind, x, y, w, h in draws
        if kind in {"fill", "stroke", "path", "image"}
        and 3 <= w <= backing_w / 4
        and abs(w - h) <= max(1.5, 0.12 * w)
    ]
    big = [
        (x, y, w, h)
        for _kind, x, y, w, h in draws
        if w >= backing_w * 0.2 and h >= backing_h * 0.3 and w < h
    ]
    if squares:
        size, _ = _mode([w for _x, _y, w, _h in squares])
        same = [s for s in squares if _near(s[2], size, max(1.0, 0.1 * size))]
        # The pitch is the step between cells, across or down: a piece drawn so far in
        # one column (an O's two, an upright I's one) shows it only down.
        pitch = _pitch([[s[0] for s in same], [s[1] for s in same]], size)
        for x, y, w, h in sorted(big, key=lambda r: -r[2] * r[3]):
            if _near(w / pitch, COLS, 0.6) and _near(h / pitch, ROWS, 0.8):
                return (
                    x,
                    y,
                    w,
                    h,
                    f"canvas board rect {w:.0f}x{h:.0f}, cell {pitch:.0f}px",
                    COLS,
                    ROWS,
                )
        if _near(backing_w / pitch, COLS, 0.6) and _near(backing_h / pitch, ROWS, 0.8):
            return 0, 0, backing_w, backing_h, f"whole canvas, cell {pitch:.0f}px", COLS, ROWS
        # A field of another size: the drawn rectangle (or the canvas) in whole cells that
        # holds the most drawn cells, the tightest one when several hold as many.
        fields = []
        for x, y, w, h in [*big, (0, 0, backing_w, backing_h)]:
            cols, rows = _whole_cells(w, pitch), _whole_cells(h, pitch)
            narrowed = 0
            wide = cols
            if cols and rows and cols > COLS and cols >= 0.75 * rows:
                # Too wide for a field: a canvas with the field and a side panel (next,
                # hold, score) in one background. The field is the 10 columns holding
                # the most drawn cells, across the whole height; a drawn rectangle that
                # holds as many cells is the field's own and is preferred (a 12x20 field).
                x, w, cols = _field_columns(same, x, y, h, pitch, cols)
                narrowed = 1
            if not (
                cols
                and rows
                and MIN_COLS <= cols <= MAX_COLS
                and MIN_ROWS <= rows <= MAX_ROWS
                and cols < rows
            ):
                continue
            inside = sum(
                x - 1 <= s[0] and s[0] + s[2] <= x + w + 1 and y - 1 <= s[1] <= y + h for s in same
            )
            if inside:
                fields.append((-inside, narrowed, w * h, (x, y, w, h, cols, rows, wide)))
        if fields:
            x, y, w, h, cols, rows, wide = min(fields)[3]
            how = f"canvas rect {w:.0f}x{h:.0f}, cell {pitch:.0f}px"
            if wide != cols:
                # Said, because a field of that width (15x20) looks the same until a
                # piece is pushed past the columns taken (verdicts.loads).
                how += f", {NARROWED} {cols} of {wide} columns"
            return x, y, w, h, how, cols, rows
        # A board inside a larger canvas with no rectangle of its own: take the squares'
        # lattice, 10 x 20 pitches anchored on the lowest, leftmost drawn cells.
        left = min(s[0] for s in same)
        bottom = max(s[1] + s[3] for s in same)
        gap = (pitch - size) / 2
        x0 = max(0.0, left - gap)
        y1 = min(backing_h, bottom + gap)
        if y1 - ROWS * pitch >= -pitch * 0.5 and x0 + COLS * pitch <= backing_w + pitch * 0.5:
            return (
                x0,
                max(0.0, y1 - ROWS * pitch),
                COLS * pitch,
                ROWS * pitch,
                f"canvas cell lattice, cell {pitch:.0f}px ({ANCHORED})",
                COLS,
                ROWS,
            )
    if (found := _oblong_lattice(backing_w, backing_h, draws, big)) is not None:
        return found
    for x, y, w, h in sorted(big, key=lambda r: -r[2] * r[3]):
        if _near(w / h, COLS / ROWS, 0.06):
            return x, y, w, h, f"canvas rect with a {BY_SHAPE} {w:.0f}x{h:.0f}", COLS, ROWS
    if _near(backing_w / backing_h, COLS / ROWS, 0.06):
        return 0, 0, backing_w, backing_h, f"whole canvas ({BY_SHAPE})", COLS, ROWS
    return None


def _oblong_lattice(
    backing_w: float,
    backing_h: float,
    draws: Sequence[Sequence[Any]],
    big: Sequence[tuple[float, float, float, float]],
) -> CanvasField | None:
    """A 10 x 20 board of cells that are not square (a brick game's 48x31 cells): the most
    common small rectangle, its steps across and down, and a drawn rectangle (or the
    canvas) 10 steps wide and 20 high."""
    cells = [
        (x, y, w, h)
        for kind, x, y, w, h in draws
        if kind in {"fill", "stroke", "path", "image"}
        and 3 <= w <= backing_w / 4
        and 3 <= h <= backing_h / 4
        and 0.5 <= w / h <= 2.0
    ]
    if len(cells) < 4:
        return None
    (cw, ch), _ = Counter((round(w), round(h)) for _x, _y, w, h in cells).most_common(1)[0]
    same = [c for c in cells if _near(c[2], cw, 1.5) and _near(c[3], ch, 1.5)]

    px = _pitch([[c[0] for c in same]], cw)
    py = _pitch([[c[1] for c in same]], ch)
    for x, y, w, h in [*sorted(big, key=lambda r: -r[2] * r[3]), (0, 0, backing_w, backing_h)]:
        if _near(w / px, COLS, 0.6) and _near(h / py, ROWS, 0.8):
            how = f"canvas rect {w:.0f}x{h:.0f}, cells {px:.0f}x{py:.0f}px (not square)"
            return x, y, w, h, how, COLS, ROWS
    return None


def needs_pixels(found: CanvasField | None) -> bool:
    """True when a canvas's draw calls gave no lattice of cells (nothing recorded, as on
    a WebGL canvas, or only a 1:2 area): its pixels may tell more."""
    return found is None or BY_SHAPE in found[4]


def box_rows(kind: str, width: float, height: float) -> int:
    """Rows of a field known only by its box, 10 square cells wide: 20 for a box near the
    1:2 shape; a DOM box clearly taller or shorter than that (200x440 px: 10x22 cells of
    20 px) has as many rows as square cells fit. An SVG's box often holds a frame around
    the field, so it is always taken as 10x20."""
    ratio = width / height if height else 0.0
    if kind != "dom-box" or abs(ratio - COLS / ROWS) <= BOX_SHAPE_SLACK:
        return ROWS
    return max(MIN_ROWS, min(MAX_ROWS, round(COLS * height / width)))


def _drawn_field(renderer: str, cand: dict[str, Any], found: CanvasField) -> BoardGeometry:
    """A field found in a canvas's drawing or a picture's pixels (in its backing pixels),
    placed on the page."""
    rect, backing = cand["rect"], cand["backing"]
    bx, by, bw, bh, how, cols, rows = found
    sx = rect["w"] / backing["w"] if backing["w"] else 1.0
    sy = rect["h"] / backing["h"] if backing["h"] else 1.0
    return BoardGeometry(
        renderer,
        rect["x"] + bx * sx,
        rect["y"] + by * sy,
        bw * sx,
        bh * sy,
        cols,
        rows,
        f"{cand['locator']}: {how}",
        by_shape=BY_SHAPE in how,
    )


def choose_board(
    candidates: Sequence[dict[str, Any]],
    canvas_draws: dict[int, list[Sequence[Any]]],
    look: Callable[[dict[str, Any]], CanvasField | None] | None = None,
) -> BoardGeometry | None:
    """The most convincing playfield among the probe's candidates. `look` finds a field
    in a canvas candidate's screenshot (pixel_field.py, in canvas pixels); it is asked
    only where the canvas's draw calls gave no lattice of cells."""
    scored: list[tuple[float, BoardGeometry]] = []
    for cand in candidates:
        kind = cand.get("kind")
        rect = cand.get("rect") or {}
        if not rect or rect.get("w", 0) < 20 or rect.get("h", 0) < 40:
            continue
        if kind in {"dom", "svg"}:
            cols, rows = int(cand["cols"]), int(cand["rows"])
            if cols < 4 or rows < 8:
                continue  # a preview box, not a field
            geometry = BoardGeometry(
                kind, rect["x"], rect["y"], rect["w"], rect["h"], cols, rows, cand["locator"]
            )
            score = 100 if (cols, rows) == (COLS, ROWS) else 40
            scored.append((score + min(cand.get("cells", 0), 200) / 20, geometry))
        elif kind in {"dom-box", "svg-box"}:
            geometry = BoardGeometry(
                kind.split("-")[0],
                rect["x"],
                rect["y"],
                rect["w"],
                rect["h"],
                COLS,
                box_rows(kind, rect["w"], rect["h"]),
                cand["locator"],
                by_shape=True,
            )
            # Prefer the box closest to the 1:2 shape: an SVG with a frame around the field
            # is a little wider than the field itself.
            shape_penalty = 200 * abs(rect["w"] / rect["h"] - COLS / ROWS)
            scored.append((30 + min(rect["h"], 800) / 100 - shape_penalty, geometry))
        elif kind == "canvas":
            backing = cand["backing"]
            found = canvas_lattice(
                backing["w"], backing["h"], canvas_draws.get(int(cand["index"]), [])
            )
            if needs_pixels(found) and look is not None and (seen := look(cand)) is not None:
                found = seen
            if found is None:
                continue
            geometry = _drawn_field("canvas", cand, found)
            score = (60 if "cell" in found[4] else 35) - (0 if geometry.standard else 15)
            scored.append((score + min(rect["h"], 800) / 100, geometry))
    if not scored and look is not None:
        # The last resort: a field that exists only in an element's background picture
        # (its pieces are <img>s placed over it), looked for in the element's pixels.
        for cand in candidates:
            if cand.get("kind") == "picture" and (seen := look(cand)) is not None:
                geometry = _drawn_field("dom", cand, seen)
                shape_miss = abs(geometry.height - 2 * geometry.width) / 100
                scored.append((min(cand["rect"]["h"], 800) / 100 - shape_miss, geometry))
    if not scored:
        return None
    scored.sort(key=lambda item: -item[0])
    return scored[0][1]


# The share of an edge row's or column's cells that must be of one colour to be a wall.
WALL_SHARE = 0.9


def trim_walls(
    geometry: BoardGeometry, background: np.ndarray, threshold: float
) -> tuple[BoardGeometry, str] | None:
    """The field without the walls and floor drawn as cells around it, if there are any.

    A lattice of equal boxes can include a visible floor row below the field, or wall
    columns beside it (210 cells for a 10x20 field): an edge row or column whose empty
    colour is one colour, far (more than `threshold`) from the field's typical empty cell,
    is not part of the field. `background` is the learnt empty colour per cell (rows,
    cols, 3). A 10x20 field is left as it is.
    """
    if geometry.standard:
        return None
    typical = np.median(background.reshape(-1, background.shape[-1]), axis=0)
    top, bottom, left, right = 0, geometry.rows, 0, geometry.cols

    def wall(cells: np.ndarray) -> bool:
        far = np.linalg.norm(cells - typical, axis=-1) > threshold
        spread = np.linalg.norm(cells - np.median(cells, axis=0), axis=-1)
        # One colour, but for a cell or two in ten: something drawn over the wall while
        # it was learnt (a piece entering, a highlight) does not make it field.
        return bool(far.all() and (spread <= threshold / 2).mean() >= WALL_SHARE)

    changed = True
    while changed and bottom - top > MIN_ROWS and right - left > MIN_COLS:
        changed = False
        if (right - left, bottom - top) == (COLS, ROWS):
            break
        if wall(background[bottom - 1, left:right]):
            bottom, changed = bottom - 1, True
        elif wall(background[top:bottom, left]):
            left, changed = left + 1, True
        elif wall(background[top:bottom, right - 1]):
            right, changed = right - 1, True
    if (top, bottom, left, right) == (0, geometry.rows, 0, geometry.cols):
        return None
    ch, cw = geometry.height / geometry.rows, geometry.width / geometry.cols
    trimmed = BoardGeometry(
        geometry.renderer,
        geometry.x + left * cw,
        geometry.y + top * ch,
        (right - left) * cw,
        (bottom - top) * ch,
        right - left,
        bottom - top,
        geometry.locator,
    )
    removed = geometry.rows - trimmed.rows, geometry.cols - trimmed.cols
    return trimmed, f"{removed[0]} floor row(s) and {removed[1]} wall column(s)"

"""Where the field is on a canvas that records no usable draw calls: from its pixels.

A 2D canvas tells the probe what it drew (geometry.canvas_lattice). A WebGL canvas
(three.js, Phaser's WebGL renderer, a hand-written sprite batcher) draws through shaders
and records nothing, so its field is found in a screenshot instead, in two ways:

- a lattice: the cells' edges (grid lines, outlined empty cells, blocks with gaps) line
  up every `pitch` pixels across and down; the field is the run of whole pitches they
  span, of any size;
- a frame: two long vertical lines with a long horizontal line along their foot (a well,
  with or without a top line) enclosing an area of the 1:2 shape of a 10x20 field; only
  pieces moving on its cells confirm it, as for any field known by its shape.

Pure numpy on an RGB array; no colours and no game-specific names are assumed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from bench_pipeline.bot.geometry import BY_SHAPE, COLS, MAX_COLS, MAX_ROWS, MIN_COLS, MIN_ROWS, ROWS

# A change of grey level this large between neighbouring pixels is an edge: faint grid
# lines (#222 on #111) pass the first, the anti-aliased noise of flat WebGL fills does
# not; the second finds a lattice of barely visible empty cells (white outlines on an
# off-white field, 7 levels apart) where the first found nothing.
EDGES = (10.0, 4.0)
# Flat fills with lines and blocks have edges on a small share of their pixels (a dense
# 8 px lattice: under a quarter); more is texture, where any "line" would be chance.
MAX_EDGE_SHARE = 0.3
# A line of pixels within this many grey levels of the well's median is its floor.
FLOOR_GREY_TOLERANCE = 12.0
MIN_PITCH = 8  # pixels: smaller cells cannot be read reliably anyway
MIN_CHAIN = 5  # edges repeating at one pitch that make a lattice, not a coincidence


@dataclass(frozen=True)
class PixelField:
    """A field in image pixels (x, y from the image's top-left)."""

    x: float
    y: float
    width: float
    height: float
    cols: int
    rows: int
    how: str

    @property
    def by_shape(self) -> bool:
        return BY_SHAPE in self.how


def field_from_pixels(image: np.ndarray) -> PixelField | None:
    """The field in an RGB image of a canvas (H x W x 3), or None."""
    if image.ndim != 3 or image.shape[0] < 80 or image.shape[1] < 40:
        return None
    grey = image[..., :3].astype(np.float32).mean(axis=2)
    across, down = np.abs(np.diff(grey, axis=1)), np.abs(np.diff(grey, axis=0))
    for edge in EDGES:
        vertical = across > edge  # (h, w-1): an edge right of x
        horizontal = down > edge  # (h-1, w): an edge below y
        if vertical.mean() > MAX_EDGE_SHARE and horizontal.mean() > MAX_EDGE_SHARE:
            # A texture, a photo, noise: lines cannot be told from it. (Edges dense along
            # one axis only are a hatched or striped well, which still has its frame.)
            return None
        found = _lattice(vertical, horizontal) or _frame(grey, vertical, horizontal)
        if found is not None:
            return found
    return None


# ---- a lattice of cells ---------------------------------------------------------------
def _peaks(profile: np.ndarray, floor: float) -> list[float]:
    """Centres of the runs of positions where `profile` is high (an edge seen there on a
    good share of the lines across it)."""
    if profile.size == 0 or profile.max() < floor:
        return []
    high = profile >= max(floor, 0.45 * float(profile.max()))
    centres: list[float] = []
    start = None
    for i, on in enumerate([*high.tolist(), False]):
        if on and start is None:
            start = i
        elif not on and start is not None:
            centres.append((start + i - 1) / 2)
            start = None
    return centres


def _chains(peaks: np.ndarray, pitch: float) -> list[list[float]]:
    """Runs of peaks one `pitch` apart (within a few per cent), longest first."""
    tolerance = _tolerance(pitch)
    chains = []
    used: set[int] = set()
    for i in range(peaks.size):
        if i in used:
            continue
        chain = [i]
        while True:
            gaps = np.abs(peaks - (peaks[chain[-1]] + pitch))
            j = int(np.argmin(gaps))
            if gaps[j] > tolerance or j in chain:
                break
            chain.append(j)
        used.update(chain)
        chains.append([float(peaks[k]) for k in chain])
    return sorted(chains, key=len, reverse=True)


def _tolerance(pitch: float) -> float:
    return max(1.6, 0.03 * pitch)


def _covered(peaks: np.ndarray, pitch: int) -> float:
    """The share of edges that lie on a chain of MIN_CHAIN or more edges `pitch` apart."""
    ahead = np.abs(peaks[:, None] + pitch - peaks[None, :])
    nearest = ahead.argmin(axis=1)
    following = np.where(ahead[np.arange(peaks.size), nearest] <= _tolerance(pitch), nearest, -1)
    forward = np.ones(peaks.size, dtype=int)
    backward = np.ones(peaks.size, dtype=int)
    for i in range(peaks.size - 1, -1, -1):  # peaks ascend: a partner lies to the right
        if following[i] > i:
            forward[i] = forward[following[i]] + 1
    for i in range(peaks.size):
        if following[i] > i:
            backward[following[i]] = max(backward[following[i]], backward[i] + 1)
    return float((forward + backward - 1 >= MIN_CHAIN).mean())


def _pitch(peaks: np.ndarray) -> float | None:
    """The cell pitch: the smallest step at which nearly every edge lies on a long chain
    of edges one step apart. A shorter step can chain some edges by coincidence (the inner
    edges of outlined cells half a pitch apart) but not all of them."""
    span = float(peaks[-1] - peaks[0])
    shares = [
        (_covered(peaks, pitch), pitch)
        for pitch in range(MIN_PITCH, int(span / (MIN_CHAIN - 1)) + 2)
    ]
    if not shares:
        return None
    top = max(share for share, _ in shares)
    if top < 0.6:
        return None
    return float(min(pitch for share, pitch in shares if share >= 0.92 * top))


def _periodic(profile: np.ndarray, floor: float) -> tuple[float, float, int] | None:
    """(start, end, count): the span of edges repeating at one pitch, in whole pitches."""
    peaks = np.array(_peaks(profile, floor))
    if peaks.size < MIN_CHAIN:
        return None
    pitch = _pitch(peaks)
    if pitch is None:
        return None
    chains = [c for c in _chains(peaks, pitch) if len(c) >= MIN_CHAIN]
    if not chains:
        return None
    # Refine the pitch from the chains themselves (integer candidates are coarse).
    # (a step of 25.6 px is 25 or 26 between neighbours; whole chains average it out).
    pitch = sum(c[-1] - c[0] for c in chains) / sum(len(c) - 1 for c in chains)
    start = min(c[0] for c in chains)
    end = max(c[-1] for c in chains)
    count = round((end - start) / pitch)
    # Grid lines bound the field (end - start is a whole number of pitches); outlined or
    # gapped cells stop one gap short of it. Either way the field is centred on the span.
    centre = (start + end + 1) / 2
    return centre - count * pitch / 2, centre + count * pitch / 2, count


def _to_edges(
    start: float, end: float, count: int, size: int, lined: Callable[[float, float], bool]
) -> tuple[float, float, int]:
    """Grid lines drawn only between cells, on a canvas the field fills, leave its outer
    cells unbounded: a margin of one pitch between the lattice and the image's edge is a
    row or column of cells, not background, when the lines across continue through it
    (`lined(lo, hi)`: the perpendicular lines run on between `lo` and `hi`). A lattice
    with a border of its own, in a margin of plain background, stays as it is."""
    pitch = (end - start) / count
    if 0.8 * pitch <= start <= 1.2 * pitch and lined(start - 0.8 * pitch, start - 0.2 * pitch):
        start, count = start - pitch, count + 1
    if 0.8 * pitch <= size - end <= 1.2 * pitch and lined(end + 0.2 * pitch, end + 0.8 * pitch):
        end, count = end + pitch, count + 1
    return start, end, count


def _lines_run_on(edges: np.ndarray, positions: list[float], lo: float, hi: float) -> bool:
    """Whether most of the lines at `positions` (columns of `edges`) continue between rows
    `lo` and `hi` of `edges` (give a transposed array for lines along the other axis)."""
    rows = edges[max(0, int(lo)) : max(0, int(np.ceil(hi)))]
    if rows.shape[0] == 0 or not positions:
        return False
    hits = []
    for at in positions:
        x = round(at)
        band = rows[:, max(0, x - 2) : x + 3]
        hits.append(float(band.any(axis=1).mean()) if band.size else 0.0)
    return float(np.median(hits)) > 0.5


def _lattice(vertical: np.ndarray, horizontal: np.ndarray) -> PixelField | None:
    columns = _periodic(vertical.mean(axis=0), 0.12)
    if columns is None:
        return None
    h, w = horizontal.shape[0] + 1, vertical.shape[1] + 1
    cs, ce, cc = columns
    px = (ce - cs) / cc
    # Rows are looked for across the columns found and one more on each side, which the
    # field may hold (lines drawn only between cells).
    left, right = max(0, int(cs - px)), min(horizontal.shape[1], int(np.ceil(ce + px)) + 1)
    rows_found = _periodic(horizontal[:, left:right].mean(axis=1), 0.2)
    if rows_found is None:
        return None
    rs, re, rc = rows_found
    py = (re - rs) / rc
    column_lines = [cs + k * px for k in range(cc + 1)]
    row_lines = [rs + k * py for k in range(rc + 1)]
    x0, x1, cols = _to_edges(
        cs, ce, cc, w, lambda lo, hi: _lines_run_on(horizontal.T, row_lines, lo, hi)
    )
    y0, y1, rows = _to_edges(
        rs, re, rc, h, lambda lo, hi: _lines_run_on(vertical, column_lines, lo, hi)
    )
    if not (MIN_COLS <= cols <= MAX_COLS and MIN_ROWS <= rows <= MAX_ROWS and cols < rows):
        return None
    pitch_x, pitch_y = (x1 - x0) / cols, (y1 - y0) / rows
    if abs(pitch_x - pitch_y) > 0.15 * max(pitch_x, pitch_y):
        return None  # cells are square: stripes of another period are no field
    # A lattice reaching the image's edge is cut there, not a fraction of a pixel past it.
    x0, y0, x1, y1 = max(0.0, x0), max(0.0, y0), min(float(w), x1), min(float(h), y1)
    return PixelField(
        x0, y0, x1 - x0, y1 - y0, cols, rows, f"pixel cell lattice, cell {pitch_x:.0f}px"
    )


# ---- a frame (a well) --------------------------------------------------------------------
def _runs(edges: np.ndarray, min_length: int) -> list[tuple[int, int, int]]:
    """Long straight edge runs along axis 0, as (position, start, end); gaps of up to two
    pixels are bridged (a line crossed by a piece's edge, a dashed anti-aliased line)."""
    closed = edges.copy()
    for k in (1, 2):
        closed[k:-k] |= edges[: -2 * k] & edges[2 * k :]
    found = []
    for pos in range(closed.shape[1]):
        column = np.concatenate([[0], closed[:, pos].astype(np.int8), [0]])
        change = np.flatnonzero(np.diff(column))
        starts, ends = change[::2], change[1::2]
        if starts.size == 0:
            continue
        longest = int(np.argmax(ends - starts))
        if ends[longest] - starts[longest] >= min_length:
            found.append((pos, int(starts[longest]), int(ends[longest])))
    return found


def _frame(grey: np.ndarray, vertical: np.ndarray, horizontal: np.ndarray) -> PixelField | None:
    h, w = vertical.shape[0], horizontal.shape[1]
    walls = _runs(vertical, max(60, int(0.25 * h)))
    floors = _runs(horizontal.T, 30)
    best: tuple[float, PixelField] | None = None
    for i, (xa, ya0, ya1) in enumerate(walls):
        for xb, yb0, yb1 in walls[i + 1 :]:
            width = xb - xa
            top, bottom = max(ya0, yb0), min(ya1, yb1)
            height = bottom - top
            if width < 30 or height <= 0 or abs(ya1 - yb1) > 0.04 * h + 2:
                continue
            if not abs(width / height - COLS / ROWS) <= 0.06:
                continue
            # The floor: a horizontal line at the walls' foot spanning most of the gap.
            floored = any(
                abs(y - bottom) <= 3 and x0 <= xa + 0.1 * width and x1 >= xb - 0.1 * width
                for y, x0, x1 in floors
            )
            if not floored:
                continue
            # A line drawn one or two pixels wide shows an edge on both of its sides:
            # prefer the widest well (the field inside the outer edges of its lines)
            # that is closest to the 1:2 shape.
            score = abs(width / height - COLS / ROWS) * 10 - width / w
            x0, y0, x1, y1 = _inside_frame(grey, xa, top, xb, bottom)
            field = PixelField(
                x0,
                y0,
                x1 - x0,
                y1 - y0,
                COLS,
                ROWS,
                f"pixel frame with a {BY_SHAPE} {width}x{height}",
            )
            if best is None or score < best[0]:
                best = (score, field)
    return None if best is None else best[1]


def _inside_frame(
    grey: np.ndarray, xa: int, top: int, xb: int, bottom: int
) -> tuple[int, int, int, int]:
    """(x0, y0, x1, y1), x1 and y1 one past the field: the frame's lines are no part of
    the field, however thick or bevelled they are. From a line of pixels 0.6 of a cell
    inside each outer edge, the field extends outwards while the lines keep the well's
    own median grey (taken over its middle half: a hatched floor has its base grey
    there) and ends at the first line that does not: the frame's inner side."""
    h, w = bottom - top, xb - xa
    floor = float(np.median(grey[top + h // 4 : bottom - h // 4, xa + w // 4 : xb - w // 4]))
    reach = max(2, round(0.6 * w / COLS))

    def like_floor(line: np.ndarray) -> bool:
        return line.size > 0 and abs(float(np.median(line)) - floor) <= FLOOR_GREY_TOLERANCE

    def outwards(start: int, step: int, limit: int, line: Callable[[int], np.ndarray]) -> int:
        """The last floor-like line going from `start` towards `limit`; `limit` itself
        when `start` is no floor."""
        if not like_floor(line(start)):
            return limit
        at = start
        while at != limit and like_floor(line(at + step)):
            at += step
        return at

    column = lambda x: grey[top:bottom, x]  # noqa: E731
    row = lambda y: grey[y, xa:xb]  # noqa: E731
    x0 = outwards(xa + reach, -1, xa + 1, column)
    x1 = outwards(xb - reach, +1, xb - 1, column) + 1
    y0 = outwards(top + reach, -1, top, row)
    y1 = outwards(bottom - reach, +1, bottom - 1, row) + 1
    return x0, y0, x1, y1

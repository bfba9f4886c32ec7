"""Where the playfield is: choosing among candidate boards, and a canvas's cell lattice.

Candidates come from the page probe (probe.js): DOM and SVG lattices of equal boxes,
boxes with the 1:2 shape of a 10x20 field, and canvases with what they drew (rects in
canvas pixels, from hooked fillRect/strokeRect/drawImage/rect calls). No colours and no
game-specific names are assumed.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

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


def canvas_lattice(
    backing_w: float, backing_h: float, draws: Sequence[Sequence[Any]]
) -> tuple[float, float, float, float, str] | None:
    """The board (x, y, w, h in canvas pixels) inside a canvas, from what it drew.

    Cells are the most common small square drawn; the board is a drawn rectangle (a
    background fill, a frame, a clear) about 10 x 20 cell pitches, or else the whole
    canvas when it has that shape.
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
        xs = sorted({round(s[0]) for s in same})
        gaps = [b - a for a, b in itertools.pairwise(xs) if b - a >= size * 0.85]
        pitch = _mode(gaps)[0] if gaps else size
        if not size * 0.85 <= pitch <= size * 1.6:
            pitch = size
        for x, y, w, h in sorted(big, key=lambda r: -r[2] * r[3]):
            if _near(w / pitch, COLS, 0.6) and _near(h / pitch, ROWS, 0.8):
                return x, y, w, h, f"canvas board rect {w:.0f}x{h:.0f}, cell {pitch:.0f}px"
        if _near(backing_w / pitch, COLS, 0.6) and _near(backing_h / pitch, ROWS, 0.8):
            return 0, 0, backing_w, backing_h, f"whole canvas, cell {pitch:.0f}px"
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
                f"canvas cell lattice, cell {pitch:.0f}px (anchored on drawn cells)",
            )
    for x, y, w, h in sorted(big, key=lambda r: -r[2] * r[3]):
        if _near(w / h, COLS / ROWS, 0.06):
            return x, y, w, h, f"canvas rect with a 1:2 shape {w:.0f}x{h:.0f}"
    if _near(backing_w / backing_h, COLS / ROWS, 0.06):
        return 0, 0, backing_w, backing_h, "whole canvas (1:2 shape)"
    return None


def choose_board(
    candidates: Sequence[dict[str, Any]], canvas_draws: dict[int, list[Sequence[Any]]]
) -> BoardGeometry | None:
    """The most convincing playfield among the probe's candidates."""
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
                ROWS,
                cand["locator"],
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
            if found is None:
                continue
            bx, by, bw, bh, how = found
            sx = rect["w"] / backing["w"] if backing["w"] else 1.0
            sy = rect["h"] / backing["h"] if backing["h"] else 1.0
            geometry = BoardGeometry(
                "canvas",
                rect["x"] + bx * sx,
                rect["y"] + by * sy,
                bw * sx,
                bh * sy,
                COLS,
                ROWS,
                f"{cand['locator']}: {how}",
            )
            score = 60 if "cell" in how else 35
            scored.append((score + min(rect["h"], 800) / 100, geometry))
    if not scored:
        return None
    scored.sort(key=lambda item: -item[0])
    return scored[0][1]

"""Seeded cosmetic choices: what varies between two runs of the same cell.

Nothing here changes how the game plays (gravity stays within 560-800 ms per row, the
board stays 10x20): only colours, sizes, names, wording and the piece order. Picks come
from SHA-256 of (seed, purpose), so they are stable across Python versions and machines,
and each purpose varies independently of the others.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


def _number(seed: int, purpose: str) -> int:
    digest = hashlib.sha256(f"{seed}:{purpose}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def pick(seed: int, purpose: str, options: Sequence[T]) -> T:
    return options[_number(seed, purpose) % len(options)]


@dataclass(frozen=True)
class Theme:
    name: str
    page: str  # page background
    text: str
    accent: str
    board: str  # playfield background
    empty: str  # an empty cell (tiles, DOM and SVG cells)
    grid: str  # grid lines
    pieces: tuple[str, str, str, str, str, str, str]  # I O T S Z J L


# Every piece colour stands far from `board` and `empty` (the tests check the distance):
# the bot tells filled cells from empty ones by colour difference alone.
THEMES: tuple[Theme, ...] = (
    Theme(
        "midnight",
        "#14161f",
        "#e8eaf2",
        "#7dd3fc",
        "#05060a",
        "#10131c",
        "#1f2433",
        ("#22d3ee", "#facc15", "#c084fc", "#4ade80", "#f87171", "#60a5fa", "#fb923c"),
    ),
    Theme(
        "paper",
        "#f4efe6",
        "#2b2620",
        "#9a3412",
        "#fffdf8",
        "#f1ece2",
        "#ddd5c6",
        ("#0e7490", "#a16207", "#7e22ce", "#15803d", "#b91c1c", "#1d4ed8", "#c2410c"),
    ),
    Theme(
        "forest",
        "#0f1a14",
        "#e3f1e6",
        "#86efac",
        "#07100b",
        "#0e1a13",
        "#1c2e23",
        ("#5eead4", "#fde047", "#f0abfc", "#a3e635", "#fda4af", "#93c5fd", "#fdba74"),
    ),
    Theme(
        "neon",
        "#0b0614",
        "#f5e9ff",
        "#f472b6",
        "#000000",
        "#0c0812",
        "#231a33",
        ("#00e5ff", "#ffe600", "#d946ef", "#39ff14", "#ff3864", "#3d8bff", "#ff9f1c"),
    ),
    Theme(
        "slate",
        "#e5e7eb",
        "#111827",
        "#2563eb",
        "#1f2937",
        "#273244",
        "#374151",
        ("#67e8f9", "#fde68a", "#d8b4fe", "#86efac", "#fca5a5", "#a5b4fc", "#fdba74"),
    ),
    Theme(
        "sand",
        "#fbf5e9",
        "#3b2f1e",
        "#b45309",
        "#fefcf7",
        "#f5eedf",
        "#e7dcc5",
        ("#0891b2", "#ca8a04", "#9333ea", "#16a34a", "#dc2626", "#2563eb", "#ea580c"),
    ),
)

TITLES = (
    "Tetris",
    "Block Stack",
    "Falling Blocks",
    "Tetra Drop",
    "Line Breaker",
    "Stack Attack",
    "Brick Fall",
    "Quad Drop",
)

FONTS = (
    'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
    '"Trebuchet MS", Helvetica, Arial, sans-serif',
    "Verdana, Geneva, Tahoma, sans-serif",
    '"Courier New", Courier, monospace',
    'Georgia, "Times New Roman", serif',
)

TAGLINES = (
    "Clear lines, stack high, do not top out.",
    "A small falling-block puzzle for the browser.",
    "Fit the pieces together and fill whole rows.",
    "Classic stacking in plain web technology.",
)


@dataclass(frozen=True)
class Cosmetics:
    title: str
    slug: str
    tagline: str
    theme: Theme
    font: str
    cell_size: int  # pixels
    cell_gap: int  # pixels of margin inside each cell (canvas, SVG) or between cells (DOM)
    grid_style: str  # canvas: none | tiles | lines
    gravity_ms: int  # level 1; later levels are 20 ms faster each
    level_duration_ms: int  # a clean game speeds up this often
    piece_seed: int  # the game's own random generator for the piece order
    wording: int  # which phrasing of comments and README text


def cosmetics_for(seed: int) -> Cosmetics:
    title = pick(seed, "title", TITLES)
    return Cosmetics(
        title=title,
        slug=title.lower().replace(" ", "-"),
        tagline=pick(seed, "tagline", TAGLINES),
        theme=pick(seed, "theme", THEMES),
        font=pick(seed, "font", FONTS),
        cell_size=pick(seed, "cell", (24, 26, 28, 30, 32)),
        cell_gap=pick(seed, "gap", (1, 2)),
        grid_style=pick(seed, "grid", ("none", "tiles", "lines")),
        gravity_ms=pick(seed, "gravity", (560, 600, 640, 680, 720, 760, 800)),
        level_duration_ms=pick(seed, "levels", (40_000, 45_000, 50_000, 60_000)),
        piece_seed=_number(seed, "pieces") % 2_000_000_000 + 1,
        wording=_number(seed, "wording") % 2,
    )

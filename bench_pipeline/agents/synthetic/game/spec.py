"""What the synthetic agent is asked to build: one `GameSpec` describes one project."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal, get_args

Language = Literal["javascript", "typescript"]
Renderer = Literal["canvas", "dom", "svg"]
Controls = Literal["arrows", "wasd", "arrows_space"]
Start = Literal["auto", "button", "key"]

# Each mechanic fault breaks exactly one gameplay mechanic (and the bot test named in
# the comment); everything else keeps working.
MECHANIC_FAULTS: tuple[str, ...] = (
    "no_gravity",  # gravity: pieces never fall on their own
    "no_rotation",  # rotate: the rotate key does nothing
    "no_line_clear",  # line_clear: full rows stay
    "crash",  # endurance / no_errors: an uncaught TypeError kills the loop
    "no_game_over",  # game_over: a top-out silently wipes the board
    "no_hard_drop",  # hard_drop: Space does nothing
    "broken_walls",  # walls: pieces slide out of the 10 columns
)

# Quality faults change only the code: the game plays exactly as without them.
QUALITY_FAULTS: tuple[str, ...] = (
    "lint_errors",
    "type_errors",  # TypeScript only; a no-op for JavaScript
    "magic_numbers",
    "deep_nesting",
    "one_giant_file",
)

LANGUAGES: tuple[str, ...] = get_args(Language)
RENDERERS: tuple[str, ...] = get_args(Renderer)
CONTROLS: tuple[str, ...] = get_args(Controls)
STARTS: tuple[str, ...] = get_args(Start)


@dataclass(frozen=True)
class GameSpec:
    language: Language = "javascript"
    renderer: Renderer = "canvas"
    controls: Controls = "arrows"
    start: Start = "auto"
    faults: frozenset[str] = field(default_factory=frozenset)
    quality_faults: frozenset[str] = field(default_factory=frozenset)
    seed: int = 0  # cosmetics only: colours, sizes, names, wording, piece order
    crash_after_s: float = 8.0  # seconds of play before the "crash" fault fires

    def __post_init__(self) -> None:
        # Frozen dataclass: normalise plain sets/lists callers pass into frozensets.
        object.__setattr__(self, "faults", frozenset(self.faults))
        object.__setattr__(self, "quality_faults", frozenset(self.quality_faults))
        self.validate()

    def validate(self) -> None:
        """Refuse a spec the generator cannot honour, naming the bad field."""
        for name, value, allowed in (
            ("language", self.language, LANGUAGES),
            ("renderer", self.renderer, RENDERERS),
            ("controls", self.controls, CONTROLS),
            ("start", self.start, STARTS),
        ):
            if value not in allowed:
                raise ValueError(f"GameSpec.{name}={value!r}: expected one of {allowed}")
        unknown = self.faults - set(MECHANIC_FAULTS)
        if unknown:
            raise ValueError(f"GameSpec.faults: unknown {sorted(unknown)}; known {MECHANIC_FAULTS}")
        unknown = self.quality_faults - set(QUALITY_FAULTS)
        if unknown:
            raise ValueError(
                f"GameSpec.quality_faults: unknown {sorted(unknown)}; known {QUALITY_FAULTS}"
            )
        if not (math.isfinite(self.crash_after_s) and self.crash_after_s > 0):
            raise ValueError(f"GameSpec.crash_after_s={self.crash_after_s!r}: must be > 0")

    @property
    def typescript(self) -> bool:
        return self.language == "typescript"

    @property
    def extension(self) -> str:
        return "ts" if self.typescript else "js"

"""Where faults live: the template flags of a spec, and the code-only transforms.

Mechanic faults are `%% if <fault>` branches inside the templates (each replaces the few
lines of one mechanic by a plausible bug: an assignment instead of an accumulation, a
missing clamp, an off-by-one, a forgotten result, a legacy key name, a missing bounds
check). Quality faults that are local edits are template branches too (`lint_errors`,
`type_errors`, `deep_nesting`); the two that reshape the project are transforms applied
after rendering, below: `magic_numbers` inlines the named numeric constants and
`one_giant_file` merges the modules into one file.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from bench_pipeline.agents.synthetic.game.cosmetics import Cosmetics
from bench_pipeline.agents.synthetic.game.spec import (
    CONTROLS,
    MECHANIC_FAULTS,
    QUALITY_FAULTS,
    RENDERERS,
    GameSpec,
)


def flags_for(spec: GameSpec, cosmetics: Cosmetics) -> dict[str, bool]:
    """Every flag a template may test; all are present, so a typo fails loudly."""
    flags = {"ts": spec.typescript, "js": not spec.typescript}
    flags.update({renderer: spec.renderer == renderer for renderer in RENDERERS})
    flags.update({scheme: spec.controls == scheme for scheme in CONTROLS})
    flags.update({f"start_{s}": spec.start == s for s in ("auto", "button", "key")})
    flags.update({fault: fault in spec.faults for fault in MECHANIC_FAULTS})
    flags.update({fault: fault in spec.quality_faults for fault in QUALITY_FAULTS})
    # Type errors need types: in JavaScript the fault has nothing to act on.
    flags["type_errors"] = flags["type_errors"] and spec.typescript
    # Grid styles only exist on a canvas; DOM and SVG cells always show their tiles.
    flags.update(
        {
            f"grid_{style}": spec.renderer == "canvas" and cosmetics.grid_style == style
            for style in ("none", "tiles", "lines")
        }
    )
    return flags


def numeric_constants(spec: GameSpec, cosmetics: Cosmetics) -> list[tuple[str, str, str]]:
    """(name, literal, what it is) of every named number the clean code uses."""
    constants = [
        ("COLS", "10", "playfield width in cells"),
        ("ROWS", "20", "playfield height in cells"),
        ("EMPTY", "0", "board value of a free cell"),
    ]
    if spec.renderer != "dom":  # DOM cells are sized by style.css
        size, gap = cosmetics.cell_size, cosmetics.cell_gap
        constants += [
            ("CELL_SIZE", str(size), "pixels per cell"),
            ("CELL_GAP", str(gap), "margin inside a cell, in pixels"),
            ("CELL_INNER", str(size - 2 * gap), "drawn size of a cell"),
        ]
    if "crash" in spec.faults:
        # Four levels fit exactly into crash_after_s: the unclamped lookup of the fifth
        # one is what throws.
        level_ms = round(spec.crash_after_s * 1000 / len(LEVEL_STEPS_MS))
    else:
        level_ms = cosmetics.level_duration_ms
    constants += [
        ("LEVEL_DURATION_MS", str(level_ms), "play time per level"),
        ("MAX_FRAME_MS", "100", "longest frame step applied at once"),
        ("SOFT_DROP_POINTS", "1", "per row of soft drop"),
        ("HARD_DROP_POINTS", "2", "per row of hard drop"),
        ("LINE_POINTS", "[0, 100, 300, 500, 800]", "by number of rows cleared at once"),
        ("KICK_OFFSETS", "[0, -1, 1, -2, 2]", "sideways shifts tried by a rotation"),
        ("PIECE_SEED", str(cosmetics.piece_seed), "seed of the piece order"),
        ("RANDOM_MULTIPLIER", "1664525", "linear congruential generator"),
        ("RANDOM_INCREMENT", "1013904223", "linear congruential generator"),
        ("RANDOM_RANGE", "4294967296", "2 ** 32"),
    ]
    return constants


LEVEL_STEPS_MS = (0, 20, 40, 60)  # level n is this much faster than level 1


def constants_block(constants: list[tuple[str, str, str]], magic_numbers: bool) -> str:
    if magic_numbers:
        return ""
    return "\n".join(f"export const {name} = {value}; // {what}" for name, value, what in constants)


def inline_constants(source: str, constants: Mapping[str, str]) -> str:
    """Every use of a named constant becomes its literal (imports are filtered apart)."""
    if not constants:
        return source
    names = "|".join(sorted(map(re.escape, constants), key=len, reverse=True))
    pattern = re.compile(rf"(?<![\w$.])({names})(?![\w$])")
    return pattern.sub(lambda m: constants[m.group(1)], source)


EXPORT = re.compile(r"^export (?=(?:async )?function|const|let|interface|type|class)", re.M)


def merge_modules(parts: list[str]) -> str:
    """One file from rendered modules whose imports were already left out."""
    return "\n".join(EXPORT.sub("", part) for part in parts)

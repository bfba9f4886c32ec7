"""The synthetic agent's game: a real, playable browser Tetris written from a `GameSpec`.

`write_game(spec, workspace)` writes the project (JavaScript or TypeScript; canvas, DOM
or SVG; three control schemes; three ways to start) deterministically: the same spec
gives byte-identical files. Mechanic faults break one gameplay mechanic each; quality
faults change only the code. See `spec.py` for the fault lists.
"""

from bench_pipeline.agents.synthetic.game.compose import render_project, write_game
from bench_pipeline.agents.synthetic.game.spec import (
    MECHANIC_FAULTS,
    QUALITY_FAULTS,
    GameSpec,
)

__all__ = ["MECHANIC_FAULTS", "QUALITY_FAULTS", "GameSpec", "render_project", "write_game"]

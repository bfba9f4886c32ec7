"""`bench_pipeline.definitions:defs`: the name workspace.yaml and deployments load.

The definitions are assembled in `assets/definitions.py`, with the Dagster code; this
module keeps the name other tools use (docs/interfaces.md §8) and nothing else.
"""

from assets.definitions import ALL_ASSETS, defs

__all__ = ["ALL_ASSETS", "defs"]

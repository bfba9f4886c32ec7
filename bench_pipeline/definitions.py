"""`bench_pipeline.definitions:defs`: the name workspace.yaml and deployments load.

The definitions are assembled in `assets/definitions.py`, with the Dagster code; this
module keeps the name other tools use (docs/interfaces.md §8) and nothing else.

`assets/` and `resources/` are folders of the checkout, not packages of the wheel (so an
install never claims those common names in site-packages): they import when the checkout
is on the path, as `make setup`'s editable install and the Docker image arrange.
"""

try:
    from assets.definitions import ALL_ASSETS, defs
except ModuleNotFoundError as missing:
    if missing.name not in ("assets", "resources"):
        raise
    raise ModuleNotFoundError(
        "the Dagster code of bench_pipeline (assets/, resources/) lives in the project's "
        "checkout, not in the installed package: run this from a clone after `make setup` "
        "(an editable install), or put the clone on PYTHONPATH",
        name=missing.name,
    ) from missing

__all__ = ["ALL_ASSETS", "defs"]

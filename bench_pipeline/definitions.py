"""`bench_pipeline.definitions:defs`: the name workspace.yaml and deployments load.

The definitions are assembled in `assets/definitions.py`, with the Dagster code; this
module keeps the name other tools use (docs/interfaces.md §8) and nothing else. It loads
them by module name (orchestration/project.py), so the pure package never imports the
Dagster layer above it.

`assets/` and `resources/` are folders of the checkout, not packages of the wheel (so an
install never claims those common names in site-packages): they import when the checkout
is on the path, as `make setup`'s editable install and the Docker image arrange.
"""

from bench_pipeline.orchestration.project import definitions_module

_module = definitions_module()
ALL_ASSETS = _module.ALL_ASSETS
defs = _module.defs

__all__ = ["ALL_ASSETS", "defs"]

"""The project's Dagster definitions, loaded by module name at run time.

The pure package sits under the Dagster layer (`assets/`, `resources/`): nothing in
`bench_pipeline` imports them. The commands that drive Dagster (`bench run`, `bench
worker`) and the contract name `bench_pipeline.definitions:defs` load the definitions the
way `dagster` itself loads `workspace.yaml`: by the module's name, when they run
(tests/test_layout.py keeps the direction).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

# Where the definitions are assembled (workspace.yaml names the same module through
# bench_pipeline.definitions).
DEFINITIONS_MODULE = "assets.definitions"
PARTITIONS_MODULE = "assets.partitions"
# What the automation would launch next (`bench status`, `bench pools`).
OUTLOOK_MODULE = "assets.sweeps.outlook"


@dataclass(frozen=True)
class Project:
    """What the commands need of the definitions."""

    defs: Any  # dg.Definitions
    all_assets: list[Any]
    stage_assets: dict[str, Any]
    per_run_assets: list[Any]
    across_run_assets: list[Any]
    run_partitions: Any  # dg.DynamicPartitionsDefinition

    @property
    def resources(self) -> dict[str, Any]:
        return self.defs.resources


def definitions_module() -> Any:
    """`assets.definitions`, with a readable error where the checkout is not on the path."""
    try:
        return importlib.import_module(DEFINITIONS_MODULE)
    except ModuleNotFoundError as missing:
        if missing.name not in ("assets", "resources"):
            raise
        raise ModuleNotFoundError(
            "the Dagster code of bench_pipeline (assets/, resources/) lives in the project's "
            "checkout, not in the installed package: run this from a clone after `make setup` "
            "(an editable install), or put the clone on PYTHONPATH",
            name=missing.name,
        ) from missing


def load_project() -> Project:
    module = definitions_module()
    partitions = importlib.import_module(PARTITIONS_MODULE)
    return Project(
        defs=module.defs,
        all_assets=module.ALL_ASSETS,
        stage_assets=module.STAGE_ASSETS,
        per_run_assets=module.PER_RUN_ASSETS,
        across_run_assets=module.ACROSS_RUN_ASSETS,
        run_partitions=partitions.run_partitions,
    )


def automation_outlook(instance: Any) -> tuple[dict[str, Any], list[str]]:
    """`bench status`'s object and its lines, from the Dagster layer loaded by name."""
    outlook = importlib.import_module(OUTLOOK_MODULE)
    found = outlook.automation_outlook(instance, definitions_module().defs)
    return found, outlook.outlook_lines(found)

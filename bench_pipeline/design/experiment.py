"""Loading and validating an experiment file (the YAML grid of axes plus its designs)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench_pipeline import settings
from bench_pipeline.design.axes import (
    AXES,
    AxisSpec,
    AxisValueError,
    DesignError,
    default_config,
    describe_value,
)
from bench_pipeline.design.designs import DesignSpec, parse_design
from bench_pipeline.design.models import ModelRegistry, load_model_registry, load_yaml_mapping

DEFAULT_REPEATS = 3
# Far more than any sweep runs (each repeat is an agent run that costs money); a typo such
# as `repeats: 1000000000` would otherwise list a billion runs in memory before anything says so.
MAX_REPEATS = 1000
DEFAULT_SEED = 0
DEFAULT_MODELS_FILE = "models.yaml"
TOP_LEVEL_KEYS: tuple[str, ...] = (
    "name",
    "description",
    "repeats",
    "seed",
    "models_file",
    "axes",
    "designs",
)
AXIS_SPEC_KEYS: tuple[str, ...] = ("levels", "baseline", "description")
# `model: {levels: registry}` stands for every model of the registry.
REGISTRY_LEVELS = "registry"
# Run ids embed the name and must be valid Dagster dynamic partition keys.
EXPERIMENT_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


@dataclass(frozen=True, slots=True)
class Experiment:
    """A validated experiment. `axes` holds only the axes the file names, in file order;
    every other axis is fixed at its catalogue default."""

    name: str
    path: Path
    repeats: int
    seed: int
    axes: dict[str, AxisSpec]
    designs: list[DesignSpec]
    registry: ModelRegistry
    description: str | None = None
    models_file: Path | None = None

    def baseline_config(self) -> dict[str, Any]:
        """All 16 axes, in catalogue order: grid axes at their baseline, others at default."""
        config = default_config()
        for name, spec in self.axes.items():
            config[name] = spec.baseline
        return config


def load_experiment(path: str | Path) -> Experiment:
    """Load, validate and resolve an experiment file; raises DesignError on any problem."""
    display_path = str(path)
    file_path = Path(path)
    data = load_yaml_mapping(file_path, display_path, "experiment")

    for key in data:
        if key not in TOP_LEVEL_KEYS:
            raise DesignError(
                display_path,
                str(key),
                f"unknown key; allowed keys: {', '.join(TOP_LEVEL_KEYS)}",
            )
    name = _parse_name(data.get("name"), display_path)
    description = _parse_description(data.get("description"), display_path, "description")
    repeats = _parse_repeats(data.get("repeats", DEFAULT_REPEATS), display_path)
    seed = _parse_seed(data.get("seed", DEFAULT_SEED), display_path)
    models_file, registry = _load_registry(data.get("models_file"), file_path, display_path)
    axes = _parse_axes(data.get("axes", {}), registry, display_path)
    designs = _parse_designs(data.get("designs"), axes, display_path)
    return Experiment(
        name=name,
        path=file_path.resolve(),
        repeats=repeats,
        seed=seed,
        axes=axes,
        designs=designs,
        registry=registry,
        description=description,
        models_file=models_file,
    )


def _parse_name(raw: Any, path: str) -> str:
    if raw is None:
        raise DesignError(path, "name", "missing required key")
    if not isinstance(raw, str) or EXPERIMENT_NAME.fullmatch(raw) is None:
        raise DesignError(
            path,
            "name",
            f"invalid name {describe_value(raw)}; use 1-64 characters a-z, 0-9, '_' or '-', "
            "starting with a letter or digit",
        )
    return raw


def _parse_description(raw: Any, path: str, key: str) -> str | None:
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise DesignError(path, key, f"must be a string, got {describe_value(raw)}")
    return raw


def _parse_repeats(raw: Any, path: str) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise DesignError(path, "repeats", f"must be an integer >= 1, got {describe_value(raw)}")
    if raw < 1:
        raise DesignError(path, "repeats", f"must be an integer >= 1, got {raw}")
    if raw > MAX_REPEATS:
        raise DesignError(path, "repeats", f"must be at most {MAX_REPEATS}, got {raw}")
    return raw


def _parse_seed(raw: Any, path: str) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise DesignError(path, "seed", f"must be an integer, got {describe_value(raw)}")
    return raw


def default_models_file(experiment_file: Path) -> Path:
    """The registry an experiment uses when it names none.

    `models.yaml` beside the experiment file when there is one (an experiment folder
    carries its own registry), else $BENCH_MODELS_FILE, else the project's
    experiments/models.yaml — so an experiment file can live anywhere.
    """
    beside = experiment_file.parent / DEFAULT_MODELS_FILE
    if beside.is_file():
        return beside
    from_env = os.environ.get("BENCH_MODELS_FILE")
    return Path(from_env) if from_env else settings.experiments_dir() / DEFAULT_MODELS_FILE


def _load_registry(raw: Any, file_path: Path, path: str) -> tuple[Path, ModelRegistry]:
    if raw is None:
        # Already resolved (beside the file, $BENCH_MODELS_FILE or the project's): not
        # relative to the experiment file, so it must not be joined to its folder again.
        raw = str(default_models_file(file_path).resolve())
    if not isinstance(raw, str) or not raw.strip():
        raise DesignError(
            path, "models_file", f"must be a non-empty path string, got {describe_value(raw)}"
        )
    # Relative to the experiment file, so an experiment directory can be moved as a whole.
    models_path = Path(os.path.normpath(file_path.parent / raw))
    if not models_path.is_file():
        raise DesignError(path, "models_file", f"model registry not found at {models_path}")
    try:
        registry = load_model_registry(models_path)
    except DesignError as exc:
        # Reported against the experiment, which is the file the user asked about; the
        # registry's own error (its file, entry and field) is kept whole in the message and
        # as the cause.
        raise DesignError(path, "models_file", f"invalid model registry: {exc}") from exc
    return models_path, registry


def _parse_axes(raw: Any, registry: ModelRegistry, path: str) -> dict[str, AxisSpec]:
    if not isinstance(raw, dict):
        raise DesignError(
            path, "axes", f"must be a mapping of axis name to spec, got {describe_value(raw)}"
        )
    axes: dict[str, AxisSpec] = {}
    for name, spec in raw.items():
        if name not in AXES:
            raise DesignError(
                path, f"axes.{name}", f"unknown axis {name!r}; known axes: {', '.join(AXES)}"
            )
        axes[name] = _parse_axis_spec(name, spec, registry, path)
    # Unnamed axes sit at their catalogue default in every cell, so that default must exist
    # in this registry too.
    for name in ("agent", "model"):
        if name not in axes:
            try:
                _check_value(name, AXES[name].default, registry, path, f"axes.{name}")
            except DesignError as exc:
                raise DesignError(
                    path, exc.key, f"not in the grid, so its default is used, but {exc.problem}"
                ) from None
    return axes


def _parse_axis_spec(name: str, raw: Any, registry: ModelRegistry, path: str) -> AxisSpec:
    where = f"axes.{name}"
    if not isinstance(raw, dict):
        raise DesignError(
            path,
            where,
            "must be a mapping with `levels` (and optionally `baseline`), "
            f"got {describe_value(raw)}",
        )
    for key in raw:
        if key not in AXIS_SPEC_KEYS:
            raise DesignError(
                path, f"{where}.{key}", f"unknown key; allowed: {', '.join(AXIS_SPEC_KEYS)}"
            )
    if "levels" not in raw:
        raise DesignError(path, f"{where}.levels", "missing required key (a list of levels)")
    raw_levels = raw["levels"]
    if raw_levels == REGISTRY_LEVELS and name == "model":
        # Every model of the registry, in file order: a standard sweep that a new registry
        # entry extends by itself (the new-model schedule launches its runs).
        raw_levels = list(registry.ids)
    elif raw_levels == REGISTRY_LEVELS:
        raise DesignError(
            path, f"{where}.levels", f"`{REGISTRY_LEVELS}` is only allowed on the model axis"
        )
    if not isinstance(raw_levels, list):
        raise DesignError(
            path,
            f"{where}.levels",
            f"must be a list (or `{REGISTRY_LEVELS}` on the model axis), "
            f"got {describe_value(raw_levels)}",
        )
    if not raw_levels:
        raise DesignError(path, f"{where}.levels", "empty list; give at least one level")

    levels: list[Any] = []
    for raw_level in raw_levels:
        level = _check_value(name, raw_level, registry, path, f"{where}.levels")
        if level in levels:
            raise DesignError(path, f"{where}.levels", f"duplicate level {describe_value(level)}")
        levels.append(level)

    # Without an explicit baseline the first level is the baseline.
    baseline = levels[0]
    if "baseline" in raw:
        baseline = _check_value(name, raw["baseline"], registry, path, f"{where}.baseline")
        if baseline not in levels:
            raise DesignError(
                path,
                f"{where}.baseline",
                f"{describe_value(baseline)} is not among the levels "
                f"[{', '.join(map(str, levels))}]",
            )
    description = _parse_description(raw.get("description"), path, f"{where}.description")
    return AxisSpec(levels=tuple(levels), baseline=baseline, description=description)


def _check_value(name: str, raw: Any, registry: ModelRegistry, path: str, key: str) -> Any:
    """Normalize one level against the catalogue, then against the registry where relevant."""
    try:
        value = AXES[name].normalize(raw)
    except AxisValueError as exc:
        raise DesignError(path, key, str(exc)) from None
    if name == "model" and value not in registry:
        raise DesignError(
            path,
            key,
            f"model {value!r} is not in the model registry {registry.path}; "
            f"known models: {', '.join(registry.ids)}",
        )
    if name == "agent" and value not in registry.harnesses:
        raise DesignError(
            path,
            key,
            f"agent {value!r} is not a harness of the model registry {registry.path}; "
            f"known harnesses: {', '.join(registry.harnesses)}",
        )
    return value


def _parse_designs(raw: Any, axes: dict[str, AxisSpec], path: str) -> list[DesignSpec]:
    if raw is None:
        raise DesignError(path, "designs", "missing required key (a list of designs)")
    if not isinstance(raw, list) or not raw:
        raise DesignError(
            path, "designs", f"must be a non-empty list of designs, got {describe_value(raw)}"
        )
    return [parse_design(entry, index, axes, path) for index, entry in enumerate(raw)]


def find_experiment(ref: str, experiments_dir: Path, root: Path | None = None) -> Path:
    """The experiment file `ref` names: a path (relative to `root`), or a bare name looked up
    as `<experiments_dir>/<name>.yaml`. Raises DesignError naming the experiments on offer."""
    ref = ref.strip()
    if not ref:
        raise DesignError("<experiment>", "<root>", "no experiment given (a file or a name)")
    looks_like_path = "/" in ref or ref.endswith((".yaml", ".yml"))
    if looks_like_path:
        path = Path(ref)
        if not path.is_absolute() and root is not None:
            path = root / path
        if path.is_file():
            return path
        raise DesignError(ref, "<file>", "experiment file not found")
    path = experiments_dir / f"{ref}.yaml"
    if path.is_file():
        return path
    names = sorted(p.stem for p in experiments_dir.glob("*.yaml") if p.name != "models.yaml")
    raise DesignError(
        ref,
        "<root>",
        f"no experiment named {ref!r} in {experiments_dir}; known: {', '.join(names) or 'none'}",
    )

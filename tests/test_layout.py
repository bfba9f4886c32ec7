"""The house rules a newcomer relies on: one list of stages, and no import cycles."""

from __future__ import annotations

import ast
from pathlib import Path

from bench_pipeline import settings, stages

ROOT = settings.project_root()
PACKAGES = ("assets", "resources", "bench_pipeline")


def test_the_definitions_follow_the_one_list_of_stages() -> None:
    from assets.definitions import STAGE_ASSETS
    from bench_pipeline.definitions import defs

    assert list(STAGE_ASSETS) == list(stages.STAGES)
    graph = defs.resolve_asset_graph()
    for stage, asset in STAGE_ASSETS.items():
        groups = {graph.get(key).group_name for key in asset.keys}
        # run_spec is the design's frozen per-run output; the rest are their own group.
        assert groups == {"experiment_design" if stage == "run_spec" else stage}, stage
    per_run = {
        k.to_user_string() for k in graph.get_all_asset_keys() if graph.get(k).is_partitioned
    }
    assert per_run == set(stages.PER_RUN)
    # The group and the pool of each stage's asset are its record's (stages.py).
    for stage, asset in STAGE_ASSETS.items():
        record = stages.BY_NAME[stage]
        groups = {graph.get(key).group_name for key in asset.keys}
        assert groups == {record.group_name}, stage
        pools = {getattr(spec, "pool", None) for spec in [asset]} | {
            getattr(node, "pool", None) for node in [asset.node_def]
        }
        assert record.pool in pools, (stage, pools)


def test_a_run_is_complete_by_one_rule() -> None:
    """ "Complete when bot_evaluation and quality_metrics are done" is written once."""
    assert stages.COMPLETES_RUN == ("bot_evaluation", "quality_metrics")
    done = stages.complete_runs(
        {"bot_evaluation": {"a", "b", "c"}, "quality_metrics": {"b", "c", "d"}, "x": {"a"}}
    )
    assert done == {"b", "c"}
    assert stages.complete_runs({"bot_evaluation": {"a"}}) == set()
    literal = '"bot_evaluation") & '
    for path in (ROOT / "bench_pipeline").rglob("*.py"):
        assert literal not in path.read_text(), path
    assert 'STAGE = "' not in "".join(
        p.read_text() for p in (ROOT / "bench_pipeline").rglob("*.py")
    ), "a stage's name written again outside stages.py"


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            found[name.removesuffix(".__init__")] = path
    return found


def _imports(path: Path, modules: dict[str, Path]) -> set[str]:
    """Project modules `path` imports anywhere (functions included: a lazy import hides a
    cycle, it does not remove it), except under `if TYPE_CHECKING:`."""
    tree = ast.parse(path.read_text())
    typing_only = {
        id(sub)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for sub in ast.walk(node)
    }

    def resolve(name: str) -> str | None:
        parts = name.split(".")
        while parts and ".".join(parts) not in modules:
            parts.pop()
        return ".".join(parts) or None

    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found.update(filter(None, (resolve(a.name) for a in node.names)))
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                target = resolve(f"{node.module}.{alias.name}") or resolve(node.module)
                if target:
                    found.add(target)
    return found


def test_no_module_of_the_project_imports_itself_back() -> None:
    modules = _modules()
    edges = {name: _imports(path, modules) - {name} for name, path in modules.items()}
    cycles = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for target in sorted(edges[name]):
            if state.get(target) == 1:
                cycles.append(" -> ".join([*path[path.index(target) :], target]))
            elif target not in state:
                visit(target, [*path, target])
        state[name] = 2

    for name in sorted(edges):
        if name not in state:
            visit(name, [name])
    assert not cycles, "\n".join(cycles)


def test_the_pure_package_never_imports_the_dagster_layer() -> None:
    """The arrows point one way: bench_pipeline holds the stage logic and sits under
    assets/ and resources/. The commands that drive Dagster (`bench run`, `bench worker`,
    the contract name bench_pipeline.definitions:defs) load the definitions by module name
    at run time (bench_pipeline/orchestration/project.py), as `dagster` loads
    workspace.yaml, never by an import."""
    modules = _modules()
    offenders = sorted(
        name
        for name, path in modules.items()
        if name.startswith("bench_pipeline")
        and any(t.split(".")[0] in ("assets", "resources") for t in _imports(path, modules))
    )
    assert not offenders


def test_no_module_sets_another_modules_state_at_import() -> None:
    """assets/definitions.py once handed the sweep launcher the project's graph as module
    state (`launch.use_project_graph(...)`): a back-edge the import-cycle test could not see,
    which depended on import order. No module-level statement may call into another
    project module to set something there."""
    offenders = []
    for name, path in _modules().items():
        tree = ast.parse(path.read_text())
        for node in tree.body:
            if not isinstance(node, ast.Expr) or not isinstance(node.value, ast.Call):
                continue
            func = node.value.func
            if isinstance(func, ast.Attribute) and (
                func.attr.startswith(("use_", "set_", "register")) or func.attr == "setdefault"
            ):
                offenders.append(f"{name}: {ast.unparse(node)[:80]}")
    assert not offenders, offenders


def _declared() -> set[str]:
    import re
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = {re.split(r"[<>=!~\[ ;]", d, maxsplit=1)[0] for d in project["dependencies"]}
    return {n.lower().replace("_", "-") for n in names}


def test_every_library_the_code_imports_is_declared() -> None:
    """A package that arrives only through another (pydantic through Dagster, say) can
    leave with that one's next release; the code's own imports are in pyproject.toml."""
    import importlib.metadata
    import sys

    distributions = importlib.metadata.packages_distributions()
    modules = _modules()
    roots = {
        target.split(".")[0]
        for path in modules.values()
        for node in ast.walk(ast.parse(path.read_text()))
        for target in (
            [a.name for a in node.names]
            if isinstance(node, ast.Import)
            else [node.module]
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0
            else []
        )
    }
    third_party = {
        root
        for root in roots
        if root not in sys.stdlib_module_names and root not in PACKAGES and root != "__future__"
    }
    declared = _declared()
    missing = {
        root: distributions.get(root, ["?"])
        for root in third_party
        if not {d.lower().replace("_", "-") for d in distributions.get(root, [root])} & declared
    }
    assert not missing, missing

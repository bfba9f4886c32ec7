"""Cells, runs and their ids: counts per design, dedupe, id stability, the JSON document."""

from __future__ import annotations

import ast
import hashlib
import itertools
import json
import math
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyDOE3
import pytest

from bench_pipeline.design import (
    AXES,
    DesignError,
    DesignResult,
    Experiment,
    cell_id_for,
    default_config,
    design_experiment,
    load_experiment,
    run_seed_for,
)

# Fixture signatures (see conftest.py); redeclared because test modules cannot import conftest.
MakeExperiment = Callable[..., Experiment]
WriteExperiment = Callable[..., Path]

HERE = Path(__file__).parent
REPO = HERE.parents[1]
EXPERIMENTS = REPO / "experiments"
CELL_ID = re.compile(r"c[0-9a-f]{12}")
# Dagster dynamic partition keys may not contain these; run ids must avoid them.
PARTITION_KEY_FORBIDDEN = set(",[]{}()\n\r\t *?\\/|\"'")

# A second level for every axis, so any axis can join a two-level design.
TWO_LEVELS: dict[str, list[Any]] = {
    "agent": ["claude-code", "codex"],
    "model": ["claude-sonnet-4-6", "gpt-5-codex"],
    "effort": ["medium", "high"],
    "prompt_style": ["standard", "terse"],
    "language": ["javascript", "typescript"],
    "human_language": ["en", "ja"],
    "budget_usd": [5, 20],
    "max_turns": [50, 10],
    "tool_web_search": [False, True],
    "tool_browser": [False, True],
    "tool_subagents": [False, True],
    "framework": ["vanilla", "react"],
    "context_file": [False, True],
    "self_test": [False, True],
    "time_limit_min": [30, 10],
    "plan_first": [False, True],
}


def two_level_grid(names: list[str]) -> dict[str, Any]:
    # Baseline is the *second* listed level for every other axis, so the -1 -> baseline mapping
    # cannot pass by accident of level order.
    return {
        name: {"levels": TWO_LEVELS[name], "baseline": TWO_LEVELS[name][index % 2]}
        for index, name in enumerate(names)
    }


def other_level(spec: dict[str, Any]) -> Any:
    (other,) = [level for level in spec["levels"] if level != spec["baseline"]]
    return other


# ---------------------------------------------------------------- counts per design


@pytest.mark.parametrize(
    "axes",
    [
        {},
        {"effort": {"levels": ["low", "medium", "high"]}},
        {
            "model": {"levels": ["claude-sonnet-4-6", "claude-opus-4-6", "gpt-5-codex"]},
            "effort": {"levels": ["low", "medium", "high", "max"], "baseline": "medium"},
            "tool_browser": {"levels": [False, True]},
        },
        {"agent": {"levels": ["synthetic"]}, "budget_usd": {"levels": [1, 5, 20, 100]}},
    ],
)
def test_main_effects_count(make_experiment: MakeExperiment, axes: dict[str, Any]) -> None:
    result = design_experiment(make_experiment(axes, [{"type": "main_effects"}]))
    expected = 1 + sum(len(spec["levels"]) - 1 for spec in axes.values())
    assert len(result.cells) == expected
    assert result.counts_by_design() == {"main_effects": expected}


def test_main_effects_changes_one_axis_at_a_time(make_experiment: MakeExperiment) -> None:
    exp = make_experiment(
        {
            "effort": {"levels": ["low", "medium", "high"], "baseline": "medium"},
            "plan_first": {"levels": [False, True]},
        },
        [{"type": "main_effects"}],
    )
    result = design_experiment(exp)
    baseline = exp.baseline_config()
    assert result.cells[0].config == baseline
    changed = [
        {k: v for k, v in cell.config.items() if baseline[k] != v} for cell in result.cells[1:]
    ]
    assert changed == [{"effort": "low"}, {"effort": "high"}, {"plan_first": True}]


def test_main_effects_restricted_axes(make_experiment: MakeExperiment) -> None:
    exp = make_experiment(
        {
            "effort": {"levels": ["low", "high"]},
            "framework": {"levels": ["vanilla", "vue", "react"]},
        },
        [{"type": "main_effects", "axes": ["framework"]}],
    )
    assert [c.config["framework"] for c in design_experiment(exp).cells] == [
        "vanilla",
        "vue",
        "react",
    ]


@pytest.mark.parametrize("k", [2, 3, 4, 5, 7, 8, 11, 12, 16])
def test_plackett_burman_rows_and_mapping(make_experiment: MakeExperiment, k: int) -> None:
    names = list(TWO_LEVELS)[:k]
    grid = two_level_grid(names)
    exp = make_experiment(grid, [{"type": "plackett_burman", "axes": names}])
    result = design_experiment(exp)
    matrix = pyDOE3.pbdesign(k)
    assert len(result.cells) == matrix.shape[0]
    assert result.counts_by_design() == {"plackett_burman": matrix.shape[0]}
    for cell, row in zip(result.cells, matrix, strict=True):
        for name, code in zip(names, row, strict=True):
            expected = grid[name]["baseline"] if code < 0 else other_level(grid[name])
            assert cell.config[name] == expected, (name, code)


def test_plackett_burman_default_axes_are_the_two_level_grid_axes(
    make_experiment: MakeExperiment,
) -> None:
    grid = two_level_grid(["tool_browser", "self_test", "plan_first"])
    grid["effort"] = {"levels": ["low", "medium", "high"]}
    result = design_experiment(make_experiment(grid, [{"type": "plackett_burman"}]))
    assert len(result.cells) == pyDOE3.pbdesign(3).shape[0]
    assert {cell.config["effort"] for cell in result.cells} == {"low"}


@pytest.mark.parametrize(("k", "resolution"), [(4, 3), (5, 3), (5, 4), (6, 4), (8, 4), (8, 5)])
def test_fractional_factorial_rows_and_mapping(
    make_experiment: MakeExperiment, k: int, resolution: int
) -> None:
    names = [n for n in TWO_LEVELS if isinstance(TWO_LEVELS[n][0], bool)]
    names += [n for n in TWO_LEVELS if n not in names]
    names = names[:k]
    grid = two_level_grid(names)
    exp = make_experiment(
        grid, [{"type": "fractional_factorial", "axes": names, "resolution": resolution}]
    )
    result = design_experiment(exp)
    matrix = pyDOE3.fracfact_by_res(k, resolution)
    assert len(result.cells) == matrix.shape[0]
    for cell, row in zip(result.cells, matrix, strict=True):
        for name, code in zip(names, row, strict=True):
            expected = grid[name]["baseline"] if code < 0 else other_level(grid[name])
            assert cell.config[name] == expected, (name, code)


@pytest.mark.parametrize(
    "axes",
    [
        {"model": 3, "prompt_style": 3},
        {"model": 3, "effort": 3, "language": 2},
        {"effort": 4, "framework": 5},
        {"tool_browser": 2, "self_test": 2, "plan_first": 2, "human_language": 3},
    ],
)
def test_interaction_is_the_full_factorial(
    make_experiment: MakeExperiment, axes: dict[str, int]
) -> None:
    choices = {
        "model": ["claude-sonnet-4-6", "claude-opus-4-6", "gpt-5-codex"],
        "human_language": list(AXES["human_language"].choices or ()),
        "language": list(AXES["language"].choices or ()),
    }
    grid = {
        name: {"levels": (choices.get(name) or list(AXES[name].choices or (False, True)))[:count]}
        for name, count in axes.items()
    }
    exp = make_experiment(grid, [{"type": "interaction", "axes": list(axes)}])
    result = design_experiment(exp)
    assert len(result.cells) == math.prod(axes.values())
    assert {tuple(c.config[n] for n in axes) for c in result.cells} == set(
        itertools.product(*(spec["levels"] for spec in grid.values()))
    )
    # pyDOE3.fullfact order: the first axis changes fastest.
    matrix = pyDOE3.fullfact(list(axes.values()))
    for cell, row in zip(result.cells, matrix, strict=True):
        assert [cell.config[n] for n in axes] == [
            grid[n]["levels"][int(code)] for n, code in zip(axes, row, strict=True)
        ]


def test_interaction_keeps_other_axes_at_baseline(make_experiment: MakeExperiment) -> None:
    exp = make_experiment(
        {
            "effort": {"levels": ["low", "high"]},
            "language": {"levels": ["javascript", "typescript"]},
            "budget_usd": {"levels": [1, 20], "baseline": 20},
        },
        [{"type": "interaction", "axes": ["effort", "language"]}],
    )
    assert {c.config["budget_usd"] for c in design_experiment(exp).cells} == {20}


# ---------------------------------------------------------------- dedupe and order


def test_shared_cells_are_counted_once(write_experiment: WriteExperiment) -> None:
    axes = {
        "model": {"levels": ["claude-sonnet-4-6", "claude-opus-4-6", "gpt-5-codex"]},
        "prompt_style": {"levels": ["terse", "standard", "detailed"], "baseline": "standard"},
        "effort": {"levels": ["low", "medium"], "baseline": "medium"},
    }
    me = {"type": "main_effects"}
    ia = {"type": "interaction", "axes": ["model", "prompt_style"]}
    only_me = design_experiment(load_experiment(write_experiment(axes, [me], filename="a.yaml")))
    only_ia = design_experiment(load_experiment(write_experiment(axes, [ia], filename="b.yaml")))
    both = design_experiment(load_experiment(write_experiment(axes, [me, ia], filename="c.yaml")))

    me_ids = [c.cell_id for c in only_me.cells]
    ia_ids = [c.cell_id for c in only_ia.cells]
    assert (len(me_ids), len(ia_ids)) == (6, 9)
    expected_order = me_ids + [i for i in ia_ids if i not in me_ids]
    assert [c.cell_id for c in both.cells] == expected_order
    assert len(both.cells) == 6 + 9 - 5  # baseline + 2 model + 2 prompt cells are shared
    assert both.counts_by_design() == {"main_effects": 6, "interaction": 9}
    shared = {c.cell_id for c in both.cells if c.designs == ("main_effects", "interaction")}
    assert shared == set(me_ids) & set(ia_ids)
    assert [(s.cells, s.new_cells) for s in both.summaries] == [(6, 6), (9, 4)]


def test_designs_listed_in_file_order_and_once(make_experiment: MakeExperiment) -> None:
    axes = {"effort": {"levels": ["low", "high"]}, "self_test": {"levels": [False, True]}}
    interaction = {"type": "interaction", "axes": ["effort", "self_test"]}
    result = design_experiment(
        make_experiment(axes, [interaction, {"type": "main_effects"}, interaction])
    )
    assert len(result.cells) == 4
    baseline = result.cells[0]
    assert baseline.config["effort"] == "low" and baseline.config["self_test"] is False
    assert baseline.designs == ("interaction", "main_effects")
    assert result.cells[3].designs == ("interaction",)


def test_same_file_gives_same_result(write_experiment: WriteExperiment) -> None:
    path = write_experiment(
        {
            "model": {"levels": ["claude-sonnet-4-6", "gpt-5-codex"]},
            "tool_browser": {"levels": [False, True]},
            "self_test": {"levels": [False, True]},
            "plan_first": {"levels": [False, True]},
        },
        [{"type": "main_effects"}, {"type": "plackett_burman"}],
    )
    first = design_experiment(load_experiment(path)).to_json_dict()
    second = design_experiment(load_experiment(path)).to_json_dict()
    assert first == second
    assert json.dumps(first) == json.dumps(second)


# ---------------------------------------------------------------- cell ids


def test_cell_id_golden_value() -> None:
    # Pinned: changing the id scheme orphans every stored result, so it must be deliberate.
    assert cell_id_for({}) == "cd63adba08672"


def test_cell_id_is_sha256_of_canonical_json() -> None:
    config = default_config() | {"budget_usd": 20, "tool_browser": True, "effort": "high"}
    text = json.dumps(config, sort_keys=True, separators=(",", ":"))
    assert cell_id_for(config) == "c" + hashlib.sha256(text.encode()).hexdigest()[:12]


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ({"budget_usd": 5}, {"budget_usd": 5.0}),
        ({"max_turns": 100}, {"max_turns": 100.0}),
        ({"time_limit_min": 10.0}, {"time_limit_min": 10}),
        ({}, default_config()),
        ({"effort": "high"}, default_config() | {"effort": "high"}),
        (
            {"plan_first": True, "model": "gpt-5-codex"},
            {"model": "gpt-5-codex", "plan_first": True},
        ),
    ],
)
def test_cell_id_equal_for_equivalent_configs(left: dict[str, Any], right: dict[str, Any]) -> None:
    assert cell_id_for(left) == cell_id_for(right)


@pytest.mark.parametrize(
    "other",
    [
        {"budget_usd": 5.5},
        {"tool_browser": True},
        {"effort": "low"},
        {"agent": "codex"},
        {"max_turns": 51},
    ],
)
def test_cell_id_differs_for_different_configs(other: dict[str, Any]) -> None:
    assert cell_id_for(other) != cell_id_for({})
    assert CELL_ID.fullmatch(cell_id_for(other))


@pytest.mark.parametrize(
    ("config", "key"),
    [
        ({"colour": "red"}, "colour"),
        ({"tool_browser": 1}, "tool_browser"),
        ({"budget_usd": "5"}, "budget_usd"),
        ({"effort": "extreme"}, "effort"),
        ({"max_turns": 2.5}, "max_turns"),
    ],
)
def test_cell_id_for_refuses_bad_configs(config: dict[str, Any], key: str) -> None:
    with pytest.raises(DesignError) as info:
        cell_id_for(config)
    assert (info.value.path, info.value.key) == ("<config>", key)


def test_cell_id_independent_of_file_axis_order_design_and_name(
    write_experiment: WriteExperiment,
) -> None:
    first = load_experiment(
        write_experiment(
            {
                "effort": {"levels": ["low", "medium"], "baseline": "medium"},
                "model": {"levels": ["claude-sonnet-4-6", "gpt-5-codex"]},
            },
            [{"type": "main_effects"}],
            filename="one.yaml",
            repeats=2,
        )
    )
    second = load_experiment(
        write_experiment(
            {
                "budget_usd": {"levels": [5.0, 1]},
                "model": {
                    "levels": ["gpt-5-codex", "claude-sonnet-4-6"],
                    "baseline": "claude-sonnet-4-6",
                },
                "effort": {"levels": ["medium", "low"]},
            },
            [{"type": "interaction", "axes": ["model", "effort"]}],
            filename="two.yaml",
            name="other",
            seed=9,
        )
    )
    ids_one = {
        json.dumps(c.config, sort_keys=True): c.cell_id for c in design_experiment(first).cells
    }
    ids_two = {
        json.dumps(c.config, sort_keys=True): c.cell_id for c in design_experiment(second).cells
    }
    common = ids_one.keys() & ids_two.keys()
    assert len(common) == 3  # the interaction covers all three main-effect cells
    assert all(ids_one[config] == ids_two[config] for config in common)


# ---------------------------------------------------------------- runs


def test_runs_cover_every_cell_and_repeat(make_experiment: MakeExperiment) -> None:
    exp = make_experiment(
        {"effort": {"levels": ["low", "high"]}, "self_test": {"levels": [False, True]}},
        [{"type": "main_effects"}],
        name="my-exp_1",
        repeats=4,
    )
    result = design_experiment(exp)
    assert len(result.runs) == len(result.cells) * 4
    assert [(r.cell_id, r.repeat) for r in result.runs] == [
        (c.cell_id, repeat) for c in result.cells for repeat in range(4)
    ]
    for run in result.runs:
        assert run.run_id == f"my-exp_1.{run.cell_id}.r{run.repeat}"
        assert run.experiment == "my-exp_1"
        assert not set(run.run_id) & PARTITION_KEY_FORBIDDEN
    assert len({r.run_id for r in result.runs}) == len(result.runs)


def test_run_seeds_are_deterministic_and_depend_on_experiment_seed(
    make_experiment: MakeExperiment,
) -> None:
    axes = {"effort": {"levels": ["low", "high"]}}
    designs = [{"type": "main_effects"}]
    a = design_experiment(make_experiment(axes, designs, seed=1, filename="a.yaml"))
    a_again = design_experiment(make_experiment(axes, designs, seed=1, filename="b.yaml"))
    c = design_experiment(make_experiment(axes, designs, seed=2, filename="c.yaml"))
    seeds = [r.seed for r in a.runs]
    assert seeds == [r.seed for r in a_again.runs]
    assert seeds != [r.seed for r in c.runs]
    assert len(set(seeds)) == len(seeds)
    assert all(0 <= s < 2**31 for s in seeds)
    assert a.runs[0].seed == run_seed_for(1, a.runs[0].cell_id, 0)


def test_run_seed_golden_value() -> None:
    assert run_seed_for(7, "c000000000000", 2) == 1188581976


def test_experiment_name_scopes_runs_not_cells(make_experiment: MakeExperiment) -> None:
    axes = {"effort": {"levels": ["low", "high"]}}
    one = design_experiment(make_experiment(axes, [{"type": "main_effects"}], name="one"))
    two = design_experiment(
        make_experiment(axes, [{"type": "main_effects"}], name="two", filename="two.yaml")
    )
    assert [c.cell_id for c in one.cells] == [c.cell_id for c in two.cells]
    assert {r.run_id for r in one.runs}.isdisjoint({r.run_id for r in two.runs})


# ---------------------------------------------------------------- JSON document


def test_json_document_shape(make_experiment: MakeExperiment) -> None:
    exp = make_experiment(
        {"tool_browser": {"levels": [False, True]}, "budget_usd": {"levels": [5.0, 0.5]}},
        [{"type": "main_effects"}],
        name="shape",
        repeats=2,
    )
    result = design_experiment(exp)
    document = json.loads(json.dumps(result.to_json_dict()))
    assert set(document) == {"experiment", "cells", "runs"}
    assert document["experiment"] == "shape"
    assert len(document["cells"]) == 3 and len(document["runs"]) == 6
    for cell in document["cells"]:
        assert set(cell) == {"cell_id", "designs", "config"}
        assert list(cell["config"]) == list(AXES)
        assert cell["designs"] == ["main_effects"]
        assert cell["cell_id"] == cell_id_for(cell["config"])
    for run in document["runs"]:
        assert set(run) == {"run_id", "cell_id", "repeat", "seed"}
    first = document["cells"][0]["config"]
    assert first["tool_browser"] is False and first["budget_usd"] == 5
    assert isinstance(first["budget_usd"], int)
    assert document["cells"][2]["config"]["budget_usd"] == 0.5


def test_cell_lookup(make_experiment: MakeExperiment) -> None:
    result = design_experiment(make_experiment({}, [{"type": "main_effects"}]))
    assert result.cell(result.cells[0].cell_id) is result.cells[0]
    with pytest.raises(KeyError):
        result.cell("c000000000000")


# ---------------------------------------------------------------- shipped experiments


def shipped(stem: str) -> DesignResult:
    return design_experiment(load_experiment(EXPERIMENTS / f"{stem}.yaml"))


def test_default_experiment_counts() -> None:
    exp = load_experiment(EXPERIMENTS / "default.yaml")
    result = design_experiment(exp)
    main_effects = 1 + sum(len(spec.levels) - 1 for spec in exp.axes.values())
    pb_axes = exp.designs[1].axes
    assert len(pb_axes) == 8 and "agent" not in pb_axes
    assert [(s.type, s.cells) for s in result.summaries] == [
        ("main_effects", main_effects),
        ("plackett_burman", pyDOE3.pbdesign(8).shape[0]),
        ("interaction", 3 * 3),
        ("interaction", 3 * 3 * 2),
    ]
    assert (main_effects, len(result.cells), len(result.runs)) == (23, 51, 153)
    assert result.counts_by_design() == {
        "main_effects": 23,
        "plackett_burman": 12,
        "interaction": 24,
    }
    assert len(result.cells) < 80
    assert len({c.cell_id for c in result.cells}) == len(result.cells)
    assert all(list(c.config) == list(AXES) for c in result.cells)


@pytest.mark.parametrize(("stem", "cells", "repeats"), [("demo", 4, 5), ("smoke", 2, 2)])
def test_small_experiments(stem: str, cells: int, repeats: int) -> None:
    result = shipped(stem)
    assert (len(result.cells), len(result.runs)) == (cells, cells * repeats)
    assert {c.config["agent"] for c in result.cells} == {"synthetic"}


def test_demo_is_a_two_by_two_factorial_of_model_and_prompt_style() -> None:
    result = shipped("demo")
    pairs = {(c.config["model"], c.config["prompt_style"]) for c in result.cells}
    assert len(pairs) == 4
    assert {m for m, _ in pairs} == {"claude-haiku-4-5", "claude-sonnet-4-6"}
    assert {p for _, p in pairs} == {"terse", "standard"}


# ---------------------------------------------------------------- module hygiene


@pytest.mark.parametrize(
    "module", sorted((REPO / "bench_pipeline" / "design").glob("*.py")), ids=lambda p: p.name
)
def test_design_package_does_not_import_dagster(module: Path) -> None:
    tree = ast.parse(module.read_text(encoding="utf-8"))
    imported = [
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    ]
    imported += [node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    assert imported, "parsed the wrong thing"
    assert not [name for name in imported if name.split(".")[0] == "dagster"]


def test_importing_the_package_does_not_load_pydoe3() -> None:
    code = (
        "import sys, bench_pipeline.design; "
        "print('pyDOE3' in sys.modules, 'dagster' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert out.stdout.split() == ["False", "False"]


def test_docs_cover_every_axis_and_design_type() -> None:
    from bench_pipeline.design import DESIGN_TYPES

    text = (REPO / "docs" / "experiments.md").read_text(encoding="utf-8")
    missing = [name for name in [*AXES, *DESIGN_TYPES] if f"`{name}`" not in text]
    assert missing == []

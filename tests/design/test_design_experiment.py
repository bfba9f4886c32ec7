"""Loading experiment files: defaults, the shipped experiments, and every refusal."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from bench_pipeline.design import (
    AXES,
    AxisSpec,
    DesignError,
    DesignSpec,
    Experiment,
    load_experiment,
)

# Fixture signatures (see conftest.py); redeclared because test modules cannot import conftest.
MakeExperiment = Callable[..., Experiment]
WriteExperiment = Callable[..., Path]

HERE = Path(__file__).parent
BAD = HERE / "bad"
EXPERIMENTS = HERE.parents[1] / "experiments"
ALL_AXES = list(AXES)
TWO_LEVEL_BOOLS = ["tool_web_search", "tool_browser", "tool_subagents", "context_file"]


def test_defaults_when_keys_are_absent(make_experiment: MakeExperiment) -> None:
    exp = make_experiment({"effort": {"levels": ["high", "low"]}}, [{"type": "main_effects"}])
    assert exp.repeats == 3
    assert exp.seed == 0
    assert exp.description is None
    # Without `baseline`, the first level is the baseline.
    assert exp.axes["effort"] == AxisSpec(levels=("high", "low"), baseline="high")
    assert exp.models_file == exp.path.parent / "models.yaml"
    assert exp.registry.ids == ("claude-sonnet-4-6", "claude-opus-4-6", "gpt-5-codex")


def test_explicit_top_level_keys(make_experiment: MakeExperiment) -> None:
    exp = make_experiment(
        {"effort": {"levels": ["low", "high"], "baseline": "high", "description": "why"}},
        [{"type": "main_effects"}],
        repeats=5,
        seed=42,
        description="text",
    )
    assert (exp.repeats, exp.seed, exp.description) == (5, 42, "text")
    assert exp.axes["effort"].baseline == "high"
    assert exp.axes["effort"].description == "why"
    assert exp.axes["effort"].other_levels == ("low",)


def test_models_file_is_relative_to_the_experiment(tmp_path: Path) -> None:
    sub = tmp_path / "sub"
    sub.mkdir()
    (tmp_path / "registry.yaml").write_text((HERE / "fixtures" / "models.yaml").read_text())
    path = sub / "exp.yaml"
    path.write_text(
        "name: rel\nmodels_file: ../registry.yaml\n"
        "axes: {model: {levels: [gpt-5-codex, claude-opus-4-6]}}\n"
        "designs: [{type: main_effects}]\n"
    )
    exp = load_experiment(str(path))
    assert exp.registry.path == str(tmp_path / "registry.yaml")
    assert exp.axes["model"].baseline == "gpt-5-codex"


def test_axes_keep_file_order_and_baseline_config_fills_defaults(
    make_experiment: MakeExperiment,
) -> None:
    exp = make_experiment(
        {
            "plan_first": {"levels": [True, False]},
            "budget_usd": {"levels": [1, 20.0], "baseline": 20},
        },
        [{"type": "main_effects"}],
    )
    assert list(exp.axes) == ["plan_first", "budget_usd"]
    assert exp.axes["budget_usd"].levels == (1, 20)
    baseline = exp.baseline_config()
    assert list(baseline) == ALL_AXES
    assert baseline["plan_first"] is True
    assert baseline["budget_usd"] == 20
    assert baseline["effort"] == AXES["effort"].default


def test_design_specs_are_resolved(make_experiment: MakeExperiment) -> None:
    axes = {name: {"levels": [False, True]} for name in TWO_LEVEL_BOOLS}
    axes["effort"] = {"levels": ["low", "medium", "high"]}
    exp = make_experiment(
        axes,
        [
            {"type": "main_effects"},
            {"type": "plackett_burman"},
            {"type": "interaction", "axes": ["effort", "tool_browser"]},
            {"type": "fractional_factorial", "resolution": 3},
        ],
    )
    assert exp.designs == [
        DesignSpec("main_effects", (*TWO_LEVEL_BOOLS, "effort")),
        # Default for two-level designs: every two-level axis of the grid, in grid order.
        DesignSpec("plackett_burman", tuple(TWO_LEVEL_BOOLS)),
        DesignSpec("interaction", ("effort", "tool_browser")),
        DesignSpec("fractional_factorial", tuple(TWO_LEVEL_BOOLS), resolution=3),
    ]


@pytest.mark.parametrize("stem", ["default", "demo", "smoke"])
def test_shipped_experiments_load(stem: str) -> None:
    exp = load_experiment(EXPERIMENTS / f"{stem}.yaml")
    assert exp.name == stem
    assert exp.registry.get("claude-sonnet-4-6") is not None


def test_default_experiment_varies_all_16_axes() -> None:
    exp = load_experiment(EXPERIMENTS / "default.yaml")
    assert list(exp.axes) == ALL_AXES
    assert all(len(spec.levels) >= 2 for spec in exp.axes.values())
    assert exp.repeats == 3


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("default", True),
        ("a", True),
        ("0day", True),
        ("x_y-1", True),
        ("a" * 64, True),
        ("a" * 65, False),
        ("Default", False),
        ("-x", False),
        ("_x", False),
        ("a.b", False),
        ("a,b", False),
        ("a b", False),
        ("a[1]", False),
        ("ab\n", False),
        ("", False),
        (12, False),
    ],
)
def test_experiment_name_rule(write_experiment: WriteExperiment, name: object, ok: bool) -> None:
    path = write_experiment({}, [{"type": "main_effects"}])
    # JSON is YAML: json.dumps gives a correctly quoted/escaped scalar (newline included).
    path.write_text(path.read_text().replace("name: t", f"name: {json.dumps(name)}"))
    if ok:
        assert load_experiment(path).name == name
    else:
        with pytest.raises(DesignError) as info:
            load_experiment(path)
        assert info.value.key == "name"
        assert "invalid name" in info.value.problem


def test_no_axes_key_means_everything_at_default(write_experiment: WriteExperiment) -> None:
    path = write_experiment({}, [{"type": "main_effects"}])
    path.write_text(path.read_text().replace("axes: {}\n", ""))
    exp = load_experiment(path)
    assert exp.axes == {}
    assert exp.baseline_config() == {name: axis.default for name, axis in AXES.items()}


def test_default_model_must_be_in_the_registry(tmp_path: Path) -> None:
    registry = (HERE / "fixtures" / "models.yaml").read_text()
    (tmp_path / "models.yaml").write_text(registry.replace("claude-sonnet-4-6", "claude-x"))
    path = tmp_path / "exp.yaml"
    path.write_text("name: t\naxes: {}\ndesigns: [{type: main_effects}]\n")
    with pytest.raises(DesignError) as info:
        load_experiment(path)
    assert info.value.key == "axes.model"
    assert "default" in info.value.problem and "claude-sonnet-4-6" in info.value.problem


def test_loading_writes_nothing(tmp_path: Path, write_experiment: WriteExperiment) -> None:
    path = write_experiment({"effort": {"levels": ["low", "high"]}}, [{"type": "main_effects"}])
    before = sorted(tmp_path.rglob("*"))
    load_experiment(path)
    assert sorted(tmp_path.rglob("*")) == before


def test_missing_experiment_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.yaml"
    with pytest.raises(DesignError) as info:
        load_experiment(path)
    assert (info.value.path, info.value.key) == (str(path), "<file>")
    assert "not found" in info.value.problem


def test_directory_instead_of_file(tmp_path: Path) -> None:
    with pytest.raises(DesignError) as info:
        load_experiment(tmp_path)
    assert info.value.key == "<file>"


def test_non_utf8_file(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes("name: caf\xe9\n".encode("latin-1"))
    with pytest.raises(DesignError) as info:
        load_experiment(path)
    assert info.value.key == "<file>" and "UTF-8" in info.value.problem


@pytest.mark.parametrize(
    "text",
    [
        "name: t\naxes: !!python/object:os.system {}\ndesigns: []\n",
        "name: t\nrepeats: !!int three\ndesigns: []\n",
        "name: t\naxes: {? [a, b] : 1}\ndesigns: []\n",
    ],
)
def test_hostile_yaml_is_a_design_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "exp.yaml"
    path.write_text(text)
    with pytest.raises(DesignError) as info:
        load_experiment(path)
    assert info.value.key == "<yaml>"


# (fixture stem, expected key, a word of the problem)
BAD_EXPERIMENTS: list[tuple[str, str, str]] = [
    ("exp_yaml_syntax", "<yaml>", "line 5"),
    ("exp_not_mapping", "<root>", "mapping"),
    ("exp_empty", "<root>", "empty"),
    ("exp_duplicate_key", "<yaml>", "duplicate key 'effort'"),
    ("exp_unknown_key", "colour", "unknown key"),
    ("exp_name_missing", "name", "missing"),
    ("exp_name_invalid", "name", "invalid name"),
    ("exp_description_not_string", "description", "string"),
    ("exp_repeats_zero", "repeats", ">= 1"),
    ("exp_repeats_negative", "repeats", ">= 1"),
    ("exp_repeats_fraction", "repeats", "integer"),
    ("exp_repeats_string", "repeats", "integer"),
    ("exp_seed_string", "seed", "integer"),
    ("exp_models_file_missing", "models_file", "not found"),
    (
        "exp_registry_invalid",
        "models_file",
        "registry_negative_price.yaml: models[claude-sonnet-4-6].input_usd_per_mtok: must not",
    ),
    ("exp_axes_not_mapping", "axes", "mapping"),
    ("exp_unknown_axis", "axes.colour", "unknown axis"),
    ("exp_axis_not_mapping", "axes.effort", "mapping"),
    ("exp_axis_unknown_key", "axes.effort.default", "unknown key"),
    ("exp_levels_missing", "axes.effort.levels", "missing"),
    ("exp_levels_empty", "axes.effort.levels", "empty"),
    ("exp_levels_not_list", "axes.effort.levels", "list"),
    ("exp_levels_duplicate", "axes.effort.levels", "duplicate level 'low'"),
    ("exp_levels_duplicate_number", "axes.budget_usd.levels", "duplicate level 5"),
    ("exp_level_not_allowed", "axes.effort.levels", "'extreme'"),
    ("exp_bool_yes", "axes.tool_browser.levels", "true or false"),
    ("exp_bool_quoted", "axes.tool_browser.levels", "'false' (string)"),
    ("exp_categorical_bool", "axes.language.levels", "true (bool)"),
    ("exp_number_string", "axes.budget_usd.levels", "'5' (string)"),
    ("exp_number_bool", "axes.time_limit_min.levels", "true (bool)"),
    ("exp_number_out_of_range", "axes.budget_usd.levels", "> 0"),
    ("exp_integer_fraction", "axes.max_turns.levels", "an integer"),
    ("exp_baseline_not_level", "axes.effort.baseline", "not among the levels"),
    ("exp_model_not_in_registry", "axes.model.levels", "gpt-9-ultra"),
    ("exp_agent_not_in_registry", "axes.agent.levels", "not a harness"),
    ("exp_designs_missing", "designs", "missing"),
    ("exp_designs_empty", "designs", "non-empty"),
    ("exp_design_not_mapping", "designs[0]", "mapping"),
    ("exp_design_type_missing", "designs[0].type", "missing"),
    ("exp_design_unknown_type", "designs[0].type", "unknown design type"),
    ("exp_design_unknown_key", "designs[0].resolution", "unknown key"),
    ("exp_interaction_not_in_grid", "designs[1].axes", "not in the experiment's grid"),
    ("exp_interaction_unknown_axis", "designs[0].axes", "unknown axis 'colour'"),
    ("exp_interaction_too_few", "designs[0].axes", "too few"),
    ("exp_interaction_too_many", "designs[0].axes", "too many"),
    ("exp_interaction_duplicate", "designs[0].axes", "more than once"),
    ("exp_interaction_axes_missing", "designs[0].axes", "missing"),
    (
        "exp_pb_three_levels",
        "designs[0].axes",
        "has 3 levels; plackett_burman needs two-level axes",
    ),
    ("exp_pb_one_level", "designs[0].axes", "has 1 level; plackett_burman"),
    ("exp_pb_no_two_level_axes", "designs[0].axes", "at least 2 two-level axes"),
    (
        "exp_ff_three_levels",
        "designs[0].axes",
        "has 3 levels; fractional_factorial needs two-level axes",
    ),
    ("exp_ff_resolution_missing", "designs[0].resolution", "missing"),
    ("exp_ff_resolution_low", "designs[0].resolution", ">= 3"),
    ("exp_ff_impossible", "designs[0].resolution", "design not possible"),
]


@pytest.mark.parametrize(("stem", "key", "word"), BAD_EXPERIMENTS)
def test_bad_experiment(stem: str, key: str, word: str) -> None:
    path = BAD / f"{stem}.yaml"
    with pytest.raises(DesignError) as info:
        load_experiment(path)
    error = info.value
    assert error.key == key
    assert word in error.problem
    assert error.path == str(path)
    assert str(error) == f"{path}: {key}: {error.problem}"


def test_registry_error_is_reported_against_the_experiment_with_its_cause() -> None:
    with pytest.raises(DesignError) as info:
        load_experiment(BAD / "exp_registry_invalid.yaml")
    cause = info.value.__cause__
    assert isinstance(cause, DesignError)
    assert cause.path == str(BAD / "registry_negative_price.yaml")
    assert cause.key == "models[claude-sonnet-4-6].input_usd_per_mtok"
    assert str(cause) in info.value.problem


def test_every_bad_experiment_fixture_is_covered() -> None:
    on_disk = {p.stem for p in BAD.glob("exp_*.yaml")}
    assert on_disk == {stem for stem, *_ in BAD_EXPERIMENTS}


def test_an_experiment_anywhere_uses_the_project_registry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A file with no models.yaml beside it and no models_file key: the project's registry.
    monkeypatch.delenv("BENCH_MODELS_FILE", raising=False)
    lone = tmp_path / "lone.yaml"
    lone.write_text(
        "name: lone\naxes:\n  model: {levels: [claude-opus-4-6, gpt-5-codex]}\n"
        "designs: [{type: main_effects}]\n"
    )
    exp = load_experiment(lone)
    assert exp.models_file == EXPERIMENTS / "models.yaml"
    # $BENCH_MODELS_FILE points elsewhere when there is no registry beside the file.
    monkeypatch.setenv("BENCH_MODELS_FILE", str(HERE / "fixtures" / "models.yaml"))
    assert load_experiment(lone).models_file == HERE / "fixtures" / "models.yaml"
    # A registry beside the file wins over both.
    (tmp_path / "models.yaml").write_text((EXPERIMENTS / "models.yaml").read_text())
    assert load_experiment(lone).models_file == tmp_path / "models.yaml"

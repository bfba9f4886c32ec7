import subprocess
import sys

import dagster as dg
import pytest

from bench_pipeline import settings
from bench_pipeline.definitions import defs
from bench_pipeline.warehouse.marts import MART_SCHEMAS


def test_definitions_load() -> None:
    dg.Definitions.validate_loadable(defs)


def test_every_stage_has_its_group_and_code_version() -> None:
    graph = defs.resolve_asset_graph()
    groups = {
        key.to_user_string(): graph.get(key).group_name
        for key in graph.get_all_asset_keys()
        if graph.get(key).is_materializable
    }
    assert groups == {
        "experiment_design": "experiment_design",
        "run_spec": "experiment_design",
        "agent_generation": "agent_generation",
        "sandboxed_build": "sandboxed_build",
        "bot_evaluation": "bot_evaluation",
        "quality_metrics": "quality_metrics",
        "warehouse_sources": "warehouse",
        # Every SQL file is a model asset of the warehouse group.
        **{p.stem: "warehouse" for p in settings.sql_models_dir().glob("*.sql")},
        # The marts the statistics write.
        **dict.fromkeys(MART_SCHEMAS, "effects_analysis"),
        "results_site": "results_site",
    }
    for key in graph.get_all_asset_keys():
        if graph.get(key).is_materializable:
            assert graph.get(key).code_version, f"{key} has no code version"


def test_per_run_assets_are_partitioned_by_run() -> None:
    graph = defs.resolve_asset_graph()
    for name in (
        "run_spec",
        "agent_generation",
        "sandboxed_build",
        "bot_evaluation",
        "quality_metrics",
    ):
        node = graph.get(dg.AssetKey(name))
        assert isinstance(node.partitions_def, dg.DynamicPartitionsDefinition), name
        assert node.partitions_def.name == "runs"
        # A backfill over many runs becomes a few Dagster runs of up to ten partitions.
        assert node.backfill_policy == dg.BackfillPolicy.multi_run(max_partitions_per_run=10)


def test_data_tests_are_asset_checks() -> None:
    checks = {
        (key.asset_key.to_user_string(), key.name)
        for key in defs.resolve_asset_graph().asset_check_keys
    }
    assert ("fct_runs", "unique_run_id") in checks
    assert ("fct_test_results", "rows_per_run_id_16") in checks
    # The stage outputs' own checks, blocking so a bad stage cannot feed the marts.
    for stage, names in {
        "agent_generation": {"one_record", "cost_non_negative"},
        "sandboxed_build": {"one_record"},
        "bot_evaluation": {"one_record", "sixteen_verdicts", "gameplay_score_in_range"},
        "quality_metrics": {"one_record", "quality_score_in_range"},
    }.items():
        assert {(stage, name) for name in names} <= checks, stage
        spec = defs.resolve_asset_graph().get_check_spec(
            dg.AssetCheckKey(dg.AssetKey(stage), "one_record")
        )
        assert spec.blocking


def test_jobs_schedule_and_sensor_are_registered() -> None:
    names = {job.name for job in defs.resolve_all_job_defs()}
    assert {"sweep_job", "experiment_design_job", "run_stages_job", "warehouse_job"} <= names
    schedule = defs.resolve_schedule_def("new_model_backfill_schedule")
    assert schedule.job_name == "sweep_job"
    assert schedule.default_status == dg.DefaultScheduleStatus.RUNNING
    sensor = defs.resolve_sensor_def("automation_condition_sensor")
    # Dagster starts automation sensors stopped unless told otherwise.
    assert sensor.default_status == dg.DefaultSensorStatus.RUNNING


def test_the_launchpad_shows_the_sweep_config() -> None:
    job = defs.resolve_job_def("sweep_job")
    fields = job.run_config_schema.config_type.fields["ops"].config_type.fields
    config = fields["experiment_design"].config_type.fields["config"].config_type.fields
    assert {"experiment", "launch"} <= set(config)
    # Launch-time settings for that sweep only (docs/orchestration.md).
    assert {"bot_endurance_s", "repeats", "budget_cap_usd", "dry_run", "only_models"} <= set(config)
    assert "BENCH_BOT_ENDURANCE_S" in (config["bot_endurance_s"].description or "")
    assert config["experiment"].description and "name" in config["experiment"].description


def test_agent_generation_is_never_automated() -> None:
    """Agent runs cost money: only a launch or an explicit rerun runs them."""
    graph = defs.resolve_asset_graph()
    for name in ("experiment_design", "run_spec", "agent_generation"):
        assert graph.get(dg.AssetKey(name)).automation_condition is None, name
    for name in ("sandboxed_build", "bot_evaluation", "quality_metrics", "fct_runs"):
        assert graph.get(dg.AssetKey(name)).automation_condition is not None, name


def test_pools_bound_each_kind_of_step() -> None:
    graph = defs.resolve_asset_graph()
    pools = {
        name: graph.get(dg.AssetKey(name)).pools
        for name in ("agent_generation", "sandboxed_build", "bot_evaluation", "fct_runs")
    }
    assert pools == {
        "agent_generation": {"agents"},
        "sandboxed_build": {"builds"},
        "bot_evaluation": {"browser"},
        "fct_runs": {"warehouse"},
    }


def test_loading_the_project_leaves_the_statistics_libraries_unimported() -> None:
    """Every Dagster run process loads the project; scipy, statsmodels and matplotlib were
    half of that load and only the effects analysis needs them (docs/orchestration.md)."""
    heavy = ["scipy", "statsmodels", "matplotlib"]
    probe = (
        f"import sys, bench_pipeline.definitions\nprint([m for m in {heavy!r} if m in sys.modules])"
    )
    out = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
    # ...and they still load where they are needed.
    from bench_pipeline.analysis import EffectsReport, analyze

    assert callable(analyze) and EffectsReport.__name__ == "EffectsReport"


def test_the_sonarqube_token_reaches_dagster_as_an_env_var(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Dagster shows an EnvVar field by its variable's name, so the token never appears in
    the UI or the stored run config; the step still gets the value."""
    from resources import SonarQubeResource

    assert SonarQubeResource.from_env().config().url is None  # unset: no server
    monkeypatch.setenv("BENCH_SONAR_URL", "http://sonar.example.internal:9000")
    monkeypatch.setenv("BENCH_SONAR_TOKEN", "squ_not_a_real_token")
    resource = SonarQubeResource.from_env()
    assert isinstance(resource.token, dg.EnvVar) and resource.token == "BENCH_SONAR_TOKEN"
    with dg.build_resources({"sonar": resource}) as built:
        config = built.sonar.config()
    assert config.token == "squ_not_a_real_token"
    assert config.url == "http://sonar.example.internal:9000"

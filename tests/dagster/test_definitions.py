import dagster as dg

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
    assert ("bot_evaluation", "bot_evaluation_has_sixteen_verdicts") in checks


def test_jobs_are_registered() -> None:
    names = {job.name for job in defs.resolve_all_job_defs()}
    assert {"experiment_design_job", "run_stages_job", "warehouse_job"} <= names

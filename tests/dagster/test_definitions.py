import dagster as dg

from bench_pipeline.definitions import defs


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
        "bot_evaluation": "bot_evaluation",
        "warehouse": "warehouse",
    }
    for key in graph.get_all_asset_keys():
        if graph.get(key).is_materializable:
            assert graph.get(key).code_version, f"{key} has no code version"


def test_per_run_assets_are_partitioned_by_run() -> None:
    graph = defs.resolve_asset_graph()
    spec = graph.get(dg.AssetKey("run_spec"))
    assert isinstance(spec.partitions_def, dg.DynamicPartitionsDefinition)
    assert spec.partitions_def.name == "runs"


def test_jobs_are_registered() -> None:
    names = {job.name for job in defs.resolve_all_job_defs()}
    assert {"experiment_design_job", "run_stages_job", "warehouse_job"} <= names

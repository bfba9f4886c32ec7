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
        "agent_generation": "agent_generation",
        "sandboxed_build": "sandboxed_build",
        "bot_evaluation": "bot_evaluation",
        "quality_metrics": "quality_metrics",
        "warehouse": "warehouse",
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


def test_jobs_are_registered() -> None:
    names = {job.name for job in defs.resolve_all_job_defs()}
    assert {"experiment_design_job", "run_stages_job", "warehouse_job"} <= names

"""Each run's partition carries its own metadata, and the warehouse and the marts show as
stale when a run's stage output changed: real stages (synthetic agent, bubblewrap builds,
the bot in Chromium, quality), a real DuckDB warehouse and a real Dagster instance.

Stale status is read the way the UI reads it: the GraphQL `staleStatus` field is
`CachingStaleStatusResolver.get_status` over the code location's asset graph.
"""

from __future__ import annotations

import dagster as dg
import pytest
from dagster._core.definitions.data_version import CachingStaleStatusResolver
from dagster._core.loader import LoadingContextForTest

from assets.effects_analysis import effects_analysis
from assets.metadata import record_hash, step_data_version
from assets.warehouse import warehouse
from bench_pipeline import settings
from bench_pipeline.bot import TEST_IDS
from bench_pipeline.definitions import ALL_ASSETS, defs
from bench_pipeline.warehouse.artifacts import ArtifactStore

# The bot plays in process here: these tests open Chromium (tests/needs.py).
pytestmark = pytest.mark.usefixtures("chromium")

SMOKE = settings.experiments_dir() / "smoke.yaml"
PER_RUN = ["run_spec", "agent_generation", "sandboxed_build", "bot_evaluation", "quality_metrics"]
BOT = {"ops": {"bot_evaluation": {"config": {"endurance_seconds": 4.0}}}}
NO_CHARTS = {"ops": {"effects_analysis": {"config": {"charts": False}}}}
NEW_DATA = "has a new dependency data version"


def _design(instance: dg.DagsterInstance, resources: dict) -> list[str]:
    dg.materialize(
        ALL_ASSETS,
        selection=["experiment_design"],
        instance=instance,
        resources=resources,
        run_config={"ops": {"experiment_design": {"config": {"experiment": str(SMOKE)}}}},
    )
    return instance.get_dynamic_partitions("runs")


def _one_step(first: str, last: str) -> dict[str, str]:
    """Tags of a Dagster run whose every step materializes the runs first…last together."""
    return {
        "dagster/asset_partition_range_start": first,
        "dagster/asset_partition_range_end": last,
    }


def _events(result: dg.ExecuteInProcessResult, asset: str) -> dict[str, dg.AssetMaterialization]:
    return {
        str(e.materialization.partition): e.materialization
        for e in result.get_asset_materialization_events()
        if e.asset_key == dg.AssetKey(asset)
    }


def _values(event: dg.AssetMaterialization) -> dict:
    return {k: v.value for k, v in event.metadata.items()}


def _resolver(instance: dg.DagsterInstance, project: dg.Definitions) -> CachingStaleStatusResolver:
    return CachingStaleStatusResolver(
        instance, project.resolve_asset_graph(), LoadingContextForTest(instance)
    )


def _status(
    instance: dg.DagsterInstance, project: dg.Definitions, key: str, partition: str | None = None
) -> str:
    return _resolver(instance, project).get_status(dg.AssetKey(key), partition).value


def _causes(
    instance: dg.DagsterInstance, project: dg.Definitions, key: str, partition: str | None = None
) -> list[tuple[str, str | None]]:
    """(reason, the changed input, its partition) of each stale cause, as the UI lists them."""
    return [
        (
            c.reason,
            c.dependency.asset_key.to_user_string() if c.dependency else None,
            c.dependency.partition_key if c.dependency else None,
        )
        for c in _resolver(instance, project).get_stale_causes(dg.AssetKey(key), partition)
    ]


def _with_bot_version(version: str) -> dg.Definitions:
    """The project's definitions as they load after the bot's code version changed."""
    assets = [
        a.map_asset_specs(lambda spec: spec.replace_attributes(code_version=version))
        if a.keys == {dg.AssetKey("bot_evaluation")}
        else a
        for a in ALL_ASSETS
    ]
    return dg.Definitions(assets=assets, resources=defs.resources)


@pytest.mark.slow
def test_runs_materialized_in_one_step_each_show_their_own_metadata(
    instance: dg.DagsterInstance, store: ArtifactStore, resources: dict
) -> None:
    first, second = _design(instance, resources)[:2]
    result = dg.materialize(
        ALL_ASSETS,
        selection=["run_spec", "agent_generation", "sandboxed_build"],
        instance=instance,
        resources=resources,
        tags=_one_step(first, second),
    )
    assert result.success
    # One step per asset, two partitions each: what the backfill policy does in a sweep.
    steps = {e.step_key for e in result.all_events if e.event_type_value == "STEP_SUCCESS"}
    assert steps == {"run_spec", "agent_generation", "sandboxed_build"}

    specs = _events(result, "run_spec")
    assert set(specs) == {first, second}
    for run_id, event in specs.items():
        shown = _values(event)
        spec = store.read_record("run_spec", run_id)
        assert spec is not None
        assert (shown["repeat"], shown["seed"], shown["model"]) == (
            spec["repeat"],
            spec["seed"],
            spec["model"],
        )
        assert "runs" not in shown and "first_run" not in shown  # no chunk summary
    assert _values(specs[first])["seed"] != _values(specs[second])["seed"]

    generations = _events(result, "agent_generation")
    for run_id, event in generations.items():
        shown = _values(event)
        record = store.read_record("agent_generation", run_id)
        assert record is not None and shown["status"] == record["status"] == "completed"
        assert shown["cost_usd"] == record["cost_usd"] > 0
        assert shown["input_tokens"] == record["input_tokens"] > 0
        assert shown["output_tokens"] == record["output_tokens"]
        assert shown["model"] == record["model"] and shown["duration_s"] == record["duration_s"]
        assert shown["workspace"] == str(store.run_dir(run_id, "agent_generation"))
        assert shown["record_sha256"] == record_hash(store, "agent_generation", run_id)[:16]
        assert shown["runs_in_step"] == 2
    assert _values(generations[first]) != _values(generations[second])
    # Dagster 1.13 keeps one data version per step: both carry the hash of both records.
    versions = {e.tags["dagster/data_version"] for e in generations.values()}
    expected = step_data_version(
        {r: record_hash(store, "agent_generation", r) for r in (first, second)}
    )
    assert versions == {expected.value}

    builds = _events(result, "sandboxed_build")
    for run_id, event in builds.items():
        record = store.read_record("sandboxed_build", run_id)
        assert record is not None
        shown = _values(event)
        assert (shown["build_ok"], shown["kind"], shown["message"]) == (
            record["build_ok"],
            record["kind"],
            record["message"],
        )
        assert shown["log"] == record["log_path"] and run_id in shown["log"]

    # The second run's build produced no page: the bot plays one game and not the other,
    # in one step, and each partition shows its own sixteen verdicts.
    store.write_record("sandboxed_build", second, {"build_ok": False, "served_dir": None})
    played = dg.materialize(
        ALL_ASSETS,
        selection=["bot_evaluation", "quality_metrics"],
        instance=instance,
        resources=resources,
        tags=_one_step(first, second),
        run_config=BOT,
    )
    assert played.success
    evaluations = _events(played, "bot_evaluation")
    assert set(evaluations) == {first, second}
    for run_id, event in evaluations.items():
        record = store.read_record("bot_evaluation", run_id)
        assert record is not None
        shown = event.metadata
        table = shown["verdicts"].value
        assert isinstance(table, dg.TableMetadataValue)
        rows = [r.data for r in table.records]
        assert [r["test"] for r in rows] == list(TEST_IDS)
        assert {r["test"]: r["verdict"] for r in rows} == record["tests"]
        assert all(r["why"] for r in rows)  # the bot's reason for every verdict
        for field in ("gameplay_score", "passed", "failed", "inconclusive", "bot_version"):
            assert shown[field].value == record[field], field
        assert "mean_gameplay_score" not in shown and "scores" not in shown
    verdicts = {
        run_id: {r.data["test"]: r.data["verdict"] for r in e.metadata["verdicts"].value.records}  # type: ignore[union-attr]
        for run_id, e in evaluations.items()
    }
    assert verdicts[first]["loads"] == "PASS" and verdicts[second]["loads"] == "FAIL"
    assert _values(evaluations[first])["gameplay_score"] > 0
    assert _values(evaluations[second])["gameplay_score"] == 0.0

    qualities = _events(played, "quality_metrics")
    for run_id, event in qualities.items():
        record = store.read_record("quality_metrics", run_id)
        assert record is not None
        shown = _values(event)
        assert shown["quality_score"] == record["quality_score"]
        assert shown["eslint_errors"] == record["eslint_errors"]
        assert shown["build_ok"] == record["build_ok"]
    assert _values(qualities[first])["quality_score"] != _values(qualities[second])["quality_score"]
    # The step's summary is in the run's log, once per step, not on the partitions.
    logged = [e.user_message for e in instance.all_logs(played.run_id)]
    assert sum(m.startswith("bot_evaluation: 2 runs, mean gameplay score") for m in logged) == 1
    assert sum(m.startswith("quality_metrics: 2 runs") for m in logged) == 1


@pytest.mark.slow
def test_a_changed_stage_output_makes_the_warehouse_then_the_marts_stale(
    instance: dg.DagsterInstance, store: ArtifactStore, resources: dict
) -> None:
    run = _design(instance, resources)[0]
    stages = dg.materialize(
        ALL_ASSETS,
        selection=PER_RUN,
        partition_key=run,
        instance=instance,
        resources=resources,
        run_config=BOT,
    )
    assert stages.success
    built = dg.materialize(
        ALL_ASSETS,
        selection=[warehouse, effects_analysis],
        instance=instance,
        resources=resources,
        run_config=NO_CHARTS,
    )
    assert built.success
    marts = ["warehouse_sources", "stg_bot_evaluations", "fct_runs", "mart_main_effects"]
    for stage in PER_RUN:
        assert _status(instance, defs, stage, run) == "FRESH", stage
    for asset in marts:
        assert _status(instance, defs, asset) == "FRESH", asset

    # The agent run materialized again is reused: same record, same data version, so
    # nothing downstream is stale.
    again = dg.materialize(
        ALL_ASSETS,
        selection=["agent_generation"],
        partition_key=run,
        instance=instance,
        resources=resources,
    )
    assert _values(_events(again, "agent_generation")[run])["reused"] is True
    assert _status(instance, defs, "sandboxed_build", run) == "FRESH"
    assert _status(instance, defs, "warehouse_sources") == "FRESH"

    # A new bot: its evaluation is stale by its code version. Dagster 1.13 marks an asset
    # stale for its own code or for a changed input, so the warehouse waits for the
    # re-evaluation's new record.
    new_bot = _with_bot_version("bot-next")
    new_assets = list(new_bot.assets or [])
    assert _status(instance, new_bot, "bot_evaluation", run) == "STALE"
    assert _causes(instance, new_bot, "bot_evaluation", run) == [
        ("has a new code version", None, None)
    ]
    assert _status(instance, new_bot, "warehouse_sources") == "FRESH"
    before = record_hash(store, "bot_evaluation", run)
    evaluated = dg.materialize(
        new_assets,
        selection=["bot_evaluation"],
        partition_key=run,
        instance=instance,
        resources=resources,
        run_config=BOT,
    )
    assert evaluated.success and record_hash(store, "bot_evaluation", run) != before
    assert _status(instance, new_bot, "bot_evaluation", run) == "FRESH"
    assert _status(instance, new_bot, "warehouse_sources") == "STALE"
    assert (NEW_DATA, "bot_evaluation", run) in _causes(instance, new_bot, "warehouse_sources")
    # The SQL models read the sources, not the stages: stale once the sources changed.
    assert _status(instance, new_bot, "fct_runs") == "FRESH"

    # The warehouse rebuilt from the new record: its models are fresh, and the marts
    # computed from the previous fct_runs are now stale.
    rebuilt = dg.materialize(
        new_assets, selection=[warehouse], instance=instance, resources=resources
    )
    assert rebuilt.success
    for asset in ("warehouse_sources", "stg_bot_evaluations", "fct_runs"):
        assert _status(instance, new_bot, asset) == "FRESH", asset
    assert _status(instance, new_bot, "mart_main_effects") == "STALE"
    assert (NEW_DATA, "fct_runs", None) in _causes(instance, new_bot, "mart_main_effects")
    analysed = dg.materialize(
        new_assets,
        selection=[effects_analysis],
        instance=instance,
        resources=resources,
        run_config=NO_CHARTS,
    )
    assert analysed.success
    for asset in marts:
        assert _status(instance, new_bot, asset) == "FRESH", asset

    # Same code, a changed record: the agent run redone on purpose. Its record's hash is
    # its data version, so what reads it is stale (a logical version, from code versions
    # alone, would not have changed).
    before = record_hash(store, "agent_generation", run)
    rerun = dg.materialize(
        new_assets,
        selection=["agent_generation"],
        partition_key=run,
        instance=instance,
        resources=resources,
        run_config={"ops": {"agent_generation": {"config": {"rerun": True}}}},
    )
    assert rerun.success and record_hash(store, "agent_generation", run) != before
    for stage in ("sandboxed_build", "quality_metrics"):
        assert _status(instance, new_bot, stage, run) == "STALE", stage
        assert _causes(instance, new_bot, stage, run) == [(NEW_DATA, "agent_generation", run)]
    assert _status(instance, new_bot, "bot_evaluation", run) == "FRESH"  # reads the build
    assert (NEW_DATA, "agent_generation", run) in _causes(instance, new_bot, "warehouse_sources")

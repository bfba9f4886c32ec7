"""The bot_evaluation asset on real Chromium, fed by sandboxed_build records.

The build stage is another issue's; its records are plain JSON files, written here the
way that stage writes them (served_dir, build_ok).
"""

from __future__ import annotations

import dagster as dg
import pytest

from assets.design import experiment_design, run_spec
from assets.evaluation import bot_evaluation, bot_evaluation_has_sixteen_verdicts
from assets.partitions import run_partitions
from bench_pipeline import settings
from bench_pipeline.bot import TEST_IDS
from bench_pipeline.warehouse.artifacts import ArtifactStore

GAME = settings.project_root() / "tests" / "bot" / "games" / "canvas-basic"
ASSETS = [experiment_design, run_spec, bot_evaluation]


@pytest.mark.slow
def test_bot_evaluation_records_sixteen_verdicts(
    instance: dg.DagsterInstance, store: ArtifactStore, resources: dict
) -> None:
    smoke = settings.experiments_dir() / "smoke.yaml"
    dg.materialize(
        ASSETS,
        selection=[experiment_design],
        instance=instance,
        resources=resources,
        run_config={"ops": {"experiment_design": {"config": {"experiment_file": str(smoke)}}}},
    )
    played, unbuilt = instance.get_dynamic_partitions(run_partitions.name)[:2]
    store.write_record("sandboxed_build", played, {"build_ok": True, "served_dir": str(GAME)})
    store.write_record("sandboxed_build", unbuilt, {"build_ok": False, "served_dir": None})
    config = {"ops": {"bot_evaluation": {"config": {"endurance_seconds": 6.0}}}}
    for key in (played, unbuilt):
        result = dg.materialize(
            ASSETS,
            selection=[bot_evaluation],
            partition_key=key,
            instance=instance,
            resources=resources,
            run_config=config,
        )
        assert result.success

    record = store.read_record("bot_evaluation", played)
    assert record is not None and set(record["tests"]) == set(TEST_IDS)
    assert record["tests"]["loads"] == "PASS" and record["renderer"] == "canvas"
    assert (store.run_dir(played, "bot_evaluation") / "events.json").is_file()
    failed_build = store.read_record("bot_evaluation", unbuilt)
    assert failed_build is not None and failed_build["tests"]["loads"] == "FAIL"
    assert failed_build["gameplay_score"] == 0.0
    assert set(failed_build["tests"].values()) == {"FAIL", "INCONCLUSIVE"}

    # The blocking check reads every stored evaluation: all sixteen, all valid.
    check = bot_evaluation_has_sixteen_verdicts(artifact_store=resources["artifact_store"])
    assert check.passed
    store.write_record("bot_evaluation", "smoke.cbad.r0", {"tests": {"loads": "MAYBE"}})
    check = bot_evaluation_has_sixteen_verdicts(artifact_store=resources["artifact_store"])
    assert not check.passed


def test_a_run_without_a_build_record_fails_clearly(
    instance: dg.DagsterInstance, resources: dict
) -> None:
    instance.add_dynamic_partitions(run_partitions.name, ["smoke.cnone.r0"])
    context = dg.build_asset_context(partition_key="smoke.cnone.r0", instance=instance)
    from assets.evaluation.assets import BotEvaluationConfig

    with pytest.raises(dg.Failure, match="materialize sandboxed_build"):
        bot_evaluation(
            context=context,
            config=BotEvaluationConfig(endurance_seconds=5),
            artifact_store=resources["artifact_store"],
        )

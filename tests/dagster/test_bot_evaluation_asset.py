"""The bot_evaluation asset on real Chromium, fed by sandboxed_build records.

The build stage is another issue's; its records are plain JSON files, written here the
way that stage writes them (served_dir, build_ok).
"""

from __future__ import annotations

import dagster as dg
import pytest

from assets.design import experiment_design, run_spec
from assets.evaluation import bot_evaluation
from assets.partitions import run_partitions
from assets.stage_checks import gameplay_score_in_range, results, sixteen_verdicts
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
        run_config={"ops": {"experiment_design": {"config": {"experiment": str(smoke)}}}},
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
        # The blocking checks ran in the same step, over that step's run.
        checks = result.get_asset_check_evaluations()
        assert {c.check_name for c in checks} == {
            "one_record",
            "sixteen_verdicts",
            "gameplay_score_in_range",
        }
        assert all(c.passed for c in checks)

    record = store.read_record("bot_evaluation", played)
    assert record is not None and set(record["tests"]) == set(TEST_IDS)
    assert record["tests"]["loads"] == "PASS" and record["renderer"] == "canvas"
    assert (store.run_dir(played, "bot_evaluation") / "events.json").is_file()
    failed_build = store.read_record("bot_evaluation", unbuilt)
    assert failed_build is not None and failed_build["tests"]["loads"] == "FAIL"
    assert failed_build["gameplay_score"] == 0.0
    assert set(failed_build["tests"].values()) == {"FAIL", "INCONCLUSIVE"}

    # A record that breaks the rules fails the checks, naming the run and the problem.
    bad = {"run_id": "smoke.cbad.r0", "tests": {"loads": "MAYBE"}, "gameplay_score": 140}
    failed = results("bot_evaluation", [sixteen_verdicts, gameplay_score_in_range], {"x": bad})
    assert [c.passed for c in failed] == [False, False]
    assert "x: 1 verdicts" in (failed[0].description or "")
    assert "140 is outside 0–100" in (failed[1].description or "")


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

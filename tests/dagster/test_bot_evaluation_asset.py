"""The bot_evaluation asset on real Chromium, fed by sandboxed_build records.

The build stage is another issue's; its records are plain JSON files, written here the
way that stage writes them (served_dir, build_ok).
"""

from __future__ import annotations

import dagster as dg
import pytest

from assets.bot_evaluation import bot_evaluation
from assets.experiment_design import experiment_design, run_spec
from assets.partitions import run_partitions
from assets.stage_checks import gameplay_score_in_range, results, sixteen_verdicts
from bench_pipeline import settings
from bench_pipeline.bot import TEST_IDS
from bench_pipeline.warehouse.artifacts import ArtifactStore

# Each test here opens Chromium: asking for it marks them `browser` (tests/needs.py).
pytestmark = pytest.mark.usefixtures("chromium")

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
    assert (store.run_dir(played, "bot_evaluation") / "observations.json").is_file()
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
    from assets.bot_evaluation.assets import BotEvaluationConfig

    with pytest.raises(dg.Failure, match="materialize sandboxed_build"):
        bot_evaluation(
            context=context,
            config=BotEvaluationConfig(endurance_seconds=5),
            artifact_store=resources["artifact_store"],
        )


def test_a_run_that_crashes_the_bot_does_not_cost_the_others_their_verdicts(
    instance: dg.DagsterInstance,
    store: ArtifactStore,
    resources: dict,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One game that makes the bot raise fails the step naming that run; the step's other
    runs are still evaluated and recorded (no chunk-wide loss)."""
    import assets.bot_evaluation.assets as evaluation_assets
    from assets.bot_evaluation.assets import BotEvaluationConfig
    from bench_pipeline.bot.record import no_page_evaluation

    keys = ["smoke.ccrash.r0", "smoke.cfine.r0"]
    instance.add_dynamic_partitions(run_partitions.name, keys)
    crashing, fine = (store.root / "games" / name for name in ("crash", "fine"))
    for run_id, folder in zip(keys, (crashing, fine), strict=True):
        folder.mkdir(parents=True)
        (folder / "index.html").write_text("<canvas></canvas>")
        store.write_record("sandboxed_build", run_id, {"build_ok": True, "served_dir": str(folder)})

    def evaluate(target: str, endurance_s: float, evidence: object, hard_cap_s: float) -> object:
        if target == str(crashing):
            raise RuntimeError("Target page, context or browser has been closed")
        return no_page_evaluation(target, "stand-in verdicts for the other run")

    monkeypatch.setattr(evaluation_assets, "evaluate", evaluate)
    context = dg.build_asset_context(
        partition_key_range=dg.PartitionKeyRange(keys[0], keys[1]), instance=instance
    )
    with pytest.raises(dg.Failure) as failure:
        bot_evaluation(
            context=context,
            config=BotEvaluationConfig(endurance_seconds=5),
            artifact_store=resources["artifact_store"],
        )
    assert "run smoke.ccrash.r0: RuntimeError" in (failure.value.description or "")
    assert "1 other run(s)" in (failure.value.description or "")
    assert store.read_record("bot_evaluation", "smoke.ccrash.r0") is None
    recorded = store.read_record("bot_evaluation", "smoke.cfine.r0")
    assert recorded is not None and set(recorded["tests"]) == set(TEST_IDS)

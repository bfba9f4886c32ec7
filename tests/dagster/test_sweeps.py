"""Launching sweeps: sweep_job's backfill, and the new-model schedule's idempotence."""

from __future__ import annotations

import datetime
import logging
import time
from pathlib import Path

import dagster as dg
import pytest
import yaml
from dagster._core.execution.backfill import BulkActionStatus
from dagster._core.remote_origin import InProcessCodeLocationOrigin
from dagster._core.scheduler.instigation import TickStatus
from dagster._core.test_utils import create_test_daemon_workspace_context, freeze_time
from dagster._core.types.loadable_target_origin import LoadableTargetOrigin
from dagster._core.workspace.context import WorkspaceProcessContext
from dagster._core.workspace.load_target import InProcessWorkspaceLoadTarget
from dagster._scheduler.scheduler import launch_scheduled_runs

from assets.partitions import run_partitions
from assets.sweeps.launch import RUN_STAGE_KEYS, launch_backfill, sweep_backfill_id
from assets.sweeps.schedules import new_model_backfill_schedule
from bench_pipeline import settings
from bench_pipeline.definitions import defs
from bench_pipeline.design import design_experiment, load_experiment

SMOKE = settings.experiments_dir() / "smoke.yaml"


def _sweep(
    instance: dg.DagsterInstance, resources: dict, run_config: dict
) -> dg.ExecuteInProcessResult:
    job = defs.resolve_job_def("sweep_job")
    return job.execute_in_process(
        run_config=run_config, instance=instance, resources=resources, raise_on_error=False
    )


def _config(experiment: str, launch: bool = True) -> dict:
    return {"ops": {"experiment_design": {"config": {"experiment": experiment, "launch": launch}}}}


def _design_metadata(result: dg.ExecuteInProcessResult) -> dict:
    [event] = result.get_asset_materialization_events()
    return {k: v.value for k, v in event.materialization.metadata.items()}


def test_sweep_job_registers_the_runs_and_launches_one_backfill(
    instance: dg.DagsterInstance, resources: dict
) -> None:
    result = _sweep(instance, resources, _config("smoke"))  # a name, not a path
    assert result.success
    runs = instance.get_dynamic_partitions(run_partitions.name)
    assert len(runs) == 4
    [backfill] = instance.get_backfills()
    assert _design_metadata(result)["backfill_id"] == backfill.backfill_id
    # The id is a function of the runs: a second launch of them cannot get another one.
    assert backfill.backfill_id == sweep_backfill_id("smoke", runs)
    assert backfill.tags["bench/experiment"] == "smoke"
    assert int(backfill.tags["dagster/max_runtime"]) > 0
    target = backfill.asset_backfill_data.target_subset
    for key in RUN_STAGE_KEYS:
        assert set(target.partitions_subsets_by_asset_key[key].get_partition_keys()) == set(runs)
    # After the runs: the warehouse and the analysis, once.
    unpartitioned = {k.to_user_string() for k in target.non_partitioned_asset_keys}
    assert {"warehouse_sources", "fct_runs", "mart_main_effects"} <= unpartitioned

    # Launching again while the backfill is in flight launches nothing: an agent must
    # never run twice at once for the same run.
    again = _sweep(instance, resources, _config("smoke"))
    assert again.success
    metadata = _design_metadata(again)
    assert metadata["launched_runs"] == 0 and metadata["in_flight_runs"] == 4
    assert metadata["launch"] == (
        f"backfill {backfill.backfill_id} already launched these 4 runs; launched nothing"
    )
    assert len(instance.get_backfills()) == 1


def test_two_sweeps_that_planned_the_same_runs_at_once_make_one_backfill(
    instance: dg.DagsterInstance,
) -> None:
    """The interleaving a timing-based guard misses: both sweep runs read "nothing in
    flight" before either wrote. Both then insert the same backfill id; the storage keeps
    the first, and the second reports it instead of launching."""
    runs = [f"smoke.c{i}.r1" for i in range(1, 5)]
    instance.add_dynamic_partitions(run_partitions.name, runs)
    graph = defs.resolve_asset_graph()
    planned_at = time.time()  # both planned here, before either launched

    def launch(sweep_run: str, run_ids: list[str]):
        return launch_backfill(
            instance,
            graph,
            run_ids,
            "smoke",
            launched_by=sweep_run,
            job_name="sweep_job",
            planned_at=planned_at,
        )

    first = launch("run-one", runs)
    second = launch("run-two", list(reversed(runs)))  # the order of the runs does not matter
    assert first.launched and not second.launched
    assert second.backfill_id == first.backfill_id and second.launched_by == "run-one"
    assert second.describe(4) == (
        f"backfill {first.backfill_id} already launched these 4 runs (sweep run run-one); "
        "launched nothing"
    )
    [backfill] = instance.get_backfills()
    assert backfill.tags["bench/launched_by"] == "run-one"


def test_runs_a_finished_backfill_left_incomplete_are_launched_again(
    instance: dg.DagsterInstance, resources: dict
) -> None:
    """A deterministic id must not block a legitimate relaunch: once the first backfill of
    the runs ended (here failed, as the daemon marks it) without completing them, the next
    sweep launches the same runs under the next attempt's id."""
    assert _sweep(instance, resources, _config("smoke")).success
    [first] = instance.get_backfills()
    instance.update_backfill(first.with_status(BulkActionStatus.COMPLETED_FAILED))

    again = _sweep(instance, resources, _config("smoke"))
    assert again.success and _design_metadata(again)["launched_runs"] == 4
    runs = instance.get_dynamic_partitions(run_partitions.name)
    ids = {b.backfill_id for b in instance.get_backfills()}
    assert ids == {sweep_backfill_id("smoke", runs, 0), sweep_backfill_id("smoke", runs, 1)}


def test_sweep_job_without_launch_only_designs(
    instance: dg.DagsterInstance, resources: dict
) -> None:
    result = _sweep(instance, resources, _config(str(SMOKE), launch=False))
    assert result.success
    assert len(instance.get_dynamic_partitions(run_partitions.name)) == 4
    assert instance.get_backfills() == []


def test_an_unknown_experiment_fails_with_the_names_on_offer(
    instance: dg.DagsterInstance, resources: dict
) -> None:
    result = _sweep(instance, resources, _config("no-such-sweep"))
    assert not result.success
    failure = next(e for e in result.all_events if e.is_step_failure)
    text = failure.step_failure_data.error.message  # type: ignore[union-attr]
    assert "no experiment named 'no-such-sweep'" in text and "smoke" in text
    assert instance.get_dynamic_partitions(run_partitions.name) == []


@pytest.fixture
def standard(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A standard sweep over a registry of two models, in a temporary folder."""
    registry = yaml.safe_load((settings.experiments_dir() / "models.yaml").read_text())
    registry["models"] = [
        m for m in registry["models"] if m["id"] in ("claude-sonnet-4-6", "gpt-5")
    ]
    (tmp_path / "models.yaml").write_text(yaml.safe_dump(registry))
    sweep = {
        "name": "standard",
        "repeats": 2,
        "axes": {
            "agent": {"levels": ["synthetic"]},
            "model": {"levels": "registry", "baseline": "claude-sonnet-4-6"},
        },
        "designs": [{"type": "main_effects"}],
    }
    path = tmp_path / "standard.yaml"
    path.write_text(yaml.safe_dump(sweep))
    monkeypatch.setenv("BENCH_STANDARD_SWEEP", str(path))
    return path


def _tick(instance: dg.DagsterInstance):
    return new_model_backfill_schedule(dg.build_schedule_context(instance=instance))


def test_new_model_schedule_never_starts_a_sweep_nobody_launched(
    instance: dg.DagsterInstance, standard: Path
) -> None:
    """The incident: a fresh instance's nightly tick launched the whole standard sweep that
    nobody had asked for. Now it launches nothing and says what that sweep would cost."""
    first = _tick(instance)
    assert isinstance(first, dg.SkipReason)
    text = first.skip_message or ""
    assert "nobody has swept standard on this instance yet" in text
    # What launching it would cost, at the registry's prices (2 models x 2 repeats).
    assert "standard: 4 runs, about $" in text and "budget caps" in text
    assert instance.get_dynamic_partitions(run_partitions.name) == []


def test_new_model_schedule_adds_only_models_new_to_a_swept_experiment(
    instance: dg.DagsterInstance, resources: dict, standard: Path
) -> None:
    # A person sweeps the standard sweep; its backfill ends without completing the runs.
    assert _sweep(instance, resources, _config(str(standard))).success
    assert len(instance.get_dynamic_partitions(run_partitions.name)) == 4
    [swept] = instance.get_backfills()
    instance.update_backfill(swept.with_status(BulkActionStatus.COMPLETED_FAILED))

    # Idempotent: every model has its runs; the tick launches nothing.
    second = _tick(instance)
    assert isinstance(second, dg.SkipReason)
    assert "all 4 runs are registered" in (second.skip_message or "")

    # The registry gains a model: only its runs are registered and launched, not the
    # incomplete runs of the models already swept (those are a person's to relaunch).
    registry_file = standard.parent / "models.yaml"
    registry = yaml.safe_load(registry_file.read_text())
    newcomer = dict(registry["models"][0], id="claude-next-5", display_name="Claude Next 5")
    registry["models"].append(newcomer)
    registry_file.write_text(yaml.safe_dump(registry))
    third = _tick(instance)
    assert isinstance(third, dg.RunRequest)
    assert third.tags["bench/new_models"] == "claude-next-5"
    assert float(third.tags["bench/estimated_usd"]) > 0
    config = third.run_config["ops"]["experiment_design"]["config"]
    assert config["only_models"] == ["claude-next-5"]
    before = set(instance.get_dynamic_partitions(run_partitions.name))
    assert _sweep(instance, resources, third.run_config).success
    added = set(instance.get_dynamic_partitions(run_partitions.name)) - before
    assert len(added) == 2
    newest = max(instance.get_backfills(), key=lambda b: b.backfill_timestamp)
    target = newest.asset_backfill_data.target_subset.partitions_subsets_by_asset_key
    assert set(target[dg.AssetKey("agent_generation")].get_partition_keys()) == added
    assert isinstance(_tick(instance), dg.SkipReason)

    # A new repeat of models already swept is a person's decision too.
    sweep = yaml.safe_load(standard.read_text())
    sweep["repeats"] = 3
    standard.write_text(yaml.safe_dump(sweep))
    fourth = _tick(instance)
    assert isinstance(fourth, dg.SkipReason)
    assert "all of models already swept" in (fourth.skip_message or "")


def test_only_models_naming_a_model_the_experiment_lacks_fails_in_one_line(
    instance: dg.DagsterInstance, resources: dict
) -> None:
    config = _config("smoke")
    config["ops"]["experiment_design"]["config"]["only_models"] = ["no-such-model"]
    result = _sweep(instance, resources, config)
    assert not result.success
    failure = next(e for e in result.all_events if e.is_step_failure)
    text = failure.step_failure_data.error.message  # type: ignore[union-attr]
    assert "only_models: no-such-model not in smoke's models" in text
    assert instance.get_backfills() == []


def test_a_broken_standard_sweep_skips_with_the_reason(
    instance: dg.DagsterInstance, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = tmp_path / "standard.yaml"
    broken.write_text("name: standard\naxes: [oops]\n")
    monkeypatch.setenv("BENCH_STANDARD_SWEEP", str(broken))
    result = _tick(instance)
    assert isinstance(result, dg.SkipReason)
    assert "cannot be designed" in (result.skip_message or "") and "axes" in (
        result.skip_message or ""
    )


def _register_runs_of(instance: dg.DagsterInstance, experiment: Path, model: str) -> None:
    design = design_experiment(load_experiment(experiment))
    cells = {c.cell_id for c in design.cells if c.config["model"] == model}
    runs = [r.run_id for r in design.runs if r.cell_id in cells]
    instance.add_dynamic_partitions(run_partitions.name, runs)


def _code_origin() -> InProcessCodeLocationOrigin:
    return InProcessCodeLocationOrigin(
        LoadableTargetOrigin(
            module_name="bench_pipeline.definitions",
            attribute="defs",
            working_directory=str(settings.project_root()),
        ),
        location_name="bench_pipeline",
    )


@pytest.mark.slow
def test_a_fresh_instance_past_the_schedule_time_launches_no_agent_run(data_dir: Path) -> None:
    """A new user's instance (the real standard sweep, the real registry) left running past
    03:00: Dagster's own scheduler evaluates the tick and launches nothing at all."""
    night = datetime.datetime(2026, 3, 1, 2, 40, tzinfo=datetime.UTC)
    with (
        dg.instance_for_test() as instance,
        create_test_daemon_workspace_context(
            InProcessWorkspaceLoadTarget(_code_origin()), instance
        ) as ws,
    ):
        _scheduler_iteration(ws, night)
        _scheduler_iteration(ws, night.replace(hour=3, minute=1))
        assert instance.get_runs() == []
        assert instance.get_backfills() == []
        [state] = instance.all_instigator_state()
        [tick] = instance.get_ticks(state.instigator_origin_id, state.selector_id)
        assert tick.status == TickStatus.SKIPPED
        assert tick.skip_reason is not None and "nobody has swept standard" in tick.skip_reason


def _scheduler_iteration(workspace: WorkspaceProcessContext, now: datetime.datetime) -> None:
    """One iteration of the real scheduler daemon at `now`: evaluates every tick due."""
    with freeze_time(now):
        list(
            launch_scheduled_runs(
                workspace, logging.getLogger("scheduler"), end_datetime_utc=now, iteration_times={}
            )
        )


@pytest.mark.slow
def test_the_next_tick_skips_while_the_first_sweep_run_is_queued(standard: Path) -> None:
    """The incident, with Dagster's own scheduler: a schedule's run key only dedupes within
    one tick (Dagster matches it together with the tick's scheduled time), so the next tick
    used to start a second sweep run with the same key. It now skips, naming the first."""
    queued = {"module": "dagster._core.run_coordinator", "class": "QueuedRunCoordinator"}
    code = _code_origin()
    night = datetime.datetime(2026, 3, 1, 2, 0, tzinfo=datetime.UTC)
    minute = datetime.timedelta(minutes=1)
    with (
        dg.instance_for_test(overrides={"run_coordinator": queued}) as instance,
        create_test_daemon_workspace_context(InProcessWorkspaceLoadTarget(code), instance) as ws,
    ):
        sweep_runs = dg.RunsFilter(job_name="sweep_job")
        # A person swept the standard sweep when it had one model; gpt-5 came later.
        _register_runs_of(instance, standard, "claude-sonnet-4-6")
        _scheduler_iteration(ws, night)  # the schedule's state starts here (02:00)
        _scheduler_iteration(ws, night.replace(hour=3) + minute)  # the 03:00 tick
        [first] = instance.get_runs(sweep_runs)
        # No queue daemon runs here: the run stays queued, as behind a busy run queue.
        assert first.status == dg.DagsterRunStatus.QUEUED
        assert first.tags["bench/new_models"] == "gpt-5"

        next_night = night.replace(hour=3) + datetime.timedelta(days=1)
        _scheduler_iteration(ws, next_night + minute)
        assert [r.run_id for r in instance.get_runs(sweep_runs)] == [first.run_id]
        [state] = instance.all_instigator_state()
        latest = instance.get_ticks(state.instigator_origin_id, state.selector_id)[0]
        assert latest.status == TickStatus.SKIPPED
        assert latest.skip_reason is not None
        assert f"sweep_job run {first.run_id} (queued) is already launching" in latest.skip_reason

        # A sweep run that ended without registering the runs does not hold them forever.
        instance.report_run_canceled(first)
        _scheduler_iteration(ws, next_night + datetime.timedelta(days=1) + minute)
        newest, old = instance.get_runs(sweep_runs)
        assert old.run_id == first.run_id and newest.status == dg.DagsterRunStatus.QUEUED


def _with(config: dict, **settings_: object) -> dict:
    config["ops"]["experiment_design"]["config"].update(settings_)
    return config


def test_a_dry_run_estimates_and_launches_registers_and_writes_nothing(
    instance: dg.DagsterInstance, resources: dict, data_dir: Path
) -> None:
    result = _sweep(instance, resources, _with(_config("smoke"), dry_run=True, budget_cap_usd=1))
    assert result.success
    meta = _design_metadata(result)
    assert meta["dry_run"] is True and meta["launched_runs"] == 0
    assert meta["would_launch_runs"] == 4
    assert meta["budget_caps_usd"] == pytest.approx(4.0)  # four runs at the $1 cap
    assert 0 < meta["estimated_usd"] <= 4.0
    assert "dry run: would launch smoke: 4 runs" in meta["launch"]
    assert instance.get_dynamic_partitions(run_partitions.name) == []
    assert instance.get_backfills() == []
    assert not (data_dir / "artifacts" / "designs").exists()


def test_launch_time_settings_travel_with_that_sweeps_runs_only(
    instance: dg.DagsterInstance, resources: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BENCH_BOT_ENDURANCE_S", "30")
    config = _with(_config("smoke"), bot_endurance_s=2.5, budget_cap_usd=0.75, repeats=1)
    result = _sweep(instance, resources, config)
    assert result.success
    [backfill] = instance.get_backfills()
    # The backfill's tags reach every run it starts: the bot and the agent read them there.
    assert backfill.tags["bench/bot_endurance_s"] == "2.5"
    assert backfill.tags["bench/budget_cap_usd"] == "0.75"
    # repeats=1 of a two-repeat experiment: only the first repeat is launched.
    target = backfill.asset_backfill_data.target_subset.partitions_subsets_by_asset_key
    launched = set(target[dg.AssetKey("agent_generation")].get_partition_keys())
    assert launched and all(key.endswith(".r0") for key in launched)
    assert len(instance.get_dynamic_partitions(run_partitions.name)) == 2 * len(launched)

    # Another sweep without settings takes the environment's: nothing carries over.
    instance.update_backfill(backfill.with_status(BulkActionStatus.COMPLETED_FAILED))
    assert _sweep(instance, resources, _config("smoke")).success
    newest = max(instance.get_backfills(), key=lambda b: b.backfill_timestamp)
    assert newest.tags["bench/bot_endurance_s"] == "30"
    assert "bench/budget_cap_usd" not in newest.tags


def test_a_bad_launch_setting_fails_in_one_line_and_launches_nothing(
    instance: dg.DagsterInstance, resources: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BENCH_BUDGET_CAP_USD", "lots")
    result = _sweep(instance, resources, _config("smoke"))
    assert not result.success
    failure = next(e for e in result.all_events if e.is_step_failure)
    text = failure.step_failure_data.error.message  # type: ignore[union-attr]
    assert "BENCH_BUDGET_CAP_USD='lots' is not a number" in text
    monkeypatch.delenv("BENCH_BUDGET_CAP_USD")
    result = _sweep(instance, resources, _with(_config("smoke"), repeats=0))
    failure = next(e for e in result.all_events if e.is_step_failure)
    assert "repeats 0 must be at least 1" in failure.step_failure_data.error.message  # type: ignore[union-attr]
    assert instance.get_backfills() == []

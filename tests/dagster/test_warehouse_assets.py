"""The warehouse stage in Dagster: one asset per SQL model, data tests as asset checks,
and the effects analysis marts, materialized over an artifact store whose records carry
a planted model effect (written directly: the per-run stages have their own tests)."""

import random
from pathlib import Path

import dagster as dg
import pytest

from assets.effects_analysis import effects_analysis
from assets.warehouse import warehouse
from assets.warehouse.assets import MODELS, SOURCES
from bench_pipeline import settings
from bench_pipeline.bot.contract import TEST_IDS
from bench_pipeline.design import design_experiment, load_experiment
from bench_pipeline.warehouse.artifacts import ArtifactStore
from bench_pipeline.warehouse.build import SOURCE_SCHEMAS, query
from bench_pipeline.warehouse.models import load_models

# What the planted world does to the gameplay score (points), the rest being noise.
PLANTED = {"claude-opus-4-6": 15.0, "claude-haiku-4-5": -20.0}
NOISE_SD = 2.0


def _record(table: str, **values: object) -> dict:
    # Every column the staging views read, as the stages write them.
    return {**dict.fromkeys(SOURCE_SCHEMAS[table]), **values}


def fill_store(store: ArtifactStore, seed: int = 0) -> int:
    """The demo experiment's design plus one record per stage and run."""
    experiment = load_experiment(Path(__file__).parents[1] / "warehouse" / "three_models.yaml")
    design = design_experiment(experiment)
    store.save_design({**design.to_json_dict(), "baselines": experiment.baseline_config()})
    rng = random.Random(seed)
    configs = {c.cell_id: c.config for c in design.cells}
    for run in design.runs:
        config = configs[run.cell_id]
        gameplay = 70 + PLANTED.get(config["model"], 0.0) + rng.gauss(0, NOISE_SD)
        agent = _record(
            "raw_agent_generation",
            agent="synthetic",
            adapter="synthetic",
            model=config["model"],
            status="completed",
            cost_usd=round(rng.uniform(0.5, 1.5), 4),
            input_tokens=1000,
            output_tokens=500,
            duration_s=60.0,
        )
        store.write_record("agent_generation", run.run_id, agent)
        build = _record("raw_sandboxed_build", build_ok=True, kind="static")
        store.write_record("sandboxed_build", run.run_id, build)
        bot = _record(
            "raw_bot_evaluation",
            bot_version="test",
            gameplay_score=round(gameplay, 3),
            passed=16,
            failed=0,
            inconclusive=0,
            tests=dict.fromkeys(TEST_IDS, "PASS"),
        )
        store.write_record("bot_evaluation", run.run_id, bot)
        quality = _record("raw_quality_metrics", quality_score=80.0 + rng.gauss(0, NOISE_SD))
        store.write_record("quality_metrics", run.run_id, quality)
    return len(design.runs)


def test_every_sql_file_is_an_asset_with_the_deps_its_sql_reads() -> None:
    files = sorted(p.stem for p in settings.sql_models_dir().glob("*.sql"))
    keys = {k.to_user_string() for k in warehouse.keys}
    assert set(files) | {SOURCES.to_user_string()} == keys
    deps = {
        k.to_user_string(): {d.to_user_string() for d in v} for k, v in warehouse.asset_deps.items()
    }
    assert "stg_runs" in deps["fct_runs"] and "stg_bot_evaluations" in deps["fct_runs"]
    assert deps["stg_runs"] == {"warehouse_sources"}
    # Every data test declared in a header is a check on its model.
    declared = {(m.name, t.name) for m in MODELS for t in m.tests}
    checks = {(k.asset_key.to_user_string(), k.name) for k in warehouse.check_keys}
    assert declared == checks and ("fct_runs", "unique_run_id") in checks


def test_a_new_sql_file_is_a_new_model_with_inferred_deps(tmp_path: Path) -> None:
    for path in settings.sql_models_dir().glob("*.sql"):
        (tmp_path / path.name).write_text(path.read_text())
    (tmp_path / "mart_model_count.sql").write_text(
        "-- materialized: view\nselect model, count(*) as n from fct_runs group by model\n"
    )
    models = {m.name: m for m in load_models(tmp_path)}
    names = set(models)
    assert models["mart_model_count"].deps(names) == {"fct_runs"}


@pytest.mark.slow
def test_warehouse_and_effects_marts_materialize_with_passing_checks(
    store: ArtifactStore, resources: dict, instance: dg.DagsterInstance, data_dir: Path
) -> None:
    runs = fill_store(store)
    result = dg.materialize([warehouse, effects_analysis], instance=instance, resources=resources)
    assert result.success
    checks = result.get_asset_check_evaluations()
    assert len(checks) == len(warehouse.check_keys)
    assert all(c.passed for c in checks), [c.check_name for c in checks if not c.passed]
    db = data_dir / "warehouse.duckdb"
    assert query(db, "select count(*) from fct_runs")[1] == [(runs,)]
    assert query(db, "select count(*) from fct_test_results")[1] == [(16 * runs,)]

    cols, rows = query(
        db,
        "select level, baseline, estimate, ci_low, ci_high, significant, meaningful "
        "from mart_main_effects where metric = 'gameplay_score' and axis = 'model' order by level",
    )
    effects = {r[0]: dict(zip(cols, r, strict=True)) for r in rows}
    assert set(effects) == set(PLANTED)
    for level, planted in PLANTED.items():
        e = effects[level]
        # The experiment's named baseline, not the most frequent level.
        assert e["baseline"] == "claude-sonnet-4-6"
        assert abs(e["estimate"] - planted) < 4 * NOISE_SD
        assert e["ci_low"] < e["estimate"] < e["ci_high"]
        assert e["significant"] and e["meaningful"]
    # prompt_style plants nothing here: no meaningful effect may be called.
    assert query(
        db,
        "select count(*) from mart_main_effects where metric = 'gameplay_score' "
        "and axis = 'prompt_style' and meaningful",
    )[1] == [(0,)]
    assert query(db, "select distinct metric from mart_effect_noise order by 1")[1] == [
        ("cost_usd",),
        ("duration_s",),
        ("gameplay_score",),
        ("inconclusive_share",),  # the instrument's own outcome (docs/analysis.md)
        ("quality_score",),
        ("score",),
    ]
    noise = query(db, "select noise_sd from mart_effect_noise where metric = 'gameplay_score'")
    assert 0.3 * NOISE_SD < noise[1][0][0] < 3 * NOISE_SD
    charts = list((store.root / "analysis" / "demo").glob("*.png"))
    assert any(p.name == "score.main_effects.png" for p in charts)
    assert all(p.read_bytes()[:4] == b"\x89PNG" for p in charts)
    shown = result.asset_materializations_for_node("effects_analysis")[0].metadata
    assert "data:image/png;base64," in shown["chart/demo/main_effects"].value

    # One model rebuilt alone: the rest, the Python-written marts included, is kept.
    again = dg.materialize(
        [warehouse, effects_analysis],
        selection=dg.AssetSelection.assets("dim_cells"),
        instance=instance,
        resources=resources,
    )
    assert {m.asset_key.to_user_string() for m in again.get_asset_materialization_events()} == {
        "dim_cells"
    }
    assert query(db, "select count(*) > 0 from mart_main_effects")[1] == [(True,)]
    assert query(db, "select count(*) from fct_runs")[1] == [(runs,)]


def _every_table(db: Path) -> dict[str, list[tuple]]:
    """Every table and view of the warehouse, its rows sorted: what a reader sees."""
    _, names = query(db, "select table_name from information_schema.tables order by 1")
    return {name: sorted(query(db, f'select * from "{name}"')[1], key=repr) for (name,) in names}


@pytest.mark.slow
def test_a_failing_blocking_check_keeps_the_old_warehouse_live(
    store: ArtifactStore, resources: dict, instance: dg.DagsterInstance, data_dir: Path
) -> None:
    """A blocking test runs on the new copy before the swap (as `dbt build` does): when it
    fails, readers keep the old warehouse, every table of it, marts built from fct_runs
    and the effects analysis included, byte for byte."""
    fill_store(store)
    first = dg.materialize([warehouse, effects_analysis], instance=instance, resources=resources)
    assert first.success
    db = data_dir / "warehouse.duckdb"
    before_bytes = db.read_bytes()
    before = _every_table(db)
    assert before["mart_leaderboard_models"] and before["mart_main_effects"]

    # A design that lists a cell twice makes every run of that cell appear twice.
    design = store.read_design("demo")
    store.save_design({**design, "cells": [*design["cells"], design["cells"][0]]})
    run_id = next(p.stem for p in (store.root / "records" / "bot_evaluation").glob("*.json"))
    record = store.read_record("bot_evaluation", run_id)
    assert record is not None
    store.write_record("bot_evaluation", run_id, {**record, "gameplay_score": 140.0})
    result = dg.materialize(
        [warehouse, effects_analysis],
        instance=instance,
        resources=resources,
        raise_on_error=False,
    )
    assert not result.success
    failed = {
        (c.asset_key.to_user_string(), c.check_name)
        for c in result.get_asset_check_evaluations()
        if not c.passed
    }
    assert ("fct_runs", "unique_run_id") in failed  # blocking: it stopped the swap
    # A score outside 0–100 never reaches the models: the loader quarantines its record,
    # named, before the warning check could see it (issue 32's bounds on loaded numbers).
    assert ("fct_runs", "accepted_range_gameplay_score") not in failed
    assert list((store.root / "quarantine" / "bot_evaluation").glob(f"{run_id}.*"))
    assert not result.get_asset_materialization_events()  # nothing went live
    # The step's error names the test and shows failing rows.
    failure = next(e for e in result.all_events if e.is_step_failure)
    message = failure.step_failure_data.error.message
    assert "fct_runs.unique_run_id" in message and '"n_rows": 2' in message
    assert "old one stays live" in message

    # What readers see is the old warehouse, unchanged: the file and every table in it.
    assert db.read_bytes() == before_bytes
    assert _every_table(db) == before
    assert not [p for p in db.parent.iterdir() if "building" in p.name]


@pytest.mark.slow
def test_a_corrupt_record_is_quarantined_and_named_in_the_metadata(
    store: ArtifactStore, resources: dict, instance: dg.DagsterInstance, data_dir: Path
) -> None:
    runs = fill_store(store)
    victim = sorted(p.stem for p in (store.root / "records" / "quality_metrics").glob("*.json"))[0]
    store.record_path("quality_metrics", victim).write_text("{not json")
    result = dg.materialize([warehouse], instance=instance, resources=resources)
    assert result.success
    sources = result.asset_materializations_for_node("warehouse")
    meta = next(m for m in sources if m.asset_key == SOURCES).metadata
    assert meta["quarantined_count"].value == 1
    table = meta["quarantined"].value
    assert isinstance(table, dg.TableMetadataValue)
    (entry,) = (r.data for r in table.records)
    assert entry["run"] == victim and entry["stage"] == "quality_metrics"
    assert "bad JSON" in str(entry["why"])
    # The other runs loaded; this one is in fct_runs without its quality score.
    db = data_dir / "warehouse.duckdb"
    assert query(db, "select count(*), count(quality_score) from fct_runs")[1] == [(runs, runs - 1)]
    assert not store.record_path("quality_metrics", victim).exists()
    assert list((store.root / "quarantine" / "quality_metrics").glob(f"{victim}.*.reason.json"))

"""Each stage's record is defined once (bench_pipeline/records.py): the warehouse's source
table and the stage's blocking checks come from its model."""

from __future__ import annotations

import dagster as dg
import pytest

from assets.stage_checks import stage_rules
from bench_pipeline import stages
from bench_pipeline.records import RECORDS, source_schema
from bench_pipeline.warehouse.build import SOURCE_SCHEMAS

record_id = "exp.c1.r0"


def test_every_per_run_stage_the_warehouse_loads_has_a_model() -> None:
    assert set(RECORDS) == set(stages.PER_RUN) - {"run_spec"}
    for stage, model in RECORDS.items():
        assert SOURCE_SCHEMAS[f"raw_{stage}"] == source_schema(model)
        schema = model.model_json_schema()
        assert set(source_schema(model)) <= set(schema["properties"])
        assert schema["required"] == ["run_id"]  # the rest may be unknown (NULL)
        # A stage writes more than the warehouse reads; the model keeps it.
        assert model.model_validate({"run_id": "r", "evidence": "x"}).model_extra == {
            "evidence": "x"
        }


def test_the_stage_checks_are_the_models_checks() -> None:
    from bench_pipeline.definitions import defs

    graph = defs.resolve_asset_graph()
    for stage in RECORDS:
        declared = {key.name for key in graph.get_check_keys_for_assets({dg.AssetKey(stage)})}
        assert declared == {rule.__name__ for rule in stage_rules(stage)}, stage


@pytest.mark.parametrize(
    ("stage", "record", "problem"),
    [
        ("agent_generation", {"cost_usd": -0.5}, "cost_usd is -0.5"),
        ("quality_metrics", {"quality_score": 101}, "quality_score 101 is outside 0–100"),
        ("bot_evaluation", {"tests": {"loads": "PASS"}}, "1 verdicts, not the sixteen"),
    ],
)
def test_a_record_that_breaks_its_model_fails_the_named_check(
    stage: str, record: dict, problem: str
) -> None:
    found = [rule(record_id, {"run_id": record_id, **record}) for rule in stage_rules(stage)]
    assert any(p and problem in p for p in found), found


def test_the_store_refuses_a_record_that_breaks_its_model(tmp_path) -> None:
    """Stage writers build the record; the store validates it against its stage's model on
    write, names the field, writes nothing, and keeps the previous record."""
    import pytest

    from bench_pipeline.warehouse.artifacts import ArtifactStore, RecordError

    store = ArtifactStore(tmp_path)
    good = {"gameplay_score": 50.0, "tests": {"loads": "PASS"}, "bot_version": "1.0.0"}
    path = store.write_record("bot_evaluation", "exp.c1.r1", good)
    with pytest.raises(RecordError) as refused:
        store.write_record("bot_evaluation", "exp.c1.r1", {**good, "passed": "many"})
    assert refused.value.field == "passed" and "exp.c1.r1" in str(refused.value)
    assert '"passed"' not in path.read_text()  # the previous record kept
    with pytest.raises(RecordError) as listed:
        store.write_record("bot_evaluation", "exp.c1.r1", {**good, "tests": ["PASS"]})
    assert listed.value.field == "tests"
    # A stage with no model (the design's run_spec has its own) is written as given.
    store.write_record("run_spec", "exp.c1.r1", {"anything": [1, 2]})

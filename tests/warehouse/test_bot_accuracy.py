"""raw_bot_accuracy and mart_bot_accuracy, built from the accuracy benchmark's output files."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import duckdb
import pytest

from bench_pipeline import settings
from bench_pipeline.bot.accuracy import OVERALL
from bench_pipeline.bot.contract import TEST_IDS
from bench_pipeline.warehouse.artifacts import ArtifactStore
from bench_pipeline.warehouse.build import build_warehouse
from tests.warehouse.accuracy_files import write_accuracy_file

MODELS = settings.sql_models_dir()


def _rows(db: Path, sql: str) -> list[dict]:
    with duckdb.connect(str(db), read_only=True) as con:
        cur = con.execute(sql)
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def test_the_mart_holds_the_latest_file_per_corpus_and_split(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = ArtifactStore(tmp_path / "artifacts")
    older = write_accuracy_file(store.root, "real-tune-old.json", bot_version="0.0.9", games=4)
    latest = write_accuracy_file(
        store.root, "real-tune-new.json", measured_at="2026-12-01T08:00:00+00:00"
    )
    write_accuracy_file(store.root, "repo-all.json", corpus="repo", split="all", games=5)
    (store.root / "bot_accuracy" / "broken.json").write_text('{"format": 1, "tests": [')
    (store.root / "bot_accuracy" / "other.json").write_text('{"hello": "world"}')
    db = tmp_path / "w.duckdb"
    with caplog.at_level(logging.WARNING):
        build = build_warehouse(store, db, MODELS)
    # The two files that are not the benchmark's output are named and left out; the rest loads.
    warned = " ".join(r.getMessage() for r in caplog.records)
    assert "broken.json: not a bot accuracy file" in warned and "other.json" in warned
    assert build.rows("raw_bot_accuracy") == 3 * 17
    assert build.rows("mart_bot_accuracy") == 2 * 17

    rows = _rows(db, "select * from mart_bot_accuracy where corpus = 'real'")
    assert {r["bot_version"] for r in rows} == {latest["bot_version"]} != {older["bot_version"]}
    assert {str(r["measured_at"].date()) for r in rows} == {"2026-12-01"}
    by_test = {r["test_id"]: r for r in rows}
    assert set(by_test) == {*TEST_IDS, OVERALL}
    # Every figure is the output file's (nothing recomputed, nothing typed in).
    for figures in [*latest["tests"], latest["overall"]]:
        row = by_test[figures["test_id"]]
        for column in (
            "n_labelled",
            "n_verdicts",
            "label_pass",
            "label_fail",
            "false_pass",
            "false_fail",
            "inconclusive",
        ):
            assert row[column] == figures[column], (figures["test_id"], column)
        for column in ("agreement", "working_right", "defects_caught"):
            if figures[column] is None:
                assert row[column] is None, (figures["test_id"], column)
            else:
                assert row[column] == pytest.approx(figures[column]), (figures["test_id"], column)
    # And what those figures are for the fabricated verdicts (tests/warehouse/accuracy_files.py).
    rotate, soft_drop, overall = by_test["rotate"], by_test["soft_drop"], by_test[OVERALL]
    assert (rotate["false_pass"], rotate["label_fail"], rotate["defects_caught"]) == (1, 2, 0.5)
    assert (soft_drop["false_fail"], soft_drop["working_right"]) == (1, pytest.approx(5 / 6))
    assert by_test["gravity"]["defects_caught"] is None  # no broken game: NULL, not 0
    assert (overall["n_verdicts"], overall["false_pass"], overall["false_fail"]) == (96, 1, 1)
    assert overall["inconclusive"] == 1 and overall["agreement"] == pytest.approx(93 / 96)
    assert overall["n_games"] == 6 and overall["endurance_s"] == 30.0

    repo = _rows(db, "select * from mart_bot_accuracy where corpus = 'repo' and test_id = 'all'")
    assert [(r["split"], r["n_games"]) for r in repo] == [("all", 5)]
    history = _rows(db, "select distinct bot_version from raw_bot_accuracy where corpus = 'real'")
    assert {r["bot_version"] for r in history} == {"0.0.9", "0.1.1"}


def test_the_groups_mart_breaks_the_latest_file_down_per_renderer_and_author(
    tmp_path: Path,
) -> None:
    store = ArtifactStore(tmp_path / "artifacts")
    write_accuracy_file(store.root, "real-tune-old.json", bot_version="0.0.9", games=4)
    latest = write_accuracy_file(
        store.root, "real-tune-new.json", measured_at="2026-12-01T08:00:00+00:00"
    )
    # A file published before the breakdowns existed still gives them (from its verdicts).
    older = write_accuracy_file(store.root, "repo-all.json", corpus="repo", split="all", games=5)
    path = store.root / "bot_accuracy" / "repo-all.json"
    path.write_text(json.dumps({k: v for k, v in older.items() if k != "groups"}))
    db = tmp_path / "w.duckdb"
    build = build_warehouse(store, db, MODELS)
    failed = [r.test.name for r in build.test_results if not r.passed]
    assert not failed, failed
    # Six groups (four renderers, two author groups) x 17 rows for every file.
    assert build.rows("raw_bot_accuracy_groups") == 3 * 6 * 17
    assert build.rows("mart_bot_accuracy_groups") == 2 * 6 * 17

    rows = _rows(
        db,
        "select * from mart_bot_accuracy_groups where corpus = 'real' and test_id = 'all' "
        "order by breakdown, group_name",
    )
    assert {r["bot_version"] for r in rows} == {latest["bot_version"]}
    by = {(r["breakdown"], r["group_name"]): r for r in rows}
    assert list(by) == [
        ("author", "ai"),
        ("author", "human"),
        ("renderer", "canvas"),
        ("renderer", "dom"),
        ("renderer", "svg"),
        ("renderer", "webgl"),
    ]
    # Against tests/warehouse/accuracy_files.py: the false FAIL is a canvas game's, by an
    # agent; the false PASS the WebGL game's, by a person; the INCONCLUSIVE the DOM game's.
    canvas, webgl = by[("renderer", "canvas")], by[("renderer", "webgl")]
    assert (canvas["n_games"], canvas["n_verdicts"], canvas["false_fail"]) == (3, 48, 1)
    assert canvas["agreement"] == pytest.approx(47 / 48)
    assert (webgl["false_pass"], webgl["defects_caught"]) == (1, 0.0)
    assert by[("renderer", "dom")]["inconclusive"] == 1
    ai, human = by[("author", "ai")], by[("author", "human")]
    assert (ai["n_games"], ai["false_fail"], ai["false_pass"]) == (3, 1, 0)
    assert (human["n_games"], human["false_pass"], human["inconclusive"]) == (3, 1, 1)
    # Figures as the file has them (nothing recomputed in SQL).
    figures = latest["groups"]["renderer"]["canvas"]["overall"]
    assert canvas["working_right"] == pytest.approx(figures["working_right"])

    repo = _rows(
        db,
        "select group_name, n_games from mart_bot_accuracy_groups "
        "where corpus = 'repo' and breakdown = 'renderer' and test_id = 'all' order by 1",
    )
    # Its five games: no-rotate-1, the WebGL one, is not among them.
    assert [(r["group_name"], r["n_games"]) for r in repo] == [
        ("canvas", 3),
        ("dom", 1),
        ("svg", 1),
        ("webgl", 0),
    ]


def test_without_published_files_the_tables_exist_and_are_empty(tmp_path: Path) -> None:
    store = ArtifactStore(tmp_path / "artifacts")
    db = tmp_path / "w.duckdb"
    build = build_warehouse(store, db, MODELS)
    assert build.rows("raw_bot_accuracy") == 0 and build.rows("mart_bot_accuracy") == 0
    assert build.rows("raw_bot_accuracy_groups") == build.rows("mart_bot_accuracy_groups") == 0
    columns = {r["column_name"] for r in _rows(db, "describe mart_bot_accuracy")}
    assert {
        "bot_version",
        "measured_at",
        "corpus",
        "split",
        "test_id",
        "n_labelled",
        "agreement",
        "false_pass",
        "false_fail",
        "inconclusive",
    } <= columns


def test_the_effects_analysis_reads_the_accuracy_per_renderer_it_cites(tmp_path: Path) -> None:
    from bench_pipeline.analysis.stage import read_bot_accuracy

    store = ArtifactStore(tmp_path / "artifacts")
    db = tmp_path / "w.duckdb"
    build_warehouse(store, db, MODELS)
    assert read_bot_accuracy(db) is None  # nothing published: nothing to cite
    write_accuracy_file(store.root, "real-tune.json")
    write_accuracy_file(store.root, "real-heldout.json", split="heldout", games=5)
    build_warehouse(store, db, MODELS)
    accuracy = read_bot_accuracy(db)
    # The held-out games are the fair measure: they are cited when published.
    assert accuracy is not None and (accuracy.corpus, accuracy.split) == ("real", "heldout")
    # Its five games: three canvas, one DOM, one SVG; no WebGL game, so no WebGL figure.
    assert sorted(accuracy.renderers) == ["canvas", "dom", "svg"]
    assert accuracy.renderers["canvas"].n_verdicts == 48
    assert accuracy.figures("dom") == "dom 94 % right, 6 % INCONCLUSIVE"

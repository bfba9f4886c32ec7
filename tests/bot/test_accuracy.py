"""The accuracy benchmark's figures (bench_pipeline.bot.accuracy) on fabricated verdicts, the
label files it reads, and one slow run of benchmarks/bot_accuracy.py on two in-repo games."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from bench_pipeline.bot.accuracy import (
    OVERALL,
    UNKNOWN,
    LabelError,
    LabelledGame,
    Outcome,
    author_group,
    consistency,
    format_text,
    group_figures,
    group_warehouse_rows,
    load_manifest,
    load_repo_corpus,
    per_test_figures,
    summarize,
    summary_groups,
    trust_sentence,
    warehouse_rows,
)
from bench_pipeline.bot.contract import TEST_IDS

ROOT = Path(__file__).resolve().parents[2]
GAMES = Path(__file__).parent / "games"
ALL_PASS = dict.fromkeys(TEST_IDS, "PASS")
SCRIPT = [sys.executable, str(ROOT / "benchmarks" / "bot_accuracy.py")]
_spec = importlib.util.spec_from_file_location(
    "bot_accuracy", ROOT / "benchmarks" / "bot_accuracy.py"
)
assert _spec and _spec.loader
bot_accuracy = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bot_accuracy)


def _game(game_id: str, **labels: str) -> LabelledGame:
    return LabelledGame(game_id, Path("/nonexistent") / game_id, {**ALL_PASS, **labels})


def _outcome(game: str, repeat: int = 0, **verdicts: str) -> Outcome:
    tests = {**ALL_PASS, **verdicts}
    return Outcome(game, repeat, tests, {t: f"why {t} {v}" for t, v in tests.items()}, 40.0, 41.0)


# Four games, rotate labelled on all: two working (PASS), two broken (FAIL).
WORKING_A = _game("working-a")
WORKING_B = _game("working-b")
NO_ROTATE = _game("no-rotate", rotate="FAIL")
NO_ROTATE_2 = _game("no-rotate-2", rotate="FAIL", score="FAIL")
GAMES_4 = [WORKING_A, WORKING_B, NO_ROTATE, NO_ROTATE_2]


def test_confusion_counts_and_percentages_are_exact() -> None:
    outcomes = [
        _outcome("working-a"),  # rotate PASS on a working game: right
        _outcome("working-b", rotate="INCONCLUSIVE"),  # no verdict on a working game
        _outcome("no-rotate", rotate="PASS"),  # a false PASS
        _outcome("no-rotate-2", rotate="FAIL", score="FAIL", gravity="FAIL"),  # gravity: false FAIL
    ]
    figures = per_test_figures(GAMES_4, outcomes)
    rotate = figures["rotate"]
    assert rotate["confusion"] == {
        "PASS": {"PASS": 1, "FAIL": 1},
        "FAIL": {"PASS": 0, "FAIL": 1},
        "INCONCLUSIVE": {"PASS": 1, "FAIL": 0},
    }
    assert (rotate["n_labelled"], rotate["n_verdicts"]) == (4, 4)
    assert (rotate["label_pass"], rotate["label_fail"]) == (2, 2)
    assert rotate["agreement"] == pytest.approx(2 / 4)
    assert rotate["working_right"] == pytest.approx(1 / 2)
    assert rotate["defects_caught"] == pytest.approx(1 / 2)
    assert (rotate["false_pass"], rotate["false_fail"], rotate["inconclusive"]) == (1, 0, 1)

    gravity = figures["gravity"]
    assert gravity["false_fail"] == 1 and gravity["false_pass"] == 0
    assert gravity["working_right"] == pytest.approx(3 / 4)
    assert gravity["defects_caught"] is None  # no broken game: not measured, not 0
    assert figures["score"]["defects_caught"] == 1.0

    overall = figures[OVERALL]
    assert overall["n_verdicts"] == 16 * 4
    assert (overall["false_pass"], overall["false_fail"], overall["inconclusive"]) == (1, 1, 1)
    assert overall["label_fail"] == 3  # rotate x2, score x1
    assert overall["agreement"] == pytest.approx((64 - 3) / 64)
    assert overall["defects_caught"] == pytest.approx(2 / 3)


def test_uncertain_labels_are_reported_apart_and_left_out_of_the_figures() -> None:
    doubtful = LabelledGame(
        "doubtful",
        Path("/nonexistent"),
        {**ALL_PASS, "score": "FAIL"},
        uncertain={"score": "the score only counts lines; is that a score?"},
    )
    figures = per_test_figures([WORKING_A, doubtful], [_outcome("working-a"), _outcome("doubtful")])
    score = figures["score"]
    # The bot's PASS against an uncertain FAIL is not a false PASS: it is counted apart.
    assert score["false_pass"] == 0 and score["label_fail"] == 0
    assert (score["n_labelled"], score["n_verdicts"]) == (1, 1)
    assert score["uncertain"] == {"n": 1, "verdicts": {"PASS": 1, "FAIL": 0, "INCONCLUSIVE": 0}}
    assert figures[OVERALL]["n_verdicts"] == 31
    assert figures[OVERALL]["uncertain"]["n"] == 1
    summary = _summary([WORKING_A, doubtful], [_outcome("working-a"), _outcome("doubtful")])
    assert summary["wrong"] == []
    assert "uncertain labels (not in the figures)" in format_text(summary)
    assert "doubtful score: bot PASS; the score only counts lines" in format_text(summary)


def test_an_inconclusive_label_is_not_applicable_not_a_headline_verdict() -> None:
    blank = _game("blank", loads="FAIL", starts="INCONCLUSIVE")
    figures = per_test_figures([blank], [_outcome("blank", loads="FAIL", starts="INCONCLUSIVE")])
    assert figures["starts"]["n_verdicts"] == 0 and figures["starts"]["agreement"] is None
    assert figures["starts"]["not_applicable"]["verdicts"]["INCONCLUSIVE"] == 1
    assert figures["loads"]["defects_caught"] == 1.0


def test_repeats_count_every_verdict_and_consistency_finds_the_differences() -> None:
    outcomes = [
        _outcome("working-a", 0),
        _outcome("working-a", 1, line_clear="INCONCLUSIVE"),
        _outcome("no-rotate", 0, rotate="FAIL"),
        _outcome("no-rotate", 1, rotate="FAIL"),
    ]
    figures = per_test_figures([WORKING_A, NO_ROTATE], outcomes)
    assert (figures["line_clear"]["n_labelled"], figures["line_clear"]["n_verdicts"]) == (2, 4)
    assert figures["line_clear"]["working_right"] == pytest.approx(3 / 4)
    cons = consistency(outcomes)
    assert (cons["pairs"], cons["same"]) == (32, 31)
    assert cons["share"] == pytest.approx(31 / 32)
    assert cons["differing"] == [
        {"game": "working-a", "test_id": "line_clear", "verdicts": ["PASS", "INCONCLUSIVE"]}
    ]
    assert consistency([_outcome("working-a")])["share"] is None  # one evaluation: not measured


def _summary(games: list[LabelledGame], outcomes: list[Outcome]) -> dict:
    return summarize(
        games,
        outcomes,
        bot_version="9.9.9",
        measured_at="2026-12-01T10:00:00+00:00",
        corpus="real",
        split="tune",
        endurance_s=30.0,
        repeats=1,
        cores=2,
    )


def test_summary_lists_wrong_verdicts_with_reasons_and_times() -> None:
    outcomes = [
        _outcome("working-a"),
        _outcome("working-b", rotate="INCONCLUSIVE"),
        _outcome("no-rotate", rotate="PASS"),
        _outcome("no-rotate-2", rotate="FAIL", score="FAIL"),
    ]
    outcomes[3] = Outcome(*list(outcomes[3].__dict__.values())[:5], wall_s=90.0)
    summary = _summary(GAMES_4, outcomes)
    assert [(w["game"], w["test_id"], w["kind"]) for w in summary["wrong"]] == [
        ("no-rotate", "rotate", "false PASS"),
        ("working-b", "rotate", "INCONCLUSIVE"),
    ]
    assert summary["wrong"][0]["reason"] == "why rotate PASS"
    assert summary["timing"] == {"median_s": 41.0, "max_s": 90.0}
    assert [t["test_id"] for t in summary["tests"]] == list(TEST_IDS)
    json.dumps(summary, allow_nan=False)  # the output file is plain JSON
    text = format_text(summary)
    assert "no-rotate #0 rotate: PASS (label FAIL): why rotate PASS" in text
    assert "median 41.0 s, max 90.0 s" in text
    with pytest.raises(ValueError, match="without labels"):
        _summary(GAMES_4, [_outcome("stranger")])


def test_warehouse_rows_are_sixteen_tests_and_the_overall_row() -> None:
    summary = _summary(GAMES_4, [_outcome(g.id) for g in GAMES_4])
    rows = warehouse_rows(summary, "x.json")
    assert [r["test_id"] for r in rows] == [*TEST_IDS, OVERALL]
    rotate = rows[TEST_IDS.index("rotate")]
    assert (rotate["false_pass"], rotate["n_labelled"], rotate["bot_version"]) == (2, 4, "9.9.9")
    with pytest.raises(ValueError):
        warehouse_rows({**summary, "format": 0}, "x.json")


def _drawn(game_id: str, renderer: str | None, author: str | None, **labels: str) -> LabelledGame:
    info = {"renderer": renderer, "author": author}
    return LabelledGame(game_id, Path("/nonexistent") / game_id, {**ALL_PASS, **labels}, info=info)


# Five games: two canvas games by agents, a DOM game by an agent, a DOM game by a person, and
# one that says neither (as the in-repo corpus's games do not say who wrote them).
BY_GROUP = [
    _drawn("canvas-claude", "canvas", "ai-claude-code"),
    _drawn("canvas-codex", "canvas", "ai-codex", rotate="FAIL"),
    _drawn("dom-cursor", "dom", "ai-cursor"),
    _drawn("dom-person", "dom", "human", score="FAIL"),
    _drawn("mystery", None, None),
]
BY_GROUP_OUTCOMES = [
    _outcome("canvas-claude"),  # all right
    _outcome("canvas-codex", rotate="PASS"),  # a false PASS on canvas, by an agent
    _outcome("dom-cursor", gravity="INCONCLUSIVE", lock="INCONCLUSIVE"),  # two left undecided
    _outcome("dom-cursor", 1, gravity="FAIL"),  # a second run: a false FAIL
    _outcome("dom-person", score="FAIL"),  # the defect caught
    _outcome("mystery", loads="INCONCLUSIVE"),
]


def test_authors_group_as_ai_or_human() -> None:
    assert [author_group(a) for a in ("ai-claude-code", "ai-other", "AI-Codex", "human")] == [
        "ai",
        "ai",
        "ai",
        "human",
    ]
    assert author_group(None) == author_group("") == UNKNOWN


def test_figures_per_renderer_and_author_group_count_each_groups_games_alone() -> None:
    groups = group_figures(BY_GROUP, BY_GROUP_OUTCOMES)
    assert list(groups) == ["renderer", "author"]
    # The four renderers and the two author groups are always listed; what a game does not
    # say is a group of its own, after them.
    assert list(groups["renderer"]) == ["canvas", "dom", "svg", "webgl", UNKNOWN]
    assert list(groups["author"]) == ["ai", "human", UNKNOWN]

    canvas = groups["renderer"]["canvas"]["overall"]
    assert groups["renderer"]["canvas"]["n_games"] == 2
    assert (canvas["n_verdicts"], canvas["label_pass"], canvas["label_fail"]) == (32, 31, 1)
    assert (canvas["false_pass"], canvas["false_fail"], canvas["inconclusive"]) == (1, 0, 0)
    assert canvas["agreement"] == pytest.approx(31 / 32)
    assert canvas["defects_caught"] == 0.0  # its one defect was passed: measured, and 0

    dom = groups["renderer"]["dom"]["overall"]  # 3 evaluations of 2 games: every one counts
    assert (groups["renderer"]["dom"]["n_games"], dom["n_verdicts"]) == (2, 48)
    assert (dom["false_pass"], dom["false_fail"], dom["inconclusive"]) == (0, 1, 2)
    assert dom["working_right"] == pytest.approx(44 / 47)
    assert dom["defects_caught"] == 1.0
    gravity = {t["test_id"]: t for t in groups["renderer"]["dom"]["tests"]}["gravity"]
    assert (gravity["n_labelled"], gravity["n_verdicts"], gravity["false_fail"]) == (2, 3, 1)

    svg = groups["renderer"]["svg"]
    assert svg["n_games"] == 0 and svg["overall"]["n_verdicts"] == 0
    assert svg["overall"]["agreement"] is None  # no game: not measured, never 0

    ai, human = groups["author"]["ai"], groups["author"]["human"]
    assert (ai["n_games"], ai["overall"]["n_verdicts"]) == (3, 64)
    assert (ai["overall"]["false_pass"], ai["overall"]["false_fail"]) == (1, 1)
    assert ai["overall"]["inconclusive"] == 2
    assert (human["n_games"], human["overall"]["agreement"]) == (1, 1.0)
    assert groups["author"][UNKNOWN]["overall"]["inconclusive"] == 1

    # Each breakdown splits the whole: its groups add up to the overall figures.
    whole = per_test_figures(BY_GROUP, BY_GROUP_OUTCOMES)[OVERALL]
    for breakdown in groups.values():
        for key in ("n_verdicts", "false_pass", "false_fail", "inconclusive", "label_fail"):
            assert sum(g["overall"][key] for g in breakdown.values()) == whole[key], key


def test_the_output_file_and_the_warehouse_rows_hold_the_breakdowns() -> None:
    summary = _summary(BY_GROUP, BY_GROUP_OUTCOMES)
    json.dumps(summary, allow_nan=False)
    assert summary["groups"] == group_figures(BY_GROUP, BY_GROUP_OUTCOMES)
    # A file written before the breakdowns existed gets them from its per-game verdicts.
    older = {k: v for k, v in summary.items() if k != "groups"}
    assert summary_groups(older) == summary["groups"]

    rows = group_warehouse_rows(summary, "x.json")
    assert len(rows) == (5 + 3) * 17
    overall = {(r["breakdown"], r["group_name"]): r for r in rows if r["test_id"] == OVERALL}
    assert overall[("renderer", "canvas")]["false_pass"] == 1
    assert overall[("author", "ai")]["n_games"] == 3
    assert overall[("renderer", "webgl")]["agreement"] is None
    assert {r["bot_version"] for r in rows} == {"9.9.9"}
    assert rows == group_warehouse_rows(older, "x.json")
    with pytest.raises(ValueError):
        group_warehouse_rows({**summary, "format": 0}, "x.json")

    text = format_text(summary)
    assert "per renderer and per author group" in text
    assert re.search(r"renderer canvas\s+2\s+32\s+97 %", text)
    assert re.search(r"author ai\s+3\s+64 ", text)


def test_trust_sentences_say_what_the_figures_mean() -> None:
    def row(**kw: int) -> dict[str, int]:
        base = {"label_pass": 10, "label_fail": 5, "false_pass": 0, "false_fail": 0}
        base |= kw
        base["n_verdicts"] = base["label_pass"] + base["label_fail"]
        return base | {"inconclusive": kw.get("inconclusive", 0)}

    assert trust_sentence(row()) == "Right on all 15 labelled verdicts."
    assert "passed 2 of 5 broken" in trust_sentence(row(false_pass=2))
    assert "failed 1 of 10 working" in trust_sentence(row(false_fail=1))
    assert "no verdict on 3 of 15" in trust_sentence(row(inconclusive=3))
    assert "how well it catches a defect is unknown" in trust_sentence(row(label_fail=0))
    assert "Only 1 broken case tests it, so how well it catches a defect is known only roughly" in (
        trust_sentence(row(label_fail=1))
    )
    assert "how often it fails a working game is unknown" in trust_sentence(row(label_pass=0))
    assert trust_sentence(row(label_pass=2, label_fail=1)).startswith("Too few")
    assert trust_sentence({"n_verdicts": 0}).startswith("Not measured")


def _manifest(tmp_path: Path, games: list[dict]) -> Path:
    path = tmp_path / "manifest.yaml"
    path.write_text(yaml.safe_dump({"games": games}))
    return path


def _entry(game_id: str, split: str = "tune", **kw: object) -> dict:
    return {
        "id": game_id,
        "repo": "someone/tetris",
        "commit": "0" * 40,
        "serve": "web",
        "split": split,
        "renderer": "canvas",
        "author": "human",
        "tests": {**ALL_PASS, "score": "FAIL"},
        **kw,
    }


def test_manifest_games_with_a_checkout_and_their_split(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    for game_id in ("a", "b"):
        (corpus / game_id / "web").mkdir(parents=True)
    manifest = _manifest(
        tmp_path,
        [
            _entry("a", uncertain={"rotate": "only on some pieces"}),
            _entry("b", "heldout"),
            _entry("c"),
        ],
    )
    games, absent = load_manifest(manifest, corpus, "all")
    assert [g.id for g in games] == ["a", "b"] and absent == ["c"]
    assert games[0].target == (corpus / "a" / "web").resolve()
    assert games[0].uncertain == {"rotate": "only on some pieces"}
    assert games[0].labels["score"] == "FAIL" and games[0].info["renderer"] == "canvas"
    tune, absent = load_manifest(manifest, corpus, "tune")
    assert [g.id for g in tune] == ["a"] and absent == ["c"]
    assert [g.id for g in load_manifest(manifest, corpus, "heldout")[0]] == ["b"]


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (_entry("a", serve="../../etc"), "leaves the checkout"),
        (_entry("a", tests={**ALL_PASS, "rotate": "MAYBE"}), "labels must be PASS or FAIL"),
        (_entry("a", tests={"loads": "PASS"}), "labels missing for starts"),
        (_entry("a", split="train"), "split must be tune or heldout"),
        (_entry("a", uncertain={"jump": "?"}), "`uncertain` must map test ids"),
        (_entry("../a"), "unique id"),
    ],
)
def test_a_bad_manifest_entry_is_one_line_naming_the_file_and_game(
    tmp_path: Path, entry: dict, message: str
) -> None:
    (tmp_path / "corpus" / "a" / "web").mkdir(parents=True)
    manifest = _manifest(tmp_path, [entry])
    with pytest.raises(LabelError, match=message) as err:
        load_manifest(manifest, tmp_path / "corpus")
    assert str(manifest) in str(err.value) and "\n" not in str(err.value)


def test_the_in_repo_corpus_loads_with_its_inconclusive_labels_and_tolerances() -> None:
    games = {g.id: g for g in load_repo_corpus(GAMES)}
    assert "canvas-basic" in games and len(games) >= 10
    assert games["broken-blank"].labels["starts"] == "INCONCLUSIVE"
    assert games["broken-blank"].tolerated == {"endurance": ["FAIL"]}


def test_publish_refuses_a_partial_run_and_files_that_are_not_its_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    summary = _summary(GAMES_4, [_outcome(g.id) for g in GAMES_4])
    good, partial, bad = tmp_path / "good.json", tmp_path / "partial.json", tmp_path / "bad.json"
    good.write_text(json.dumps(summary))
    partial.write_text(json.dumps({**summary, "only": ["working-a"]}))
    bad.write_text(json.dumps({"hello": 1}))
    store = tmp_path / "artifacts"

    def publish(path: Path) -> int:
        return bot_accuracy.main(["--publish-existing", str(path), "--artifacts", str(store)])

    assert publish(good) == 0
    published = store / "bot_accuracy" / "real-tune-20261201T100000Z.json"
    assert json.loads(published.read_text()) == summary
    for path, why in ((partial, "--only"), (bad, "cannot publish")):
        assert publish(path) == 2
        err = capsys.readouterr().err
        assert why in err and str(path) in err and err.count("\n") == 1
    assert [p.name for p in (store / "bot_accuracy").iterdir()] == [published.name]


@pytest.mark.slow
def test_the_script_on_two_in_repo_games_writes_figures_that_match_the_labels(
    tmp_path: Path,
) -> None:
    chosen = ["canvas-basic", "defect-no-rotation"]
    out = tmp_path / "accuracy.json"
    run = subprocess.run(
        [
            *SCRIPT,
            "--corpus",
            "repo",
            "--endurance-seconds",
            "10",
            "--out",
            str(out),
            "--only",
            *chosen,
        ],
        capture_output=True,
        text=True,
        timeout=500,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(out.read_text())
    assert (result["corpus"], result["split"], result["n_games"]) == ("repo", "all", 2)
    assert result["cores"] and result["bot_version"] and result["measured_at"]
    assert sorted(g["game"] for g in result["games"]) == chosen
    labels = {g: json.loads((GAMES / g / "expected.json").read_text())["tests"] for g in chosen}
    verdicts = {g["game"]: g["evaluations"][0]["tests"] for g in result["games"]}
    assert not result["errors"]
    # Every figure, recomputed here from the labels and the file's own verdicts.
    for row in result["tests"]:
        t = row["test_id"]
        pairs = [(verdicts[g][t], labels[g][t]) for g in chosen if labels[g][t] in ("PASS", "FAIL")]
        assert row["n_verdicts"] == len(pairs)
        assert row["false_pass"] == sum(v == "PASS" and lab == "FAIL" for v, lab in pairs)
        assert row["false_fail"] == sum(v == "FAIL" and lab == "PASS" for v, lab in pairs)
        assert row["inconclusive"] == sum(v == "INCONCLUSIVE" for v, _ in pairs)
        right = sum(v == lab for v, lab in pairs)
        assert row["agreement"] == (pytest.approx(right / len(pairs)) if pairs else None)
    wrong = {(w["game"], w["test_id"]) for w in result["wrong"]}
    assert wrong == {(g, t) for g in chosen for t in TEST_IDS if verdicts[g][t] != labels[g][t]} - {
        (g, t) for g in chosen for t in TEST_IDS if labels[g][t] == "INCONCLUSIVE"
    }
    # The bot is right on these two (as tests/bot/test_bot_on_corpus.py asserts): the defect
    # is caught and nothing broken passes.
    assert result["overall"]["false_pass"] == 0
    rotate = result["tests"][TEST_IDS.index("rotate")]
    assert rotate["defects_caught"] == 1.0, result["wrong"]
    assert "per test:" in run.stdout and "how far to trust each test:" in run.stdout
    assert result["timing"]["max_s"] >= result["timing"]["median_s"] > 0
    # The breakdowns: one canvas game, one DOM game, neither saying who wrote it.
    renderer = result["groups"]["renderer"]
    assert (renderer["canvas"]["n_games"], renderer["dom"]["n_games"]) == (1, 1)
    assert renderer["dom"]["overall"]["defects_caught"] == 1.0  # no-rotation is the DOM game
    assert result["groups"]["author"]["unknown"]["n_games"] == 2
    assert "per renderer and per author group" in run.stdout
    assert re.search(r"renderer canvas\s+1\s+", run.stdout)

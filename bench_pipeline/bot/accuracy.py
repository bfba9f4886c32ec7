"""How often the bot's verdicts agree with hand labels: the figures of the accuracy benchmark.

Pure: no browser, no files but the label files it is asked to read. `benchmarks/bot_accuracy.py`
runs the bot and hands its verdicts here; the warehouse (`raw_bot_accuracy`) and the results
site read the JSON this module produces.

Counting rules (docs/bot.md, *Accuracy*):

- A *labelled* verdict is one whose label is PASS or FAIL and not marked uncertain. Only those
  make the headline figures. Uncertain labels are counted apart, as are the in-repo corpus's
  INCONCLUSIVE labels ("this test cannot be judged on this game": `not_applicable`).
- With `--repeat N` every evaluation counts: a game evaluated twice gives two verdicts per
  test, so `n_verdicts` = labelled games x repeats and the rates are over verdicts.
- Rates are fractions 0-1, None when nothing was there to count (never 0 for "not measured").
- The same figures are broken down per renderer (canvas, dom, svg, webgl) and per author group
  (`ai`: any `ai-*` author of the manifest; `human`), each group counted exactly as the whole:
  the benchmark exists to measure games written by agents, and the bot may read those, or one
  renderer, worse than the corpus on average.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from bench_pipeline.bot.contract import TEST_IDS, Verdict

LABELS: tuple[str, ...] = ("PASS", "FAIL")
VERDICTS: tuple[str, ...] = tuple(v.value for v in Verdict)
SPLITS: tuple[str, ...] = ("tune", "heldout", "all")
OVERALL = "all"  # the test_id of the row that sums every test
# Fewer labelled verdicts than this and the page says there are too few to judge.
MIN_VERDICTS_TO_JUDGE = 5
FORMAT_VERSION = 1
# The breakdowns of the figures (`group_figures`), and the groups each always lists, so that
# a renderer without a game reads "no game" rather than disappearing. A game whose renderer
# or author is not given is in UNKNOWN; any other value is a group of its own.
RENDERERS: tuple[str, ...] = ("canvas", "dom", "svg", "webgl")
AUTHOR_GROUPS: tuple[str, ...] = ("ai", "human")
UNKNOWN = "unknown"
BREAKDOWNS: dict[str, tuple[str, ...]] = {"renderer": RENDERERS, "author": AUTHOR_GROUPS}


class LabelError(ValueError):
    """A manifest or label file that cannot be used; the message names the file and game."""


@dataclass(frozen=True)
class LabelledGame:
    id: str
    target: Path  # the folder the bot serves (holds index.html)
    labels: dict[str, str]  # test id -> PASS | FAIL (| INCONCLUSIVE in the in-repo corpus)
    uncertain: dict[str, str] = field(default_factory=dict)  # test id -> why
    tolerated: dict[str, list[str]] = field(default_factory=dict)  # in-repo corpus only
    split: str = "all"
    info: dict[str, Any] = field(default_factory=dict)  # renderer, author, theme, ...


@dataclass(frozen=True)
class Outcome:
    """One evaluation of one game: its verdicts and reasons, or why it could not run."""

    game: str
    repeat: int
    tests: dict[str, str]
    reasons: dict[str, str]
    duration_s: float | None = None  # the bot's own duration
    wall_s: float | None = None  # from submission to result, in the worker
    error: str | None = None


# ------------------------------------------------------------------------------------------
# Labels


def _check_labels(
    where: str, labels: Any, allowed: Sequence[str], uncertain: Any
) -> tuple[dict[str, str], dict[str, str]]:
    if not isinstance(labels, Mapping):
        raise LabelError(f"{where}: `tests` must map each of the 16 test ids to a label")
    missing = [t for t in TEST_IDS if t not in labels]
    unknown = [t for t in labels if t not in TEST_IDS]
    if missing or unknown:
        raise LabelError(
            f"{where}: labels missing for {', '.join(missing) or '-'}; "
            f"unknown test ids {', '.join(map(str, unknown)) or '-'}"
        )
    bad = {t: v for t, v in labels.items() if v not in allowed}
    if bad:
        raise LabelError(f"{where}: labels must be {' or '.join(allowed)}, got {bad}")
    uncertain = uncertain or {}
    if not isinstance(uncertain, Mapping) or any(t not in TEST_IDS for t in uncertain):
        raise LabelError(f"{where}: `uncertain` must map test ids to a reason")
    return {t: str(labels[t]) for t in TEST_IDS}, {str(t): str(r) for t, r in uncertain.items()}


def load_manifest(
    manifest: Path, corpus_dir: Path, split: str = "all"
) -> tuple[list[LabelledGame], list[str]]:
    """The manifest's games of `split` whose checkout exists under `corpus_dir`, and the ids
    of those whose checkout is absent. Raises LabelError naming the file and game."""
    if split not in SPLITS:
        raise LabelError(f"split must be one of {', '.join(SPLITS)}, not {split!r}")
    try:
        data = yaml.safe_load(manifest.read_text())
    except (OSError, yaml.YAMLError) as err:
        raise LabelError(f"{manifest}: cannot read the manifest: {err}") from err
    entries = data.get("games") if isinstance(data, Mapping) else None
    if not isinstance(entries, list):
        raise LabelError(f"{manifest}: expected a top-level `games:` list")
    present: list[LabelledGame] = []
    absent: list[str] = []
    seen: set[str] = set()
    for entry in entries:
        game_id = str(entry.get("id", "")) if isinstance(entry, Mapping) else ""
        where = f"{manifest}: game {game_id or '?'}"
        if not game_id or "/" in game_id or game_id in {".", ".."} or game_id in seen:
            raise LabelError(f"{where}: every game needs a unique id without '/'")
        seen.add(game_id)
        game_split = entry.get("split")
        if game_split not in ("tune", "heldout"):
            raise LabelError(f"{where}: split must be tune or heldout, got {game_split!r}")
        labels, uncertain = _check_labels(where, entry.get("tests"), LABELS, entry.get("uncertain"))
        if split != "all" and game_split != split:
            continue
        checkout = corpus_dir / game_id
        if not checkout.is_dir():
            absent.append(game_id)
            continue
        target = (checkout / str(entry.get("serve") or ".")).resolve()
        # The path comes from the manifest: it must not lead the server out of the checkout.
        if not target.is_relative_to(checkout.resolve()):
            raise LabelError(f"{where}: serve {entry.get('serve')!r} leaves the checkout")
        info = {k: entry.get(k) for k in ("repo", "commit", "renderer", "author", "theme")}
        present.append(LabelledGame(game_id, target, labels, uncertain, {}, str(game_split), info))
    return present, absent


def load_repo_corpus(games_dir: Path) -> list[LabelledGame]:
    """The in-repo corpus: every `<game>/expected.json` under `games_dir`."""
    games = []
    for path in sorted(games_dir.glob("*/expected.json")):
        where = str(path)
        try:
            data = yaml.safe_load(path.read_text())  # JSON is YAML: one parser for both
        except (OSError, yaml.YAMLError) as err:
            raise LabelError(f"{where}: cannot read the labels: {err}") from err
        if not isinstance(data, Mapping):
            raise LabelError(f"{where}: expected a JSON object")
        labels, uncertain = _check_labels(where, data.get("tests"), VERDICTS, data.get("uncertain"))
        tolerated = {str(t): list(v) for t, v in (data.get("tolerated") or {}).items()}
        info = {"renderer": data.get("renderer")}
        games.append(
            LabelledGame(path.parent.name, path.parent, labels, uncertain, tolerated, "all", info)
        )
    return games


# ------------------------------------------------------------------------------------------
# Figures


def _rate(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _kind(game: LabelledGame, test: str) -> str:
    """labelled | uncertain | not_applicable."""
    if test in game.uncertain:
        return "uncertain"
    return "labelled" if game.labels[test] in LABELS else "not_applicable"


def counts_figures(confusion: Mapping[str, Mapping[str, int]]) -> dict[str, Any]:
    """Headline figures from a confusion table (bot verdict -> label -> count)."""

    def c(bot: str, label: str) -> int:
        return int(confusion.get(bot, {}).get(label, 0))

    label_pass = sum(c(v, "PASS") for v in VERDICTS)
    label_fail = sum(c(v, "FAIL") for v in VERDICTS)
    n = label_pass + label_fail
    return {
        "n_verdicts": n,
        "label_pass": label_pass,
        "label_fail": label_fail,
        "agreement": _rate(c("PASS", "PASS") + c("FAIL", "FAIL"), n),
        "working_right": _rate(c("PASS", "PASS"), label_pass),
        "defects_caught": _rate(c("FAIL", "FAIL"), label_fail),
        "false_pass": c("PASS", "FAIL"),
        "false_fail": c("FAIL", "PASS"),
        "inconclusive": c("INCONCLUSIVE", "PASS") + c("INCONCLUSIVE", "FAIL"),
    }


def per_test_figures(
    games: Sequence[LabelledGame], outcomes: Sequence[Outcome]
) -> dict[str, dict[str, Any]]:
    """Per test id, plus OVERALL: the confusion table, the headline figures, and apart from
    them the uncertain and not-applicable labels (with what the bot said)."""
    by_id = {g.id: g for g in games}
    confusion = {t: {v: dict.fromkeys(LABELS, 0) for v in VERDICTS} for t in TEST_IDS}
    apart: dict[str, dict[str, Counter[str]]] = {
        t: {"uncertain": Counter(), "not_applicable": Counter()} for t in TEST_IDS
    }
    games_of: dict[str, set[str]] = {t: set() for t in TEST_IDS}
    for outcome in outcomes:
        game = by_id[outcome.game]
        for test in TEST_IDS:
            verdict = outcome.tests[test]
            kind = _kind(game, test)
            if kind == "labelled":
                confusion[test][verdict][game.labels[test]] += 1
                games_of[test].add(game.id)
            else:
                apart[test][kind][verdict] += 1
    figures: dict[str, dict[str, Any]] = {}
    for test in TEST_IDS:
        figures[test] = {
            "test_id": test,
            "n_labelled": len(games_of[test]),
            **counts_figures(confusion[test]),
            "confusion": confusion[test],
            **{kind: _apart(counter) for kind, counter in apart[test].items()},
        }
    total = {
        v: {lab: sum(confusion[t][v][lab] for t in TEST_IDS) for lab in LABELS} for v in VERDICTS
    }
    figures[OVERALL] = {
        "test_id": OVERALL,
        "n_labelled": sum(f["n_labelled"] for f in figures.values()),
        **counts_figures(total),
        "confusion": total,
        **{
            kind: _apart(sum((apart[t][kind] for t in TEST_IDS), Counter()))
            for kind in ("uncertain", "not_applicable")
        },
    }
    return figures


def _apart(counter: Counter[str]) -> dict[str, Any]:
    return {"n": sum(counter.values()), "verdicts": {v: counter[v] for v in VERDICTS}}


def author_group(author: Any) -> str:
    """`ai` for any `ai-*` author of the manifest (ai-claude-code, ai-codex, ...), `human` for
    human, UNKNOWN when the game does not say (the in-repo corpus)."""
    if not isinstance(author, str) or not author.strip():
        return UNKNOWN
    name = author.strip().lower()
    return "ai" if name == "ai" or name.startswith("ai-") else name


def game_group(game: LabelledGame, breakdown: str) -> str:
    """The group of `game` in a breakdown (`renderer` or `author`)."""
    if breakdown == "author":
        return author_group(game.info.get("author"))
    if breakdown != "renderer":
        raise ValueError(f"unknown breakdown {breakdown!r}: one of {', '.join(BREAKDOWNS)}")
    renderer = game.info.get("renderer")
    if not isinstance(renderer, str) or not renderer.strip():
        return UNKNOWN
    return renderer.strip().lower()


def group_figures(
    games: Sequence[LabelledGame], outcomes: Sequence[Outcome]
) -> dict[str, dict[str, dict[str, Any]]]:
    """Per breakdown (renderer, author) and group: the figures of `per_test_figures` over that
    group's games alone (`tests`: the sixteen rows; `overall`: their sum) and `n_games`.

    Every group of BREAKDOWNS is listed, with no game if the corpus has none; other groups
    (UNKNOWN, a renderer outside the four) follow in name order."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for breakdown, fixed in BREAKDOWNS.items():
        members: dict[str, list[LabelledGame]] = {name: [] for name in fixed}
        for game in games:
            members.setdefault(game_group(game, breakdown), []).append(game)
        names = [*fixed, *sorted(n for n in members if n not in fixed)]
        out[breakdown] = {}
        for name in names:
            ids = {g.id for g in members[name]}
            figures = per_test_figures(members[name], [o for o in outcomes if o.game in ids])
            out[breakdown][name] = {
                "breakdown": breakdown,
                "group": name,
                "n_games": len(ids),
                "tests": [figures[t] for t in TEST_IDS],
                "overall": figures[OVERALL],
            }
    return out


def summary_groups(summary: Mapping[str, Any]) -> dict[str, dict[str, dict[str, Any]]]:
    """The breakdowns of an output file: its `groups`, or, in a file written before they
    existed, recomputed from the verdicts and labels every file keeps per game (so earlier
    measurements, hours of evaluation each, gain the breakdowns without running the bot)."""
    groups = summary.get("groups")
    if isinstance(groups, Mapping):
        return {str(k): dict(v) for k, v in groups.items()}
    games: list[LabelledGame] = []
    outcomes: list[Outcome] = []
    for entry in summary.get("games") or []:
        info = {k: entry.get(k) for k in ("renderer", "author")}
        games.append(
            LabelledGame(
                str(entry["game"]),
                Path("."),
                dict(entry["labels"]),
                dict(entry.get("uncertain") or {}),
                split=str(entry.get("split", "all")),
                info=info,
            )
        )
        outcomes += [
            Outcome(str(entry["game"]), int(e["repeat"]), dict(e["tests"]), {})
            for e in entry.get("evaluations") or []
        ]
    return group_figures(games, outcomes)


def wrong_verdicts(
    games: Sequence[LabelledGame], outcomes: Sequence[Outcome]
) -> list[dict[str, Any]]:
    """Every labelled verdict that differs from its label, with the bot's reason."""
    by_id = {g.id: g for g in games}
    wrong = []
    for outcome in sorted(outcomes, key=lambda o: (o.game, o.repeat)):
        game = by_id[outcome.game]
        for test in TEST_IDS:
            verdict, label = outcome.tests[test], game.labels[test]
            if _kind(game, test) == "labelled" and verdict != label:
                wrong.append(
                    {
                        "game": game.id,
                        "repeat": outcome.repeat,
                        "test_id": test,
                        "verdict": verdict,
                        "label": label,
                        "kind": "false PASS"
                        if verdict == "PASS"
                        else "false FAIL"
                        if verdict == "FAIL"
                        else "INCONCLUSIVE",
                        "tolerated": verdict in game.tolerated.get(test, []),
                        "reason": outcome.reasons.get(test, ""),
                    }
                )
    return wrong


def consistency(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """Whether repeated evaluations of a game gave the same verdict, per (game, test).

    `share` is None when no game was evaluated more than once (not measured)."""
    by_game: dict[str, list[Outcome]] = {}
    for outcome in outcomes:
        by_game.setdefault(outcome.game, []).append(outcome)
    pairs = same = 0
    differing = []
    for game, runs in sorted(by_game.items()):
        if len(runs) < 2:
            continue
        for test in TEST_IDS:
            seen = [r.tests[test] for r in sorted(runs, key=lambda r: r.repeat)]
            pairs += 1
            if len(set(seen)) == 1:
                same += 1
            else:
                differing.append({"game": game, "test_id": test, "verdicts": seen})
    return {"pairs": pairs, "same": same, "share": _rate(same, pairs), "differing": differing}


def timing(outcomes: Sequence[Outcome]) -> dict[str, float | None]:
    walls = [o.wall_s for o in outcomes if o.wall_s is not None]
    return {
        "median_s": round(statistics.median(walls), 2) if walls else None,
        "max_s": round(max(walls), 2) if walls else None,
    }


def summarize(
    games: Sequence[LabelledGame],
    outcomes: Sequence[Outcome],
    *,
    bot_version: str,
    measured_at: str,
    corpus: str,
    split: str,
    endurance_s: float,
    repeats: int,
    cores: int | None,
    only: Sequence[str] = (),
    absent: Sequence[str] = (),
) -> dict[str, Any]:
    """The benchmark's whole output (what `--out` writes and the warehouse loads)."""
    names = {o.game for o in outcomes}
    unknown = names - {g.id for g in games}
    if unknown:
        raise ValueError(f"outcomes for games without labels: {', '.join(sorted(unknown))}")
    evaluated = [g for g in games if g.id in names]
    per_game = []
    for game in evaluated:
        runs = sorted((o for o in outcomes if o.game == game.id), key=lambda o: o.repeat)
        per_game.append(
            {
                "game": game.id,
                "split": game.split,
                **{k: v for k, v in game.info.items() if v is not None},
                "labels": game.labels,
                "uncertain": game.uncertain,
                "evaluations": [
                    {
                        "repeat": o.repeat,
                        "tests": o.tests,
                        "reasons": o.reasons,
                        "duration_s": o.duration_s,
                        "wall_s": o.wall_s,
                        "error": o.error,
                    }
                    for o in runs
                ],
            }
        )
    figures = per_test_figures(evaluated, outcomes)
    return {
        "format": FORMAT_VERSION,
        "bot_version": bot_version,
        "measured_at": measured_at,
        "corpus": corpus,
        "split": split,
        "only": list(only),
        "games_absent": list(absent),
        "cores": cores,
        "endurance_s": endurance_s,
        "repeats": repeats,
        "n_games": len(evaluated),
        "n_evaluations": len(outcomes),
        "errors": [
            {"game": o.game, "repeat": o.repeat, "error": o.error} for o in outcomes if o.error
        ],
        "tests": [figures[t] for t in TEST_IDS],
        "overall": figures[OVERALL],
        "groups": group_figures(evaluated, outcomes),
        "wrong": wrong_verdicts(evaluated, outcomes),
        "consistency": consistency(outcomes),
        "timing": timing(outcomes),
        "games": per_game,
    }


# ------------------------------------------------------------------------------------------
# Words


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.0f} %"


def trust_sentence(row: Mapping[str, Any]) -> str:
    """How far to trust a test's verdicts, in plain words, from its headline figures
    (a row of `per_test_figures` or of the warehouse's `mart_bot_accuracy`)."""
    n = int(row.get("n_verdicts") or 0)
    n_pass, n_fail = int(row.get("label_pass") or 0), int(row.get("label_fail") or 0)
    false_pass, false_fail = int(row.get("false_pass") or 0), int(row.get("false_fail") or 0)
    inconclusive = int(row.get("inconclusive") or 0)
    if n == 0:
        return "Not measured: no labelled game tests this."
    if n < MIN_VERDICTS_TO_JUDGE:
        return f"Too few labelled verdicts ({n}) to say how far to trust it."
    parts = []
    if false_pass:
        parts.append(f"A PASS can hide a defect: it passed {false_pass} of {n_fail} broken cases.")
    if false_fail:
        parts.append(
            f"A FAIL can be the bot's mistake: it failed {false_fail} of {n_pass} working cases."
        )
    if inconclusive:
        parts.append(f"It gave no verdict on {inconclusive} of {n}.")
    if not parts:
        parts.append(f"Right on all {n} labelled verdicts.")
    if n_fail == 0:
        parts.append("No broken case tests it, so how well it catches a defect is unknown.")
    elif n_fail < MIN_VERDICTS_TO_JUDGE:
        cases = "1 broken case tests" if n_fail == 1 else f"{n_fail} broken cases test"
        parts.append(f"Only {cases} it, so how well it catches a defect is known only roughly.")
    if n_pass == 0:
        parts.append("No working case tests it, so how often it fails a working game is unknown.")
    elif n_pass < MIN_VERDICTS_TO_JUDGE:
        cases = "1 working case tests" if n_pass == 1 else f"{n_pass} working cases test"
        parts.append(
            f"Only {cases} it, so how often it fails a working game is known only roughly."
        )
    return " ".join(parts)


def format_text(summary: Mapping[str, Any]) -> str:
    """The benchmark's printed report."""
    lines = [
        f"bot {summary['bot_version']}  corpus {summary['corpus']}  split {summary['split']}  "
        f"{summary['n_games']} games x {summary['repeats']} repeat(s)  "
        f"endurance {summary['endurance_s']:g} s  measured {summary['measured_at']}",
    ]
    if summary.get("games_absent"):
        lines.append(f"checkouts absent (not evaluated): {', '.join(summary['games_absent'])}")
    header = (
        f"{'test':12s} {'P|P':>4s} {'P|F':>4s} {'F|P':>4s} {'F|F':>4s} {'I|P':>4s} {'I|F':>4s}"
        f"  {'agree':>6s} {'works':>6s} {'caught':>6s} {'fPASS':>5s} {'fFAIL':>5s} {'INC':>4s}"
        f" {'uncert':>6s} {'n/a':>4s}"
    )
    lines += [
        "",
        "per test: bot verdict|label counts (P PASS, F FAIL, I INCONCLUSIVE); agree = verdict "
        "equals label; works = label PASS judged PASS; caught = label FAIL judged FAIL",
        header,
    ]
    for row in [*summary["tests"], summary["overall"]]:
        c = row["confusion"]
        cells = [c[v][lab] for v in VERDICTS for lab in LABELS]
        lines.append(
            f"{row['test_id']:12s} "
            + " ".join(f"{x:4d}" for x in cells)
            + f"  {_pct(row['agreement']):>6s} {_pct(row['working_right']):>6s}"
            f" {_pct(row['defects_caught']):>6s} {row['false_pass']:5d} {row['false_fail']:5d}"
            f" {row['inconclusive']:4d} {row['uncertain']['n']:6d} {row['not_applicable']['n']:4d}"
        )
    overall = summary["overall"]
    lines += [
        "",
        f"overall: {overall['n_verdicts']} labelled verdicts, agreement {_pct(overall['agreement'])}, "
        f"working mechanics judged right {_pct(overall['working_right'])}, defects caught "
        f"{_pct(overall['defects_caught'])}, false PASS {overall['false_pass']}, false FAIL "
        f"{overall['false_fail']}, INCONCLUSIVE {overall['inconclusive']}; uncertain labels "
        f"(excluded) {overall['uncertain']['n']}",
    ]
    lines += ["", *_group_lines(summary)]
    if summary["wrong"]:
        lines += ["", "wrong verdicts:"]
        for w in summary["wrong"]:
            tolerated = " (tolerated by the corpus)" if w["tolerated"] else ""
            lines.append(
                f"  {w['game']} #{w['repeat']} {w['test_id']}: {w['verdict']} (label {w['label']})"
                f"{tolerated}: {w['reason']}"
            )
    uncertain = [
        (g["game"], t, e["tests"][t], why)
        for g in summary["games"]
        for t, why in g["uncertain"].items()
        for e in g["evaluations"]
    ]
    if uncertain:
        lines += ["", "uncertain labels (not in the figures):"]
        lines += [f"  {g} {t}: bot {v}; {why}" for g, t, v, why in uncertain]
    for err in summary["errors"]:
        lines.append(f"evaluation failed: {err['game']} #{err['repeat']}: {err['error']}")
    cons = summary["consistency"]
    lines.append("")
    if cons["share"] is None:
        lines.append("consistency: not measured (each game evaluated once; use --repeat 2)")
    else:
        lines.append(
            f"consistency: {cons['same']} of {cons['pairs']} (game, test) verdicts the same "
            f"in every repeat ({_pct(cons['share'])})"
        )
        lines += [
            f"  {d['game']} {d['test_id']}: {' / '.join(d['verdicts'])}" for d in cons["differing"]
        ]
    t = summary["timing"]
    if t["median_s"] is not None:
        lines.append(f"evaluation time: median {t['median_s']:.1f} s, max {t['max_s']:.1f} s")
    lines += ["", "how far to trust each test:"]
    lines += [f"  {row['test_id']:12s} {trust_sentence(row)}" for row in summary["tests"]]
    return "\n".join(lines)


def _group_lines(summary: Mapping[str, Any]) -> list[str]:
    """The breakdowns' overall figures, one line per renderer and per author group."""
    lines = [
        "per renderer and per author group (ai = any ai-* author): each group's labelled "
        "verdicts, counted as above",
        f"{'group':18s} {'games':>5s} {'verdicts':>8s}  {'agree':>6s} {'works':>6s} "
        f"{'caught':>6s} {'fPASS':>5s} {'fFAIL':>5s} {'INC':>4s}",
    ]
    for breakdown, groups in summary_groups(summary).items():
        for name, group in groups.items():
            row = group["overall"]
            lines.append(
                f"{breakdown + ' ' + name:18s} {group['n_games']:5d} {row['n_verdicts']:8d}  "
                f"{_pct(row['agreement']):>6s} {_pct(row['working_right']):>6s} "
                f"{_pct(row['defects_caught']):>6s} {row['false_pass']:5d} "
                f"{row['false_fail']:5d} {row['inconclusive']:4d}"
            )
    return lines


# ------------------------------------------------------------------------------------------
# The warehouse's rows


# raw_bot_accuracy: one row per (output file, test id), plus the OVERALL row per file.
WAREHOUSE_COLUMNS: dict[str, str] = {
    "source_file": "VARCHAR",
    "bot_version": "VARCHAR",
    "measured_at": "TIMESTAMPTZ",
    "corpus": "VARCHAR",
    "split": "VARCHAR",
    "test_id": "VARCHAR",
    "n_games": "INTEGER",
    "repeats": "INTEGER",
    "endurance_s": "DOUBLE",
    "n_labelled": "INTEGER",
    "n_verdicts": "INTEGER",
    "label_pass": "INTEGER",
    "label_fail": "INTEGER",
    "agreement": "DOUBLE",
    "working_right": "DOUBLE",
    "defects_caught": "DOUBLE",
    "false_pass": "INTEGER",
    "false_fail": "INTEGER",
    "inconclusive": "INTEGER",
    "n_uncertain": "INTEGER",
    "consistency": "DOUBLE",
    "eval_s_median": "DOUBLE",
    "eval_s_max": "DOUBLE",
}


def warehouse_rows(summary: Mapping[str, Any], source_file: str) -> list[dict[str, Any]]:
    """The rows of one output file for `raw_bot_accuracy`. Raises ValueError (KeyError,
    TypeError) on a file that is not this benchmark's output."""
    if summary.get("format") != FORMAT_VERSION:
        raise ValueError(f"not a bot accuracy file of format {FORMAT_VERSION}")
    common = {
        "source_file": source_file,
        "bot_version": str(summary["bot_version"]),
        "measured_at": str(summary["measured_at"]),
        "corpus": str(summary["corpus"]),
        "split": str(summary["split"]),
        "n_games": int(summary["n_games"]),
        "repeats": int(summary["repeats"]),
        "endurance_s": float(summary["endurance_s"]),
        "consistency": summary["consistency"]["share"],
        "eval_s_median": summary["timing"]["median_s"],
        "eval_s_max": summary["timing"]["max_s"],
    }
    rows = []
    for row in [*summary["tests"], summary["overall"]]:
        rows.append(
            {
                **common,
                **{k: row[k] for k in WAREHOUSE_COLUMNS if k in row},
                "n_uncertain": int(row["uncertain"]["n"]),
            }
        )
    if [r["test_id"] for r in rows] != [*TEST_IDS, OVERALL]:
        raise ValueError("the tests are not the contract's sixteen plus the overall row")
    return rows


# raw_bot_accuracy_groups: one row per (output file, breakdown, group, test id), plus the
# OVERALL row of each group. The figures' columns are raw_bot_accuracy's.
GROUP_WAREHOUSE_COLUMNS: dict[str, str] = {
    "source_file": "VARCHAR",
    "bot_version": "VARCHAR",
    "measured_at": "TIMESTAMPTZ",
    "corpus": "VARCHAR",
    "split": "VARCHAR",
    "breakdown": "VARCHAR",
    "group_name": "VARCHAR",
    "test_id": "VARCHAR",
    "n_games": "INTEGER",
    "n_labelled": "INTEGER",
    "n_verdicts": "INTEGER",
    "label_pass": "INTEGER",
    "label_fail": "INTEGER",
    "agreement": "DOUBLE",
    "working_right": "DOUBLE",
    "defects_caught": "DOUBLE",
    "false_pass": "INTEGER",
    "false_fail": "INTEGER",
    "inconclusive": "INTEGER",
    "n_uncertain": "INTEGER",
}


def group_warehouse_rows(summary: Mapping[str, Any], source_file: str) -> list[dict[str, Any]]:
    """The rows of one output file for `raw_bot_accuracy_groups` (17 per group). Raises
    ValueError (KeyError, TypeError) on a file that is not this benchmark's output."""
    if summary.get("format") != FORMAT_VERSION:
        raise ValueError(f"not a bot accuracy file of format {FORMAT_VERSION}")
    common = {
        "source_file": source_file,
        "bot_version": str(summary["bot_version"]),
        "measured_at": str(summary["measured_at"]),
        "corpus": str(summary["corpus"]),
        "split": str(summary["split"]),
    }
    rows = []
    for breakdown, groups in summary_groups(summary).items():
        for name, group in groups.items():
            figures = [*group["tests"], group["overall"]]
            if [f["test_id"] for f in figures] != [*TEST_IDS, OVERALL]:
                raise ValueError(f"{breakdown} {name}: not the sixteen tests and the overall row")
            rows += [
                {
                    **common,
                    "breakdown": str(breakdown),
                    "group_name": str(name),
                    "n_games": int(group["n_games"]),
                    **{k: f[k] for k in GROUP_WAREHOUSE_COLUMNS if k in f},
                    "n_uncertain": int(f["uncertain"]["n"]),
                }
                for f in figures
            ]
    return rows


def all_tests(rows: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Rows in the contract's test order, the overall row last."""
    order = {t: i for i, t in enumerate([*TEST_IDS, OVERALL])}
    return sorted(rows, key=lambda r: order.get(str(r.get("test_id")), len(order)))

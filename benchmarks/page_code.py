"""How much of a game's controls and start the page-code reader finds before any key is
pressed (bench_pipeline/bot/readers/page_code.py).

Per game: labelled control keys found / labelled, role hints right / wrong on the labelled
keys, whether the labelled start element (for `click:` starts) is among the first three
start candidates, and the reader's cost. Keys are read at load and again after trying the
first start candidate (listeners a game adds only once it runs). Prints; asserts nothing.

    .venv/bin/python benchmarks/page_code.py                          # tests/bot/games
    .venv/bin/python benchmarks/page_code.py --corpus /work/corpus     # the manifest's games (tune split)
    .venv/bin/python benchmarks/page_code.py --corpus /work/corpus --split all --only dom-
    .venv/bin/python benchmarks/page_code.py --json out.json           # also every report
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench_pipeline.bot.browser import CHROMIUM_ARGS, chromium_executable  # noqa: E402
from bench_pipeline.bot.evaluate import PROBE  # noqa: E402
from bench_pipeline.bot.readers.js_keys import key_from_name  # noqa: E402
from bench_pipeline.bot.readers.page_code import (  # noqa: E402
    ListenerReport,
    StartCandidate,
    locate,
    read_listeners,
    start_candidates,
)
from bench_pipeline.bot.serve import serve_directory  # noqa: E402

MANIFEST = ROOT / "benchmarks" / "bot_corpus" / "manifest.yaml"
REPO_GAMES = ROOT / "tests" / "bot" / "games"
ROLES = ("left", "right", "down", "rotate", "hard_drop")


@dataclass
class Game:
    id: str
    folder: Path
    start: str
    controls: dict[str, str | None]


@dataclass
class Row:
    id: str
    labelled: int = 0
    found: int = 0  # at load
    found_after: int = 0  # at load or after the first start candidate
    missed: list[str] = field(default_factory=list)
    right: int = 0
    wrong: int = 0
    wrong_detail: list[str] = field(default_factory=list)
    start_label: str = ""
    start_rank: int | None = (
        None  # 1-based rank of the labelled start element, None: not in the list
    )
    start_checked: bool = False
    ms: float = 0.0
    failures: list[str] = field(default_factory=list)
    error: str = ""
    top: list[str] = field(default_factory=list)


def repo_games() -> list[Game]:
    games = []
    for path in sorted(REPO_GAMES.glob("*/expected.json")):
        data = json.loads(path.read_text())
        games.append(
            Game(
                path.parent.name,
                path.parent,
                str(data.get("start", "")),
                data.get("controls") or {},
            )
        )
    return games


def corpus_games(corpus: Path, split: str) -> list[Game]:
    data = yaml.safe_load(MANIFEST.read_text())
    games = []
    for entry in data["games"]:
        if split != "all" and entry.get("split") != split:
            continue
        checkout = corpus / entry["id"]
        folder = (checkout / str(entry.get("serve") or ".")).resolve()
        if not folder.is_dir() or not folder.is_relative_to(checkout.resolve()):
            continue
        games.append(
            Game(entry["id"], folder, str(entry.get("start", "")), entry.get("controls") or {})
        )
    return games


def click_labels(start: str) -> list[str]:
    """The elements a `click:` start names; for `overlay:X then click:Y`, both steps (the
    first candidate may rightly be the first step)."""
    if "click:" not in start:
        return []
    return [
        step.split(":", 1)[1].strip()
        for step in start.split(" then ")
        if step.startswith(("click:", "overlay:"))
    ]


def _matches(page: Any, cand: StartCandidate, label: str) -> bool:
    if cand.action != "click":
        return False
    try:
        loc = locate(page, cand)
        if (label[:1] in "#." and " " not in label) or label.startswith("#"):
            return bool(
                loc.evaluate(
                    "(el, sel) => { try { return el.matches(sel) || !!el.closest(sel) || !!el.querySelector(sel); } catch (e) { return false; } }",
                    label,
                    timeout=1500,
                )
            )
        text = " ".join((cand.name + " " + loc.inner_text(timeout=1500)).split()).casefold()
    except Exception:
        return False
    want = " ".join(label.split()).casefold()
    return want in text


def measure(browser: Any, game: Game, reports: dict[str, Any]) -> Row:
    row = Row(game.id)
    # Labels name Space as " " or "Space": compared as Playwright names.
    labelled = {
        role: key_from_name(key) or key
        for role, key in game.controls.items()
        if role in ROLES and key
    }
    row.labelled = len(labelled)
    row.start_label = game.start
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        context.add_init_script(PROBE)
        page = context.new_page()
        with serve_directory(game.folder) as url:
            page.goto(url, wait_until="load", timeout=15000)
            page.wait_for_timeout(700)
            cdp = context.new_cdp_session(page)
            began = time.monotonic()
            report = read_listeners(page, cdp)
            cands = start_candidates(page, cdp, report)
            row.ms = (time.monotonic() - began) * 1000
            if not cands and not report.keys:
                # A loader still showing (sounds, a letter animation): read once more later.
                page.wait_for_timeout(2500)
                report = read_listeners(page, cdp)
                cands = start_candidates(page, cdp, report)
            row.failures = report.failures
            row.top = [
                f"{c.action}:{c.key or c.selector}{'@' + '/'.join(c.frame) if c.frame else ''} {c.name[:20]!r} {c.score:.1f}"
                for c in cands[:3]
            ]
            found = set(report.key_names())
            row.found = sum(1 for key in labelled.values() if key in found)
            _roles(row, report, labelled)
            labels = click_labels(game.start)
            if labels:
                row.start_checked = True
                for rank, cand in enumerate(cands[:3], 1):
                    if any(_matches(page, cand, label) for label in labels):
                        row.start_rank = rank
                        break
            after = set(found)
            after_report: ListenerReport | None = None
            if game.start != "auto" and cands:
                # Listeners a game adds only once it runs: read again after its first try.
                with contextlib.suppress(Exception):
                    first = cands[0]
                    if first.action == "key":
                        page.keyboard.press(first.key)
                    elif first.action == "click":
                        locate(page, first).click(timeout=2000)
                    page.wait_for_timeout(1000)
                    cdp2 = context.new_cdp_session(page)
                    after_report = read_listeners(page, cdp2)
                    after |= set(after_report.key_names())
            row.found_after = sum(1 for key in labelled.values() if key in after)
            row.missed = [f"{role}={key!r}" for role, key in labelled.items() if key not in after]
            reports[game.id] = {
                "report": report.to_json(),
                "candidates": [c.to_json() for c in cands],
                "after_start": after_report.to_json() if after_report else None,
            }
    except Exception as error:
        row.error = (
            f"{type(error).__name__}: {str(error).splitlines()[0][:160] if str(error) else ''}"
        )
    finally:
        with contextlib.suppress(Exception):
            context.close()
    return row


def _roles(row: Row, report: ListenerReport, labelled: dict[str, str]) -> None:
    for role, key in labelled.items():
        found = report.key(key)
        if found is None or found.role is None:
            continue
        # A key labelled for one role may also serve another (Space: start and hard drop):
        # the hint is right when the labelled role is among the roles its branches show.
        if found.role == role or (role in found.roles and found.role in ("start", "pause")):
            row.right += 1
        else:
            row.wrong += 1
            row.wrong_detail.append(
                f"{key!r} labelled {role}, hinted {found.role} ({found.roles.get(found.role, '')[:40]})"
            )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--corpus", type=Path, help="checkouts of the manifest's games (else the in-repo games)"
    )
    parser.add_argument("--split", default="tune", choices=("tune", "heldout", "all"))
    parser.add_argument("--only", default="", help="only games whose id contains this")
    parser.add_argument("--json", type=Path, help="write every report and candidate list here")
    args = parser.parse_args()
    games = corpus_games(args.corpus, args.split) if args.corpus else repo_games()
    games = [g for g in games if args.only in g.id]
    executable = chromium_executable()
    rows: list[Row] = []
    reports: dict[str, Any] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        for game in games:
            row = measure(browser, game, reports)
            rows.append(row)
            start = (
                "-"
                if not row.start_checked
                else (f"#{row.start_rank}" if row.start_rank else "miss")
            )
            print(
                f"{game.id[:44]:44} keys {row.found}/{row.labelled} (after start {row.found_after}) "
                f"roles +{row.right}/-{row.wrong} start {start:4} {row.ms:6.0f} ms"
                + (f"  ERROR {row.error}" if row.error else "")
            )
            if row.missed:
                print(f"    missed: {', '.join(row.missed)}")
            for detail in row.wrong_detail:
                print(f"    wrong role: {detail}")
            if row.start_checked and not row.start_rank:
                print(f"    start {row.start_label!r} not in top 3: {row.top}")
            for failure in row.failures[:3]:
                print(f"    failure: {failure[:150]}")
        browser.close()
    ok = [r for r in rows if not r.error]
    labelled = sum(r.labelled for r in ok)
    checked = [r for r in ok if r.start_checked]
    costs = [r.ms for r in ok]
    print()
    print(f"games {len(rows)} (errors {len(rows) - len(ok)})")
    print(f"keys found at load      {sum(r.found for r in ok)}/{labelled}")
    print(f"keys found after start  {sum(r.found_after for r in ok)}/{labelled}")
    print(f"games with every key    {sum(1 for r in ok if r.found_after == r.labelled)}/{len(ok)}")
    print(f"role hints right/wrong  {sum(r.right for r in ok)}/{sum(r.wrong for r in ok)}")
    print(
        f"start element in top 3  {sum(1 for r in checked if r.start_rank)}/{len(checked)} (first: {sum(1 for r in checked if r.start_rank == 1)})"
    )
    if costs:
        print(f"cost ms median {statistics.median(costs):.0f} max {max(costs):.0f}")
    if args.json:
        args.json.write_text(
            json.dumps(
                {"rows": [r.__dict__ for r in rows], "reports": reports}, indent=1, default=str
            )
        )


if __name__ == "__main__":
    main()

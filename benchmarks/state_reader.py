"""How often the state reader finds a game's board, piece, score and game-over flag.

Opens each game in the bot's contained browser (one at a time), performs its labelled
start, scans its JavaScript heap, presses the labelled left/right keys for a few seconds
and then hard-drops until the stack tops out, sampling all along; `state_model.interpret`
then says what it found. Prints one line per game and the totals; asserts nothing.

    .venv/bin/python benchmarks/state_reader.py                       # tests/bot/games
    .venv/bin/python benchmarks/state_reader.py tests/bot/games/dom-table
    .venv/bin/python benchmarks/state_reader.py --corpus /work/corpus  # the manifest's tune games
    .venv/bin/python benchmarks/state_reader.py --corpus /work/corpus --json out.json

Held-out games of the real corpus are skipped unless `--split heldout|all` is given: they
are for the bot's final measurement only (benchmarks/bot_corpus/README.md).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import sync_playwright

from bench_pipeline.bot.browser import CHROMIUM_ARGS, chromium_executable
from bench_pipeline.bot.contain import contained_browser, install_guard
from bench_pipeline.bot.evaluate import PROBE
from bench_pipeline.bot.readers.state import StateReader
from bench_pipeline.bot.readers.state_model import interpret

ROOT = Path(__file__).resolve().parents[1]
REPO_GAMES = ROOT / "tests" / "bot" / "games"
MANIFEST = ROOT / "benchmarks" / "bot_corpus" / "manifest.yaml"
SAMPLE_EVERY_S = 0.15
MOVE_S = 4.0  # left/right presses with gravity
DROP_S = 10.0  # then hard drops until the stack tops out
GAME_CAP_S = 60.0  # one game, start to end, whatever the page does


def repo_games(paths: list[str]) -> list[dict[str, Any]]:
    folders = [Path(p) for p in paths] or sorted(p for p in REPO_GAMES.iterdir() if p.is_dir())
    games = []
    for folder in folders:
        label_file = folder / "expected.json"
        if not label_file.is_file():
            continue
        label = json.loads(label_file.read_text())
        grid = label.get("grid") or {"cols": 10, "rows": 20}
        games.append(
            {
                "id": folder.name,
                "target": folder,
                "renderer": label["renderer"],
                "start": label.get("start", "auto"),
                "dismiss": label.get("dismiss"),
                "name_form": label.get("name_form"),
                "failing_loads": label.get("failing_loads", 0),
                "controls": label["controls"],
                "grid": (grid["rows"], grid["cols"]),
            }
        )
    return games


def corpus_games(corpus: Path, split: str, only: list[str]) -> tuple[list[dict[str, Any]], int]:
    entries = yaml.safe_load(MANIFEST.read_text())["games"]
    games, absent = [], 0
    for entry in entries:
        if split != "all" and entry["split"] != split:
            continue
        if only and entry["id"] not in only:
            continue
        target = corpus / entry["id"] / entry.get("serve", ".")
        if not (target / "index.html").is_file():
            absent += 1
            continue
        games.append(
            {
                "id": entry["id"],
                "target": target,
                "renderer": entry["renderer"],
                "start": entry.get("start", "auto"),
                "controls": entry["controls"],
                "grid": (entry["board"]["rows"], entry["board"]["cols"]),
            }
        )
    return games, absent


def _click(page: Any, what: str) -> None:
    if what.startswith("#"):
        page.click(what, timeout=3000)
        return
    for locator in (
        page.get_by_role("button", name=what),
        page.get_by_text(what, exact=True),
        page.get_by_text(what),
    ):
        with contextlib.suppress(PlaywrightError):
            if locator.count():
                locator.first.click(timeout=3000)
                return


def perform_start(page: Any, game: dict[str, Any]) -> None:
    if game.get("name_form"):
        with contextlib.suppress(PlaywrightError):
            page.locator("input").first.fill("bench", timeout=2000)
        _click(page, game["name_form"])
        page.wait_for_timeout(800)
    if game.get("dismiss"):
        _click(page, game["dismiss"])
        page.wait_for_timeout(300)
    for step in str(game["start"]).split(" then "):
        kind, _, what = step.partition(":")
        if kind in ("click", "overlay"):
            _click(page, what)
        elif kind == "key":
            page.keyboard.press(what)
        page.wait_for_timeout(300)


def _kill_browser(marker: str) -> None:
    """Kill this game's Chromium (its command line names the game's private folder): a
    page frozen in an endless loop blocks a key press for good."""
    for pid_dir in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError, ValueError):
            if marker in (pid_dir / "cmdline").read_bytes().decode(errors="ignore"):
                os.kill(int(pid_dir.name), signal.SIGKILL)


def run_game(game: dict[str, Any], executable: str, dump: Path | None = None) -> dict[str, Any]:
    result: dict[str, Any] = {"id": game["id"], "renderer": game["renderer"]}
    workdir = Path(tempfile.mkdtemp(prefix="bench-state-"))
    started = time.monotonic()
    watchdog = threading.Timer(GAME_CAP_S, _kill_browser, [str(workdir)])
    watchdog.daemon = True
    watchdog.start()
    try:
        with (
            sync_playwright() as p,
            contained_browser(str(game["target"]), workdir, executable) as containment,
        ):
            context = p.chromium.launch_persistent_context(
                str(workdir / "profile"),
                executable_path=containment.executable,
                headless=True,
                args=CHROMIUM_ARGS + containment.extra_args,
                viewport={"width": 1280, "height": 1100},
                service_workers="block",
            )
            try:
                install_guard(context, containment, lambda: time.monotonic() - started)
                context.add_init_script(PROBE)
                page = context.pages[0] if context.pages else context.new_page()
                page.on("dialog", lambda d: d.dismiss())
                for _ in range(1 + int(game.get("failing_loads", 0))):
                    with contextlib.suppress(PlaywrightError):
                        page.goto(containment.url, wait_until="load", timeout=15000)
                page.wait_for_timeout(500)
                perform_start(page, game)
                page.wait_for_timeout(500)
                cdp = context.new_cdp_session(page)
                reader = StateReader(page, cdp)
                t0 = time.monotonic()
                description = reader.scan(game["grid"])
                samples: list[tuple[float, dict]] = []
                actions: list[tuple[float, str]] = []
                try:
                    play(page, reader, game, t0, samples, actions)
                except PlaywrightError as error:
                    # the page froze (the watchdog closed it) or crashed: what was
                    # sampled until then is interpreted all the same
                    result["play_error"] = str(error).splitlines()[0][:120]
                model = interpret(description, samples, actions, renderer_grid=game["grid"])
                if dump is not None:
                    dump.mkdir(parents=True, exist_ok=True)
                    recorded = {
                        "description": description,
                        "samples": samples,
                        "actions": actions,
                        "grid": game["grid"],
                        "model": model.to_json(),
                    }
                    (dump / f"{game['id']}.json").write_text(json.dumps(recorded))
                result.update(summarize(description, model, game, reader))
                reader.close()
            finally:
                with contextlib.suppress(Exception):
                    context.close()
    except Exception as error:  # one game that cannot run must not stop the benchmark
        result["error"] = f"{type(error).__name__}: {str(error).splitlines()[0][:200]}"
    finally:
        watchdog.cancel()
        shutil.rmtree(workdir, ignore_errors=True)
    result["wall_s"] = round(time.monotonic() - started, 1)
    return result


def play(
    page: Any,
    reader: StateReader,
    game: dict[str, Any],
    t0: float,
    samples: list[tuple[float, dict]],
    actions: list[tuple[float, str]],
) -> None:
    controls = game["controls"]
    left, right = controls.get("left"), controls.get("right")
    drop = controls.get("hard_drop") or controls.get("down")
    pattern = [left, left, right, right, right, left]
    n = 0
    end_move = time.monotonic() + MOVE_S
    end = end_move + DROP_S
    failed = 0
    while time.monotonic() < end:
        now = time.monotonic()
        sample = reader.sample()
        samples.append((now - t0, sample))
        failed = 0 if sample.get("ok") else failed + 1
        if failed >= 3 and "Timeout" in str(sample.get("error")):
            break  # the page stopped answering (frozen): a key press would block
        n += 1
        key = None
        if now < end_move and n % 3 == 0:
            key = pattern[(n // 3) % len(pattern)]
        elif now >= end_move and n % 2 == 0:
            key = drop
        if key:
            with contextlib.suppress(PlaywrightError):
                page.keyboard.press(key)
            actions.append((time.monotonic() - t0, key))
        page.wait_for_timeout(SAMPLE_EVERY_S * 1000)


def summarize(
    description: dict[str, Any], model: Any, game: dict[str, Any], reader: StateReader | None
) -> dict[str, Any]:
    if reader is not None:
        timing = reader.timing()
    else:  # from a dump: the samples carry their own times
        ms = [s["ms"] for _, s in game.get("samples", []) if s.get("ms") is not None]
        timing = {
            "sample_ms": {"median": round(statistics.median(ms), 1), "max": max(ms)} if ms else None
        }
    board = model.board
    piece = model.piece
    out: dict[str, Any] = {
        "scan_ok": description.get("ok"),
        "scan_error": description.get("error"),
        "candidates": len(description.get("boards") or []),
        "scalars": len(description.get("scalars") or []),
        "scan_ms": description.get("scan_ms"),
        "sample_ms": timing["sample_ms"],
        "board": None,
        "piece": None,
        "score": model.score.path if model.score else None,
        "lines": model.lines.path if model.lines else None,
        "game_over": model.game_over.path if model.game_over else None,
    }
    if board is not None:
        out["board"] = {
            "path": board.path,
            "array": list(board.array_shape),
            "shape": list(board.shape),
            "columns_first": board.columns_first,
            "flipped": board.flipped,
            "hidden_rows": board.hidden_rows,
            "walls": list(board.walls),
            "matches_label": tuple(board.shape) == tuple(game["grid"]),
            "includes_piece": board.includes_piece,
            "confidence": board.confidence,
        }
    if piece is not None:
        out["piece"] = {
            "x": piece.x_path,
            "y": piece.y_path,
            "left_key_ok": piece.left_key == game["controls"].get("left")
            if piece.left_key
            else None,
            "confidence": piece.confidence,
        }
    return out


def line(r: dict[str, Any]) -> str:
    if "error" in r:
        return f"{r['id']:34} {r['renderer']:6} ERROR {r['error']}"
    b = r.get("board")
    if b:
        orient = ("cols-first " if b["columns_first"] else "") + (
            "flipped " if b["flipped"] else ""
        )
        extra = f" hidden={b['hidden_rows']}" if b["hidden_rows"] else ""
        extra += f" walls={b['walls']}" if any(b["walls"]) else ""
        board = (
            f"{'OK ' if b['matches_label'] else 'BAD'} {b['shape'][0]}x{b['shape'][1]}"
            f" {orient}{extra} {b['path']}"
        )
    else:
        board = f"--  (candidates {r.get('candidates')}{', ' + str(r.get('scan_error'))[:60] if r.get('scan_error') else ''})"
    p = r.get("piece") or {}
    piece = f"x={p.get('x') or '-'} y={p.get('y') or '-'} left={p.get('left_key_ok')}"
    s = r.get("sample_ms") or {}
    return (
        f"{r['id']:34} {r['renderer']:6} board {board} | {piece} | score={r.get('score') or '-'}"
        f" | over={r.get('game_over') or '-'} | scan {r.get('scan_ms')} ms,"
        f" sample {s.get('median')}/{s.get('max')} ms"
    )


def totals(results: list[dict[str, Any]]) -> list[str]:
    out = []
    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in results:
        by[r["renderer"]].append(r)
    by["all"] = results
    for renderer, rs in sorted(by.items(), key=lambda kv: kv[0] == "all"):
        found = sum(1 for r in rs if r.get("board"))
        right = sum(1 for r in rs if (r.get("board") or {}).get("matches_label"))
        out.append(f"{renderer:7} board found {found}/{len(rs)} (size as labelled {right})")
    n = len(results)
    x = sum(1 for r in results if (r.get("piece") or {}).get("x"))
    left_ok = sum(1 for r in results if (r.get("piece") or {}).get("left_key_ok"))
    y = sum(1 for r in results if (r.get("piece") or {}).get("y"))
    out.append(f"piece x {x}/{n} (left key right {left_ok}), y {y}/{n}")
    out.append(f"score {sum(1 for r in results if r.get('score'))}/{n}")
    out.append(f"lines {sum(1 for r in results if r.get('lines'))}/{n}")
    out.append(f"game over {sum(1 for r in results if r.get('game_over'))}/{n}")
    out.append(f"errors {sum(1 for r in results if 'error' in r)}/{n}")
    scans = [r["scan_ms"] for r in results if r.get("scan_ms")]
    medians = [r["sample_ms"]["median"] for r in results if r.get("sample_ms")]
    maxima = [r["sample_ms"]["max"] for r in results if r.get("sample_ms")]
    if scans:
        out.append(f"scan ms median {statistics.median(scans):.0f} max {max(scans):.0f}")
    if medians:
        out.append(
            f"sample ms median of medians {statistics.median(medians):.1f},"
            f" max of medians {max(medians):.1f}, max {max(maxima):.1f}"
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="*", help="in-repo game folders (default: all)")
    parser.add_argument("--corpus", type=Path, help="checkouts of the real corpus")
    parser.add_argument("--split", default="tune", choices=("tune", "heldout", "all"))
    parser.add_argument("--only", nargs="*", default=[], help="corpus game ids")
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--dump", type=Path, help="write each game's samples to this folder")
    parser.add_argument(
        "--reinterpret", type=Path, help="no browser: interpret the samples of a --dump folder"
    )
    args = parser.parse_args(argv)
    if args.reinterpret:
        return reinterpret(args.reinterpret)
    executable = chromium_executable()
    if executable is None:
        print("no Chromium", file=sys.stderr)
        return 1
    if args.corpus:
        games, absent = corpus_games(args.corpus, args.split, args.only)
        print(f"{len(games)} games checked out ({absent} of split {args.split} absent)")
    else:
        games = repo_games(args.folders)
    results = []
    for game in games:
        result = run_game(game, executable, args.dump)
        results.append(result)
        print(line(result), flush=True)
    print()
    for text in totals(results):
        print(text)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


def reinterpret(folder: Path) -> int:
    """The figures again from recorded samples (state_model changed, the pages did not)."""
    labels = {g["id"]: g for g in repo_games([])}
    with contextlib.suppress(OSError, KeyError):
        for entry in yaml.safe_load(MANIFEST.read_text())["games"]:
            labels.setdefault(
                entry["id"],
                {"renderer": entry["renderer"], "controls": entry["controls"]},
            )
    results = []
    for path in sorted(folder.glob("*.json")):
        recorded = json.loads(path.read_text())
        label = labels.get(path.stem, {"renderer": "?", "controls": {}})
        game = {
            "id": path.stem,
            "grid": tuple(recorded["grid"]),
            "controls": label["controls"],
            "samples": recorded["samples"],
        }
        model = interpret(
            recorded["description"], recorded["samples"], recorded["actions"], game["grid"]
        )
        result = {"id": path.stem, "renderer": label["renderer"]}
        result.update(summarize(recorded["description"], model, game, None))
        results.append(result)
        print(line(result))
    print()
    for text in totals(results):
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

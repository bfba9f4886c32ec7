"""The page-code reader in Chromium: where a game listens for keys, which keys its handlers
test, what a person would click to start it, and that a hostile page neither hangs the
reader nor gets its code run."""

from __future__ import annotations

import functools
import http.server
import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from bench_pipeline.bot.browser import CHROMIUM_ARGS, chromium_executable
from bench_pipeline.bot.evaluate import PROBE
from bench_pipeline.bot.readers.page_code import (
    ListenerReport,
    StartCandidate,
    locate,
    read_listeners,
    start_candidates,
)
from bench_pipeline.bot.serve import serve_directory

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.usefixtures("chromium")]

GAMES = Path(__file__).parent / "games"
BOARD = '<canvas id="board" width="200" height="400" style="background:#111"></canvas>'


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    executable = chromium_executable()
    if executable is None:
        pytest.skip("no Chromium on this machine")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield b
        b.close()


Opener = Callable[..., tuple[Page, Any]]


@pytest.fixture()
def open_page(browser: Browser, tmp_path: Path) -> Iterator[Opener]:
    """Serve `files` (name -> text) on 127.0.0.1 and open index.html with the bot's probe;
    returns the page and a CDP session on it."""
    handler = functools.partial(_Quiet, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    contexts = []

    def opener(files: dict[str, str], wait_ms: int = 300) -> tuple[Page, Any]:
        for name, text in files.items():
            (tmp_path / name).write_text(text, encoding="utf-8")
        context = browser.new_context(viewport={"width": 1000, "height": 800})
        contexts.append(context)
        context.add_init_script(PROBE)
        page = context.new_page()
        page.goto(f"http://127.0.0.1:{server.server_address[1]}/index.html")
        page.wait_for_timeout(wait_ms)
        return page, context.new_cdp_session(page)

    yield opener
    for context in contexts:
        context.close()
    server.shutdown()
    server.server_close()


def roles(report: ListenerReport) -> dict[str, str | None]:
    return {k.key: k.role for k in report.keys}


def page(body: str, script: str = "", head: str = "") -> str:
    return f"<!doctype html><html><head><meta charset=utf-8>{head}</head><body>{body}<script>{script}</script></body></html>"


# ---- where keys are listened for --------------------------------------------------------------
def test_keys_on_window_on_a_hidden_input_and_on_the_canvas(open_page: Opener) -> None:
    html = page(
        BOARD.replace("<canvas", '<canvas tabindex="0"')
        + '<input id="keys" style="opacity:0;width:2px">',
        """
        window.addEventListener('keydown', (e) => { if (e.key === 'ArrowLeft') moveLeft(); });
        document.getElementById('keys').addEventListener('keydown', (e) => { if (e.code === 'KeyD') moveRight(); });
        document.getElementById('board').addEventListener('keyup', function (e) { if (e.which === 32) hardDrop(); });
        """,
    )
    pg, cdp = open_page({"index.html": html})
    report = read_listeners(pg, cdp)
    targets = {(t.kind, t.selector): t.events for t in report.key_targets}
    assert targets == {
        ("window", "window"): ["keydown"],
        ("input", "#keys"): ["keydown"],
        ("canvas", "#board"): ["keyup"],
    }
    assert roles(report) == {"ArrowLeft": "left", "d": "right", " ": "hard_drop"}
    assert not report.failures
    # The bot's probe listens too (scroll, keys): none of that is reported as the game's.
    assert all("probe" not in h.where for h in report.handlers)
    data = json.loads(json.dumps(report.to_json()))
    assert {k["key"] for k in data["keys"]} == {"ArrowLeft", "d", " "} and "_state" not in data


def test_switch_key_codes_key_maps_and_called_functions(open_page: Opener) -> None:
    html = page(
        BOARD,
        """
        const KEYMAP = { ArrowUp: () => piece.rotate(), 'x': () => piece.rotate(-1) };
        function moveLeft() { piece.x -= 1; }
        function onKey(ev) {
          switch (ev.keyCode) { case 37: moveLeft(); break; case 39: piece.x++; break;
                                case 40: softDrop(); break; case 32: hardDrop(); break; }
          const act = KEYMAP[ev.key]; if (act) act();
          if (ev.key.toLowerCase() === 'p') togglePause();
        }
        document.addEventListener('keydown', onKey);
        """,
    )
    pg, cdp = open_page({"index.html": html})
    report = read_listeners(pg, cdp)
    assert roles(report) == {
        "ArrowLeft": "left", "ArrowRight": "right", "ArrowDown": "down", " ": "hard_drop",
        "ArrowUp": "rotate", "x": "rotate", "p": "pause",
    }  # fmt: skip
    assert report.key("ArrowLeft").written == ["37"]  # type: ignore[union-attr]
    assert report.keys_for("rotate") == ["ArrowUp", "x"]


def test_a_held_key_map_polled_in_the_game_loop(open_page: Opener) -> None:
    html = page(
        BOARD,
        """
        const keys = {};
        addEventListener('keydown', (e) => { keys[e.code] = true; });
        addEventListener('keyup', (e) => { keys[e.code] = false; });
        function loop() {
          if (keys.ArrowLeft) piece.x -= 1;
          if (keys['ArrowRight']) piece.x += 1;
          if (keys.KeyW) rotate();
          if (keys.Space) hardDrop();
          requestAnimationFrame(loop);
        }
        """,
    )
    pg, cdp = open_page({"index.html": html})
    report = read_listeners(pg, cdp)
    assert roles(report) == {
        "ArrowLeft": "left",
        "ArrowRight": "right",
        "w": "rotate",
        " ": "hard_drop",
    }
    assert all("held" in k.via for k in report.keys)


def test_an_es_module_listener(open_page: Opener) -> None:
    files = {
        "index.html": page(BOARD, head='<script type="module" src="main.js"></script>'),
        "main.js": "import { controls } from './controls.js';\n"
        "document.addEventListener('keydown', (e) => { const f = controls[e.key]; if (f) f(); });\n",
        "controls.js": "export const controls = { a: () => move(-1), d: () => move(1), s: () => drop() };\n",
    }
    pg, cdp = open_page(files)
    report = read_listeners(pg, cdp)
    assert roles(report) == {"a": "left", "d": "right", "s": "down"}
    assert report.handlers[0].where.startswith("main.js:2:")


def test_a_game_in_an_iframe(open_page: Opener) -> None:
    files = {
        "index.html": page(
            '<h1>Arcade</h1><iframe id="game" src="game.html" width="400" height="500"></iframe>'
        ),
        "game.html": page(
            BOARD + '<button id="go" style="position:absolute;left:60px;top:180px">▶</button>',
            """
            document.getElementById('go').addEventListener('click', () => startGame());
            document.addEventListener('keydown', (e) => { if (e.key === 'j') left(); if (e.key === 'l') right(); });
            """,
        ),
    }
    pg, cdp = open_page(files, wait_ms=600)
    report = read_listeners(pg, cdp)
    assert roles(report) == {"j": "left", "l": "right"}
    assert report.key_targets[0].frame == ["#game"]
    first = start_candidates(pg, cdp, report)[0]
    assert (first.action, first.selector, first.frame) == ("click", "#go", ["#game"])
    locate(pg, first).click(timeout=2000)  # the bot can click it where it is


# ---- start candidates ------------------------------------------------------------------------
def clicks(cands: list[StartCandidate]) -> list[str]:
    return [c.selector for c in cands if c.action == "click"]


def test_an_image_only_start_button_with_a_click_listener(open_page: Opener) -> None:
    pixel = (
        "data:image/svg+xml,"
        + "%3Csvg xmlns='http://www.w3.org/2000/svg' width='80' height='40'/%3E"
    )
    html = page(
        f'<div style="position:relative">{BOARD}<img id="b1" src="{pixel}" style="position:absolute;left:60px;top:180px;width:80px;height:40px"></div>'
        '<p><a href="https://example.org/">more games</a></p><button id="mute">♪</button>',
        "document.getElementById('b1').addEventListener('click', () => go());",
    )
    pg, cdp = open_page({"index.html": html})
    cands = start_candidates(pg, cdp, read_listeners(pg, cdp))
    assert clicks(cands)[0] == "#b1"


def test_a_div_overlay_with_a_click_listener(open_page: Opener) -> None:
    html = page(
        f'<div style="position:relative">{BOARD}<div id="cover" style="position:absolute;inset:0;background:#000a;color:#fff">★ ★ ★</div></div>'
        '<div class="side"><button id="sound">🔊</button><button id="help">?</button></div>',
        """
        document.getElementById('cover').addEventListener('pointerdown', function () { this.remove(); run(); });
        document.getElementById('sound').addEventListener('click', () => toggleSound());
        """,
    )
    pg, cdp = open_page({"index.html": html})
    cands = start_candidates(pg, cdp, read_listeners(pg, cdp))
    assert clicks(cands)[0] == "#cover"
    assert "covers the board (an overlay)" in cands[0].reasons


def test_a_name_form_in_front_of_the_board(open_page: Opener) -> None:
    html = page(
        '<form id="f" action="game.html"><label>名字 <input id="name"></label><input type="submit" value="OK"></form>'
    )
    pg, cdp = open_page({"index.html": html})
    cands = start_candidates(pg, cdp, read_listeners(pg, cdp))
    fill = next(c for c in cands if c.action == "fill")
    assert (fill.selector, fill.submit) == ("#name", "#f > input")
    assert cands[0] is fill


@pytest.mark.parametrize("label", ["Zagraj", "Mulai main"])
def test_a_start_button_in_any_language(open_page: Opener, label: str) -> None:
    # No word list: the button has a click listener and sits over the board; the other
    # controls are away from it or do something else.
    html = page(
        f'<nav><a href="index.html">Strona główna</a> <button id="lang">PL/ID</button></nav>'
        f'<div style="position:relative;margin:40px">{BOARD}'
        f'<button id="b" style="position:absolute;left:50px;top:180px">{label}</button></div>'
        '<footer style="margin-top:600px"><button id="cookies">OK</button></footer>',
        """
        document.getElementById('b').addEventListener('click', () => { mulai(); });
        document.getElementById('lang').addEventListener('click', () => setLanguage());
        document.getElementById('cookies').addEventListener('click', () => hideCookies());
        """,
    )
    pg, cdp = open_page({"index.html": html})
    cands = start_candidates(pg, cdp, read_listeners(pg, cdp))
    assert clicks(cands)[0] == "#b", [(c.selector, c.score, c.reasons) for c in cands]


def test_start_and_pause_keys_are_candidates(open_page: Opener) -> None:
    html = page(
        BOARD,
        """
        let started = false, paused = false;
        document.addEventListener('keydown', (e) => {
          if (e.code === 'Enter' && !started) { started = true; return; }
          if (e.key === 'p') { paused = !paused; return; }
          if (e.key === 'ArrowLeft') left();
        });
        """,
    )
    pg, cdp = open_page({"index.html": html})
    cands = start_candidates(pg, cdp, read_listeners(pg, cdp))
    keys = [(c.key, c.score > 3) for c in cands if c.action == "key"]
    assert keys == [("Enter", True), ("p", False)]


# ---- a hostile page --------------------------------------------------------------------------
HOSTILE = """
// Replaced built-ins and throwing getters: reading the page must not call any of them.
window.__ran = [];
const trap = (what) => function () { window.__ran.push(what); throw new Error(what); };
Function.prototype.toString = trap('toString');
Object.defineProperty(Document.prototype, 'defaultView', { get: trap('defaultView') });
Object.defineProperty(Node.prototype, 'textContent', { get: trap('textContent') });
Element.prototype.getBoundingClientRect = trap('getBoundingClientRect');
window.getComputedStyle = trap('getComputedStyle');
Object.defineProperty(KeyboardEvent.prototype, 'key', { get: trap('key') });
JSON.stringify = trap('stringify');
// One handler added thousands of times (distinct closures), thousands of listening cells.
function onKey(e) { if (e.keyCode === 37) moveLeft(); }
for (let i = 0; i < 3000; i++) document.addEventListener('keydown', (e) => onKey(e));
const grid = document.getElementById('grid');
for (let i = 0; i < 2000; i++) { const d = document.createElement('i'); d.onclick = () => pick(i); grid.appendChild(d); }
// A debugger statement that would stop the page while a debugger is attached.
setInterval(() => { debugger; window.__ticks = (window.__ticks || 0) + 1; }, 20);
"""


def test_a_hostile_page_is_read_without_running_its_code(open_page: Opener) -> None:
    pg, cdp = open_page({"index.html": page(BOARD + '<div id="grid"></div>', HOSTILE)})
    report = read_listeners(pg, cdp, budget_s=8)
    cands = start_candidates(pg, cdp, report, budget_s=8)
    assert roles(report) == {"ArrowLeft": "left"}
    assert len(report.handlers) <= 40 and len(cands) <= 12
    assert len(json.dumps(report.to_json())) < 200_000
    ticks = pg.evaluate("window.__ticks")
    pg.wait_for_timeout(200)
    # Nothing of the game's ran, and its timers still run (the debugger let go of it).
    assert pg.evaluate("window.__ran.length") == 0
    assert pg.evaluate("window.__ticks") > ticks


def test_a_page_that_hangs_does_not_hang_the_reader(open_page: Opener) -> None:
    html = page(
        BOARD,
        "document.addEventListener('keydown', (e) => { if (e.key === 'a') left(); }); setTimeout(() => { for (;;) {} }, 150);",
    )
    pg, cdp = open_page({"index.html": html}, wait_ms=500)
    report = read_listeners(pg, cdp, budget_s=2)
    assert any("timed out" in f or "out of time" in f for f in report.failures), report.failures
    assert start_candidates(pg, cdp, report, budget_s=1) == []


# ---- the project's games ---------------------------------------------------------------------
# Games whose keys cannot be read at load: a name form on another page, a load that throws.
NOT_AT_LOAD = {"canvas-bricks-name-form-zh", "defect-flaky-load-es"}


def test_every_labelled_control_key_of_the_projects_games_is_found(browser: Browser) -> None:
    misses: dict[str, list[str]] = {}
    for expected in sorted(GAMES.glob("*/expected.json")):
        game = expected.parent.name
        controls = {r: k for r, k in json.loads(expected.read_text())["controls"].items() if k}
        if not controls:
            continue
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        try:
            context.add_init_script(PROBE)
            pg = context.new_page()
            with serve_directory(expected.parent) as url:
                pg.goto(url, wait_until="load")
                pg.wait_for_timeout(400)
                cdp = context.new_cdp_session(pg)
                report = read_listeners(pg, cdp)
                found = set(report.key_names())
                if not set(controls.values()) <= found:
                    # Listeners added by the start (a menu page leading to the game's page):
                    # try the first start candidate, then read again.
                    cands = start_candidates(pg, cdp, report)
                    if cands:
                        _try(pg, cands[0])
                        found |= set(read_listeners(pg, context.new_cdp_session(pg)).key_names())
        finally:
            context.close()
        missed = [f"{role}={key!r}" for role, key in controls.items() if key not in found]
        if missed:
            misses[game] = missed
    assert set(misses) <= NOT_AT_LOAD, misses


def _try(pg: Page, cand: StartCandidate) -> None:
    try:
        if cand.action == "key":
            pg.keyboard.press(cand.key)
        elif cand.action == "click":
            locate(pg, cand).click(timeout=2000)
        pg.wait_for_timeout(800)
    except Exception:
        pass

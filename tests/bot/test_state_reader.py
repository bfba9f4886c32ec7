"""The state reader on real Chromium: pages written here (a global board, a class instance
in a top-level const, an ES module whose state only its key listener's closure reaches, a
flat typed array, a column-major board, hidden rows, hostile pages) and some of the
project's own games. One browser at a time, closed after the module."""

from __future__ import annotations

import functools
import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from bench_pipeline.bot.browser import CHROMIUM_ARGS, chromium_executable
from bench_pipeline.bot.readers.state import StateReader
from bench_pipeline.bot.readers.state_model import interpret

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.usefixtures("chromium")]
GAMES = Path(__file__).parent / "games"


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """A folder served on a loopback port: pages are written there by the tests; the
    project's games are reached under /games/."""
    root = tmp_path_factory.mktemp("state-pages")
    (root / "games").symlink_to(GAMES)
    handler = functools.partial(_Quiet, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    executable = chromium_executable()
    if executable is None:
        pytest.skip("no Chromium on this machine")
    with sync_playwright() as p:
        opened = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield opened
        opened.close()


@pytest.fixture()
def open_page(browser: Browser, site: tuple[Path, str]) -> Iterator[Any]:
    pages: list[Page] = []

    def opener(html: str | None = None, *, path: str | None = None) -> tuple[Page, StateReader]:
        root, base = site
        if html is not None:
            name = f"page{len(list(root.glob('page*.html')))}.html"
            (root / name).write_text(html, encoding="utf-8")
            path = name
        page = browser.new_page()
        pages.append(page)
        page.on("dialog", lambda d: d.dismiss())
        page.goto(f"{base}/{path}")
        return page, StateReader(page, page.context.new_cdp_session(page))

    yield opener
    for page in pages:
        page.close()


def _board(description: dict[str, Any], path: str) -> dict[str, Any]:
    boards = {b["path"]: b for b in description["boards"]}
    assert path in boards, sorted(boards)
    return boards[path]


def _scalar(description: dict[str, Any], path: str) -> str:
    scalars = {s["path"]: s["id"] for s in description["scalars"]}
    assert path in scalars, sorted(scalars)
    return scalars[path]


# A tiny game driven by the test: `tick()` moves the piece down (gravity), keys move it.
# {setup} declares the state; {cell} writes a board cell; the piece is a vertical I.
GAME = """<!doctype html><html><body><script {module}>
{setup}
function paint(v) {{ for (let i = 0; i < 4; i++) {{ {cell} }} }}
function tick() {{ paint(0); S.py += 1; paint(5); }}
paint(5);
document.addEventListener("keydown", (e) => {{
  paint(0);
  if (e.key === "ArrowLeft") S.px -= 1;
  if (e.key === "ArrowRight") S.px += 1;
  paint(5);
}});
{expose}
</script></body></html>"""


def _play(page: Page, reader: StateReader, ticks: int = 6) -> tuple[list, list]:
    """Gravity ticks and left/right presses, a sample after each."""
    samples = [(0.0, reader.sample())]
    actions = []
    t = 0.0
    for i in range(ticks):
        t += 1.0
        if i % 2:
            key = "ArrowLeft" if i % 4 == 1 else "ArrowRight"
            page.keyboard.press(key)
            actions.append((t - 0.5, key))
        else:
            page.evaluate("window.tick()")
        samples.append((t, reader.sample()))
    return samples, actions


def test_a_global_2d_board_and_the_piece_position(open_page: Any) -> None:
    html = GAME.format(
        module="",
        setup="var board = []; for (let r = 0; r < 20; r++) board.push(new Array(10).fill(0));\n"
        "var S = {px: 4, py: 0, score: 0};",
        cell="board[S.py + i][S.px] = v;",
        expose="",
    )
    page, reader = open_page(html)
    description = reader.scan((20, 10))
    assert description["ok"], description
    board = _board(description, "window.board")
    assert (board["rows"], board["cols"], board["empty"]["value"]) == (20, 10, "0")
    sample = reader.sample()
    assert sample["ok"] and sample["boards"][board["id"]][:5] == ["....5....."] * 4 + ["." * 10]
    assert sample["scalars"][_scalar(description, "window.S.px")] == 4
    samples, actions = _play(page, reader)
    model = interpret(description, samples, actions, renderer_grid=(20, 10))
    assert model.board is not None and model.board.path == "window.board"
    assert model.board.shape == (20, 10) and not model.board.columns_first
    assert model.piece is not None and model.piece.x_path == "window.S.px"
    assert model.piece.left_key == "ArrowLeft" and model.piece.y_path == "window.S.py"
    assert reader.timing()["sample_ms"]["n"] == len(samples) + 1
    json.dumps(reader.describe())  # JSON-able


def test_a_class_instance_in_a_top_level_const(open_page: Any) -> None:
    html = GAME.format(
        module="",
        setup="class Tetris { constructor() { this.grid = Array.from({length: 20}, () =>"
        " new Array(10).fill(null)); this.active = {px: 3, py: 0}; this.lost = false; } }\n"
        "const game = new Tetris(); const S = game.active;",
        cell="game.grid[S.py + i][S.px] = v ? 'I' : null;",
        expose="window.tick = tick;",
    )
    _page, reader = open_page(html)
    description = reader.scan((20, 10))
    board = _board(description, "lexical:game.grid")
    assert board["empty"]["value"] == "null"
    assert _scalar(description, "lexical:game.active.px")
    assert _scalar(description, "lexical:game.lost")
    rows = reader.sample()["boards"][board["id"]]
    assert rows[0] == "...A......"  # a string cell gets a letter; its legend says which
    assert board["legend"]["A"] == "'I'"


def test_an_es_module_reached_through_its_key_listener(open_page: Any) -> None:
    # Nothing global: the board (replaced by a new array at every change, as immutable
    # updates do) and the position live in the module's scope.
    html = GAME.format(
        module='type="module"',
        setup="let board = Array.from({length: 20}, () => new Array(10).fill(0));\n"
        "let S = {px: 4, py: 0}; let moves = 0;",
        cell="board = board.map((row) => row.slice()); board[S.py + i][S.px] = v; moves += 1;",
        expose="window.tick = tick;",
    )
    page, reader = open_page(html)
    description = reader.scan((20, 10))
    assert description["ok"], description
    board = _board(description, "scope:keydown/board")
    moves = _scalar(description, "scope:keydown/moves")
    first = reader.sample()
    page.evaluate("window.tick()")
    second = reader.sample()
    assert first["boards"][board["id"]][0] == "....5....."
    assert second["boards"][board["id"]][0] == "." * 10  # the new array was followed
    assert second["boards"][board["id"]][4] == "....5....."
    assert second["scalars"][moves] > first["scalars"][moves]  # a closure's number, live
    samples, actions = _play(page, reader)
    model = interpret(description, samples, actions, renderer_grid=(20, 10))
    assert model.board is not None and model.board.path == "scope:keydown/board"
    assert model.piece is not None and model.piece.x_path == "scope:keydown/S.px"


def test_a_board_known_by_two_names_follows_the_one_that_changes(open_page: Any) -> None:
    # reducer style: the first state's board is the shared `empty`; every change puts a
    # new array in state.board
    html = """<script>
const empty = Array.from({length: 20}, () => new Array(10).fill(0));
let state = {board: empty};
function drop(col) {
  const board = state.board.map((row) => row.slice());
  board[19][col] = 5;
  state = {board};
}
</script>"""
    page, reader = open_page(html)
    description = reader.scan((20, 10))
    board = _board(description, "lexical:empty")
    assert board["paths"] == ["lexical:empty", "lexical:state.board"]
    page.evaluate("drop(3)")
    rows = reader.sample()["boards"][board["id"]]
    assert rows[19] == "...5......" and board["path"] == "lexical:state.board"
    page.evaluate("drop(4)")
    assert reader.sample()["boards"][board["id"]][19] == "...55....."


def test_a_flat_typed_array_board(open_page: Any) -> None:
    html = GAME.format(
        module="",
        setup="const field = {cells: new Uint8Array(200)}; var S = {px: 4, py: 0};",
        cell="field.cells[(S.py + i) * 10 + S.px] = v;",
        expose="",
    )
    page, reader = open_page(html)
    description = reader.scan((20, 10))
    board = _board(description, "lexical:field.cells")
    assert (board["layout"], board["row_kind"]) == ("flat", "typed")
    samples, actions = _play(page, reader)
    model = interpret(description, samples, actions, renderer_grid=(20, 10))
    assert model.board is not None and model.board.path == "lexical:field.cells"
    assert model.board.shape == (20, 10) and model.board.frames[-1][1][0] == "." * 10


def test_object_cells_are_read_by_their_flag(open_page: Any) -> None:
    # a fresh object per cell, whose colour stays when it empties: only `filled` counts
    html = GAME.format(
        module="",
        setup="var cells = []; for (let r = 0; r < 20; r++) { const row = [];"
        " for (let c = 0; c < 10; c++) row.push({filled: false, colour: (r * 7 + c) % 5});"
        " cells.push(row); }\nvar S = {px: 4, py: 0};",
        cell="cells[S.py + i][S.px].filled = !!v;",
        expose="",
    )
    page, reader = open_page(html)
    description = reader.scan((20, 10))
    board = _board(description, "window.cells")
    assert board["cell_mode"] == "property filled" and board["empty"]["value"] == "false"
    page.evaluate("window.tick()")
    rows = reader.sample()["boards"][board["id"]]
    assert rows[:6] == ["." * 10] + ["....#....."] * 4 + ["." * 10]


def test_a_column_major_board_with_hidden_rows(open_page: Any) -> None:
    # well[x][y], 24 rows of which the top 4 are hidden; the piece spawns in them
    html = GAME.format(
        module="",
        setup="var well = []; for (let x = 0; x < 10; x++) well.push(new Array(24).fill(0));\n"
        "var S = {px: 4, py: 0};",
        cell="well[S.px][S.py + i] = v;",
        expose="",
    )
    page, reader = open_page(html)
    description = reader.scan((20, 10))
    board = _board(description, "window.well")
    assert (board["rows"], board["cols"]) == (10, 24)  # as stored
    samples, actions = _play(page, reader, ticks=10)
    model = interpret(description, samples, actions, renderer_grid=(20, 10))
    found = model.board
    assert found is not None and found.path == "window.well"
    assert found.columns_first and not found.flipped and found.hidden_rows == 4
    assert found.shape == (20, 10) and found.matches_renderer
    # the piece fell 5 rows from row 0 of the array (rows 5-8: visible rows 1-4), and
    # ended in column 3 (left, right, left, right, left)
    assert [r[3] for r in found.frames[-1][1][:6]] == [".", "#", "#", "#", "#", "."]


HOSTILE = """<!doctype html><html><head><title>side:0</title></head><body><script>
let side = 0;
const hit = () => { side += 1; document.title = "side:" + side; };
var board = []; for (let r = 0; r < 20; r++) board.push(new Array(10).fill(0));
var trapped = []; for (let r = 0; r < 20; r++) trapped.push(new Array(10).fill(0));
// a Proxy row: reading it would run the traps
trapped[3] = new Proxy(new Array(10).fill(0), {
  get() { hit(); for (;;) {} }, getOwnPropertyDescriptor() { hit(); for (;;) {} },
  ownKeys() { hit(); for (;;) {} } });
var holder = { get x() { hit(); for (;;) {} }, get y() { hit(); throw new Error("no"); },
  z: 3, p: new Proxy({x: 1}, { get() { hit(); for (;;) {} }, ownKeys() { hit(); for (;;) {} } }) };
var piece = { get x() { hit(); return 4; }, y: 0 };
// replaced built-ins, as a game may do
Array.prototype.map = function () { hit(); for (;;) {} };
Object.keys = function () { hit(); for (;;) {} };
JSON.stringify = function () { hit(); for (;;) {} };
JSON.parse = function () { hit(); for (;;) {} };
Object.prototype.toJSON = function () { hit(); for (;;) {} };
Object.prototype.toString = function () { hit(); for (;;) {} };
Object.prototype.valueOf = function () { hit(); for (;;) {} };
Function.prototype.toString = function () { hit(); for (;;) {} };
Reflect.getOwnPropertyDescriptor = function () { hit(); for (;;) {} };
Object.defineProperty(Array.prototype, "0", { set() { hit(); for (;;) {} }, configurable: true });
Object.defineProperty(Object.prototype, "value", { get() { hit(); for (;;) {} }, configurable: true });
</script></body></html>"""


@pytest.mark.timeout(180)
def test_a_hostile_page_runs_none_of_its_code_and_gives_only_data(open_page: Any) -> None:
    page, reader = open_page(HOSTILE)
    description = reader.scan((20, 10))
    sample = reader.sample()
    assert page.title() == "side:0"  # no getter, trap or replaced built-in ran
    assert description["ok"], description  # Object.getOwnPropertyDescriptor was still native
    paths = {b["path"] for b in description["boards"]}
    assert "window.board" in paths and "window.trapped" not in paths
    scalars = {s["path"] for s in description["scalars"]}
    assert {"window.holder.z", "window.piece.y"} <= scalars
    assert not scalars & {"window.holder.x", "window.holder.y", "window.piece.x"}
    assert not any(p.startswith("window.holder.p") for p in scalars)
    assert sample["ok"] and sample["scalars"][_scalar(description, "window.holder.z")] == 3


def test_after_a_navigation_samples_say_scan_again(open_page: Any) -> None:
    html = "<script>var board = [];for (let r = 0; r < 20; r++) board.push(new Array(10).fill(0));</script>"
    page, reader = open_page(html)
    assert reader.scan((20, 10))["ok"] and reader.sample()["ok"]
    page.reload()
    sample = reader.sample()
    assert sample["ok"] is False and "scan again" in sample["error"]
    assert reader.scan((20, 10))["ok"] and reader.sample()["ok"]


BUILTINS_GONE = """<!doctype html><html><head><title>side:0</title></head><body><script>
var board = []; for (let r = 0; r < 20; r++) board.push(new Array(10).fill(0));
const gone = function () { document.title = "side:1"; for (;;) {} };
Object.getOwnPropertyDescriptor = gone;
Reflect.getOwnPropertyDescriptor = gone;
</script></body></html>"""


@pytest.mark.timeout(180)
def test_a_page_without_the_native_built_ins_gives_no_state(open_page: Any) -> None:
    page, reader = open_page(BUILTINS_GONE)
    description = reader.scan((20, 10))
    assert not description["ok"] and "getOwnPropertyDescriptor" in description["error"]
    assert description["boards"] == [] and description["scalars"] == []
    assert reader.sample()["ok"] is False
    assert page.title() == "side:0"


@pytest.mark.timeout(180)
def test_a_page_that_freezes_gives_no_state_not_a_hang(open_page: Any) -> None:
    html = GAME.format(
        module="",
        setup="var board = []; for (let r = 0; r < 20; r++) board.push(new Array(10).fill(0));"
        "\nvar S = {px: 4, py: 0};",
        cell="board[S.py + i][S.px] = v;",
        expose="",
    )
    page, reader = open_page(html)
    assert reader.scan((20, 10))["ok"]
    page.evaluate("setTimeout(() => { for (;;) {} }, 10)")
    page.wait_for_timeout(100)
    first = reader.sample()
    assert first["ok"] is False and "Timeout" in first["error"]
    assert reader.sample()["ok"] is False  # the next is not waited on for long either
    assert reader.scan((20, 10))["ok"] is False


def _start(page: Page, label: dict[str, Any]) -> None:
    kind, _, what = label["start"].partition(":")
    if kind == "click":
        page.get_by_role("button", name=what).first.click(timeout=5000)
    elif kind == "key":
        page.keyboard.press(what)


@pytest.mark.parametrize(
    "game", ["canvas-basic", "dom-div-grid", "dom-table", "canvas-wide-ja", "svg-board"]
)
def test_the_projects_games_boards_are_found_and_oriented(open_page: Any, game: str) -> None:
    label = json.loads((GAMES / game / "expected.json").read_text())
    grid = label.get("grid") or {"rows": 20, "cols": 10}
    rows, cols = grid["rows"], grid["cols"]
    page, reader = open_page(path=f"games/{game}/")
    page.wait_for_timeout(300)
    _start(page, label)
    page.wait_for_timeout(300)
    description = reader.scan((rows, cols))
    assert description["ok"], description
    controls = label["controls"]
    samples, actions = [], []
    t = 0.0
    for i in range(40):  # left/right for a while, then hard drops until the stack is high
        key = None
        if i < 16 and i % 3 == 2:
            key = controls["left"] if i % 6 == 2 else controls["right"]
        elif i >= 16 and i % 2 == 0:
            key = controls["hard_drop"]
        if key:
            page.keyboard.press(key)
            actions.append((t + 0.01, key))
        page.wait_for_timeout(150)
        t += 0.2
        samples.append((t, reader.sample()))
    model = interpret(description, samples, actions, renderer_grid=(rows, cols))
    board = model.board
    assert board is not None, description["boards"]
    assert board.shape == (rows, cols) and board.matches_renderer
    # oriented top row first: the stack lies at the bottom
    last = [g for _, g in board.frames if any("#" in r for r in g)][-1]
    assert "#" in last[-1]
    assert model.piece is not None and model.piece.left_key == controls["left"]

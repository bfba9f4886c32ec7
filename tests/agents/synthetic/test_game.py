"""The synthetic agent's game generator: layout, determinism, faults (fast: no browser).

The game's rules are checked by driving the generated modules in Node (`harness.mjs`);
whether a browser and the gameplay bot agree is `test_game_bot.py` (slow).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from bench_pipeline.agents.synthetic.game import (
    MECHANIC_FAULTS,
    QUALITY_FAULTS,
    GameSpec,
    render_project,
    write_game,
)
from bench_pipeline.agents.synthetic.game.cosmetics import THEMES, cosmetics_for
from bench_pipeline.agents.synthetic.game.faults import LEVEL_STEPS_MS
from bench_pipeline.agents.synthetic.game.template import TemplateError, render
from tests.agents.synthetic.support import HAVE_TSC, NODE, build, drive, needs_node, needs_tsc, tsc

MODULES = ("board", "constants", "dom", "game", "hud", "input", "main", "pieces", "render")
ALL_QUALITY = frozenset(QUALITY_FAULTS)


def spec(**kwargs: object) -> GameSpec:
    return GameSpec(**kwargs)  # type: ignore[arg-type]


# ---- spec and template engine --------------------------------------------------------
def test_spec_refuses_unknown_values() -> None:
    with pytest.raises(ValueError, match="faults"):
        spec(faults=frozenset({"no_fun"}))
    with pytest.raises(ValueError, match="quality_faults"):
        spec(quality_faults=frozenset({"ugly"}))
    with pytest.raises(ValueError, match="renderer"):
        spec(renderer="webgl")
    with pytest.raises(ValueError, match="crash_after_s"):
        spec(crash_after_s=0)
    assert spec(faults={"crash"}).faults == frozenset({"crash"})  # plain sets are accepted


def test_template_conditions_values_and_type_marks() -> None:
    text = "%% if a and not b\nx«: number» = {{ v }}\n%% elif b or c\ny\n%% else\nz\n%% end\n"
    flags = {"a": True, "b": False, "c": False}
    assert render(text, flags, {"v": "1"}, typescript=True) == "x: number = 1\n"
    assert render(text, flags, {"v": "1"}, typescript=False) == "x = 1\n"
    assert render(text, {**flags, "a": False, "c": True}, {"v": "1"}, typescript=False) == "y\n"
    assert render(text, {**flags, "a": False}, {"v": "1"}, typescript=False) == "z\n"
    with pytest.raises(TemplateError, match="unknown flag"):
        render("%% if nope\n%% end\n", {}, {}, typescript=False)
    with pytest.raises(TemplateError, match="unknown value"):
        render("{{ nope }}\n", {}, {}, typescript=False)
    with pytest.raises(TemplateError, match="not closed"):
        render("%% if a\n", {"a": True}, {}, typescript=False)


# ---- determinism and cosmetics -------------------------------------------------------
@pytest.mark.parametrize(
    "game",
    [
        spec(),
        spec(language="typescript", renderer="svg", controls="wasd", start="key", seed=9),
        spec(renderer="dom", faults=frozenset(MECHANIC_FAULTS), quality_faults=ALL_QUALITY),
    ],
    ids=["js-canvas", "ts-svg", "dom-every-fault"],
)
def test_same_spec_gives_byte_identical_files(game: GameSpec, tmp_path: Path) -> None:
    first = write_game(game, tmp_path / "a")
    second = write_game(game, tmp_path / "b")
    assert first == second == sorted(first)
    for relative in first:
        assert (tmp_path / "a" / relative).read_bytes() == (tmp_path / "b" / relative).read_bytes()


def test_different_seeds_look_different() -> None:
    pages = [render_project(spec(seed=seed)) for seed in range(8)]
    assert len({p["style.css"] for p in pages}) >= 4  # colours, fonts
    assert len({p["index.html"] for p in pages}) >= 4  # titles, taglines
    assert len({p["src/constants.js"] for p in pages}) == 8  # sizes, speed, piece order
    # ...while the game itself (everything but the constants) is the same code.
    assert len({p["src/game.js"].splitlines()[0] for p in pages}) <= 2  # header wording
    assert len({p["src/board.js"].split("\n", 1)[1] for p in pages}) == 1


def _distance(a: str, b: str) -> float:
    rgb = [tuple(int(h[i : i + 2], 16) for i in (1, 3, 5)) for h in (a, b)]
    return sum((x - y) ** 2 for x, y in zip(*rgb, strict=True)) ** 0.5


@pytest.mark.parametrize("theme", THEMES, ids=lambda t: t.name)
def test_every_piece_colour_stands_out_from_an_empty_cell(theme: object) -> None:
    # The bot tells filled from empty cells by colour distance: every piece must be far
    # from the board and empty-cell colours (its threshold is half a piece's distance).
    for colour in theme.pieces:  # type: ignore[attr-defined]
        for background in (theme.board, theme.empty):  # type: ignore[attr-defined]
            assert _distance(colour, background) > 120, (colour, background)


def test_gravity_stays_in_the_asked_range() -> None:
    for seed in range(50):
        look = cosmetics_for(seed)
        # Every level, from the first to the fastest, falls a row in 500-800 ms.
        assert 500 <= look.gravity_ms - max(LEVEL_STEPS_MS) <= look.gravity_ms <= 800


# ---- layout --------------------------------------------------------------------------
@pytest.mark.parametrize("renderer", ["canvas", "dom", "svg"])
def test_javascript_layout(renderer: str, tmp_path: Path) -> None:
    written = write_game(spec(renderer=renderer), tmp_path)
    assert written == sorted(
        ["README.md", "index.html", "style.css", *(f"src/{m}.js" for m in MODULES)]
    )
    page = (tmp_path / "index.html").read_text()
    assert '<script type="module" src="src/main.js"></script>' in page
    assert {"canvas": "<canvas", "dom": '<div id="board"', "svg": "<svg"}[renderer] in page
    assert "http" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")  # no CDN


def test_typescript_layout(tmp_path: Path) -> None:
    written = write_game(spec(language="typescript"), tmp_path)
    assert written == sorted(
        [
            "README.md",
            "index.html",
            "package.json",
            "style.css",
            "tsconfig.json",
            *(f"src/{m}.ts" for m in MODULES),
        ]
    )
    assert 'src="dist/main.js"' in (tmp_path / "index.html").read_text()
    package = json.loads((tmp_path / "package.json").read_text())
    assert package["scripts"] == {"build": "tsc -p ."}
    assert not {"dependencies", "devDependencies"} & set(package)
    options = json.loads((tmp_path / "tsconfig.json").read_text())["compilerOptions"]
    assert options["target"] == options["module"] == "ES2020"
    assert (options["outDir"], options["rootDir"], options["strict"]) == ("dist", "src", True)
    assert not options.get("noEmitOnError")
    game = (tmp_path / "src" / "game.ts").read_text()
    assert 'from "./board.js";' in game  # the browser loads the emitted .js files


@pytest.mark.parametrize("language", ["javascript", "typescript"])
def test_no_template_syntax_leaks_into_the_project(language: str) -> None:
    for game in (
        spec(language=language),
        spec(language=language, renderer="svg", start="button", quality_faults=ALL_QUALITY),
        spec(language=language, renderer="dom", controls="wasd", faults=frozenset(MECHANIC_FAULTS)),
    ):
        for path, text in render_project(game).items():
            for mark in ("«", "»", "%%", "{{", "\x00"):
                assert mark not in text, (path, mark)
            if path.endswith(".js"):
                code = re.sub(r"//.*", "", text)
                assert not re.search(
                    r"\b(interface|type \w+ =|as [A-Z]\w*)\b|: (number|string)", code
                )


def test_visible_text_never_announces_a_game_over_before_it_happens() -> None:
    # The help and prompts are always on screen: only the hidden #status says Game Over.
    for start in ("auto", "button", "key"):
        page = render_project(spec(start=start))["index.html"]
        visible = re.sub(r'<p id="status"[^>]*hidden>[^<]*</p>', "", page)
        assert not re.search(r"game\s*over|play\s+again|try\s+again", visible, re.I)


# ---- quality faults in the source ----------------------------------------------------
def _code(files: dict[str, str]) -> str:
    return "\n".join(t for p, t in files.items() if p.startswith("src/"))


def _numeric_literals(files: dict[str, str]) -> int:
    """Numbers other than 0 and 1 outside the named-constant declarations and tables."""
    code = re.sub(r"export const LEVELS = \[[^\]]*\];", "", _code(files))
    code = "\n".join(
        line for line in code.splitlines() if not re.match(r"\s*(export )?const [A-Z_]+ =", line)
    )
    code = re.sub(r"//.*", "", code)
    return sum(1 for n in re.findall(r"(?<![\w.#])\d+(?:\.\d+)?", code) if n not in {"0", "1"})


def test_one_giant_file_versus_modules() -> None:
    split = render_project(spec(seed=3))
    single = render_project(spec(seed=3, quality_faults=frozenset({"one_giant_file"})))
    assert [p for p in split if p.startswith("src/")] == [f"src/{m}.js" for m in MODULES]
    assert [p for p in single if p.startswith("src/")] == ["src/main.js"]
    merged = single["src/main.js"]
    assert "import " not in merged and "export " not in merged
    # The same code, only merged: every module's body is in the single file.
    for module in MODULES:
        body = re.sub(r"^import [^;]*;\n", "", split[f"src/{module}.js"], flags=re.M)
        assert body.replace("export ", "") in merged


def test_magic_numbers_inline_the_named_constants() -> None:
    clean = render_project(spec(renderer="svg"))
    magic = render_project(spec(renderer="svg", quality_faults=frozenset({"magic_numbers"})))
    assert _numeric_literals(clean) <= 1  # only the "/ 2" of centring
    assert _numeric_literals(magic) >= _numeric_literals(clean) + 15
    assert "COLS" in _code(clean) and "COLS" not in _code(magic)
    assert "MAX_FRAME_MS" not in magic["src/game.js"]


def _max_control_depth(code: str) -> int:
    """Deepest if/for/while nesting: a block counts when its line opens a control statement."""
    deepest, stack = 0, []
    for line in code.splitlines():
        stripped = line.strip()
        control = bool(re.match(r"(} )?(else )?(if|for|while)\b|} else", stripped))
        for i, char in enumerate(stripped):
            if char == "}" and stack:
                stack.pop()
            elif char == "{":
                stack.append(control and i == len(stripped) - 1)
                deepest = max(deepest, sum(stack))
    return deepest


def test_deep_nesting_nests_five_levels_or_more() -> None:
    clean = _code(render_project(spec()))
    deep = _code(render_project(spec(quality_faults=frozenset({"deep_nesting"}))))
    assert _max_control_depth(clean) <= 2
    assert _max_control_depth(deep) >= 5


def test_lint_errors_are_planted_and_clean_code_has_none() -> None:
    clean = _code(render_project(spec()))
    dirty = _code(render_project(spec(quality_faults=frozenset({"lint_errors"}))))
    for pattern in (r"\bvar ", r"[^=!]==[^=]", r"\{\s*\n\s*\}"):
        assert not re.search(pattern, clean), pattern
        assert re.search(pattern, dirty), pattern
    assert "function describeState" in dirty and "describeState(" not in dirty.replace(
        "function describeState(", ""
    )


def test_type_errors_do_nothing_to_javascript() -> None:
    clean = render_project(spec(seed=4))
    assert render_project(spec(seed=4, quality_faults=frozenset({"type_errors"}))) == clean


# ---- it compiles, it parses ----------------------------------------------------------
@needs_tsc
@pytest.mark.parametrize("renderer", ["canvas", "dom", "svg"])
def test_clean_typescript_compiles_with_no_error(renderer: str, tmp_path: Path) -> None:
    write_game(spec(language="typescript", renderer=renderer, start="button"), tmp_path)
    done = tsc(tmp_path)
    assert done.returncode == 0, done.stdout
    assert sorted(p.name for p in (tmp_path / "dist").glob("*.js")) == [f"{m}.js" for m in MODULES]


@needs_tsc
def test_type_errors_fail_tsc_but_still_emit(tmp_path: Path) -> None:
    write_game(spec(language="typescript", quality_faults=frozenset({"type_errors"})), tmp_path)
    done = tsc(tmp_path)
    assert done.returncode != 0
    assert done.stdout.count("error TS") >= 3, done.stdout
    assert (tmp_path / "dist" / "main.js").is_file()


@needs_node
@pytest.mark.parametrize(
    "game",
    [
        spec(),
        spec(renderer="dom", controls="wasd", start="key", faults=frozenset(MECHANIC_FAULTS)),
        spec(renderer="svg", start="button", quality_faults=ALL_QUALITY),
        spec(renderer="canvas", quality_faults=frozenset({"deep_nesting", "magic_numbers"})),
    ],
    ids=["clean", "dom-every-fault", "svg-every-quality-fault", "deep-magic"],
)
def test_javascript_files_parse(game: GameSpec, tmp_path: Path) -> None:
    write_game(game, tmp_path)
    assert NODE is not None
    for path in sorted((tmp_path / "src").glob("*.js")):
        done = subprocess.run([NODE, "--check", str(path)], capture_output=True, text=True)
        assert done.returncode == 0, f"{path.name}: {done.stderr}"


# ---- the rules, driven in Node ---------------------------------------------------------
def _assert_healthy(m: dict, *, except_for: str | None = None) -> None:
    """Every mechanic works, except the one a fault broke."""
    if except_for != "no_gravity":
        assert m["gravity"] >= 2, m["gravity"]  # 2 s without input: 2+ rows at 560-800 ms
    if except_for != "no_rotation":
        assert m["rotate"] is True
    assert m["hardDrop"] == {"locked": 4, "newPiece": True}
    if except_for != "broken_walls":
        assert m["walls"] == {"left": 0, "right": 9}
    if except_for != "no_line_clear":
        assert m["lineClear"]["lines"] == 1 and not m["lineClear"]["bottomFull"]
    if except_for != "no_game_over":
        assert m["gameOver"]["over"] is True and m["gameOver"]["piece"] is None
    if except_for != "crash":
        assert m["crash"]["thrown"] is None
        # A long session: lines cleared, game overs restarted (unless a fault forbids it).
        assert m["trace"]["cleared"] > 0 or except_for == "no_line_clear"
        assert m["trace"]["games"] > 1 or except_for == "no_game_over"


@needs_node
@pytest.mark.parametrize("language", ["javascript", "typescript"])
def test_clean_rules(language: str, tmp_path: Path) -> None:
    if language == "typescript" and not HAVE_TSC:
        pytest.skip("the toolchain's tsc is not installed (npm ci in toolchain/)")
    _assert_healthy(drive(spec(language=language), tmp_path))


@needs_node
@pytest.mark.parametrize("fault", MECHANIC_FAULTS)
def test_each_mechanic_fault_breaks_its_mechanic_only(fault: str, tmp_path: Path) -> None:
    m = drive(spec(faults=frozenset({fault}), crash_after_s=6.0), tmp_path)
    _assert_healthy(m, except_for=fault)
    broken = {
        "no_gravity": lambda: m["gravity"] == 0,
        "no_rotation": lambda: m["rotate"] is False,
        "no_line_clear": lambda: m["lineClear"]["lines"] == 0 and m["lineClear"]["bottomFull"],
        "crash": lambda: "TypeError" in m["crash"]["thrown"] and m["crash"]["atMs"] == 6000,
        "no_game_over": lambda: m["gameOver"]["over"] is False,
        "no_hard_drop": lambda: m["keys"][" "] is None,
        "broken_walls": lambda: m["walls"]["left"] < 0 and m["walls"]["right"] > 9,
    }[fault]
    assert broken(), m


@needs_node
@pytest.mark.parametrize(
    ("controls", "start", "expected"),
    [
        ("arrows", "auto", {"ArrowLeft": "left", "ArrowRight": "right", "ArrowDown": "softDrop",
                            "ArrowUp": "rotate", " ": "hardDrop", "Enter": "start"}),
        ("wasd", "key", {"a": "left", "A": "left", "d": "right", "D": "right", "s": "softDrop",
                         "w": "rotate", "W": "rotate", " ": "hardDrop", "Enter": "start"}),
        ("arrows_space", "button", {"ArrowLeft": "left", "ArrowRight": "right",
                                    "ArrowDown": "softDrop", "x": "rotate", "X": "rotate",
                                    " ": "hardDrop"}),
    ],
)  # fmt: skip
def test_control_schemes(controls: str, start: str, expected: dict, tmp_path: Path) -> None:
    keys = drive(spec(controls=controls, start=start), tmp_path)["keys"]
    assert {k: v for k, v in keys.items() if v is not None} == expected


@needs_node
def test_quality_faults_play_exactly_the_same_game(tmp_path: Path) -> None:
    base = {"renderer": "dom", "controls": "wasd", "seed": 5}
    clean = drive(spec(**base), tmp_path / "clean")["trace"]
    for name in ("lint_errors", "magic_numbers", "deep_nesting"):
        faulty = drive(spec(**base, quality_faults=frozenset({name})), tmp_path / name)["trace"]
        assert faulty == clean, name
    both = frozenset({"lint_errors", "magic_numbers", "deep_nesting"})
    assert drive(spec(**base, quality_faults=both), tmp_path / "all")["trace"] == clean


@needs_tsc
def test_typescript_plays_the_javascript_game_even_with_type_errors(tmp_path: Path) -> None:
    js = drive(spec(seed=6), tmp_path / "js")["trace"]
    ts = drive(spec(language="typescript", seed=6), tmp_path / "ts")["trace"]
    bad = spec(language="typescript", seed=6, quality_faults=frozenset({"type_errors"}))
    assert js == ts == drive(bad, tmp_path / "bad")["trace"]


def test_build_helper_returns_the_js_directory(tmp_path: Path) -> None:
    assert build(spec(), tmp_path) == tmp_path / "src"

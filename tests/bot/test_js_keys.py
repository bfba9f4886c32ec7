"""The keyboard-handler reader on source text alone (no browser): which keys a handler
tests and what each one seems to do."""

from __future__ import annotations

from bench_pipeline.bot.readers.js_keys import (
    HandlerReader,
    HandlerResult,
    KeyHit,
    Script,
    ScriptIndex,
    held_polls,
    key_from_code,
    key_from_name,
    scan_scripts,
)
from bench_pipeline.bot.readers.js_source import function_at, lex


def read(src: str, at: str, event: str = "keydown") -> tuple[dict[str, str | None], HandlerResult]:
    """{key: best role} of the handler whose parameters start at the first `at`."""
    index = ScriptIndex([Script("1", src, "game.js", "f")])
    pos = src.index(at)
    line = src.count("\n", 0, pos)
    column = pos - (src.rfind("\n", 0, pos) + 1)
    reader = HandlerReader(index)
    result = reader.read("1", line, column, 0, 0, event)
    for name, kind in result.held.items():
        reader.held_loops("1", name, kind, result)
    hits: list[KeyHit] = list(result.hits)
    for name in result.held:
        hits += held_polls(index, "1", name)
    keys: dict[str, str | None] = {}
    for h in hits:
        if h.negated:
            continue
        role = h.roles[0][0] if h.roles else None
        if keys.get(h.key) is None:
            keys[h.key] = role
    return keys, result


def test_key_names_and_codes_map_to_playwright_keys() -> None:
    assert key_from_name("KeyA") == "a" and key_from_name("A") == "a"
    assert key_from_name("Space") == " " and key_from_name("Spacebar") == " "
    assert key_from_name("Left") == "ArrowLeft" and key_from_name("left") is None
    assert key_from_name("Digit3") == "3" and key_from_name("Numpad4") == "Numpad4"
    assert key_from_name("ShiftLeft") == "Shift" and key_from_name("Esc") == "Escape"
    assert key_from_code(37) == "ArrowLeft" and key_from_code(32) == " "
    assert key_from_code(90) == "z" and key_from_code(100) == "Numpad4"
    assert key_from_code(97, keypress=True) == "a"  # a character code on keypress


def test_the_tokenizer_keeps_strings_templates_and_regexes_whole() -> None:
    src = "const a = `x${ {k: '}'}.k }y` / 2; const r = /[/}]/g; // } not code\n'}'"
    texts = [t.text for t in lex(src)]
    assert "/[/}]/g" in texts and "'}'" in texts and "`x${" in texts
    fn = function_at("f = (e) => { if (e.key === '}') go(); }", 4)
    assert fn is not None and fn.params == ("e",)


def test_a_switch_on_e_key_with_roles_from_each_case() -> None:
    keys, _ = read(
        """document.addEventListener('keydown', function (e) {
          switch (e.key) {
            case 'ArrowLeft': case 'a': moveLeft(); break;
            case 'ArrowRight': if (!hit(p.x + 1, p.y)) p.x++; break;
            case 'ArrowUp': rotate(1); break;
            case ' ': while (fits(p.x, p.y + 1)) p.y++; lock(); break;
            case 'ArrowDown': p.y += 1; break;
            case 'p': paused = !paused; break;
            case 'Enter': if (!started) startGame(); break;
          }
        });""",
        "(e)",
    )
    assert keys == {
        "ArrowLeft": "left", "a": "left", "ArrowRight": "right", "ArrowUp": "rotate",
        " ": "hard_drop", "ArrowDown": "down", "p": "pause", "Enter": "start",
    }  # fmt: skip


def test_key_codes_named_constants_and_a_copy_of_the_key() -> None:
    keys, _ = read(
        """const KEY = { LEFT: 37, RIGHT: 39, UP: 38, SPACE: 32 };
        window.onkeydown = (evt) => { const code = evt.keyCode || evt.which;
          if (code === KEY.LEFT) { player.move(-1); }
          else if (code == KEY.RIGHT) player.move(1)
          else if (KEY.UP === code) player.rotate()
          else if (code === 40) softDrop();
          else if (code === KEY.SPACE) hardDrop();
        };""",
        "(evt)",
    )
    assert keys == {"ArrowLeft": "left", "ArrowRight": "right", "ArrowUp": "rotate",
                    "ArrowDown": "down", " ": "hard_drop"}  # fmt: skip


def test_key_maps_named_or_written_in_place_and_function_values() -> None:
    keys, _ = read(
        """const actions = { ArrowLeft: () => move(-1, 0), ArrowDown: () => move(0, 1), x: turn, ' ': drop };
        function drop() { while (ok(piece)) piece.y++; }
        function onKey(e) { const k = e.key.length === 1 ? e.key.toLowerCase() : e.key;
          const f = actions[k]; if (f) f();
          const g = { ArrowRight: game.right, 'Escape': game.pause }[e.key]; if (g) g(); }""",
        "(e)",
    )
    assert keys == {"ArrowLeft": "left", "ArrowDown": "down", "x": "rotate", " ": "hard_drop",
                    "ArrowRight": "right", "Escape": "pause"}  # fmt: skip
    assert "1" not in keys  # `e.key.length === 1` is no key


def test_held_keys_polled_looped_or_queued() -> None:
    polled, result = read(
        """const keys = {};
        document.addEventListener('keydown', e => { keys[e.code] = true; });
        function loop() { if (keys.ArrowLeft) piece.x -= 1; if (keys['ArrowRight']) tryMove(1);
          if (keys.KeyZ) rotate(); if (keys.Space) hardDrop(); }""",
        "e =>",
    )
    assert result.held == {"keys": "name"}
    assert polled == {"ArrowLeft": "left", "ArrowRight": "right", "z": "rotate", " ": "hard_drop"}
    looped, _ = read(
        """const held = new Set();
        document.addEventListener('keydown', (e) => { held.add(e.code); });
        function act(code) { if (code === 'KeyA') left(); else if (code === 'KeyW') spin(); }
        function poll() { for (const code of held) act(code); }""",
        "(e)",
    )
    assert looped == {"a": "left", "w": "rotate"}
    queued, _ = read(
        """const queue = [];
        document.addEventListener('keydown', (e) => { queue.push(e.key); });
        function frame() { const key = queue.shift();
          const act = { j: game.left, l: game.right }[key]; if (act) act(); }""",
        "(e)",
    )
    assert queued == {"j": "left", "l": "right"}


def test_the_event_handed_to_methods_and_row_first_vectors() -> None:
    keys, _ = read(
        """class Game { constructor() { document.addEventListener('keydown', (e) => this.#onKey(e)); }
          #onKey(ev) { this.handle(ev.code); }
          handle(code) { if (code === 'KeyJ') this.shift(0, -1); else if (code === 'KeyK') this.shift(1, 0);
                         else if (code === 'KeyL') this.shift(0, 1); }
          shift(dr, dc) { this.r += dr; this.c += dc; } }""",
        "(e)",
    )
    assert keys == {"j": "left", "k": "down", "l": "right"}


def test_destructured_keys_lists_and_keypress_character_codes() -> None:
    keys, _ = read(
        "addEventListener('keydown', ({ key }) => { if (['ArrowLeft', 'ArrowRight'].includes(key)) stop(); if (key === 'q') rotate(-1); });",
        "({",
    )
    assert keys == {"ArrowLeft": None, "ArrowRight": None, "q": "rotate"}
    keys, _ = read(
        "document.onkeypress = function (e) { if (e.which == 97) left(); };", "(e)", "keypress"
    )
    assert keys == {"a": "left"}


def test_a_queue_of_events_is_seen_as_such_and_scripts_are_scanned_instead() -> None:
    src = "var q = []; window.addEventListener('keydown', function (event) { q.push(event); });"
    keys, result = read(src, "(event)")
    assert keys == {} and result.queued
    game = "this.cursors = this.input.keyboard.createCursorKeys(); this.input.keyboard.addKey('W'); if (k.keyCode === 80) pause();"
    found = {h.key for h in scan_scripts([Script("2", game)])}
    assert {"ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", " ", "w", "p"} <= found

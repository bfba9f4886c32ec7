"""Which keys a keyboard handler handles, and what each one seems to do, read from the
handler's own source text (and of the functions it hands the event to).

Patterns read: comparisons of `e.key` / `e.code` / `e.keyCode` / `e.which` (or a local
copy of them) with literals or named constants, `switch` cases, key maps indexed by the
key (`{ArrowLeft: ..., 37: ...}[e.key]`), lists (`[...].includes(e.key)`), and held-key
maps (`keys[e.code] = true`, polled elsewhere as `keys.ArrowLeft`). A role (left, right,
down, rotate, hard_drop, pause, start) is a hint from what the branch of a key calls or
changes (`moveLeft()`, `x - 1`, `rotate`, `while (...) y++`); the bot confirms every hint
by pressing the key.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from bench_pipeline.bot.readers.js_source import (
    CLOSERS,
    KEYWORDS,
    OPENERS,
    Function,
    Tok,
    definition_sites,
    enclosing_condition,
    function_at,
    lex,
    match_brackets,
    number_value,
    object_literal_sites,
    object_props,
    occurrences,
    string_value,
    text_of,
)

ROLES = ("hard_drop", "rotate", "left", "right", "down", "pause", "start")

# ---- key names ---------------------------------------------------------------------
_KEYCODES: dict[int, str] = {
    8: "Backspace", 9: "Tab", 13: "Enter", 16: "Shift", 17: "Control", 18: "Alt",
    19: "Pause", 20: "CapsLock", 27: "Escape", 32: " ", 33: "PageUp", 34: "PageDown",
    35: "End", 36: "Home", 37: "ArrowLeft", 38: "ArrowUp", 39: "ArrowRight",
    40: "ArrowDown", 45: "Insert", 46: "Delete", 106: "NumpadMultiply", 107: "NumpadAdd",
    109: "NumpadSubtract", 110: "NumpadDecimal", 111: "NumpadDivide", 186: ";", 187: "=",
    188: ",", 189: "-", 190: ".", 191: "/", 192: "`", 219: "[", 220: "\\", 221: "]",
    222: "'",
}  # fmt: skip
_KEYCODES.update({48 + d: str(d) for d in range(10)})
_KEYCODES.update({65 + i: chr(97 + i) for i in range(26)})
_KEYCODES.update({96 + d: f"Numpad{d}" for d in range(10)})
_KEYCODES.update({112 + i: f"F{i + 1}" for i in range(12)})

# `key` values (current and of older browsers) and `code` values, lower-cased.
_NAMES: dict[str, str] = {
    "arrowleft": "ArrowLeft", "arrowright": "ArrowRight", "arrowup": "ArrowUp",
    "arrowdown": "ArrowDown", " ": " ", "space": " ", "spacebar": " ", "enter": "Enter",
    "return": "Enter", "numpadenter": "Enter", "escape": "Escape", "esc": "Escape",
    "shift": "Shift", "shiftleft": "Shift", "shiftright": "Shift", "control": "Control",
    "controlleft": "Control", "controlright": "Control", "alt": "Alt", "altleft": "Alt",
    "altright": "Alt", "tab": "Tab", "backspace": "Backspace", "delete": "Delete",
    "home": "Home", "end": "End", "pageup": "PageUp", "pagedown": "PageDown",
    "insert": "Insert", "pause": "Pause", "capslock": "CapsLock", "period": ".",
    "comma": ",", "slash": "/", "semicolon": ";", "quote": "'", "backquote": "`",
    "minus": "-", "equal": "=", "bracketleft": "[", "bracketright": "]",
    "backslash": "\\", "numpadadd": "NumpadAdd", "numpadsubtract": "NumpadSubtract",
}  # fmt: skip
# Old `key` values (IE, early Firefox) that are also ordinary words: only as written.
_OLD_NAMES = {"Left": "ArrowLeft", "Right": "ArrowRight", "Up": "ArrowUp", "Down": "ArrowDown"}
# Phaser's KeyCodes names (`addKey('SPACE')`, `KeyCodes.LEFT`).
_PHASER_NAMES = {"LEFT": "ArrowLeft", "RIGHT": "ArrowRight", "UP": "ArrowUp", "DOWN": "ArrowDown",
                 "SPACE": " ", "ENTER": "Enter", "SHIFT": "Shift", "ESC": "Escape",
                 "CTRL": "Control", "CONTROL": "Control"}  # fmt: skip


def key_from_name(value: str) -> str | None:
    """A Playwright key for a `key` or `code` value (`KeyA` and `a` are both `a`)."""
    if not value or len(value) > 20:
        return None
    if value in _OLD_NAMES:
        return _OLD_NAMES[value]
    low = value.lower()
    if low in _NAMES:
        return _NAMES[low]
    if len(value) == 1 and value.isprintable():
        return value.lower()
    m = re.fullmatch(r"key([a-z])", low)
    if m:
        return m.group(1)
    m = re.fullmatch(r"(?:digit|numpad)?(\d)", low)
    if m:
        return f"Numpad{m.group(1)}" if low.startswith("numpad") else m.group(1)
    m = re.fullmatch(r"f(\d{1,2})", low)
    if m and 1 <= int(m.group(1)) <= 12:
        return f"F{m.group(1)}"
    return None


def key_from_code(code: int, keypress: bool = False) -> str | None:
    """A Playwright key for a `keyCode`/`which` number (a character code on keypress)."""
    if keypress and 33 <= code <= 126:
        return chr(code).lower()
    return _KEYCODES.get(code)


# ---- roles ---------------------------------------------------------------------------
# Matched on the lower-cased text of a branch. Names first (a hard drop's loop moves down
# too; a rotation may kick left or right in a loop), then loops (a key whose branch loops
# is a hard drop), then moves: the earliest move in the branch (`x += 1` before the
# `x -= 1` that undoes a move into a wall), then a bare call with -1 or 1 (`lado(-1)`).
_NAMED_ROLES: list[tuple[str, re.Pattern[str]]] = [
    ("hard_drop", re.compile(
        r"hard_?drop|instant_?drop|drop_?to_?bottom|drop_?down|drop_?all|full_?drop|quick_?drop"
        r"|fast_?drop|slam|sonic|['\"]hard|(?<![a-z_])hard\w*\s*\(|(?:\by|row)\s*=\s*[\w.$]*ghost"
        r"|=\s*[\w.$]*ghost\w*\s*\(")),
    ("rotate", re.compile(
        r"(?<![a-z_])\w*(?:rotat|rota[rc]|gira|dreh|tourn|turn|spin)\w*\s*\("
        r"|rotat\w*\s*(?:\+\+|--|[+-]=)|\bc?cw\b|clockwise|['\"]rotat")),
    ("hard_drop", re.compile(r"\bwhile\s*\(|\bfor\s*\(\s*;\s*;|\bdo\s*\{")),
]  # fmt: skip
_MOVE_ROLES: list[tuple[str, re.Pattern[str]]] = [
    ("left", re.compile(
        r"move_?left|(?<![a-z_.])left\b|(?<![a-z_])left\w*\s*\(|['\"]left['\"]|(?:\b|\.)x\s*-=\s*1\b"
        r"|(?:\b|\.)x\s*--|--\s*[\w.$]*\bx\b|(?:\b|\.)x\s*-\s*1\b|\bcol\w*\s*-\s*1\b|\bcol\w*\s*--"
        r"|\bcol\w*\s*-=\s*1\b|\bdx\s*=\s*-\s*1\b")),
    ("right", re.compile(
        r"move_?right|(?<![a-z_.])right\b|(?<![a-z_])right\w*\s*\(|['\"]right['\"]|(?:\b|\.)x\s*\+=\s*1\b"
        r"|(?:\b|\.)x\s*\+\+|\+\+\s*[\w.$]*\bx\b|(?:\b|\.)x\s*\+\s*1\b|\bcol\w*\s*\+\s*1\b|\bcol\w*\s*\+\+"
        r"|\bcol\w*\s*\+=\s*1\b|\bdx\s*=\s*\+?1\b")),
    ("down", re.compile(
        r"move_?down|soft\w*|(?<![a-z_.])down\b|(?<![a-z_])down\w*\s*\(|['\"]down['\"]|(?<![a-z_])drop\w*\s*\("
        r"|(?:\b|\.)y\s*\+=\s*1\b|(?:\b|\.)y\s*\+\+|\+\+\s*[\w.$]*\by\b|(?:\b|\.)y\s*\+\s*1\b"
        r"|\brow\w*\s*\+\s*1\b|\brow\w*\s*\+\+|\bfall\w*\s*\(|\bstep\s*\(")),
]  # fmt: skip
# Calls with -1 or 1 that move nothing.
_NOT_MOVES = re.compile(
    r"score|point|level|line|sound|play|volume|speed|add|inc|sleep|wait|fill|slice|substr|splice|charat|array",
    re.I,
)
_UNIT_CALL = re.compile(r"([A-Za-z_$][\w$]*)\s*\(\s*([-+]?)\s*1\s*\)")
_OTHER_ROLES: list[tuple[str, re.Pattern[str]]] = [
    ("pause", re.compile(r"pause|\bresume\w*\s*\(|\bsuspend")),
    ("start", re.compile(
        r"(?<![a-z_])(?:start|begin|restart|newgame|new_game|startgame|init(?:game)?)\w*\s*\("
        r"|\b(?:game_?)?(?:started|running|playing|isplaying|isrunning|isstarted|gamestarted|inplay)\s*=\s*(?:true|!0|1)\b"
        r"|\bgame_?over\s*=\s*(?:false|!1|0)\b|\b(?:state|mode|screen|phase|status)\s*=\s*['\"](?:play|run|game)")),
]  # fmt: skip
# A move by a vector, `move(-1, 0)`, `tryMove(0, 1)`, `with_(cur, 0, 1, 0)`: which number
# is x is read from the called function's parameter names where it can be found
# (`shift(dr, dc)` is row first).
_CALL = re.compile(r"([A-Za-z_$][\w$]*)\s*\(([^()]{0,80})\)")
_UNIT = re.compile(r"\s*([-+]?)\s*([01])\s*")
_ROW_FIRST = re.compile(r"^(?:d?y\w*|d?r(?:ow)?s?|dr|row\w*|r)$", re.I)


def _vector_role(text: str, index: ScriptIndex | None, sid: str) -> tuple[str, str, int] | None:
    for m in _CALL.finditer(text):
        if _NOT_MOVES.search(m.group(1)):
            continue
        args = m.group(2).split(",")
        units = [_UNIT.fullmatch(a) for a in args]
        for i in range(len(args) - 1):
            if not (units[i] and units[i + 1]):
                continue
            a, b = (int(u.group(1) + u.group(2)) for u in (units[i], units[i + 1]))  # type: ignore[union-attr]
            if a == b == 0:
                break  # `with_(p, 0, 0, 1)`: no move (a turn, by the third number)
            dx, dy = a, b
            if index is not None:
                for csid, pos in index.definitions(sid, m.group(1), limit=1):
                    fn = function_at(index.scripts[csid].source, pos, max_chars=2000)
                    if fn is not None and len(fn.params) > i + 1 and _ROW_FIRST.match(fn.params[i]):
                        dx, dy = b, a
            role = "left" if dx < 0 else "right" if dx > 0 else "down" if dy > 0 else None
            if role:
                return role, m.group(0)[:60], m.start()
            break
    return None


def roles_of(
    text: str, index: ScriptIndex | None = None, sid: str = "", loops: bool = True
) -> list[tuple[str, str]]:
    """The roles `text` suggests, best first, each with the code that suggests it
    (`loops`: a loop means a hard drop; not in the body of a function the branch calls,
    where a loop may be anything, a line clear)."""
    low = text.lower()
    out: list[tuple[str, str]] = []

    def add(role: str, start: int, end: int) -> None:
        if role not in [r for r, _ in out]:
            out.append((role, text[start : end + 24].strip()[:60]))

    for role, pattern in _NAMED_ROLES if loops else _NAMED_ROLES[:2]:
        m = pattern.search(low)
        if m:
            add(role, m.start(), m.end())
    moves: list[tuple[int, str, int]] = []
    for role, pattern in _MOVE_ROLES:
        m = pattern.search(low)
        if m:
            moves.append((m.start(), role, m.end()))
    vector = _vector_role(text, index, sid)
    if vector:
        moves.append((vector[2], vector[0], vector[2] + len(vector[1])))
    for start, role, end in sorted(moves):
        add(role, start, end)
    for m in _UNIT_CALL.finditer(text):
        if not _NOT_MOVES.search(m.group(1)):
            add("left" if m.group(2) == "-" else "right", m.start(), m.end())
            break
    for role, pattern in _OTHER_ROLES:
        m = pattern.search(low)
        if m:
            add(role, m.start(), m.end())
    return out


def roles_in(text: str, called: list[str], index: ScriptIndex, sid: str) -> list[tuple[str, str]]:
    """The roles of a branch's text; where it says nothing (`act()`, `game.tick()`) the
    first lines of the functions it calls decide, and a bare `drop()` (a soft or a hard
    drop) is a hard drop when that function loops."""
    found = roles_of(text, index, sid)
    drop = (
        bool(found) and found[0][0] == "down" and re.search(r"(?<![a-z_])drop\s*\(", text.lower())
    )
    if found and not drop:
        return found
    for name in called[:4]:
        if name in _NOT_CALLEES or (drop and "drop" not in name.lower()):
            continue
        for csid, pos in index.definitions(sid, name, limit=1):
            fn = function_at(index.scripts[csid].source, pos, max_chars=4000)
            if fn is None:
                continue
            body = index.scripts[csid].source[fn.body_start : min(fn.body_end, fn.body_start + 400)]
            inner = [(r, f"{name}(): {e}") for r, e in roles_of(body, index, csid, loops=drop)]
            if inner and (not found or inner[0][0] == "hard_drop"):
                return inner
    return found


# ---- the analysis --------------------------------------------------------------------
@dataclass
class KeyHit:
    """One place where a handler's code tests for a key."""

    key: str  # Playwright's name for it
    raw: str  # the literal (or constant) as the code writes it
    via: str  # compare, case, map, list, held, binding, script
    roles: list[tuple[str, str]] = field(default_factory=list)  # (role, evidence)
    script_id: str = ""
    offset: int = -1
    negated: bool = False  # `!==`: handled, but the branch is what the others do
    branch: str = ""  # the code the key's branch runs (the start of it)


@dataclass
class Script:
    script_id: str
    source: str
    url: str = ""
    frame_id: str = ""


_KEY_PROPS = {"key": "name", "code": "name", "char": "name", "keyCode": "number",
              "which": "number", "charCode": "number", "keyIdentifier": "name"}  # fmt: skip
_CMP = {"===", "==", "!==", "!="}
_DELIMS = {"(", "[", "{", ",", ";", "&&", "||", "??", "?", ":", "=", "+=", "-=", "=>", "!",
           "}", "===", "==", "!==", "!=", "return", "case", "typeof", "<", ">", "<=", ">="}  # fmt: skip
# Calls that never lead to the game's key handling.
_NOT_CALLEES = KEYWORDS | {
    "preventDefault", "stopPropagation", "stopImmediatePropagation", "log", "warn", "error",
    "includes", "indexOf", "push", "test", "toLowerCase", "toUpperCase", "trim", "has", "get",
    "set", "add", "delete", "Number", "String", "parseInt", "fromCharCode", "charCodeAt",
    "requestAnimationFrame", "setTimeout", "setInterval", "addEventListener", "find",
    "forEach", "map", "filter", "some", "every", "startsWith", "endsWith", "replace",
}  # fmt: skip
_HELD_VALUES = {"true", "false", "1", "0", "!0", "!1"}
LIBRARY_URL = re.compile(
    r"phaser|pixi|jquery|three(?:\.min)?\.js|createjs|kontra|babylon|excalibur|melon|kaboom|"
    r"p5(?:\.min)?\.js|hammer|howler|impact|cocos|playcanvas|zepto",
    re.I,
)


@dataclass
class HandlerResult:
    hits: list[KeyHit] = field(default_factory=list)
    held: dict[str, str] = field(default_factory=dict)  # held-key maps or sets: name -> kind
    notes: list[str] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)  # callees given the event, not found
    queued: bool = False  # the event is pushed into a queue (Phaser-style)
    source_chars: int = 0  # how much source was read


class ScriptIndex:
    """The scripts of a page, by id, with look-ups of definitions and constants across
    the scripts of one frame (cached, bounded)."""

    def __init__(self, scripts: Iterable[Script], max_total_chars: int = 6_000_000) -> None:
        self.scripts: dict[str, Script] = {}
        total = 0
        for s in scripts:
            if total >= max_total_chars:
                break
            s.source = s.source[: max_total_chars - total]
            total += len(s.source)
            self.scripts[s.script_id] = s
        self._objects: dict[tuple[str, str], list[list[tuple[str, str, int, str]]]] = {}
        self._defs: dict[tuple[str, str], list[tuple[str, int]]] = {}

    def frame_scripts(self, script_id: str) -> list[Script]:
        """The script first, then the others of its frame (all when its frame is unknown)."""
        first = self.scripts.get(script_id)
        out = [first] if first else []
        for s in self.scripts.values():
            if s is first:
                continue
            if (
                first is None
                or not first.frame_id
                or not s.frame_id
                or s.frame_id == first.frame_id
            ):
                out.append(s)
        return out

    def definitions(self, script_id: str, name: str, limit: int = 2) -> list[tuple[str, int]]:
        key = (script_id, name)
        if key not in self._defs:
            found: list[tuple[str, int]] = []
            for s in self.frame_scripts(script_id):
                found += [(s.script_id, p) for p in definition_sites(s.source, name)]
                if len(found) >= limit:
                    break
            self._defs[key] = found[:limit]
        return self._defs[key]

    def object_props(self, script_id: str, name: str) -> list[tuple[str, str, int, str]]:
        """The properties of the first non-empty object literal assigned to `name`:
        (key text, key kind, value offset, value text)."""
        key = (script_id, name)
        if key not in self._objects:
            found: list[list[tuple[str, str, int, str]]] = []
            for s in self.frame_scripts(script_id):
                for brace in object_literal_sites(s.source, name):
                    props = []
                    for p in object_props(s.source, brace):
                        if p.computed:
                            raw = " ".join(t.text for t in p.computed)
                            props.append((raw, "computed", p.value_start, p.value))
                        else:
                            v = string_value(p.key)
                            props.append(
                                (p.key.text if v is None else v, p.key.kind, p.value_start, p.value)
                            )
                    if props:
                        found.append(props)
                if found:
                    break
            self._objects[key] = found
        return self._objects[key][0] if self._objects[key] else []

    def constant(self, script_id: str, path: list[str]) -> Tok | None:
        """The literal a constant (`KEY.LEFT`, `KEY_LEFT`) is given, when written plainly."""
        if len(path) >= 2:
            for raw, kind, _pos, value in self.object_props(script_id, path[-2]):
                if raw == path[-1] and kind in ("id", "str"):
                    toks = lex(value, 0, max_chars=80)
                    if len(toks) == 1 and toks[0].kind in ("str", "num"):
                        return toks[0]
            # The object is out of reach (a module's export, a parameter): the property
            # written with a literal anywhere in the frame's scripts.
            prop = path[-1]
            if re.fullmatch(r"[A-Za-z_$][\w$]*", prop) and len(prop) > 2:
                rest = re.compile(
                    r"['\"]?\s*:\s*('[^'\n]{0,20}'|\"[^\"\n]{0,20}\"|\d{1,3})\s*[,}\n]"
                )
                for s in self.frame_scripts(script_id):
                    found = occurrences(s.source, prop, rest)
                    if found:
                        toks = lex(found[0].group(1))
                        return toks[0] if toks else None
            return None
        name = path[0]
        if not re.fullmatch(r"[A-Za-z_$][\w$]*", name) or name in KEYWORDS:
            return None
        rest = re.compile(r"\s*=(?![=>])\s*('[^'\n]{0,20}'|\"[^\"\n]{0,20}\"|\d{1,3})\s*[;,\n)]")
        for s in self.frame_scripts(script_id):
            found = [
                m
                for m in occurrences(s.source, name, rest)
                if s.source[m.start() - len(name) - 1 : m.start() - len(name)] != "."
            ]
            if found:
                toks = lex(found[0].group(1))
                return toks[0] if toks else None
        return None


class HandlerReader:
    """Reads one keyboard handler and the functions it hands the event (or key) to."""

    def __init__(self, index: ScriptIndex, max_callees: int = 12, max_depth: int = 2) -> None:
        self.index = index
        self.max_callees = max_callees
        self.max_depth = max_depth

    def read(
        self,
        script_id: str,
        line: int,
        column: int,
        start_line: int,
        start_column: int,
        event_type: str = "keydown",
    ) -> HandlerResult:
        """The handler at a listener's location (0-based line and column, in the page's
        coordinates, the script starting at start_line:start_column)."""
        result = HandlerResult()
        script = self.index.scripts.get(script_id)
        if script is None:
            result.notes.append(f"script {script_id} not readable")
            return result
        offset = offset_of(
            script.source, line - start_line, column - (start_column if line == start_line else 0)
        )
        return self.read_at(script_id, offset, event_type, result)

    def read_at(
        self,
        script_id: str,
        offset: int,
        event_type: str = "keydown",
        result: HandlerResult | None = None,
    ) -> HandlerResult:
        """The handler whose function starts at `offset` of the script."""
        result = result or HandlerResult()
        script = self.index.scripts[script_id]
        line = script.source.count("\n", 0, offset)
        column = offset - (script.source.rfind("\n", 0, offset) + 1)
        fn = function_at(script.source, offset)
        if fn is None and offset == 0:
            # An attribute handler (`onkeydown="move(event)"`): the script is its body.
            fn = Function(0, 0, len(script.source), ("event",), whole_script=True)
        if fn is None:
            result.notes.append(
                f"no function found at {script.url or script_id}:{line + 1}:{column + 1}"
            )
            return result
        self._visited: set[tuple[str, int]] = set()
        self._callees = 0
        events = {p for p in fn.params[:1] if p} | {"event"}
        aliases = {
            name: _KEY_PROPS.get(prop, "name")
            for name, prop in (d.split("=") for d in fn.destructured)
        }
        self._region(script, fn, events, aliases, event_type, result, 0)
        return result

    # -- one function's body ------------------------------------------------------------
    def _region(
        self,
        script: Script,
        fn: Function,
        events: set[str],
        aliases: dict[str, str],
        event_type: str,
        result: HandlerResult,
        depth: int,
    ) -> None:
        if (script.script_id, fn.body_start) in self._visited:
            return
        self._visited.add((script.script_id, fn.body_start))
        src = script.source
        toks = lex(src, fn.body_start, max_chars=min(fn.body_end - fn.body_start, 120_000))
        result.source_chars += fn.body_end - fn.body_start
        match = match_brackets(toks)
        region = _Region(src, toks, match, events, dict(aliases), event_type == "keypress")
        region.find_aliases()
        for hit in region.comparisons(self.index, script.script_id):
            result.hits.append(hit)
        for hit in region.switches(self.index, script.script_id):
            result.hits.append(hit)
        for hit, held in region.lookups(self.index, script.script_id):
            if hit is not None:
                result.hits.append(hit)
            if held:
                result.held.setdefault(held[0], held[1])
        if region.pushes_event():
            result.queued = True
        for hit in result.hits:
            if not hit.script_id:
                hit.script_id = script.script_id
        if depth >= self.max_depth:
            return
        for name, mapping in region.calls():
            if self._callees >= self.max_callees:
                result.notes.append("more callees than read")
                break
            sites = self.index.definitions(script.script_id, name)
            if not sites:
                result.unresolved.append(name)
                continue
            self._callees += 1
            sid, pos = sites[0]
            callee = self.index.scripts[sid]
            cfn = function_at(callee.source, pos)
            if cfn is None:
                result.unresolved.append(name)
                continue
            c_events = {
                cfn.params[i]
                for i, kind in mapping.items()
                if kind == "event" and i < len(cfn.params) and cfn.params[i]
            }
            c_aliases = {
                cfn.params[i]: kind
                for i, kind in mapping.items()
                if kind != "event" and i < len(cfn.params) and cfn.params[i]
            }
            for d in cfn.destructured:
                n, prop = d.split("=")
                c_aliases[n] = _KEY_PROPS.get(prop, "name")
            self._region(callee, cfn, c_events or {"\0"}, c_aliases, event_type, result, depth + 1)

    def held_loops(self, script_id: str, name: str, kind: str, result: HandlerResult) -> None:
        """Loops over a held-key set or map (`for (const code of held) act(code)`,
        `held.forEach(k => ...)`, `for (k in keys)`): their bodies read with the loop
        variable as the key."""
        if not re.fullmatch(r"[A-Za-z_$][\w$]*", name):
            return
        n = re.escape(name)
        loop = re.compile(
            rf"for\s*\(\s*(?:const|let|var)?\s*([A-Za-z_$][\w$]*)\s+(?:of|in)\s+(?:Object\.keys\(\s*)?(?:[\w$]+\.)*{n}\s*\)?\s*\)"
            rf"|(?<![\w$]){n}\s*\.\s*forEach\s*\(\s*"
            rf"|(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:[\w$]+\.)*{n}\s*\.\s*(?:shift|pop)\s*\(\s*\)"
        )
        self._visited = getattr(self, "_visited", set())
        self._callees = getattr(self, "_callees", 0)
        found = 0
        for script in self.index.frame_scripts(script_id):
            for m in loop.finditer(script.source):
                found += 1
                if found > 4:
                    return
                if m.group(2):
                    # `const key = queue.shift()`: the rest of that block reads the key.
                    toks = lex(script.source, m.end(), max_chars=20_000)
                    depth, end = 0, len(toks) - 1
                    for i, u in enumerate(toks):
                        depth += (u.text == "{") - (u.text == "}")
                        if depth < 0:
                            end = i - 1
                            break
                    if end < 0:
                        continue
                    fn = Function(m.end(), toks[0].start, toks[end].end, ())
                    aliases = {m.group(2): kind}
                elif m.group(1):
                    toks = lex(script.source, m.end(), max_chars=20_000)
                    if not toks:
                        continue
                    match = match_brackets(toks)
                    if toks[0].text == "{" and match[0] > 0:
                        fn = Function(m.end(), toks[0].start, toks[match[0]].end, ())
                    else:
                        end = next((u.end for u in toks if u.text == ";"), toks[-1].end)
                        fn = Function(m.end(), toks[0].start, end, ())
                    aliases = {m.group(1): kind}
                else:
                    cb = function_at(script.source, m.end(), max_chars=20_000)
                    if cb is None or not cb.params or not cb.params[0]:
                        continue
                    fn, aliases = cb, {cb.params[0]: kind}
                self._region(script, fn, {"\0"}, aliases, "keydown", result, 1)


def offset_of(src: str, line: int, column: int) -> int:
    """The offset of a 0-based line and column in `src` (clamped)."""
    if line <= 0:
        return max(0, min(column, len(src)))
    pos = 0
    for _ in range(line):
        nl = src.find("\n", pos)
        if nl < 0:
            return len(src)
        pos = nl + 1
    return min(pos + max(column, 0), len(src))


class _Region:
    """The tokens of one function body, with what holds the key in it."""

    def __init__(
        self,
        src: str,
        toks: list[Tok],
        match: list[int],
        events: set[str],
        aliases: dict[str, str],
        keypress: bool,
    ) -> None:
        self.src, self.toks, self.match = src, toks, match
        self.events, self.aliases, self.keypress = events, aliases, keypress
        self.n = len(toks)
        self.open_if = False  # an unmatched `)` closes an `if` condition

    # -- what holds the key ------------------------------------------------------------
    def keyref(self, k: int) -> tuple[int, str] | None:
        """(end index, "name" | "number") when a key expression starts at token k."""
        t = self.toks
        if k >= self.n or t[k].kind != "id":
            return None
        if k + 2 < self.n and t[k].text in self.events and t[k + 1].text in (".", "?."):
            j = k + 2
            if (
                t[j].text in ("originalEvent", "nativeEvent", "detail", "data")
                and j + 2 < self.n
                and t[j + 1].text in (".", "?.")
            ):
                j += 2
            end = self._extend(j + 1) if t[j].text in _KEY_PROPS else None
            return (end, _KEY_PROPS[t[j].text]) if end is not None else None
        if (
            k + 3 < self.n
            and t[k].text in self.events
            and t[k + 1].text == "["
            and t[k + 3].text == "]"
        ):
            prop = string_value(t[k + 2])
            end = self._extend(k + 4) if prop in _KEY_PROPS else None
            if prop is not None and end is not None:
                return end, _KEY_PROPS[prop]
        if t[k].text in self.aliases:
            prev = t[k - 1].text if k > 0 else ""
            nxt = t[k + 1].text if k + 1 < self.n else ""
            if prev in (".", "?.") or (nxt == ":" and prev in ("{", ",")):
                return None
            end = self._extend(k + 1)
            return (end, self.aliases[t[k].text]) if end is not None else None
        return None

    def _extend(self, j: int) -> int | None:
        # `.toLowerCase()`, `.toUpperCase()`, `.trim()` keep what the expression holds;
        # any other member (`e.key.length`, `e.code.startsWith(...)`) is not the key.
        t = self.toks
        while (
            j + 3 < self.n
            and t[j].text in (".", "?.")
            and t[j + 1].text in ("toLowerCase", "toUpperCase", "trim", "toString")
            and t[j + 2].text == "("
            and t[j + 3].text == ")"
        ):
            j += 4
        if j + 1 < self.n and t[j].text in (".", "?.") and t[j + 1].kind == "id":
            return None
        return j

    def _has_keyref(self, a: int, b: int) -> str | None:
        for k in range(a, b):
            ref = self.keyref(k)
            if ref:
                return ref[1]
        return None

    def find_aliases(self) -> None:
        """Local copies of the key: `const k = e.key.toLowerCase()`, `var c = e.keyCode ||
        e.which`, `const {key} = e` (two passes: copies of copies)."""
        t = self.toks
        for _ in range(2):
            for k in range(self.n - 2):
                if (
                    t[k].kind == "id"
                    and t[k + 1].text == "="
                    and (k == 0 or t[k - 1].text not in (".", "?."))
                ):
                    end = self._expr_end(k + 2)
                    # `var evt = e || window.event`: another name for the event.
                    if t[k].text not in KEYWORDS and any(
                        t[i].kind == "id"
                        and t[i].text in self.events
                        and (i + 1 >= self.n or t[i + 1].text not in (".", "?.", "["))
                        for i in range(k + 2, end)
                    ):
                        self.events = self.events | {t[k].text}
                        continue
                    kind = self._has_keyref(k + 2, end)
                    if kind and t[k].text not in self.events and t[k].text not in KEYWORDS:
                        self.aliases.setdefault(t[k].text, kind)
                elif t[k].text == "{" and k > 0 and t[k - 1].text in ("const", "let", "var"):
                    close = self.match[k]
                    if (
                        close > k
                        and close + 2 < self.n
                        and t[close + 1].text == "="
                        and t[close + 2].text in self.events
                    ):
                        inner = t[k + 1 : close]
                        for i, u in enumerate(inner):
                            if u.kind == "id" and (
                                i + 1 >= len(inner) or inner[i + 1].text in (",", "=")
                            ):
                                prop = (
                                    inner[i - 2].text
                                    if i >= 2 and inner[i - 1].text == ":"
                                    else u.text
                                )
                                if prop in _KEY_PROPS:
                                    self.aliases.setdefault(u.text, _KEY_PROPS[prop])

    def _expr_end(self, k: int, limit: int = 80) -> int:
        t = self.toks
        stop = min(self.n, k + limit)
        while k < stop:
            if t[k].text in OPENERS and self.match[k] > k:
                k = self.match[k] + 1
                continue
            if t[k].text in (";", ",") or t[k].text in CLOSERS:
                break
            if (
                k > 0
                and t[k].kind == "id"
                and t[k - 1].kind in ("id", "num", "str")
                and t[k].text not in ("in", "of", "instanceof")
            ):
                break  # a new statement on the next line (no semicolons)
            k += 1
        return k

    # -- literals ------------------------------------------------------------------------
    def _literal(self, a: int, b: int, index: ScriptIndex, sid: str) -> tuple[Tok, str] | None:
        """The literal token of operand a..b-1 (parentheses stripped, constants looked up),
        with the text the code writes."""
        t = self.toks
        while b - a >= 3 and t[a].text == "(" and self.match[a] == b - 1:
            a, b = a + 1, b - 1
        if b - a == 1 and t[a].kind in ("str", "num", "tpl"):
            return t[a], t[a].text
        if (
            b - a >= 1
            and all(
                (u.kind == "id") if i % 2 == 0 else u.text in (".", "?.")
                for i, u in enumerate(t[a:b])
            )
            and (b - a) % 2 == 1
        ):
            path = [u.text for u in t[a:b:2]]
            if path[0] in self.events or path[-1] in self.aliases or path[0] in KEYWORDS:
                return None
            found = index.constant(sid, path)
            if found is not None:
                return found, ".".join(path)
        return None

    def _key(self, lit: Tok, kind: str) -> str | None:
        s = string_value(lit)
        if s is not None:
            if kind == "number" and s.isdigit():
                return key_from_code(int(s), self.keypress)
            return key_from_name(s)
        n = number_value(lit)
        if n is None:
            return None
        return (
            key_from_code(n, self.keypress)
            if kind == "number"
            else key_from_name(str(n))
            if n < 10
            else key_from_code(n, self.keypress)
        )

    # -- comparisons ---------------------------------------------------------------------
    def comparisons(self, index: ScriptIndex, sid: str) -> list[KeyHit]:
        t = self.toks
        hits = []
        for k in range(1, self.n - 1):
            if t[k].kind != "p" or t[k].text not in _CMP:
                continue
            a = self._operand_start(k - 1)
            b = self._operand_end(k + 1)
            left_kind = self._has_keyref(a, k)
            right_kind = self._has_keyref(k + 1, b)
            if left_kind and not right_kind:
                lit = self._literal(k + 1, b, index, sid)
                kind = left_kind
            elif right_kind and not left_kind:
                lit = self._literal(a, k, index, sid)
                kind = right_kind
            else:
                continue
            if lit is None:
                continue
            key = self._key(lit[0], kind)
            if key is None:
                continue
            negated = t[k].text.startswith("!")
            span = None if negated else self._branch_after(b)
            roles = self._roles(span, index, sid)
            if not roles and "." in lit[1] and not negated:
                roles = [(r, f"bound as {lit[1]}") for r, _ in roles_of(lit[1].split(".")[-1])]
            hits.append(
                KeyHit(key, lit[1], "compare", roles, sid, t[k].start, negated, self._text(span))
            )
        return hits

    def _operand_start(self, i: int) -> int:
        t = self.toks
        while i >= 0:
            if t[i].text in CLOSERS and 0 <= self.match[i] < i:
                i = self.match[i] - 1
                continue
            if (t[i].kind == "p" and (t[i].text in _DELIMS or t[i].text in OPENERS)) or (
                t[i].kind == "id" and t[i].text in ("return", "case", "typeof", "if")
            ):
                break
            i -= 1
        return i + 1

    def _operand_end(self, i: int) -> int:
        t = self.toks
        while i < self.n:
            if t[i].text in OPENERS and self.match[i] > i:
                i = self.match[i] + 1
                continue
            if t[i].kind == "p" and (t[i].text in _DELIMS or t[i].text in CLOSERS):
                break
            if (
                t[i].kind == "id"
                and i > 0
                and t[i - 1].kind in ("id", "num", "str")
                and t[i].text not in ("in", "instanceof")
            ):
                break
            i += 1
        return i

    def _branch_after(self, i: int) -> tuple[int, int] | None:
        """The tokens a condition that ends before token i guards: the statement after
        `if (...)`, the consequent of `?`, what follows `&&`, a case's body."""
        t = self.toks
        conj = None
        while i < self.n:
            u = t[i]
            if u.text in OPENERS and self.match[i] > i:
                i = self.match[i] + 1
                continue
            if u.text == ")":
                o = self.match[i]
                if (o > 0 and t[o - 1].text in ("if", "while")) or (o < 0 and self.open_if):
                    return self._statement(i + 1)
                if o > 0 and (t[o - 1].kind == "id" or t[o - 1].text in (")", "]")):
                    return None  # an argument of a call
                i += 1
                continue
            if u.text == "?":
                return i + 1, self._until(i + 1, {":"})
            if u.text == ":":
                return self._case_body(i + 1)
            if u.text == "&&":
                conj = i + 1
            elif u.text == "||":
                conj = None
            elif u.text in (";", ",", "]", "}"):
                return (conj, i) if conj is not None else None
            i += 1
        return (conj, self.n) if conj is not None else None

    def _statement(self, i: int) -> tuple[int, int] | None:
        if i >= self.n:
            return None
        if self.toks[i].text == "{" and self.match[i] > i:
            return i + 1, self.match[i]
        return i, self._until(i, {";", "else"}, limit=60, lines=True)

    def _until(self, i: int, stops: set[str], limit: int = 120, lines: bool = False) -> int:
        t = self.toks
        first = i
        end = min(self.n, i + limit)
        while i < end:
            if t[i].text in OPENERS and self.match[i] > i:
                i = self.match[i] + 1
                continue
            if t[i].text in stops or t[i].text in CLOSERS:
                return i
            if (
                lines
                and i > first
                and t[i].kind == "id"
                and (t[i - 1].kind in ("id", "num", "str") or t[i - 1].text in (")", "]"))
                and "\n" in self.src[t[i - 1].end : t[i].start]
            ):
                return i  # a statement ended at the line's end (no semicolon)
            i += 1
        return i

    def _case_body(self, i: int) -> tuple[int, int]:
        """A case's statements up to the next case (fall-through: an empty body takes
        the next one's)."""
        t = self.toks
        start = i
        while i < self.n:
            if t[i].text in OPENERS and self.match[i] > i:
                i = self.match[i] + 1
                continue
            if t[i].text in ("case", "default") or t[i].text in CLOSERS:
                if i == start and t[i].text == "case":
                    # `case 37: case 65: moveLeft()`: skip the next label.
                    while i < self.n and t[i].text != ":":
                        i += 1
                    start = i = i + 1
                    continue
                break
            i += 1
        return start, i

    def _text(self, span: tuple[int, int] | None) -> str:
        return text_of(self.src, self.toks, span[0], span[1], 200) if span else ""

    def _roles(
        self, span: tuple[int, int] | None, index: ScriptIndex, sid: str
    ) -> list[tuple[str, str]]:
        if span is None or span[0] >= span[1]:
            return []
        a, b = span
        text = text_of(self.src, self.toks, a, b, 400)
        names = [
            u.text
            for k, u in enumerate(self.toks[a : min(b, a + 40)], a)
            if u.kind == "id" and k + 1 < b and self.toks[k + 1].text == "("
        ]
        return roles_in(text, names, index, sid)

    # -- switch ----------------------------------------------------------------------------
    def switches(self, index: ScriptIndex, sid: str) -> list[KeyHit]:
        t = self.toks
        hits = []
        for k in range(self.n - 2):
            if t[k].text != "switch" or t[k + 1].text != "(" or self.match[k + 1] < 0:
                continue
            close = self.match[k + 1]
            kind = self._has_keyref(k + 2, close)
            if not kind or close + 1 >= self.n or t[close + 1].text != "{":
                continue
            block_end = self.match[close + 1]
            i = close + 2
            while 0 < i < block_end:
                if t[i].text in OPENERS and self.match[i] > i:
                    i = self.match[i] + 1
                    continue
                if t[i].text == "case":
                    colon = self._until(i + 1, {":"}, limit=20)
                    lit = self._literal(i + 1, colon, index, sid)
                    if lit is not None:
                        key = self._key(lit[0], kind)
                        if key is not None:
                            span = self._case_body(colon + 1)
                            roles = self._roles(span, index, sid)
                            if not roles and "." in lit[1]:
                                roles = [
                                    (r, f"bound as {lit[1]}")
                                    for r, _ in roles_of(lit[1].split(".")[-1])
                                ]
                            hits.append(
                                KeyHit(
                                    key,
                                    lit[1],
                                    "case",
                                    roles,
                                    sid,
                                    t[i].start,
                                    branch=self._text(span),
                                )
                            )
                    i = colon + 1
                    continue
                i += 1
        return hits

    # -- maps, lists, held keys ------------------------------------------------------------
    def lookups(
        self, index: ScriptIndex, sid: str
    ) -> list[tuple[KeyHit | None, tuple[str, str] | None]]:
        t = self.toks
        out: list[tuple[KeyHit | None, tuple[str, str] | None]] = []
        for k in range(1, self.n - 1):
            u = t[k]
            if (
                u.text == "["
                and self.match[k] > k
                and t[k - 1].text == "}"
                and 0 <= self.match[k - 1] < k
            ):
                # `{ArrowLeft: game.left, " ": game.hard}[e.key]`: a map written in place.
                kind = self._has_keyref(k + 1, self.match[k])
                if kind:
                    props = object_props(self.src, t[self.match[k - 1]].start)
                    rows = [
                        (string_value(p.key) or p.key.text, p.key.kind, p.value_start, p.value)
                        for p in props
                        if not p.computed
                    ]
                    out += [(h, None) for h in self._prop_hits(index, sid, rows, kind)]
                continue
            if (
                u.text == "["
                and self.match[k] > k
                and (t[k - 1].kind == "id" or t[k - 1].text in ("]", ")"))
            ):
                close = self.match[k]
                kind = self._has_keyref(k + 1, close)
                if not kind or t[k - 1].text in self.events:
                    continue
                name = t[k - 1].text
                nxt = t[close + 1].text if close + 1 < self.n else ""
                if nxt in ("=", "+=", "|=", "||=", "??="):
                    out.append((None, (name, kind)))
                    # A held map given its keys up front (`keys = {ArrowLeft: false}`).
                    continue
                out += [(h, None) for h in self._map_hits(index, sid, name, kind)]
            elif (
                u.text in ("add", "set", "push", "has", "get", "includes", "indexOf")
                and t[k - 1].text in (".", "?.")
                and t[k + 1].text == "("
                and self.match[k + 1] > k
            ):
                close = self.match[k + 1]
                kind = self._has_keyref(k + 2, close)
                if not kind or k < 2:
                    continue
                owner = t[k - 2]
                if u.text in ("add", "set", "push"):
                    if owner.kind == "id":
                        out.append((None, (owner.text, kind)))
                elif u.text == "get" and owner.kind == "id":
                    out += [(h, None) for h in self._map_hits(index, sid, owner.text, kind)]
                elif owner.text == "]" and self.match[k - 2] >= 0:
                    # `['ArrowLeft', 'a'].includes(e.key)`
                    for lit in t[self.match[k - 2] + 1 : k - 2]:
                        key = self._key(lit, kind) if lit.kind in ("str", "num") else None
                        if key:
                            out.append((KeyHit(key, lit.text, "list", [], sid, lit.start), None))
                elif owner.kind == "id":
                    out += [(h, None) for h in self._array_hits(index, sid, owner.text, kind)]
            elif u.text == "in" and self._has_keyref(k - 1, k) and t[k + 1].kind == "id":
                name = t[k + 1].text
                j = k + 1
                while j + 2 < self.n and t[j + 1].text == "." and t[j + 2].kind == "id":
                    j += 2
                    name = t[j].text
                out += [
                    (h, None)
                    for h in self._map_hits(index, sid, name, self._has_keyref(k - 1, k) or "name")
                ]
        return out

    def _map_hits(self, index: ScriptIndex, sid: str, name: str, kind: str) -> list[KeyHit]:
        return self._prop_hits(index, sid, index.object_props(sid, name), kind)

    def _prop_hits(
        self, index: ScriptIndex, sid: str, props: list[tuple[str, str, int, str]], kind: str
    ) -> list[KeyHit]:
        hits = []
        for raw, key_kind, pos, value in props:
            if key_kind == "computed":
                toks = lex(raw, 0, max_chars=200)
                path = [u.text for u in toks if u.kind == "id"]
                lit = (
                    index.constant(sid, path)
                    if path and len(path) * 2 - 1 == len(toks)
                    else (toks[0] if len(toks) == 1 else None)
                )
                key = self._key(lit, kind) if lit is not None else None
            elif key_kind == "num" or raw.isdigit():
                key = (
                    key_from_code(int(raw), self.keypress)
                    if kind == "number" or int(raw) >= 10
                    else key_from_name(raw)
                )
            else:
                key = key_from_name(raw)
            if key:
                # A value that names a function (`' ': drop`) is read as a call of it.
                ref = re.fullmatch(r"(?:[\w$]+\.)*([A-Za-z_$][\w$]*)", value.strip())
                roles = roles_in(
                    value + "()" if ref else value,
                    [ref.group(1)] if ref else re.findall(r"([A-Za-z_$][\w$]*)\s*\(", value),
                    index,
                    sid,
                )
                hits.append(KeyHit(key, raw, "map", roles, sid, pos, branch=value[:200]))
        return hits

    def _array_hits(self, index: ScriptIndex, sid: str, name: str, kind: str) -> list[KeyHit]:
        for s in index.frame_scripts(sid):
            found = occurrences(s.source, name, re.compile(r"\s*=(?![=>])\s*\["))
            m = found[0] if found else None
            if m:
                toks = lex(s.source, m.end() - 1, max_chars=2000)
                match = match_brackets(toks)
                end = match[0] if toks and match[0] > 0 else 0
                hits = []
                for lit in toks[1:end]:
                    key = self._key(lit, kind) if lit.kind in ("str", "num") else None
                    if key:
                        hits.append(KeyHit(key, lit.text, "list", [], s.script_id, lit.start))
                return hits
        return []

    def pushes_event(self) -> bool:
        """`queue.push(event)`: keys read later from a queue (Phaser's keyboard plugin)."""
        t = self.toks
        for k in range(1, self.n - 3):
            if (
                t[k].text == "push"
                and t[k - 1].text == "."
                and t[k + 1].text == "("
                and t[k + 2].text in self.events
            ):
                return True
        return False

    # -- calls -------------------------------------------------------------------------------
    def calls(self) -> list[tuple[str, dict[int, str]]]:
        """Functions the event or the key is handed to: (name, {argument index: "event" |
        "name" | "number"})."""
        t = self.toks
        out: list[tuple[str, dict[int, str]]] = []
        seen = set()
        for k in range(self.n - 1):
            if (
                t[k].kind != "id"
                or t[k + 1].text != "("
                or t[k].text in _NOT_CALLEES
                or self.match[k + 1] < 0
            ):
                continue
            if k > 0 and t[k - 1].text == "function":
                continue
            close = self.match[k + 1]
            mapping: dict[int, str] = {}
            arg, a = 0, k + 2
            i = a
            while i <= close:
                if i < close and t[i].text in OPENERS and self.match[i] > i:
                    i = self.match[i] + 1
                    continue
                if i == close or t[i].text == ",":
                    if i - a == 1 and t[a].text in self.events:
                        mapping[arg] = "event"
                    else:
                        kind = self._has_keyref(a, i)
                        if kind:
                            mapping[arg] = kind
                    arg += 1
                    a = i + 1
                i += 1
            if mapping and t[k].text not in seen:
                seen.add(t[k].text)
                out.append((t[k].text, mapping))
        return out


# ---- held keys and whole-script scans -------------------------------------------------
def held_polls(index: ScriptIndex, script_id: str, name: str, max_hits: int = 60) -> list[KeyHit]:
    """Where a held-key map or set is read (`keys.ArrowLeft`, `keys['KeyA']`, `keys[37]`,
    `pressed.has('a')`): the keys read, with the role of the branch each read guards."""
    if not re.fullmatch(r"[A-Za-z_$][\w$]*", name):
        return []
    rest = re.compile(
        r"\s*(?:\[\s*('[^'\n]{1,14}'|\"[^\"\n]{1,14}\"|\d{1,3}|[A-Za-z_$][\w$.]*)\s*\]"
        r"|\??\.\s*([A-Za-z_$][\w$]*)\b(?!\s*\()|\.has\s*\(\s*('[^'\n]{1,14}'|\"[^\"\n]{1,14}\"|\d{1,3}|[A-Za-z_$][\w$.]*)\s*\))"
    )
    hits: list[KeyHit] = []
    for s in index.frame_scripts(script_id):
        for m in occurrences(s.source, name, rest):
            raw = m.group(1) or m.group(3) or m.group(2)
            after = s.source[m.end() : m.end() + 3].lstrip()
            if after.startswith("=") and not after.startswith("=="):
                continue  # written, not read
            if raw[0] in "'\"":
                key = key_from_name(raw[1:-1])
            elif raw.isdigit():
                key = key_from_code(int(raw))
            elif m.group(2):
                # `keys.ArrowLeft`, `keys.KeyA`, `keys.Space`: only names that are keys.
                key = (
                    key_from_name(raw)
                    if re.fullmatch(
                        r"Arrow\w+|Key[A-Z]|Digit\d|Space|Enter|Escape|Shift\w*|Control\w*|[a-zA-Z]",
                        raw,
                    )
                    else None
                )
            else:
                lit = index.constant(s.script_id, raw.split("."))
                key = None
                if lit is not None:
                    v = string_value(lit)
                    num = number_value(lit)
                    key = (
                        key_from_name(v)
                        if v is not None
                        else key_from_code(num)
                        if num is not None
                        else None
                    )
            if key is None:
                continue
            hits.append(
                KeyHit(
                    key,
                    raw,
                    "held",
                    _roles_at(index, s, m.start(), m.end()),
                    s.script_id,
                    m.start(),
                )
            )
            if len(hits) >= max_hits:
                return hits
    return hits


def _roles_at(index: ScriptIndex, script: Script, start: int, end: int) -> list[tuple[str, str]]:
    """The roles of the branch that a read at start..end guards, lexed from its line."""
    line_start = script.source.rfind("\n", max(0, start - 300), start) + 1
    if start - line_start > 300:
        line_start = start
    toks = lex(script.source, line_start, max_chars=3000)
    match = match_brackets(toks)
    k = next((i for i, u in enumerate(toks) if u.start >= end), None)
    if k is None:
        return []
    region = _Region(script.source, toks, match, set(), {}, False)
    # A condition begun before the line lexed: its `)` is unmatched here.
    region.open_if = enclosing_condition(script.source, start) in ("if", "while")
    return region._roles(region._branch_after(k), index, script.script_id)


_SCRIPT_COMPARE = re.compile(
    r"\.(key|code|keyCode|which|charCode)\s*(?:\.\s*to(?:Lower|Upper)Case\s*\(\s*\)\s*)?(?:===?|!==?)\s*('[^'\n]{1,14}'|\"[^\"\n]{1,14}\"|\d{1,3})(?![\w.])"
    r"|('[^'\n]{1,14}'|\"[^\"\n]{1,14}\"|\d{1,3})\s*(?:===?|!==?)\s*[\w$.]*\.(key|code|keyCode|which|charCode)\b"
)
_SCRIPT_SWITCH = re.compile(
    r"switch\s*\(\s*[^)]{0,80}?(?:key|code|which|Key|Code)[^)]{0,40}\)\s*\{"
)
_SCRIPT_CASE = re.compile(r"case\s+('[^'\n]{1,14}'|\"[^\"\n]{1,14}\"|\d{1,3})\s*:")
_SCRIPT_BINDING = re.compile(
    r"\b(left|right|down|up|rotate\w*|drop|hard_?drop|soft_?drop|move_?left|move_?right|move_?down|pause|start)\s*:\s*"
    r"(?:\[\s*)?('[^'\n]{1,14}'|\"[^\"\n]{1,14}\"|\d{2,3})(?!\s*[+\-*/])",
    re.I,
)
_PHASER_KEY = re.compile(r"(?:addKey\s*\(\s*|KeyCodes\.)['\"]?([A-Z][A-Z0-9_]*)\b")
_PHASER_KEYS = re.compile(r"addKeys\s*\(\s*['\"]([A-Z0-9_,\s]+)['\"]")


def _lit_key(raw: str, kind: str) -> str | None:
    if raw[0] in "'\"":
        v = raw[1:-1]
        return key_from_code(int(v)) if kind == "number" and v.isdigit() else key_from_name(v)
    n = int(raw)
    return key_from_code(n) if kind == "number" or n >= 10 else key_from_name(raw)


def scan_scripts(scripts: Iterable[Script], max_hits: int = 200) -> list[KeyHit]:
    """Keys compared anywhere in the scripts (no handler needed): the fall-back where the
    handlers could not be followed (a library's dispatcher, a key queue)."""
    hits: list[KeyHit] = []
    for s in scripts:
        src = s.source
        for m in _SCRIPT_COMPARE.finditer(src):
            prop = m.group(1) or m.group(4)
            raw = m.group(2) or m.group(3)
            key = _lit_key(raw, _KEY_PROPS.get(prop, "name"))
            if key:
                hits.append(KeyHit(key, raw, "script", [], s.script_id, m.start()))
        for m in _SCRIPT_SWITCH.finditer(src):
            kind = "number" if re.search(r"keyCode|which|charCode", m.group()) else "name"
            block = src[m.end() : m.end() + 4000]
            for c in _SCRIPT_CASE.finditer(block):
                key = _lit_key(c.group(1), kind)
                if key:
                    hits.append(
                        KeyHit(key, c.group(1), "script", [], s.script_id, m.end() + c.start())
                    )
        for m in _SCRIPT_BINDING.finditer(src):
            key = _lit_key(m.group(2), "number" if m.group(2).isdigit() else "name")
            if key:
                role = roles_of(m.group(1))
                hits.append(KeyHit(key, m.group(2), "binding", role[:1], s.script_id, m.start()))
        if "createCursorKeys" in src:
            for key in ("ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", " ", "Shift"):
                hits.append(
                    KeyHit(
                        key,
                        "createCursorKeys()",
                        "script",
                        [],
                        s.script_id,
                        src.find("createCursorKeys"),
                    )
                )
        for m in _PHASER_KEY.finditer(src):
            name = m.group(1)
            key = _PHASER_NAMES.get(name) or (name.lower() if len(name) == 1 else None)
            if key:
                hits.append(KeyHit(key, m.group(), "script", [], s.script_id, m.start()))
        for m in _PHASER_KEYS.finditer(src):
            for name in m.group(1).split(","):
                name = name.strip()
                key = _PHASER_NAMES.get(name) or (name.lower() if len(name) == 1 else None)
                if key:
                    hits.append(KeyHit(key, name, "script", [], s.script_id, m.start()))
        if len(hits) >= max_hits:
            break
    return hits[:max_hits]


_QUERY = re.compile(
    r"(down|pressed|held|released|press|triggered|tapped)\s*\(\s*"
    r"('[^'\n]{1,14}'|\"[^\"\n]{1,14}\"|\d{1,3}|[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)\s*[,)]",
    re.I,
)
_QUERY_NAME = re.compile(r"[A-Za-z_$][\w$]*$")
_NOT_QUERIES = re.compile(r"^(?:move|drop|soft|hard|slide|fall|push|go|step|shift|on)", re.I)


def key_queries(index: ScriptIndex, max_hits: int = 80) -> list[KeyHit]:
    """Keys asked of an input helper (`input.isDown('ArrowLeft')`, `isPressed(KEY.UP)`,
    `keyboard.justPressed(32)`), with the role of the branch each question guards."""
    hits: list[KeyHit] = []
    for s in index.scripts.values():
        for m in _QUERY.finditer(s.source):
            name = _QUERY_NAME.search(s.source, max(0, m.start() - 30), m.end(1))
            if name is None or _NOT_QUERIES.match(name.group()):
                continue
            raw = m.group(2)
            if raw[0] in "'\"":
                key = key_from_name(raw[1:-1])
            elif raw.isdigit():
                key = key_from_code(int(raw))
            else:
                lit = index.constant(s.script_id, raw.split("."))
                v = string_value(lit) if lit is not None else None
                num = number_value(lit) if lit is not None else None
                key = (
                    key_from_name(v)
                    if v is not None
                    else key_from_code(num)
                    if num is not None
                    else None
                )
            if key is None:
                continue
            hits.append(
                KeyHit(
                    key,
                    raw,
                    "query",
                    _roles_at(index, s, m.start(), m.end()),
                    s.script_id,
                    m.start(),
                )
            )
            if len(hits) >= max_hits:
                return hits
    return hits


_BOUND = re.compile(
    r"\.(?:on|bind|live|one)\s*\(\s*['\"][^'\"]*\b(keydown|keyup|keypress)\b[^'\"]*['\"]\s*,\s*(?:['\"][^'\"]*['\"]\s*,\s*)?"
    r"|\.(keydown|keyup|keypress)\s*\(\s*(?=function|\(|[A-Za-z_$][\w$]*\s*=>)"
)


def bound_handlers(index: ScriptIndex, limit: int = 12) -> list[tuple[str, int, str]]:
    """Keyboard handlers given to a library (`$(document).on('keydown', fn)`,
    `$(window).keydown(fn)`): (script id, offset of the function, event type). The page's
    listener is then the library's dispatcher, which holds no key."""
    out: list[tuple[str, int, str]] = []
    for s in index.scripts.values():
        if LIBRARY_URL.search(s.url):
            continue
        for m in _BOUND.finditer(s.source):
            event = m.group(1) or m.group(2)
            pos = m.end()
            name = re.match(r"[A-Za-z_$][\w$.]*(?=\s*[,)])", s.source[pos : pos + 80])
            if name and not s.source.startswith("function", pos):
                sites = index.definitions(s.script_id, name.group().split(".")[-1], limit=1)
                if not sites:
                    continue
                out.append((sites[0][0], sites[0][1], event))
            else:
                out.append((s.script_id, pos, event))
            if len(out) >= limit:
                return out
    return out

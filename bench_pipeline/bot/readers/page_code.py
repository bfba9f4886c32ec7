"""A game's controls and its way in, read from the page's own code and structure through
the Chrome DevTools Protocol, before any key is pressed.

`read_listeners` asks Chromium which event listeners the page registered (on window,
document and every element, in every same-origin frame) and reads the source of each
keyboard handler (and of the functions it hands the event to) for the keys it tests and
what each key seems to do. `start_candidates` lists what a person would try to start the
game: buttons, links, images and overlays with a click listener of their own, ordered by
where they sit (on or by the board, on top of it), not by the words written on them, and
the keys the handlers treat as a start or a pause.

Nothing here runs the game's code: listeners, scripts, the DOM, its layout and the
accessibility tree are read by the protocol, the only function run in the page returns
`window` (a binding the page cannot replace). Every call has a deadline (a page that
hangs costs at most the budget), every loop a bound, and the report a size limit.
Everything is a hint: the bot confirms keys and starts by pressing and clicking.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from bench_pipeline.bot.readers.js_keys import (
    LIBRARY_URL,
    ROLES,
    HandlerReader,
    KeyHit,
    Script,
    ScriptIndex,
    bound_handlers,
    held_polls,
    key_queries,
    offset_of,
    roles_of,
    scan_scripts,
)
from bench_pipeline.bot.readers.js_source import function_at, lex, string_value

KEY_EVENTS = ("keydown", "keyup", "keypress")
CLICK_EVENTS = ("click", "mousedown", "mouseup", "pointerdown", "pointerup", "touchstart",
                "touchend", "dblclick")  # fmt: skip
MAX_NODES = 30_000  # DOM nodes walked (a bigger page is read in part)
MAX_LISTENERS = 3_000  # listener records looked at
MAX_HANDLERS = 40  # distinct keyboard handlers read
MAX_SCRIPTS = 80  # scripts fetched
MAX_SCRIPT_CHARS = 6_000_000  # source text fetched in all
MAX_CALL_MS = 3_000  # one protocol call
OBJECT_GROUP = "bench-page-code"
# The bot's own probe (an init script): its listeners are not the game's.
_PROBE_MARK = 'defineProperty(window, "__bench"'


# ---- the report ------------------------------------------------------------------------
@dataclass
class KeyTarget:
    """Where keyboard events are listened for: the element that must hold the focus."""

    selector: str  # CSS selector in its frame; "window" / "document" for those
    kind: str  # window, document, body, canvas, input, textarea, element
    frame: list[str]  # selectors of the iframes leading to it (outermost first)
    events: list[str]
    handlers: list[str]  # where each handler's code is (url:line:column)


@dataclass
class FoundKey:
    """A key some handler tests for, with the role its branch suggests."""

    key: str  # Playwright's name (`ArrowLeft`, `' '`, `a`, `Enter`)
    written: list[str]  # how the code writes it (`'ArrowLeft'`, `37`, `KEY.LEFT`)
    via: list[str]  # compare, case, map, list, held, binding, script
    role: str | None  # the best hint: left, right, down, rotate, hard_drop, pause, start
    roles: dict[str, str]  # every role suggested, with the code that suggests it
    where: list[str]  # handler locations (url:line:column) it was read from


@dataclass
class ClickTarget:
    selector: str
    frame: list[str]
    tag: str
    events: list[str]
    handlers: list[str]
    roles: list[str] = field(default_factory=list)  # what its handler seems to do


@dataclass
class HandlerInfo:
    event: str
    target: str  # the selector (or window / document) it listens on
    frame: list[str]
    where: str  # url:line:column of its code
    keys: list[str]
    notes: list[str]


@dataclass
class ListenerReport:
    """What the page's listeners say about its controls (all hints)."""

    key_targets: list[KeyTarget] = field(default_factory=list)
    keys: list[FoundKey] = field(default_factory=list)
    click_targets: list[ClickTarget] = field(default_factory=list)
    handlers: list[HandlerInfo] = field(default_factory=list)
    # Why the keys may be incomplete: a frame not readable, a key queue, a dispatcher
    # not followed, a time-out. Any failure: the bot should probe blindly as well.
    failures: list[str] = field(default_factory=list)
    from_scan: bool = False  # some keys come from a scan of whole scripts, not handlers
    ms: float = 0.0
    # What start_candidates reuses (not part of the JSON).
    _state: Any = field(default=None, repr=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("_state", None)
        return data

    def key_names(self) -> list[str]:
        return [k.key for k in self.keys]

    def keys_for(self, role: str) -> list[str]:
        """Keys whose best hint is `role`, handler keys first."""
        return [k.key for k in self.keys if k.role == role]

    def key(self, name: str) -> FoundKey | None:
        return next((k for k in self.keys if k.key == name), None)


@dataclass
class StartCandidate:
    """One thing to try to start the game: click an element, fill a field, or press a key."""

    action: str  # click, fill, key
    selector: str = ""  # in its frame (click, fill)
    frame: list[str] = field(default_factory=list)  # iframe selectors, outermost first
    key: str = ""  # for action key
    name: str = ""  # its accessible name or text (for logs, never for ranking)
    score: float = 0.0
    reasons: list[str] = field(default_factory=list)
    box: tuple[float, float, float, float] | None = None  # x, y, width, height in the page
    submit: str = ""  # for fill: the form's button, if any

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


# ---- protocol calls with deadlines ---------------------------------------------------------
class _OutOfTime(Exception):
    pass


class _Cdp:
    """Protocol calls that never outlive the reader's deadline."""

    def __init__(self, cdp: Any, budget_s: float, failures: list[str]) -> None:
        self.cdp = cdp
        self.deadline = time.monotonic() + budget_s
        self.failures = failures
        self.calls = 0

    def left_ms(self) -> float:
        return (self.deadline - time.monotonic()) * 1000

    def send(
        self, method: str, params: dict[str, Any] | None = None, quiet: bool = False
    ) -> dict[str, Any] | None:
        left = self.left_ms()
        if left < 50:
            raise _OutOfTime(method)
        self.calls += 1
        try:
            return self.cdp.send(method, params or {}, timeout=min(left, MAX_CALL_MS))
        except Exception as error:  # a protocol error or a time-out
            text = str(error).splitlines()[0][:160] if str(error) else type(error).__name__
            if "imeout" in text:
                self.failures.append(f"{method} timed out: the page may hang")
                raise _OutOfTime(method) from error
            if not quiet:
                self.failures.append(f"{method} failed: {text}")
            return None


# ---- the DOM, as the protocol gives it ---------------------------------------------------------
@dataclass
class _Node:
    bid: int
    name: str  # upper-case tag, #document, #text
    attrs: dict[str, str]
    parent: int  # backend id of the parent (0 for a document)
    doc: int  # backend id of its document
    children: list[int] = field(default_factory=list)
    text: str = ""  # a text node's value
    frame_id: str = ""  # of a document (or an iframe element: of its content)
    content_doc: int = 0  # of an iframe element


class _Dom:
    def __init__(self, root: dict[str, Any]) -> None:
        self.nodes: dict[int, _Node] = {}
        self.docs: list[int] = []  # documents, the main one first
        self.owner: dict[int, int] = {}  # a frame's document -> its iframe element
        self.truncated = False
        self._walk(root)
        self._ids: dict[int, dict[str, int]] = {}

    def _walk(self, root: dict[str, Any]) -> None:
        stack: list[tuple[dict[str, Any], int, int]] = [(root, 0, 0)]
        while stack:
            raw, parent, doc = stack.pop()
            if len(self.nodes) >= MAX_NODES:
                self.truncated = True
                return
            bid = int(raw.get("backendNodeId", 0))
            name = str(raw.get("nodeName", ""))
            attrs_list = raw.get("attributes") or []
            attrs = {
                str(attrs_list[i]).lower(): str(attrs_list[i + 1])
                for i in range(0, len(attrs_list) - 1, 2)
            }
            if name == "#document":
                doc = bid
                self.docs.append(bid)
            node = _Node(
                bid,
                name,
                attrs,
                parent,
                doc,
                text=str(raw.get("nodeValue", ""))[:200] if name == "#text" else "",
            )
            node.frame_id = str(raw.get("frameId", ""))
            self.nodes[bid] = node
            if parent in self.nodes:
                self.nodes[parent].children.append(bid)
            kids = list(raw.get("children") or []) + list(raw.get("shadowRoots") or [])
            content = raw.get("contentDocument")
            if content:
                node.content_doc = int(content.get("backendNodeId", 0))
                self.owner[node.content_doc] = bid
                stack.append((content, bid, 0))
            for kid in reversed(kids):
                stack.append((kid, bid, doc))

    def frame_path(self, bid: int) -> list[str]:
        """Selectors of the iframes that hold `bid`, outermost first."""
        path: list[str] = []
        doc = self.nodes[bid].doc if bid in self.nodes else 0
        guard = 0
        while doc in self.owner and guard < 10:
            iframe = self.owner[doc]
            path.append(self.selector(iframe))
            doc = self.nodes[iframe].doc
            guard += 1
        return list(reversed(path))

    def _doc_ids(self, doc: int) -> dict[str, int]:
        if doc not in self._ids:
            counts: dict[str, int] = {}
            for n in self.nodes.values():
                if n.doc == doc and "id" in n.attrs:
                    counts[n.attrs["id"]] = counts.get(n.attrs["id"], 0) + 1
            self._ids[doc] = counts
        return self._ids[doc]

    def selector(self, bid: int) -> str:
        """A CSS selector for an element within its own document."""
        parts: list[str] = []
        guard = 0
        while bid in self.nodes and guard < 60:
            guard += 1
            n = self.nodes[bid]
            if n.name.startswith("#"):
                break
            tag = n.name.lower()
            ident = n.attrs.get("id", "")
            if ident and self._doc_ids(n.doc).get(ident) == 1:
                parts.append(
                    f"#{ident}"
                    if re.fullmatch(r"-?[A-Za-z_][\w-]*", ident)
                    else f'{tag}[id="{_css_string(ident)}"]'
                )
                break
            if tag in ("html", "body"):
                parts.append(tag)
                break
            parent = self.nodes.get(n.parent)
            if parent is None or parent.name.startswith("#"):
                parts.append(tag)
                break
            same = [c for c in parent.children if self.nodes[c].name == n.name]
            parts.append(f"{tag}:nth-of-type({same.index(bid) + 1})" if len(same) > 1 else tag)
            bid = n.parent
        return " > ".join(reversed(parts)) or "html"

    def text(self, bid: int, limit: int = 60) -> str:
        """The text inside an element (its text nodes, in order), on one line."""
        out: list[str] = []
        size = 0
        stack = [bid]
        steps = 0
        while stack and size < limit and steps < 400:
            steps += 1
            n = self.nodes.get(stack.pop())
            if n is None or n.name in ("SCRIPT", "STYLE", "#comment"):
                continue
            if n.name == "#text":
                t = " ".join(n.text.split())
                if t:
                    out.append(t)
                    size += len(t)
            stack.extend(reversed(n.children))
        return " ".join(out)[:limit]

    def ancestors(self, bid: int, limit: int = 40) -> Iterable[int]:
        n = self.nodes.get(bid)
        guard = 0
        while n is not None and n.parent and guard < limit:
            guard += 1
            yield n.parent
            n = self.nodes.get(n.parent)


def _css_string(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _target_kind(node: _Node | None) -> str:
    if node is None:
        return "element"
    if node.name == "#document":
        return "document"
    tag = node.name.lower()
    return tag if tag in ("body", "canvas", "input", "textarea") else "element"


# ---- reading the listeners ---------------------------------------------------------------------
@dataclass
class _Listener:
    type: str
    bid: int  # 0 for a window
    frame_doc: int  # the document of its frame
    script_id: str
    line: int
    column: int


@dataclass
class _State:
    dom: _Dom
    index: ScriptIndex
    listeners: list[_Listener]
    script_meta: dict[str, dict[str, Any]]
    origin: str
    frames: dict[str, dict[str, Any]]


def read_listeners(page: Any, cdp: Any, budget_s: float = 6.0) -> ListenerReport:
    """The page's keyboard and click listeners and the keys its keyboard handlers test.

    `cdp` is `page.context.new_cdp_session(page)`. `page` is not used to run anything
    (it is taken for symmetry with the bot's other readers)."""
    del page
    began = time.monotonic()
    report = ListenerReport()
    call = _Cdp(cdp, budget_s, report.failures)
    try:
        _read(call, report)
    except _OutOfTime as stop:
        report.failures.append(f"out of time at {stop}: the report is partial")
    finally:
        _tidy(call)
    report.ms = round((time.monotonic() - began) * 1000, 1)
    return report


def _tidy(call: _Cdp) -> None:
    # Leave the page as it was: no debugger attached, no objects held.
    call.deadline = max(call.deadline, time.monotonic() + 1.0)
    for method, params in (
        ("Debugger.disable", {}),
        ("Runtime.releaseObjectGroup", {"objectGroup": OBJECT_GROUP}),
    ):
        with contextlib.suppress(Exception):
            call.cdp.send(method, params, timeout=1000)


def _read(call: _Cdp, report: ListenerReport) -> None:
    tree = call.send("Page.getFrameTree") or {}
    frames: dict[str, dict[str, Any]] = {}
    stack = [tree.get("frameTree", {})]
    while stack and len(frames) < 50:
        ft = stack.pop()
        f = ft.get("frame") or {}
        if f.get("id"):
            frames[f["id"]] = f
        stack.extend(ft.get("childFrames") or [])
    main = tree.get("frameTree", {}).get("frame", {})
    origin = str(main.get("securityOrigin", ""))
    got = call.send("DOM.getDocument", {"depth": -1, "pierce": True})
    if not got:
        report.failures.append("the DOM could not be read")
        return
    dom = _Dom(got["root"])
    if dom.truncated:
        report.failures.append(f"the DOM has more than {MAX_NODES} nodes: read in part")

    # Same-origin documents; a frame of another origin is only named.
    readable: list[int] = []
    for doc in dom.docs:
        owner = dom.owner.get(doc)
        frame_id = dom.nodes[owner].frame_id if owner else str(main.get("id", ""))
        f = frames.get(frame_id, {})
        if owner and f and f.get("securityOrigin") != origin:
            report.failures.append(
                f"frame {dom.selector(owner)} is of another origin ({f.get('securityOrigin')}): not read"
            )
            continue
        readable.append(doc)
    for bid, n in dom.nodes.items():
        if n.name in ("IFRAME", "FRAME") and not n.content_doc:
            src = n.attrs.get("src", "")
            report.failures.append(
                f"frame {dom.selector(bid)} ({src[:80]}) not readable (another process or not loaded)"
            )

    listeners: list[_Listener] = []
    root_obj = call.send(
        "DOM.resolveNode", {"backendNodeId": dom.docs[0], "objectGroup": OBJECT_GROUP}
    )
    if root_obj:
        # All elements of all frames in one call (pierce crosses into same-process frames).
        got_l = call.send(
            "DOMDebugger.getEventListeners",
            {"objectId": root_obj["object"]["objectId"], "depth": -1, "pierce": True},
        )
        for raw in (got_l or {}).get("listeners", [])[:MAX_LISTENERS]:
            bid = int(raw.get("backendNodeId", 0))
            node = dom.nodes.get(bid)
            doc = node.doc if node else dom.docs[0]
            if doc not in readable:
                continue
            listeners.append(
                _Listener(
                    raw["type"],
                    bid,
                    doc,
                    str(raw.get("scriptId", "")),
                    int(raw.get("lineNumber", 0)),
                    int(raw.get("columnNumber", 0)),
                )
            )
        if got_l and len(got_l.get("listeners", [])) > MAX_LISTENERS:
            report.failures.append(f"more than {MAX_LISTENERS} listeners: read in part")
    for doc in readable:
        obj = call.send("DOM.resolveNode", {"backendNodeId": doc, "objectGroup": OBJECT_GROUP})
        if not obj:
            continue
        # `window` is non-configurable: the page cannot make reading it run its code.
        win = call.send(
            "Runtime.callFunctionOn",
            {
                "objectId": obj["object"]["objectId"],
                "functionDeclaration": "function () { return window; }",
                "objectGroup": OBJECT_GROUP,
                "silent": True,
            },
        )
        win_id = ((win or {}).get("result") or {}).get("objectId")
        if not win_id:
            report.failures.append(
                f"the window of {dom.frame_path(doc) or 'the page'} could not be read"
            )
            continue
        got_w = call.send("DOMDebugger.getEventListeners", {"objectId": win_id})
        for raw in (got_w or {}).get("listeners", [])[:MAX_LISTENERS]:
            listeners.append(
                _Listener(
                    raw["type"],
                    0,
                    doc,
                    str(raw.get("scriptId", "")),
                    int(raw.get("lineNumber", 0)),
                    int(raw.get("columnNumber", 0)),
                )
            )

    # Scripts: enabled after the listeners were read, so that attribute handlers
    # (compiled when first asked for) are among the scripts announced.
    meta: dict[str, dict[str, Any]] = {}

    def on_script(event: dict[str, Any]) -> None:
        if len(meta) < 5_000:
            meta[str(event.get("scriptId"))] = event

    call.cdp.on("Debugger.scriptParsed", on_script)
    try:
        call.send("Debugger.enable")
        # A `debugger;` statement in the page must not stop it while attached.
        call.send("Debugger.setSkipAllPauses", {"skip": True}, quiet=True)
    finally:
        with contextlib.suppress(Exception):
            call.cdp.remove_listener("Debugger.scriptParsed", on_script)
    index, probe = _fetch_scripts(call, meta, listeners, report)
    # The bot's own probe listens too (an init script): its listeners are not the game's.
    listeners = [lsn for lsn in listeners if lsn.script_id not in probe]
    state = _State(dom, index, listeners, meta, origin, frames)
    report._state = state
    _targets(report, state)
    _keys(report, state, call)


def _fetch_scripts(
    call: _Cdp, meta: dict[str, dict[str, Any]], listeners: list[_Listener], report: ListenerReport
) -> tuple[ScriptIndex, set[str]]:
    """The sources of the handlers' scripts, then of the other scripts of their frames
    (for the functions, constants and maps they use), within the size limits."""
    wanted = [lsn.script_id for lsn in listeners if lsn.type in KEY_EVENTS + CLICK_EVENTS]
    order: list[str] = []
    for sid in wanted:
        if sid in meta and sid not in order:
            order.append(sid)
    for sid, m in meta.items():
        aux = m.get("executionContextAuxData") or {}
        if sid in order or aux.get("isDefault") is False:
            continue
        if LIBRARY_URL.search(str(m.get("url", ""))):
            continue  # a library holds no game constants (and is big)
        order.append(sid)
    scripts: list[Script] = []
    probe: set[str] = set()
    total = 0
    for sid in order[:MAX_SCRIPTS]:
        m = meta[sid]
        size = int(m.get("length") or 0) or (int(m.get("endLine", 0)) + 1) * 80
        if total + size > MAX_SCRIPT_CHARS and sid not in wanted:
            continue
        got = call.send("Debugger.getScriptSource", {"scriptId": sid}, quiet=True)
        if not got:
            continue
        source = str(got.get("scriptSource", ""))
        if _PROBE_MARK in source:
            probe.add(sid)
            continue
        total += len(source)
        aux = m.get("executionContextAuxData") or {}
        scripts.append(Script(sid, source, str(m.get("url", "")), str(aux.get("frameId", ""))))
        if total > MAX_SCRIPT_CHARS:
            report.failures.append("the scripts are bigger than the reading limit: read in part")
            break
    return ScriptIndex(scripts), probe


def _where(state: _State, lsn: _Listener) -> str:
    m = state.script_meta.get(lsn.script_id, {})
    url = str(m.get("url") or f"script {lsn.script_id}")
    return f"{url.rsplit('/', 1)[-1] or url}:{lsn.line + 1}:{lsn.column + 1}"


def _is_game(state: _State, lsn: _Listener) -> bool:
    return lsn.script_id in state.index.scripts


def _target_name(state: _State, lsn: _Listener) -> tuple[str, str]:
    if lsn.bid == 0:
        return "window", "window"
    node = state.dom.nodes.get(lsn.bid)
    kind = _target_kind(node)
    if kind == "document":
        return "document", kind
    return state.dom.selector(lsn.bid), kind


def _targets(report: ListenerReport, state: _State) -> None:
    keys: dict[tuple[str, tuple[str, ...]], KeyTarget] = {}
    clicks: dict[tuple[str, tuple[str, ...]], ClickTarget] = {}
    for lsn in state.listeners:
        selector, kind = _target_name(state, lsn)
        frame = state.dom.frame_path(lsn.bid or lsn.frame_doc)
        where = _where(state, lsn)
        if lsn.type in KEY_EVENTS:
            t = keys.setdefault((selector, tuple(frame)), KeyTarget(selector, kind, frame, [], []))
            if lsn.type not in t.events:
                t.events.append(lsn.type)
            if where not in t.handlers and len(t.handlers) < 10:
                t.handlers.append(where)
        elif lsn.type in CLICK_EVENTS:
            node = state.dom.nodes.get(lsn.bid)
            tag = "window" if lsn.bid == 0 else (node.name.lower() if node else "")
            c = clicks.setdefault(
                (selector, tuple(frame)), ClickTarget(selector, frame, tag, [], [])
            )
            if lsn.type not in c.events:
                c.events.append(lsn.type)
            if where not in c.handlers and len(c.handlers) < 5:
                c.handlers.append(where)
                c.roles = sorted(set(c.roles) | {r for r, _ in _handler_roles(state, lsn)})
    order = {
        "window": 0,
        "document": 1,
        "body": 2,
        "canvas": 3,
        "input": 4,
        "textarea": 4,
        "element": 5,
    }
    report.key_targets = sorted(keys.values(), key=lambda t: order.get(t.kind, 9))
    report.click_targets = list(clicks.values())[:300]


def _handler_roles(state: _State, lsn: _Listener) -> list[tuple[str, str]]:
    """What a click handler's first lines suggest (start, pause...)."""
    body = _handler_text(state, lsn, 600)
    return roles_of(body) if body else []


def _handler_text(state: _State, lsn: _Listener, limit: int) -> str:
    script = state.index.scripts.get(lsn.script_id)
    if script is None:
        return ""
    m = state.script_meta.get(lsn.script_id, {})
    start_line, start_col = int(m.get("startLine", 0)), int(m.get("startColumn", 0))
    pos = offset_of(
        script.source,
        lsn.line - start_line,
        lsn.column - (start_col if lsn.line == start_line else 0),
    )
    fn = function_at(script.source, pos, max_chars=20_000)
    if fn is None:
        return script.source[:limit] if pos == 0 else ""
    return script.source[fn.body_start : min(fn.body_end, fn.body_start + limit)]


def _keys(report: ListenerReport, state: _State, call: _Cdp) -> None:
    reader = HandlerReader(state.index)
    seen: set[tuple[str, int, int]] = set()
    hits: list[tuple[KeyHit, str]] = []
    game_handlers = 0
    failed = 0
    for lsn in state.listeners:
        if lsn.type not in KEY_EVENTS:
            continue
        spot = (lsn.script_id, lsn.line, lsn.column)
        if spot in seen:
            continue
        seen.add(spot)
        if lsn.script_id not in state.index.scripts:
            report.failures.append(
                f"the source of a {lsn.type} handler ({_where(state, lsn)}) is not readable"
            )
            failed += 1
            continue
        if len(seen) > MAX_HANDLERS:
            report.failures.append(f"more than {MAX_HANDLERS} keyboard handlers: read in part")
            break
        if call.left_ms() < 0:
            report.failures.append("out of time reading the handlers: read in part")
            break
        game_handlers += 1
        m = state.script_meta.get(lsn.script_id, {})
        where = _where(state, lsn)
        result = reader.read(
            lsn.script_id,
            lsn.line,
            lsn.column,
            int(m.get("startLine", 0)),
            int(m.get("startColumn", 0)),
            lsn.type,
        )
        for name, kind in sorted(result.held.items())[:4]:
            reader.held_loops(lsn.script_id, name, kind, result)
        found = list(result.hits)
        for name in sorted(result.held)[:4]:
            found += held_polls(state.index, lsn.script_id, name)
        selector, _kind = _target_name(state, lsn)
        notes = list(result.notes)
        if result.held:
            notes.append(f"held-key map(s) {sorted(result.held)} polled elsewhere")
        if not [h for h in found if not h.negated] and not result.held and lsn.type != "keyup":
            # (A keyup handler often only ends a held key's repeat: no failure.)
            url = str(m.get("url", ""))
            if result.queued:
                why = "pushes the event into a queue read later (Phaser-style key queue)"
            elif LIBRARY_URL.search(url):
                why = "is a library's dispatcher"
            elif result.unresolved:
                why = f"hands the event to {', '.join(result.unresolved[:3])}, not found (dispatch too deep)"
            else:
                why = "tests no key the reader understands"
            report.failures.append(f"the {lsn.type} handler at {where} {why}")
            notes.append(why)
            failed += 1
        report.handlers.append(
            HandlerInfo(
                lsn.type,
                selector,
                state.dom.frame_path(lsn.bid or lsn.frame_doc),
                where,
                sorted({h.key for h in found}),
                notes[:6],
            )
        )
        hits += [(h, where) for h in found]
    library = any("library" in f for f in report.failures)
    if library or game_handlers == 0:
        # Handlers given to a library (`$(document).on('keydown', fn)`): the page's
        # listener is the library's dispatcher; the game's own functions are read.
        for sid, offset, event in bound_handlers(state.index):
            result = reader.read_at(sid, offset, event)
            url = state.index.scripts[sid].url
            where = f"{url.rsplit('/', 1)[-1] or url}@{offset} (bound through a library)"
            found = list(result.hits)
            for name, kind in sorted(result.held.items())[:4]:
                reader.held_loops(sid, name, kind, result)
                found += held_polls(state.index, sid, name)
            found += [h for h in result.hits if h not in found]
            report.handlers.append(
                HandlerInfo(event, "(library)", [], where, sorted({h.key for h in found}), [])
            )
            hits += [(h, where) for h in found]
            game_handlers += 1
    held = any(h.notes and any("held" in n for n in h.notes) for h in report.handlers)
    if call.left_ms() < 0:
        report.keys = _merge(hits)
        return
    if held or failed or game_handlers == 0 or len({h.key for h, _ in hits}) < 4:
        # An input helper asked about keys (`input.isDown('ArrowLeft')`).
        hits += [(h, "key query") for h in key_queries(state.index)]
    if game_handlers == 0 and not failed and not hits:
        report.failures.append(
            "no keyboard listener found (keys may be polled by a library or read from another frame)"
        )
    if failed or len({h.key for h, _ in hits}) < 2:
        # The handlers did not explain the controls: what whole scripts compare is the
        # next best hint (marked as such).
        scanned = scan_scripts(state.index.scripts.values())
        if scanned:
            report.from_scan = True
            hits += [(h, "scripts") for h in scanned]
    report.keys = _merge(hits)


def _merge(hits: list[tuple[KeyHit, str]]) -> list[FoundKey]:
    keys: dict[str, FoundKey] = {}
    votes: dict[str, dict[str, int]] = {}
    for hit, where in hits:
        k = keys.setdefault(hit.key, FoundKey(hit.key, [], [], None, {}, []))
        if hit.raw not in k.written and len(k.written) < 6:
            k.written.append(hit.raw)
        if hit.via not in k.via:
            k.via.append(hit.via)
        if where not in k.where and len(k.where) < 6:
            k.where.append(where)
        if hit.roles and not hit.negated:
            role = hit.roles[0][0]
            votes.setdefault(hit.key, {})[role] = votes.setdefault(hit.key, {}).get(role, 0) + 1
            for r, e in hit.roles:
                k.roles.setdefault(r, e)
    for key, k in keys.items():
        if key in votes:
            # The role most branches of this key suggest (ties: ROLES order).
            k.role = max(votes[key], key=lambda r: (votes[key][r], -ROLES.index(r)))
    # Keys read from handlers first, then those from scans; within each, as found.
    ranked = sorted(keys.values(), key=lambda k: all(v in ("script", "binding") for v in k.via))
    return ranked[:60]


# ---- start candidates --------------------------------------------------------------------------
_START_NAME = re.compile(
    r"(?:^|[^a-z])(start|play|begin|restart|new_?game|resume|go|launch|jouer|jugar|spiel|kaishi)(?:[^a-z]|$)",
    re.I,
)
# What a handler does besides the game (code identifiers): a tie-breaker against it.
_SIDE_ACTION = re.compile(
    r"sound|mute|music|audio|volume|fullscreen|help|setting|option|theme|lang|share|cookie", re.I
)
_BUTTON_INPUTS = {"button", "submit", "image", "reset"}
_TEXT_INPUTS = {"", "text", "search", "email"}


@dataclass
class _Box:
    x: float
    y: float
    w: float
    h: float
    paint: int = 0
    style: dict[str, str] = field(default_factory=dict)

    @property
    def area(self) -> float:
        return self.w * self.h

    def center(self) -> tuple[float, float]:
        return self.x + self.w / 2, self.y + self.h / 2

    def contains(self, x: float, y: float) -> bool:
        return self.x <= x <= self.x + self.w and self.y <= y <= self.y + self.h

    def overlap(self, other: _Box) -> float:
        w = min(self.x + self.w, other.x + other.w) - max(self.x, other.x)
        h = min(self.y + self.h, other.y + other.h) - max(self.y, other.y)
        return max(w, 0) * max(h, 0)

    def distance(self, other: _Box) -> float:
        dx = max(other.x - (self.x + self.w), self.x - (other.x + other.w), 0)
        dy = max(other.y - (self.y + self.h), self.y - (other.y + other.h), 0)
        return (dx * dx + dy * dy) ** 0.5


def start_candidates(
    page: Any, cdp: Any, report: ListenerReport, budget_s: float = 5.0, limit: int = 12
) -> list[StartCandidate]:
    """What to try, in order, to start the game (see the module's docstring)."""
    del page
    state: _State | None = report._state
    failures: list[str] = []
    call = _Cdp(cdp, budget_s, failures)
    out: list[StartCandidate] = []
    try:
        if state is None:
            raise _OutOfTime("no listener report")
        boxes = _layout(call, state.dom)
        names = _ax_names(call, state)
        out = _rank(state, report, boxes, names)
    except _OutOfTime as stop:
        failures.append(f"out of time at {stop}: start candidates from the keys only")
    out += _key_candidates(report)
    out.sort(key=lambda c: -c.score)
    report.failures += [f"start: {f}" for f in failures]
    return out[:limit]


def _key_candidates(report: ListenerReport) -> list[StartCandidate]:
    out = []
    for k in report.keys:
        if "start" in k.roles:
            score = 4.5 if k.role in ("start", "pause") else 3.0
            out.append(
                StartCandidate(
                    "key",
                    key=k.key,
                    name=repr(k.key),
                    score=score,
                    reasons=[f"its branch starts the game: {k.roles['start']}"],
                )
            )
        elif k.role == "pause":
            out.append(
                StartCandidate(
                    "key",
                    key=k.key,
                    name=repr(k.key),
                    score=2.5,
                    reasons=[f"its branch pauses or resumes: {k.roles['pause']}"],
                )
            )
    return out


def _layout(call: _Cdp, dom: _Dom) -> dict[int, _Box]:
    """Every laid-out element's box (in page coordinates), paint order and a few styles."""
    styles = ["display", "visibility", "opacity", "cursor", "position", "pointer-events"]
    snap = call.send(
        "DOMSnapshot.captureSnapshot",
        {"computedStyles": styles, "includePaintOrder": True, "includeDOMRects": True},
    )
    boxes: dict[int, _Box] = {}
    if not snap:
        return boxes
    strings = snap.get("strings", [])

    def s(i: int) -> str:
        return strings[i] if 0 <= i < len(strings) else ""

    offsets: dict[int, tuple[float, float]] = {}  # a frame's document -> its origin
    for d in snap.get("documents", [])[:20]:
        nodes = d.get("nodes", {})
        bids = nodes.get("backendNodeId", [])
        layout = d.get("layout", {})
        doc_bid = bids[0] if bids else 0
        ox, oy = offsets.get(doc_bid, (0.0, 0.0))
        owner = dom.owner.get(doc_bid)
        if owner and owner in boxes:
            ox, oy = boxes[owner].x, boxes[owner].y
        for n, idx in enumerate(layout.get("nodeIndex", [])[:MAX_NODES]):
            if idx >= len(bids):
                continue
            bid = bids[idx]
            b = layout["bounds"][n]
            st = {name: s(v) for name, v in zip(styles, layout["styles"][n], strict=False)}
            paint = (
                layout.get("paintOrders", [0] * (n + 1))[n]
                if n < len(layout.get("paintOrders", []))
                else 0
            )
            boxes[bid] = _Box(b[0] + ox, b[1] + oy, b[2], b[3], paint, st)
    return boxes


def _ax_names(call: _Cdp, state: _State) -> dict[int, tuple[str, str]]:
    """(role, accessible name) of the elements the accessibility tree names."""
    out: dict[int, tuple[str, str]] = {}
    frame_ids: list[str | None] = [None]
    for doc in state.dom.docs[1:]:
        owner = state.dom.owner.get(doc)
        if owner and state.dom.nodes[owner].frame_id:
            f = state.frames.get(state.dom.nodes[owner].frame_id, {})
            if f.get("securityOrigin") == state.origin:
                frame_ids.append(state.dom.nodes[owner].frame_id)
    for fid in frame_ids[:10]:
        got = call.send("Accessibility.getFullAXTree", {"frameId": fid} if fid else {}, quiet=True)
        for n in (got or {}).get("nodes", [])[:MAX_NODES]:
            bid = n.get("backendDOMNodeId")
            if not bid or n.get("ignored"):
                continue
            role = str((n.get("role") or {}).get("value", ""))
            name = str((n.get("name") or {}).get("value", ""))
            out[int(bid)] = (role, " ".join(name.split())[:60])
    return out


def _visible(state: _State, boxes: dict[int, _Box], bid: int) -> bool:
    b = boxes.get(bid)
    if b is None or b.w < 2 or b.h < 2:
        return False
    if b.style.get("visibility") in ("hidden", "collapse") or b.style.get("display") == "none":
        return False
    for a in [bid, *list(state.dom.ancestors(bid, 12))]:
        ab = boxes.get(a)
        if ab is None:
            continue
        try:
            if float(ab.style.get("opacity") or 1) < 0.05:
                return False
        except ValueError:
            pass
    return b.style.get("pointer-events") != "none"


def _board(state: _State, boxes: dict[int, _Box]) -> tuple[int, _Box] | None:
    """The playfield's element: the biggest canvas or svg, else the box holding a grid of
    many equal cells (a DOM game), else None."""
    best: tuple[float, int] | None = None
    for bid, n in state.dom.nodes.items():
        if (
            n.name not in ("CANVAS", "svg", "SVG")
            or bid not in boxes
            or not _visible(state, boxes, bid)
        ):
            continue
        b = boxes[bid]
        if b.w >= 80 and b.h >= 120 and (best is None or b.area > best[0]):
            best = (b.area, bid)
    if best is None:
        for bid, n in state.dom.nodes.items():
            kids = [c for c in n.children if c in boxes]
            if len(kids) < 40 or bid not in boxes:
                continue
            sizes: dict[tuple[int, int], int] = {}
            for c in kids[:800]:
                cb = boxes[c]
                sizes[(round(cb.w), round(cb.h))] = sizes.get((round(cb.w), round(cb.h)), 0) + 1
            (w, h), count = max(sizes.items(), key=lambda kv: kv[1])
            if (
                count >= 40
                and 4 <= w <= 80
                and 4 <= h <= 80
                and (best is None or boxes[bid].area > best[0])
            ):
                best = (boxes[bid].area, bid)
        # A table of cells: the rows hold the cells.
        if best is None:
            for bid, n in state.dom.nodes.items():
                if n.name == "TABLE" and bid in boxes and boxes[bid].area >= 20_000:
                    best = (
                        (boxes[bid].area, bid)
                        if best is None or boxes[bid].area > best[0]
                        else best
                    )
    return (best[1], boxes[best[1]]) if best else None


def _rank(
    state: _State, report: ListenerReport, boxes: dict[int, _Box], names: dict[int, tuple[str, str]]
) -> list[StartCandidate]:
    dom = state.dom
    board = _board(state, boxes)
    board_bid, board_box = board if board else (0, None)
    own: dict[int, list[_Listener]] = {}
    delegated: list[_Listener] = []
    for lsn in state.listeners:
        if lsn.type not in CLICK_EVENTS or not _is_game(state, lsn):
            continue
        node = dom.nodes.get(lsn.bid)
        if lsn.bid == 0 or node is None or node.name in ("#document", "HTML", "BODY"):
            delegated.append(lsn)
        else:
            own.setdefault(lsn.bid, []).append(lsn)
    key_inputs = {t.selector for t in report.key_targets if t.kind in ("input", "textarea")}
    # Forms that listen for their submit (a menu of radio choices sent by a click or Enter).
    submitting = {
        lsn.bid for lsn in state.listeners if lsn.type == "submit" and _is_game(state, lsn)
    }
    # Ids and classes a page-wide click handler names (`e.target.id === 'start'`).
    named: set[str] = set()
    for lsn in delegated[:10]:
        for tok in lex(_handler_text(state, lsn, 4000), 0, max_chars=4000):
            v = string_value(tok)
            if v and 0 < len(v) < 40:
                named.update(v.lstrip("#.").split())

    cands: dict[int, StartCandidate] = {}
    for bid, n in dom.nodes.items():
        if n.name.startswith("#") or n.name in ("HTML", "BODY", "HEAD", "SCRIPT", "STYLE"):
            continue
        role, ax_name = names.get(bid, ("", ""))
        tag = n.name.upper()
        input_type = n.attrs.get("type", "").lower()
        listens = own.get(bid, [])
        is_button = (
            tag == "BUTTON"
            or role in ("button", "menuitem")
            or (tag == "INPUT" and input_type in _BUTTON_INPUTS)
        )
        is_link = tag == "A" and "href" in n.attrs
        is_choice = role in ("radio", "menuitemradio", "option", "tab") or (
            tag == "LABEL" and any(a in submitting for a in dom.ancestors(bid, 8))
        )
        pointer = (
            boxes.get(bid) is not None
            and boxes[bid].style.get("cursor") == "pointer"
            and not (n.parent in boxes and boxes[n.parent].style.get("cursor") == "pointer")
        )
        by_name = bool(named) and (
            n.attrs.get("id") in named or bool(set(n.attrs.get("class", "").split()) & named)
        )
        fillable = tag in ("INPUT", "TEXTAREA") and (
            tag == "TEXTAREA" or input_type in _TEXT_INPUTS
        )
        if not (
            listens
            or is_button
            or is_link
            or is_choice
            or pointer
            or by_name
            or "onclick" in n.attrs
            or fillable
        ):
            continue
        if not _visible(state, boxes, bid):
            continue
        box = boxes[bid]
        selector = dom.selector(bid)
        frame = dom.frame_path(bid)
        text = (
            ax_name
            or dom.text(bid)
            or n.attrs.get("alt", "")
            or n.attrs.get("title", "")
            or n.attrs.get("aria-label", "")
        )
        if fillable:
            if (
                selector in key_inputs
                or n.attrs.get("value")
                or "disabled" in n.attrs
                or "readonly" in n.attrs
                or box.w < 40
            ):
                continue
            c = StartCandidate(
                "fill",
                selector,
                frame,
                name=text or n.attrs.get("placeholder", "") or n.attrs.get("name", ""),
                box=(box.x, box.y, box.w, box.h),
            )
            c.score = 3.0
            c.reasons.append("an empty text field (a name to give before playing)")
            form = next((a for a in dom.ancestors(bid) if dom.nodes[a].name == "FORM"), 0)
            if form:
                submit = _form_button(dom, form)
                if submit:
                    c.submit = dom.selector(submit)
                c.score += 1.0
                c.reasons.append("in a form")
            _place(c, box, board_box, boxes, bid, board_bid, dom)
            cands[bid] = c
            continue
        c = StartCandidate(
            "click", selector, frame, name=text[:60], box=(box.x, box.y, box.w, box.h)
        )
        if listens:
            c.score += 3.0
            c.reasons.append(
                f"has its own {'/'.join(sorted({lsn.type for lsn in listens}))} listener"
            )
        elif "onclick" in n.attrs:
            c.score += 3.0
            c.reasons.append("has an onclick attribute")
        elif any(a in own for a in list(dom.ancestors(bid, 2))):
            c.score += 1.5
            c.reasons.append("inside an element with a click listener")
        if is_button:
            c.score += 2.0
            c.reasons.append("a button")
        elif is_link:
            href = n.attrs.get("href", "")
            if href.startswith(("http:", "https:", "//")) and not href.startswith(state.origin):
                c.score -= 3.0
                c.reasons.append("a link to another site")
            elif href and not href.startswith(("#", "javascript:")):
                c.score += 1.0
                c.reasons.append("a link to another page of the game")
            else:
                c.score += 0.5
        elif tag in ("IMG", "SVG", "svg") or role in ("img", "image"):
            c.score += 0.5
            c.reasons.append("an image")
        elif is_choice:
            c.score += 1.0
            c.reasons.append("a choice in a menu")
        if submitting and any(a in submitting for a in dom.ancestors(bid, 8)):
            c.score += 1.5
            c.reasons.append("in a form the game listens to")
        if pointer:
            c.score += 1.0
            c.reasons.append("a pointer cursor")
        if by_name:
            c.score += 2.0
            c.reasons.append("a page-wide click handler names it")
        if "disabled" in n.attrs:
            c.score -= 5.0
            c.reasons.append("disabled")
        if bid == board_bid:
            c.score -= 1.0
            c.reasons.append("the board itself")
        _place(c, box, board_box, boxes, bid, board_bid, dom)
        # Tie-breakers: what its handler does (a start, or a pause, sound or help), and
        # a start-like identifier. Never more than a point.
        roles = {r for lsn in listens[:3] for r, _ in _handler_roles(state, lsn)}
        side = any(_SIDE_ACTION.search(_handler_text(state, lsn, 300)) for lsn in listens[:3])
        if "start" in roles:
            c.score += 0.75
            c.reasons.append("its handler starts something")
        elif "pause" in roles:
            c.score -= 0.75
            c.reasons.append("its handler pauses")
        elif side:
            c.score -= 0.75
            c.reasons.append("its handler changes a setting (sound, help, language...)")
        ident = " ".join(
            [
                n.attrs.get("id", ""),
                n.attrs.get("class", ""),
                n.attrs.get("src", "").rsplit("/", 1)[-1],
                n.attrs.get("name", ""),
            ]
        )
        if _START_NAME.search(re.sub(r"([a-z])([A-Z])", r"\1 \2", ident)):
            c.score += 0.5
            c.reasons.append("a start-like id, class or file name")
        cands[bid] = c
    # One candidate per control: a button and the image inside it are one thing to click.
    out: list[StartCandidate] = []
    for bid, c in cands.items():
        parent = next((a for a in dom.ancestors(bid, 4) if a in cands), 0)
        if parent and cands[parent].score >= c.score and c.action == cands[parent].action:
            continue
        out.append(c)
    return out


def _place(
    c: StartCandidate,
    box: _Box,
    board: _Box | None,
    boxes: dict[int, _Box],
    bid: int,
    board_bid: int,
    dom: _Dom,
) -> None:
    """Score where a candidate is: on the board, by it, covering it, painted over it."""
    if board is None:
        c.score += 0.5  # no board in sight: whatever is shown may lead to it
        return
    cx, cy = box.center()
    if bid == board_bid:
        return
    covering = box.overlap(board) >= 0.6 * board.area
    if covering and box.paint > board.paint:
        # The board cannot be played while something lies over it.
        c.score += 5.0
        c.reasons.append("covers the board (an overlay)")
    elif board.contains(cx, cy):
        c.score += 3.0 if box.paint >= board.paint else 1.0
        c.reasons.append("on the board")
    elif box.distance(board) <= 0.6 * max(board.w, board.h):
        c.score += 2.0
        c.reasons.append("next to the board")
    elif box.distance(board) <= 1.5 * max(board.w, board.h):
        c.score += 0.5
        c.reasons.append("near the board")
    else:
        c.score -= 0.5
        c.reasons.append("far from the board")
    if box.area > 4 * board.area and not covering:
        c.score -= 1.0
        c.reasons.append("much bigger than the board (a page section)")


def _form_button(dom: _Dom, form: int) -> int:
    stack = list(dom.nodes[form].children)
    steps = 0
    while stack and steps < 500:
        steps += 1
        b = stack.pop(0)
        n = dom.nodes.get(b)
        if n is None:
            continue
        if n.name == "BUTTON" or (
            n.name == "INPUT" and n.attrs.get("type", "").lower() in ("submit", "button", "image")
        ):
            return b
        stack.extend(n.children)
    return 0


def locate(page: Any, candidate: StartCandidate) -> Any:
    """A Playwright locator for a click or fill candidate (through its iframes)."""
    scope = page
    for frame in candidate.frame:
        scope = scope.frame_locator(frame)
    return scope.locator(candidate.selector).first

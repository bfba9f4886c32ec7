"""Read a browser game's own JavaScript state through the Chrome DevTools Protocol.

Beside the renderer reader (screenshots, DOM), the state reader looks for the game's
board, the active piece's position, the score and a game-over flag in the page's heap:

- `scan(grid)` finds candidates by shape, not by name: every `Array` of the heap
  (`Runtime.queryObjects`, which forces a full garbage collection: never call it while
  timing the game; it does not list typed arrays, so those count when they are a board's
  rows or are found under a name) that looks like a board (a list of equal rows, or a
  flat list of rows x cols cells), and the numbers, booleans and short strings held by the page's
  globals, its top-level `let`/`const`, and the closures of its key listeners (an
  ES-module game keeps its state there). It keeps references to them, out of the game's
  reach (a CDP object group and an object only we hold).
- `sample()` re-reads those references (no new scan): boards as row strings, one
  character per cell ('.' empty), scalars as values. A few CDP round trips.

`state_model.interpret` decides, from samples taken while keys are pressed, which
candidate is the board, the piece's x/y, the score and the game-over flag.

The page is untrusted: the reader never runs a getter, a Proxy trap, a game function,
toString or valueOf; it uses built-ins it checked to be the browser's own (CDP describes
a native function as `function name() { [native code] }`, which page code cannot fake);
every CDP call has a timeout; every loop in the page is bounded. Whatever goes wrong, the
caller gets "no state" (`ok: False`), never an exception.
"""

from __future__ import annotations

import contextlib
import re
import statistics
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

STATE_JS = (Path(__file__).parent / "state.js").read_text()

SCAN_CALL_MS = 4000  # one CDP call during a scan (queryObjects on a big heap takes a while)
SAMPLE_CALL_MS = 1000  # one CDP call during a sample: a page that slow is not read
SCAN_BUDGET_S = 12.0  # a whole scan: past it, no state (a page too busy to be read)
SAMPLE_BUDGET_S = 1.5  # a whole sample, all its calls
MAX_DEPTH = 3  # property steps below a root (window.game.piece.x)
MAX_VISITS = 160  # objects whose properties are listed during a scan
MAX_CHILDREN = 150  # properties looked at per object
MAX_SCALARS = 300
MAX_STRING_SCALARS = 60
MAX_NAMED = 400  # arrays and objects whose path is remembered
MAX_LISTENERS = 10
MAX_LEXICALS = 150
MAX_STR = 32
# Rounds of "CDP, what are these new objects?" per sample: one per level of new objects
# on a path (a new piece object holding a new list of new cells is three); none at all
# while the game keeps its objects.
VERIFY_ROUNDS = 5
# After this many failed samples in a row the page is not asked again for a while.
FAILS_BEFORE_PAUSE = 2
PAUSE_S = 5.0

K_BAD, K_ARRAY, K_TYPED, K_OBJECT = 0, 1, 2, 3
# Scopes of a listener worth reading: the page's global and script scopes are read
# through `window` and the top-level lexical names already.
SCOPE_TYPES = {"Closure", "Module", "Block", "Local", "Catch", "Eval", "Script"}
KEY_EVENTS = ("keydown", "keyup", "keypress")
# ECMAScript constructors: a real instance has a CDP subtype (map, set, ...) or is not
# walked anyway; a user class of the same name (a game's `class Map`) is walked.
JS_CORE = {"Object", "Map", "Set", "Array", "Error", "Date", "Promise", "Function"}
IDENT = re.compile(r"^[^\W\d][\w$]*$|^\$[\w$]*$")
LEXICAL_ACCESSOR = "() => {{ try {{ return {name}; }} catch (e) {{ return undefined; }} }}"


class Unavailable(Exception):
    """The page cannot be read now (timeout, gone, a built-in that is not the browser's)."""


@dataclass
class _Path:
    root: str  # "w" window, "l" top-level lexical, "s" closure variable, "o" bound object
    i: int  # index of the lexical accessor / closure variable / bound object
    steps: list[str | int]
    text: str

    def child(self, key: str | int) -> _Path:
        shown = f"[{key}]" if isinstance(key, int) else f".{key}"
        return _Path(self.root, self.i, [*self.steps, key], self.text + shown)

    def js(self) -> dict[str, Any]:
        return {"root": self.root, "i": self.i, "steps": self.steps}


@dataclass
class _ScopeVar:
    fn: int  # index into the context's listener functions
    scope: int  # index in the function's [[Scopes]]
    name: str


@dataclass
class _Context:
    id: int
    frame_id: str
    label: str  # "" for the top frame, "f1"... for same-origin iframes
    group: str
    holder: str | None = None
    paths: list[_Path] = field(default_factory=list)
    scope_vars: list[_ScopeVar] = field(default_factory=list)
    fns: int = 0
    boards: list[dict[str, Any]] = field(default_factory=list)
    shapes: list[dict[str, Any]] = field(default_factory=list)
    scalars: list[dict[str, Any]] = field(default_factory=list)
    uses_scopes: bool = False

    def prefix(self, name: str) -> str:
        return f"{self.label}.{name}" if self.label else name


def _kind(remote: dict[str, Any], builtins: set[str]) -> int:
    """What we may do with an object CDP describes: step in (array, typed, plain) or not."""
    if remote.get("type") != "object":
        return K_BAD
    subtype = remote.get("subtype")
    if subtype == "array":
        return K_ARRAY
    if subtype == "typedarray":
        return K_TYPED
    if subtype is None:
        name = remote.get("className", "")
        if name == "Object" or name in JS_CORE or name not in builtins:
            return K_OBJECT
    return K_BAD  # a Proxy, a DOM node, a platform object, a Map...


def _length(remote: dict[str, Any]) -> int:
    match = re.search(r"\((\d+)\)$", remote.get("description", ""))
    return int(match.group(1)) if match else -1


def _native(remote: dict[str, Any] | None, name: str) -> bool:
    # V8 writes a native function's own name here; a page's function (or a bound one)
    # is described by its source, so this cannot be faked by page code.
    return bool(
        remote
        and remote.get("type") == "function"
        and remote.get("description") == f"function {name}() {{ [native code] }}"
    )


def _scalar_value(remote: dict[str, Any]) -> tuple[str, Any] | None:
    kind = remote.get("type")
    if kind == "number" and "value" in remote:
        return "number", remote["value"]
    if kind == "boolean":
        return "boolean", remote.get("value")
    if kind == "string":
        text = remote.get("value", "")
        if len(text) <= MAX_STR:
            return "string", text
    return None


def _arg(remote: dict[str, Any]) -> dict[str, Any]:
    """A CDP CallArgument passing the value CDP described (by reference for objects)."""
    if "objectId" in remote:
        return {"objectId": remote["objectId"]}
    if "unserializableValue" in remote:
        return {"unserializableValue": remote["unserializableValue"]}
    if "value" in remote:
        return {"value": remote["value"]}
    return {}


class StateReader:
    """Reads a game's JavaScript state; see the module docstring."""

    def __init__(self, page: Any, cdp: Any) -> None:
        self.page = page
        self.cdp = cdp
        self._contexts: dict[int, dict[str, Any]] = {}
        self._ctx: list[_Context] = []
        self._builtins: set[str] | None = None
        self._grid: tuple[int, int] | None = None
        self._description: dict[str, Any] = self._empty("not scanned")
        self.scan_ms: list[float] = []
        self.sample_ms: list[float] = []
        self._fails = 0
        self._paused_until = 0.0
        self._scans = 0
        self._scan_budget_s = SCAN_BUDGET_S
        self._enabled = False
        self._deadline = float("inf")
        with contextlib.suppress(Exception):
            cdp.on("Runtime.executionContextCreated", self._on_created)
            cdp.on("Runtime.executionContextDestroyed", self._on_destroyed)
            cdp.on("Runtime.executionContextsCleared", self._on_cleared)

    # ---- execution contexts -------------------------------------------------------------
    def _on_created(self, event: dict[str, Any]) -> None:
        context = event.get("context") or {}
        if "id" in context:
            self._contexts[context["id"]] = context

    def _on_destroyed(self, event: dict[str, Any]) -> None:
        self._contexts.pop(event.get("executionContextId"), None)

    def _on_cleared(self, _event: Any) -> None:
        self._contexts.clear()

    def _send(self, method: str, params: dict[str, Any], timeout_ms: float) -> dict[str, Any]:
        # every call fits in what is left of the whole scan's or sample's time: a page
        # whose main thread is busy answers each call late, and many late answers must
        # not add up to a hang
        left_ms = (self._deadline - time.monotonic()) * 1000
        if left_ms <= 0 and not method.startswith("Runtime.release"):
            raise Unavailable(f"out of time before {method}")
        try:
            return self.cdp.send(method, params, timeout=max(50.0, min(timeout_ms, left_ms)))
        except Exception as error:  # Playwright's TimeoutError and Error, a closed page
            raise Unavailable(f"{method}: {str(error).splitlines()[0][:200]}") from error

    def _call(
        self,
        ctx: _Context,
        op: str,
        args: list[dict[str, Any]],
        timeout_ms: float,
        *,
        by_value: bool = True,
        target: str | None = None,
        group: str | None = None,
    ) -> Any:
        params: dict[str, Any] = {
            "functionDeclaration": STATE_JS,
            "objectId": target or ctx.holder,
            "arguments": [{"value": op}, *args],
            "returnByValue": by_value,
            "silent": True,
        }
        if group:
            params["objectGroup"] = group
        answer = self._send("Runtime.callFunctionOn", params, timeout_ms)
        if "exceptionDetails" in answer:
            details = answer["exceptionDetails"]
            text = (details.get("exception") or {}).get("description") or details.get("text")
            raise Unavailable(f"state.js {op}: {str(text).splitlines()[0][:200]}")
        result = answer.get("result") or {}
        return result.get("value") if by_value else result

    def _props(self, object_id: str, timeout_ms: float) -> tuple[list[dict], list[dict]]:
        answer = self._send(
            "Runtime.getProperties",
            {"objectId": object_id, "ownProperties": True, "generatePreview": False},
            timeout_ms,
        )
        return answer.get("result", []), answer.get("internalProperties", [])

    # ---- the scan -------------------------------------------------------------------------
    @staticmethod
    def _empty(reason: str) -> dict[str, Any]:
        return {"ok": False, "error": reason, "boards": [], "scalars": [], "shapes": []}

    def scan(
        self, grid: tuple[int, int] | None = None, budget_s: float = SCAN_BUDGET_S
    ) -> dict[str, Any]:
        """Find the candidates; `grid` is the renderer's field as (rows, cols), if known.

        Expensive (a full garbage collection per frame): a few times per evaluation, never
        while timing the game. Returns the description (see `describe`)."""
        started = time.perf_counter()
        self._grid = grid
        self._deadline = float("inf")
        self._release()
        self._scans += 1
        self._deadline = time.monotonic() + budget_s
        self._scan_budget_s = budget_s
        try:
            description = self._scan(grid, started)
        except Unavailable as error:
            description = self._empty(str(error))
        except Exception as error:  # the reader must never break the bot
            description = self._empty(f"reader error: {error!r}"[:300])
        finally:
            self._deadline = float("inf")
        elapsed = (time.perf_counter() - started) * 1000
        self.scan_ms.append(round(elapsed, 1))
        description["scan_ms"] = round(elapsed, 1)
        self._description = description
        self._fails = 0
        self._paused_until = 0.0
        return description

    def _release(self) -> None:
        for ctx in self._ctx:
            with contextlib.suppress(Exception):
                self._send("Runtime.releaseObjectGroup", {"objectGroup": ctx.group}, 1000)
        self._ctx = []

    def _scan(self, grid: tuple[int, int] | None, started: float) -> dict[str, Any]:
        if not self._enabled:
            self._send("Runtime.enable", {}, SCAN_CALL_MS)
            if not self._contexts:
                # enabled before we listened: enabling again announces the contexts
                self._send("Runtime.disable", {}, SCAN_CALL_MS)
                self._send("Runtime.enable", {}, SCAN_CALL_MS)
            self._enabled = True
        main_frame = self._send("Page.getFrameTree", {}, SCAN_CALL_MS)["frameTree"]["frame"]
        main_origin = "{0.scheme}://{0.netloc}".format(urlsplit(main_frame.get("url", "")))
        contexts = [
            c
            for c in self._contexts.values()
            if (c.get("auxData") or {}).get("isDefault")
            and (
                (c.get("auxData") or {}).get("frameId") == main_frame["id"]
                or c.get("origin") == main_origin
            )
        ]
        contexts.sort(key=lambda c: (c.get("auxData") or {}).get("frameId") != main_frame["id"])
        if not contexts:
            raise Unavailable("no main-world execution context")
        if self._builtins is None:
            self._builtins = self._builtin_names(main_frame["id"])
        boards: list[dict[str, Any]] = []
        scalars: list[dict[str, Any]] = []
        shapes: list[dict[str, Any]] = []
        frames: list[dict[str, Any]] = []
        errors: list[str] = []
        for n, context in enumerate(contexts[:4]):
            label = "" if n == 0 else f"f{n}"
            ctx = _Context(
                id=context["id"],
                frame_id=(context.get("auxData") or {}).get("frameId", ""),
                label=label,
                group=f"bench-state-{self._scans}-{context['id']}",
            )
            self._ctx.append(ctx)
            try:
                info = self._scan_context(ctx, grid, started)
            except Unavailable as error:
                errors.append(f"{label or 'top'}: {error}")
                ctx.holder = None
                continue
            frames.append({"frame": label or "top", "url": context.get("origin"), **info})
            boards += ctx.boards
            scalars += ctx.scalars
            shapes += ctx.shapes
        self._ctx = [c for c in self._ctx if c.holder is not None]
        if not self._ctx:
            raise Unavailable("; ".join(errors) or "nothing readable")
        return {
            "ok": True,
            "error": "; ".join(errors) or None,
            "grid": list(grid) if grid else None,
            "frames": frames,
            "boards": boards,
            "scalars": scalars,
            "shapes": shapes,
        }

    def _builtin_names(self, frame_id: str) -> set[str]:
        """The names a fresh window has: a world of our own shows them (its global is the
        browser's, not the game's)."""
        world = self._send(
            "Page.createIsolatedWorld",
            {"frameId": frame_id, "worldName": "bench-state-names"},
            SCAN_CALL_MS,
        )
        names = self._send(
            "Runtime.evaluate",
            {
                "expression": "Object.getOwnPropertyNames(globalThis)",
                "contextId": world["executionContextId"],
                "returnByValue": True,
                "timeout": 1000,
            },
            SCAN_CALL_MS,
        )
        value = (names.get("result") or {}).get("value")
        if not isinstance(value, list):
            raise Unavailable("could not list the built-in globals")
        return {str(v) for v in value} | {"__bench", "__playwright", "__pwInitScripts"}

    def _evaluate(
        self, ctx: _Context, expression: str, group: str, pure: bool = False
    ) -> dict[str, Any]:
        params: dict[str, Any] = {
            "expression": expression,
            "contextId": ctx.id,
            "objectGroup": group,
            "silent": True,
            "timeout": 500,
        }
        if pure:
            # a top-level name: reading a binding runs nothing; V8 refuses anything else
            params["throwOnSideEffect"] = True
        answer = self._send("Runtime.evaluate", params, SCAN_CALL_MS)
        if "exceptionDetails" in answer:
            raise Unavailable(f"evaluate {expression[:40]}: exception")
        return answer["result"]

    def _kit(
        self, ctx: _Context, globals_: dict[str, dict[str, Any]], group: str
    ) -> tuple[str, dict[str, str]]:
        """The built-ins state.js uses, each checked to be the browser's own."""

        def own(remote: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
            if not remote or "objectId" not in remote:
                return {}
            result, internal = self._props(remote["objectId"], SCAN_CALL_MS)
            entries = {p["name"]: p for p in result}
            for p in internal:
                entries[p["name"]] = p
            return entries

        def value(entries: dict[str, dict[str, Any]], name: str) -> dict[str, Any] | None:
            entry = entries.get(name)
            return entry.get("value") if entry else None

        reflect = own(value(globals_, "Reflect"))
        obj_ctor = value(globals_, "Object")
        object_ = own(obj_ctor) if _native(obj_ctor, "Object") else {}

        def pick(name: str, *sources: dict[str, dict[str, Any]]) -> dict[str, Any]:
            for source in sources:
                candidate = value(source, name)
                if _native(candidate, name):
                    return candidate  # type: ignore[return-value]
            raise Unavailable(f"no native {name} (the page replaced it)")

        gopd = pick("getOwnPropertyDescriptor", reflect, object_)
        apply = pick("apply", reflect)
        set_proto = pick("setPrototypeOf", reflect, object_)
        try:
            own_keys = pick("ownKeys", reflect)
        except Unavailable:
            own_keys = pick("getOwnPropertyNames", object_)

        def proto_of(ctor_name: str) -> dict[str, dict[str, Any]]:
            ctor = value(globals_, ctor_name)
            if not _native(ctor, ctor_name):
                raise Unavailable(f"no native {ctor_name}")
            # `prototype` of a built-in constructor cannot be changed: it is the real one
            return own(value(own(ctor), "prototype"))

        weak = value(globals_, "WeakMap")
        map_ = value(globals_, "Map")
        if not (_native(weak, "WeakMap") and _native(map_, "Map")):
            raise Unavailable("no native WeakMap/Map")
        weak_proto = proto_of("WeakMap")
        map_proto = proto_of("Map")
        typed_proto = own(value(proto_of("Int8Array"), "[[Prototype]]"))
        length = typed_proto.get("length") or {}
        ta_len = length.get("get")
        if not (
            ta_len
            and ta_len.get("type") == "function"
            and ta_len.get("description") == "function get length() { [native code] }"
        ):
            raise Unavailable("no native typed-array length")
        parts = [
            gopd,
            apply,
            weak,
            pick("get", weak_proto),
            pick("set", weak_proto),
            map_,
            pick("get", map_proto),
            pick("set", map_proto),
            ta_len,
            own_keys,
            set_proto,
            pick(
                "isArray",
                own(value(globals_, "Array")) if _native(value(globals_, "Array"), "Array") else {},
            ),
        ]
        kit = self._call(
            ctx,
            "pack",
            [{}, {}, {}, {}, *[_arg(p) for p in parts]],  # type: ignore[arg-type]
            SCAN_CALL_MS,
            by_value=False,
            target=gopd["objectId"],
            group=ctx.group,
        )
        array_proto = value(own(self._evaluate(ctx, "[]", group)), "[[Prototype]]")
        typed_remote = value(proto_of("Int8Array"), "[[Prototype]]")
        if not array_proto or not typed_remote:
            raise Unavailable("no Array prototype")
        return kit["objectId"], {
            "array": array_proto["objectId"],
            "typed": typed_remote["objectId"],
        }

    def _scan_context(
        self, ctx: _Context, grid: tuple[int, int] | None, started: float
    ) -> dict[str, Any]:
        temp = f"{ctx.group}-scan"
        try:
            return self._scan_context_in(ctx, grid, started, temp)
        finally:
            with contextlib.suppress(Unavailable):
                self._send("Runtime.releaseObjectGroup", {"objectGroup": temp}, 2000)

    def _scan_context_in(
        self, ctx: _Context, grid: tuple[int, int] | None, started: float, temp: str
    ) -> dict[str, Any]:
        assert self._builtins is not None
        builtins = self._builtins
        t0 = time.perf_counter()
        global_ = self._evaluate(ctx, "this", ctx.group)
        entries, _ = self._props(global_["objectId"], SCAN_CALL_MS)
        globals_ = {e["name"]: e for e in entries}
        kit, protos = self._kit(ctx, globals_, temp)

        # -- roots: window's own data, top-level lexical names, key listeners' closures
        roots: list[tuple[_Path, dict[str, Any]]] = []
        for entry in entries:
            name = entry["name"]
            if name in builtins or name.startswith(("__bench", "__pw", "__playwright")):
                continue
            if "value" not in entry or entry.get("symbol"):
                continue  # a getter (never run) or a symbol-keyed property
            roots.append((_Path("w", 0, [name], f"window.{name}"), entry["value"]))
        lexical_names = self._send(
            "Runtime.globalLexicalScopeNames", {"executionContextId": ctx.id}, SCAN_CALL_MS
        ).get("names", [])
        lexicals = [n for n in lexical_names if IDENT.match(n) and not n.startswith("__")]
        lexicals = lexicals[:MAX_LEXICALS]
        for i, name in enumerate(lexicals):
            try:
                remote = self._evaluate(ctx, name, temp, pure=True)
            except Unavailable:
                continue  # not initialised yet (temporal dead zone)
            roots.append((_Path("l", i, [], f"lexical:{name}"), remote))
        fixed: list[dict[str, Any]] = []
        fn_remotes: list[dict[str, Any]] = []
        listeners = self._listeners(ctx, global_, temp)
        labels: Counter[str] = Counter()
        seen_scopes: set[tuple[str, tuple[str, ...]]] = set()
        for event_type, handler, original in listeners:
            labels[event_type] += 1
            label = event_type if labels[event_type] == 1 else f"{event_type}{labels[event_type]}"
            _, internal = self._props(original["objectId"], SCAN_CALL_MS)
            for prop in internal:
                if prop["name"] == "[[BoundThis]]" and "objectId" in prop.get("value", {}):
                    fixed.append(prop["value"])
                    path = _Path("o", len(fixed) - 1, [], f"scope:{label}/this")
                    roots.append((path, prop["value"]))
            scopes = self._scopes(handler["objectId"], SCAN_CALL_MS)
            fn_index = len(fn_remotes)
            used = False
            for scope_index, scope_type, variables in scopes:
                if scope_type not in SCOPE_TYPES:
                    continue
                # listeners of one module (keydown and keyup) share its scope: read once
                signature = (scope_type, tuple(v["name"] for v in variables))
                if signature in seen_scopes:
                    continue
                seen_scopes.add(signature)
                for var in variables[:MAX_CHILDREN]:
                    if "value" not in var or not IDENT.match(var["name"]):
                        continue
                    if scope_type == "Script" and var["name"] in lexicals:
                        continue  # read as a top-level name already
                    ctx.scope_vars.append(_ScopeVar(fn_index, scope_index, var["name"]))
                    path = _Path("s", len(ctx.scope_vars) - 1, [], f"scope:{label}/{var['name']}")
                    roots.append((path, var["value"]))
                    used = True
            if used:
                fn_remotes.append(handler)

        # -- the holder: our references, where the game cannot reach them
        accessors = (
            "function () { return ["
            + ", ".join(LEXICAL_ACCESSOR.format(name=n) for n in lexicals)
            + "]; }"
        )
        answer = self._send(
            "Runtime.callFunctionOn",
            {
                "functionDeclaration": accessors,
                "objectId": global_["objectId"],
                "objectGroup": ctx.group,
                "silent": True,
            },
            SCAN_CALL_MS,
        )
        if "exceptionDetails" in answer:
            raise Unavailable("the top-level names could not be read")
        lex = answer["result"]
        ctx.holder = self._call(
            ctx,
            "init",
            [_arg(global_), _arg(lex), *[_arg(f) for f in fixed]],
            SCAN_CALL_MS,
            by_value=False,
            target=kit,
            group=ctx.group,
        )["objectId"]
        if fn_remotes:
            self._call(
                ctx, "setfns", [{}, {}, {}, {}, *[_arg(f) for f in fn_remotes]], SCAN_CALL_MS
            )
        ctx.fns = len(fn_remotes)

        # -- walk the roots (CDP's view: no getter, no trap runs)
        named, shape_paths = self._walk(ctx, roots, builtins, started)
        walk_ms = (time.perf_counter() - t0) * 1000

        # -- the heap's arrays
        t1 = time.perf_counter()
        heap = self._send(
            "Runtime.queryObjects",
            {"prototypeObjectId": protos["array"], "objectGroup": temp},
            SCAN_CALL_MS,
        )["objects"]
        for chunk in range(0, len(named), 200):
            part = named[chunk : chunk + 200]
            self._call(
                ctx,
                "known",
                [{"value": [k for _, k, _ in part]}, {"value": [p for _, _, p in part]}, {}, {}]
                + [_arg(r) for r, _, _ in part],
                SCAN_CALL_MS,
            )
        rows, cols = grid if grid else (20, 10)
        flat = sorted(
            {(rows + h) * cols for h in range(7)} | {(rows + h) * (cols + 2) for h in range(8)}
        )
        found = self._call(
            ctx,
            "analyze",
            [
                _arg(heap),
                {},
                {"value": {"rows": rows, "cols": cols, "flat": flat}},
                {"value": {"paths": [p.js() for p in ctx.paths], "shapes": shape_paths}},
            ],
            SCAN_CALL_MS,
        )
        heap_ms = (time.perf_counter() - t1) * 1000
        if not isinstance(found, dict):
            raise Unavailable("analyze returned nothing")
        for i, board in enumerate(found.get("boards", [])):
            paths = [ctx.paths[p] for p in board.pop("path")]
            texts = [p.text for p in paths]
            ctx.boards.append(
                {
                    "id": ctx.prefix(f"b{i}"),
                    "path": texts[0] if texts else f"heap#{i}",
                    "paths": texts,
                    **board,
                }
            )
            if any(p.root == "s" for p in paths):
                ctx.uses_scopes = True
        for i, shape in enumerate(found.get("shapes", [])):
            path = shape.pop("path")
            ctx.shapes.append({"id": ctx.prefix(f"p{i}"), "path": ctx.paths[path].text, **shape})
            if ctx.paths[path].root == "s":
                ctx.uses_scopes = True
        specs = [s.pop("_js") for s in ctx.scalars]
        self._call(ctx, "scalars", [{"value": specs}], SCAN_CALL_MS)
        if any(ctx.paths[spec["path"]].root == "s" for spec in specs):
            ctx.uses_scopes = True  # closure variables are read again by CDP each sample
        self._calibrate(ctx)
        return {
            "heap_arrays": found.get("heap_arrays"),
            "named_typed": found.get("named_typed"),
            "lexical_names": len(lexicals),
            "listeners": len(listeners),
            "walk_ms": round(walk_ms, 1),
            "heap_ms": round(heap_ms, 1),
        }

    def _listeners(
        self, ctx: _Context, global_: dict[str, Any], group: str
    ) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
        """(type, handler, original handler) of the page's listeners, key events first."""
        found: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
        document = self._evaluate(ctx, "document", group)
        for target, deep in ((global_, False), (document, True)):
            params: dict[str, Any] = {"objectId": target["objectId"]}
            if deep:
                params.update({"depth": -1, "pierce": True})
            try:
                answer = self._send("DOMDebugger.getEventListeners", params, SCAN_CALL_MS)
            except Unavailable:
                continue
            for listener in answer.get("listeners", []):
                handler = listener.get("handler") or {}
                original = listener.get("originalHandler") or handler
                if "objectId" in handler:
                    found.append((listener.get("type", "?"), handler, original))
        found.sort(key=lambda item: item[0] not in KEY_EVENTS)
        return found[:MAX_LISTENERS]

    def _scopes(self, fn_id: str, timeout_ms: float) -> list[tuple[int, str, list[dict[str, Any]]]]:
        """(index, type, variables) of each scope a function closes over."""
        _, internal = self._props(fn_id, timeout_ms)
        scopes_id = next(
            (
                p["value"].get("objectId")
                for p in internal
                if p["name"] == "[[Scopes]]" and "value" in p
            ),
            None,
        )
        if not scopes_id:
            return []
        listed, _ = self._props(scopes_id, timeout_ms)
        out = []
        for entry in listed:
            scope = entry.get("value") or {}
            scope_type = scope.get("description", "")
            if not entry["name"].isdigit() or "objectId" not in scope:
                continue
            if scope_type in ("Global",):
                continue
            variables, _ = self._props(scope["objectId"], timeout_ms)
            out.append((int(entry["name"]), scope_type, variables))
        return out

    def _walk(
        self,
        ctx: _Context,
        roots: list[tuple[_Path, dict[str, Any]]],
        builtins: set[str],
        started: float,
    ) -> tuple[list[tuple[dict[str, Any], int, int]], list[int]]:
        """Breadth-first through CDP's view of the roots: scalars, arrays, small matrices."""
        named: list[tuple[dict[str, Any], int, int]] = []  # (remote, kind, path index)
        shape_paths: list[int] = []
        strings = 0
        visits = 0
        queue: list[tuple[_Path, dict[str, Any], int, _Path | None, str | int | None]] = [
            (path, remote, 0, None, None) for path, remote in roots
        ]
        head = 0
        while head < len(queue):
            path, remote, depth, owner, key = queue[head]
            head += 1
            scalar = _scalar_value(remote)
            if scalar is not None:
                if len(ctx.scalars) >= MAX_SCALARS:
                    continue
                kind, value = scalar
                if kind == "string":
                    if strings >= MAX_STRING_SCALARS:
                        continue
                    strings += 1
                if owner is None:
                    js = {"path": self._path_index(ctx, path), "key": None}
                else:
                    js = {"path": self._path_index(ctx, owner), "key": key}
                ctx.scalars.append(
                    {
                        "id": ctx.prefix(f"s{len(ctx.scalars)}"),
                        "path": path.text,
                        "type": kind,
                        "value": value,
                        "depth": depth,
                        "_js": js,
                    }
                )
                continue
            kind = _kind(remote, builtins)
            if kind == K_BAD or "objectId" not in remote or len(named) >= MAX_NAMED:
                continue
            index = self._path_index(ctx, path)
            named.append((remote, kind, index))
            if kind == K_ARRAY:
                n = _length(remote)
                if 1 <= n <= 8:
                    shape_paths.append(index)
                if not (1 <= n <= 4):
                    continue  # a board's rows are read in the page, not walked
            if kind == K_TYPED or depth >= MAX_DEPTH:
                continue
            if visits >= MAX_VISITS or time.perf_counter() - started > self._scan_budget_s / 2:
                continue
            visits += 1
            try:
                children, _ = self._props(remote["objectId"], SCAN_CALL_MS)
            except Unavailable:
                continue
            for child in children[:MAX_CHILDREN]:
                if "value" not in child or child.get("symbol") or not child.get("isOwn", True):
                    continue
                name = child["name"]
                if kind == K_ARRAY:
                    # a list of objects (players, pieces) is walked; a matrix's numbers
                    # are cells, not the game's scalars
                    value = child["value"]
                    if not name.isdigit() or value.get("type") != "object":
                        continue
                    if value.get("subtype") is not None:
                        continue
                    step: str | int = int(name)
                else:
                    step = name
                queue.append((path.child(step), child["value"], depth + 1, path, step))
        return named, shape_paths

    @staticmethod
    def _path_index(ctx: _Context, path: _Path) -> int:
        for i, known in enumerate(ctx.paths):
            if known.text == path.text:
                return i
        ctx.paths.append(path)
        return len(ctx.paths) - 1

    def _calibrate(self, ctx: _Context) -> None:
        """Learn each board's empty cell (its most common value now) and legend."""
        raw = self._sample_context(ctx, SCAN_CALL_MS)
        for i, board in enumerate(ctx.boards):
            rows = raw["boards"][i] if i < len(raw["boards"]) else None
            counts = Counter("".join(rows or []))
            board["empty"] = None
            if not counts:
                continue
            if board.get("object_cells") and len(counts) > 12:
                # a fresh object per cell: code cells by their own data instead
                self._call(ctx, "mode", [{"value": i}, {"value": 1}], SCAN_CALL_MS)
                board["cell_mode"] = "own data"
                again = self._sample_context(ctx, SCAN_CALL_MS)
                counts = Counter("".join(again["boards"][i] or []))
                if not counts:
                    continue
            flag = self._flag_property(ctx, i) if board.get("object_cells") else None
            if flag is not None:
                # {filled: false, colour: 3}: only the flag says whether a cell is empty
                self._call(ctx, "mode", [{"value": i}, {"value": flag}], SCAN_CALL_MS)
                board["cell_mode"] = f"property {flag}"
                again = self._sample_context(ctx, SCAN_CALL_MS)
                counts = Counter("".join(again["boards"][i] or []))
                if not counts:
                    continue
            code = counts.most_common(1)[0][0]
            board["empty"] = {"code": code}
        legends = self._call(ctx, "legend", [], SCAN_CALL_MS) or []
        for board, legend in zip(ctx.boards, legends, strict=False):
            table = dict(entry.split("=", 1) for entry in legend[:52] if "=" in entry)
            board["legend"] = table
            empty = board.get("empty")
            if empty is not None:
                empty["value"] = table.get(empty["code"], _DIRECT.get(empty["code"], empty["code"]))

    def _flag_property(self, ctx: _Context, index: int) -> str | None:
        """The boolean property object cells share (`filled`, `value`), if any: the
        legend lists each cell kind's own data as `{name:value,...`."""
        legends = self._call(ctx, "legend", [], SCAN_CALL_MS) or []
        if index >= len(legends):
            return None
        names: Counter[str] = Counter()
        for entry in legends[index]:
            names.update(set(re.findall(r"[{,]([\w$]+):(?:true|false),", entry)))
        if not names:
            return None
        name, seen = names.most_common(1)[0]
        return name if seen == len(legends[index]) else None

    # ---- sampling -----------------------------------------------------------------------
    def _scope_args(self, ctx: _Context, timeout_ms: float) -> list[tuple[dict, int]]:
        """The closure variables' current values (CDP shows a copy of a closure: it is
        read again every time)."""
        if not ctx.scope_vars:
            return []
        temp = f"{ctx.group}-sample"
        fns = self._call(ctx, "fns", [], timeout_ms, by_value=False, group=temp)
        listed, _ = self._props(fns["objectId"], timeout_ms)
        fn_ids = {int(e["name"]): e["value"]["objectId"] for e in listed if e["name"].isdigit()}
        values: dict[tuple[int, int, str], dict[str, Any]] = {}
        for fn_index, fn_id in fn_ids.items():
            wanted = {v.scope for v in ctx.scope_vars if v.fn == fn_index}
            _, internal = self._props(fn_id, timeout_ms)
            scopes_id = next(
                (p["value"]["objectId"] for p in internal if p["name"] == "[[Scopes]]"), None
            )
            if not scopes_id:
                continue
            scopes, _ = self._props(scopes_id, timeout_ms)
            for entry in scopes:
                if not entry["name"].isdigit() or int(entry["name"]) not in wanted:
                    continue
                variables, _ = self._props(entry["value"]["objectId"], timeout_ms)
                for var in variables:
                    if "value" in var:
                        values[(fn_index, int(entry["name"]), var["name"])] = var["value"]
        out = []
        for var in ctx.scope_vars:
            remote = values.get((var.fn, var.scope, var.name), {"type": "undefined"})
            out.append((remote, _kind(remote, self._builtins or set())))
        return out

    def _sample_context(self, ctx: _Context, timeout_ms: float) -> dict[str, Any]:
        temp = f"{ctx.group}-sample"
        used_temp = ctx.uses_scopes
        try:
            scope = self._scope_args(ctx, timeout_ms) if ctx.uses_scopes else []
            if not ctx.uses_scopes and ctx.scope_vars:
                scope = [({"type": "undefined"}, K_BAD) for _ in ctx.scope_vars]
            args = [{"value": [k for _, k in scope]}, {}, {}, {}] + [_arg(r) for r, _ in scope]
            raw: dict[str, Any] = {}
            moves: list[int] = []  # a board follows its new array in any round
            for _ in range(VERIFY_ROUNDS):
                raw = self._call(ctx, "sample", args, timeout_ms) or {}
                moves += raw.get("moved") or []
                if not raw.get("pending"):
                    break
                used_temp = True
                self._verify_pending(ctx, temp, timeout_ms)
            for moved in moves:
                # the game put a new array under this name: it is the board's name now
                index, path = divmod(int(moved), 8)
                if index < len(ctx.boards) and path < len(ctx.boards[index]["paths"]):
                    ctx.boards[index]["path"] = ctx.boards[index]["paths"][path]
            return raw
        finally:
            if used_temp:
                with contextlib.suppress(Unavailable):
                    self._send("Runtime.releaseObjectGroup", {"objectGroup": temp}, timeout_ms)

    def _verify_pending(self, ctx: _Context, temp: str, timeout_ms: float) -> None:
        """Objects the page handed us that we have not seen: CDP says what each is."""
        pending = self._call(ctx, "pending", [], timeout_ms, by_value=False, group=temp)
        listed, _ = self._props(pending["objectId"], timeout_ms)
        remotes = [e["value"] for e in listed if e["name"].isdigit() and "value" in e]
        builtins = self._builtins or set()
        for chunk in range(0, len(remotes), 300):
            part = remotes[chunk : chunk + 300]
            self._call(
                ctx,
                "known",
                [{"value": [_kind(r, builtins) for r in part]}, {"value": [-1] * len(part)}, {}, {}]
                + [_arg(r) for r in part],
                timeout_ms,
            )

    def sample(self) -> dict[str, Any]:
        """Re-read every kept candidate (no scan). Cheap: a few CDP round trips."""
        started = time.perf_counter()
        out: dict[str, Any] = {"ok": False, "boards": {}, "shapes": {}, "scalars": {}}
        if not self._ctx:
            out["error"] = "not scanned" if self._scans == 0 else "no state"
            return out
        if time.monotonic() < self._paused_until:
            out["error"] = "page not answering: paused"
            return out
        errors = []
        self._deadline = time.monotonic() + SAMPLE_BUDGET_S
        for ctx in self._ctx:
            if self._enabled and ctx.id not in self._contexts:
                # the frame navigated or closed: what we held is gone with it
                errors.append(f"{ctx.label or 'top'}: the page changed, scan again")
                continue
            try:
                raw = self._sample_context(ctx, SAMPLE_CALL_MS)
            except Unavailable as error:
                errors.append(str(error))
                continue
            except Exception as error:
                errors.append(f"reader error: {error!r}"[:300])
                continue
            for board, rows in zip(ctx.boards, raw.get("boards") or [], strict=False):
                out["boards"][board["id"]] = self._decode(board, rows)
            for shape, rows in zip(ctx.shapes, raw.get("shapes") or [], strict=False):
                out["shapes"][shape["id"]] = rows
            for scalar, value in zip(ctx.scalars, raw.get("scalars") or [], strict=False):
                out["scalars"][scalar["id"]] = value
        self._deadline = float("inf")
        out["ok"] = len(errors) < len(self._ctx)
        if errors:
            out["error"] = "; ".join(errors)[:500]
            self._fails += 1
            if self._fails >= FAILS_BEFORE_PAUSE:
                self._paused_until = time.monotonic() + PAUSE_S
        else:
            self._fails = 0
        elapsed = (time.perf_counter() - started) * 1000
        self.sample_ms.append(round(elapsed, 1))
        out["ms"] = round(elapsed, 1)
        return out

    @staticmethod
    def _decode(board: dict[str, Any], rows: list[str] | None) -> list[str] | None:
        if rows is None:
            return None
        empty = (board.get("empty") or {}).get("code")
        if empty is None:
            return [str(r) for r in rows]
        return [str(r).replace(empty, ".") for r in rows]

    # ---- reporting ----------------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        """The last scan's candidates and the reader's timing figures. A board's `path`
        is the name under which the game keeps its current array: of the names found
        for it (`paths`), the first that was given a new array during sampling."""
        return {**self._description, "timing": self.timing()}

    def timing(self) -> dict[str, Any]:
        def stats(values: list[float]) -> dict[str, float] | None:
            if not values:
                return None
            return {
                "n": len(values),
                "median": round(statistics.median(values), 1),
                "max": round(max(values), 1),
            }

        return {"scan_ms": stats(self.scan_ms), "sample_ms": stats(self.sample_ms)}

    def close(self) -> None:
        """Let the page's garbage collector have what we held."""
        self._release()


# What the directly coded cell values were (state.js cellCode).
_DIRECT = {
    **{str(d): str(d) for d in range(10)},
    "#": "true",
    "-": "false",
    "~": "null",
    "_": "undefined",
    "`": "''",
    "?": "unreadable",
    "!": "a Proxy or platform object",
}

"""A small JavaScript tokenizer: enough of the language to find where a function ends,
what a condition guards and which literals a comparison holds, in a game's own scripts.

It never evaluates anything. It is forgiving: unterminated strings, comments and
templates end where the text ends, and every scan is bounded by a character or token
budget, so a hostile script costs at most that budget.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# One token at the start of the remaining text. Strings are matched whole here; template
# literals and regular expressions are scanned by hand (they depend on state).
_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<lc>//[^\n]*)
  | (?P<bc>/\*.*?(?:\*/|\Z))
  | (?P<str>'(?:[^'\\\n]|\\.)*'?|"(?:[^"\\\n]|\\.)*"?)
  | (?P<num>0[xXoObB][0-9a-fA-F_]+n?|(?:\d[\d_]*\.?[\d_]*(?:[eE][+-]?\d+)?|\.\d[\d_]*(?:[eE][+-]?\d+)?)n?)
  | (?P<id>[A-Za-z_$\u00a0-\uffff][\w$\u00a0-\uffff]*)
  | (?P<p>>>>=|\.\.\.|===|!==|\*\*=|<<=|>>=|>>>|\?\?=|&&=|\|\|=|\?\.(?!\d)|=>|==|!=|<=|>=|&&|\|\||\?\?
        |\+\+|--|\+=|-=|\*=|/=|%=|&=|\|=|\^=|<<|>>|\*\*|[{}()\[\];,<>+\-*/%&|^!~?:=.@\#])
    """,
    re.VERBOSE | re.DOTALL,
)
# After these a `/` starts a regular expression, not a division.
_REGEX_AFTER_WORDS = frozenset(
    [
        "return",
        "typeof",
        "case",
        "do",
        "else",
        "in",
        "of",
        "instanceof",
        "new",
        "delete",
        "void",
        "throw",
        "yield",
        "await",
    ]
)
KEYWORDS = frozenset(
    [
        "if",
        "for",
        "while",
        "switch",
        "catch",
        "function",
        "return",
        "typeof",
        "case",
        "do",
        "else",
        "in",
        "of",
        "instanceof",
        "new",
        "delete",
        "void",
        "throw",
        "yield",
        "await",
        "var",
        "let",
        "const",
        "class",
        "extends",
        "super",
        "this",
        "null",
        "true",
        "false",
        "undefined",
        "try",
        "finally",
        "break",
        "continue",
        "default",
        "import",
        "export",
        "async",
        "static",
        "get",
        "set",
        "with",
        "debugger",
    ]
)
OPENERS = {"(": ")", "[": "]", "{": "}"}
CLOSERS = {")", "]", "}"}


@dataclass(frozen=True, slots=True)
class Tok:
    kind: str  # id, num, str, tpl (a whole template, or the part before a `${`), re, p
    text: str
    start: int
    end: int


def lex(src: str, pos: int = 0, max_chars: int = 200_000, max_tokens: int = 60_000) -> list[Tok]:
    """The tokens of `src[pos:pos + max_chars]`, comments and white space left out."""
    out: list[Tok] = []
    end_at = min(len(src), pos + max_chars)
    # Brace depths at which a template's `${` was opened: its `}` resumes the template.
    templates: list[int] = []
    depth = 0
    prev: Tok | None = None
    i = pos
    while i < end_at and len(out) < max_tokens:
        c = src[i]
        if c == "`" or (c == "}" and templates and templates[-1] == depth):
            if c == "}":
                templates.pop()
            j = i + 1
            while j < end_at:
                d = src[j]
                if d == "\\":
                    j += 2
                    continue
                if d == "`":
                    j += 1
                    break
                if d == "$" and j + 1 < end_at and src[j + 1] == "{":
                    j += 2
                    templates.append(depth)
                    break
                j += 1
            prev = Tok("tpl", src[i:j], i, j)
            out.append(prev)
            i = j
            continue
        if c == "/" and _regex_allowed(prev) and not src.startswith(("//", "/*"), i):
            j = _regex_end(src, i, end_at)
            prev = Tok("re", src[i:j], i, j)
            out.append(prev)
            i = j
            continue
        m = _TOKEN.match(src, i, end_at)
        if m is None:  # an unknown character: skip it
            i += 1
            continue
        kind = m.lastgroup or "p"
        j = m.end()
        if kind not in ("ws", "lc", "bc"):
            text = m.group()
            if kind == "p":
                if text == "{":
                    depth += 1
                elif text == "}":
                    depth -= 1
            prev = Tok(kind, text, i, j)
            out.append(prev)
        i = j
    return out


def _regex_allowed(prev: Tok | None) -> bool:
    if prev is None:
        return True
    if prev.kind in ("num", "str", "tpl", "re"):
        return False
    if prev.kind == "id":
        return prev.text in _REGEX_AFTER_WORDS
    return prev.text not in (")", "]", "}", "++", "--")


def _regex_end(src: str, i: int, end_at: int) -> int:
    j = i + 1
    in_class = False
    while j < end_at:
        d = src[j]
        if d == "\\":
            j += 2
            continue
        if d == "\n":
            return j  # not a regular expression after all: stop at the line's end
        if d == "[":
            in_class = True
        elif d == "]":
            in_class = False
        elif d == "/" and not in_class:
            j += 1
            while j < end_at and (src[j].isalnum() or src[j] == "_"):
                j += 1
            return j
        j += 1
    return j


def match_brackets(toks: list[Tok]) -> list[int]:
    """For each opener the index of its closer and back (-1 where unmatched)."""
    match = [-1] * len(toks)
    stack: list[int] = []
    for i, t in enumerate(toks):
        if t.kind != "p":
            continue
        if t.text in OPENERS:
            stack.append(i)
        elif t.text in CLOSERS:
            # A stray closer (a window lexed from the middle of a block) closes nothing.
            while stack and OPENERS[toks[stack[-1]].text] != t.text:
                stack.pop()
            if stack:
                j = stack.pop()
                match[i], match[j] = j, i
    return match


def string_value(tok: Tok) -> str | None:
    """The value of a string literal (or of a template with no substitutions)."""
    if (tok.kind == "str" and len(tok.text) >= 2) or (
        tok.kind == "tpl" and tok.text.endswith("`") and tok.text.startswith("`")
    ):
        body = tok.text[1:-1]
    else:
        return None
    if "\\" not in body:
        return body
    return re.sub(r"\\(u\{?[0-9a-fA-F]{1,6}\}?|x[0-9a-fA-F]{2}|.)", _unescape, body)


def _unescape(m: re.Match[str]) -> str:
    s = m.group(1)
    if s[0] in "ux" and len(s) > 1:
        try:
            return chr(int(s[1:].strip("{}"), 16))
        except ValueError:
            return s
    return {"n": "\n", "t": "\t", "r": "\r", "0": "\0"}.get(s, s)


def number_value(tok: Tok) -> int | None:
    if tok.kind != "num":
        return None
    text = tok.text.replace("_", "").rstrip("n")
    try:
        if text[:2].lower() == "0x":
            return int(text, 16)
        value = float(text)
    except ValueError:
        return None
    return int(value) if value.is_integer() else None


def text_of(src: str, toks: list[Tok], a: int, b: int, limit: int = 160) -> str:
    """The source text of tokens a..b-1 on one line, at most `limit` characters."""
    if a >= b or a >= len(toks):
        return ""
    raw = src[toks[a].start : toks[min(b, len(toks)) - 1].end]
    flat = " ".join(raw.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


@dataclass(frozen=True)
class Function:
    """Where a function's text is in its script."""

    start: int  # offset of its parameters (or of the function keyword)
    body_start: int
    body_end: int
    params: tuple[str, ...]  # simple names; "" for a destructured or defaulted parameter
    destructured: tuple[str, ...] = ()  # names bound by `({key, code}) => ...`
    whole_script: bool = False  # an attribute handler: the script is the body


def function_at(src: str, pos: int, max_chars: int = 120_000) -> Function | None:
    """The function whose text begins at `pos` (V8 reports a function's location at its
    parameter list; a `function` or `async` keyword there is skipped)."""
    # Most handlers are short: lex a little first, more only when the body did not end
    # (a window that ends inside the body leaves its braces unmatched).
    window = min(4_000, max_chars)
    while True:
        fn = _function_in(src, pos, window)
        if fn is not None or window >= max_chars or pos + window >= len(src):
            return fn
        window = min(window * 6, max_chars)


def _function_in(src: str, pos: int, max_chars: int) -> Function | None:
    toks = lex(src, pos, max_chars=max_chars)
    if not toks:
        return None
    i = 0
    while (
        i < len(toks)
        and toks[i].kind == "id"
        and toks[i].text in ("async", "function", "get", "set", "static")
    ):
        i += 1
        if i < len(toks) and toks[i].text == "*":
            i += 1
        if i < len(toks) and toks[i].kind == "id" and i + 1 < len(toks) and toks[i + 1].text == "(":
            i += 1  # the function's name
    if i >= len(toks):
        return None
    match = match_brackets(toks)
    params: list[str] = []
    destructured: list[str] = []
    if toks[i].text == "(" and match[i] > i:
        close = match[i]
        params, destructured = _params(toks, i + 1, close, match)
        j = close + 1
    elif toks[i].kind == "id" and i + 1 < len(toks) and toks[i + 1].text == "=>":
        params = [toks[i].text]
        j = i + 1
    else:
        return None
    if j < len(toks) and toks[j].text == "=>":
        j += 1
        if j < len(toks) and toks[j].text == "{" and match[j] > j:
            return Function(
                pos, toks[j].start, toks[match[j]].end, tuple(params), tuple(destructured)
            )
        # An expression body: up to a comma, semicolon or closer at its own depth.
        k, depth = j, 0
        while k < len(toks):
            t = toks[k]
            if t.kind == "p":
                if t.text in OPENERS:
                    depth += 1
                elif t.text in CLOSERS:
                    if depth == 0:
                        break
                    depth -= 1
                elif t.text in (",", ";") and depth == 0:
                    break
            k += 1
        if k == j or (k == len(toks) and pos + max_chars < len(src)):
            return None  # (the window ended inside the expression: a bigger one is tried)
        return Function(pos, toks[j].start, toks[k - 1].end, tuple(params), tuple(destructured))
    if j < len(toks) and toks[j].text == "{" and match[j] > j:
        return Function(pos, toks[j].start, toks[match[j]].end, tuple(params), tuple(destructured))
    return None


def _params(toks: list[Tok], a: int, b: int, match: list[int]) -> tuple[list[str], list[str]]:
    params: list[str] = []
    destructured: list[str] = []
    k = a
    while k < b:
        t = toks[k]
        if t.text in ("{", "[") and match[k] > k:
            # `({key, keyCode: code}) =>`: the names bound, for what they hold.
            inner = toks[k + 1 : match[k]]
            for n, u in enumerate(inner):
                if u.kind == "id" and (n + 1 >= len(inner) or inner[n + 1].text in (",", "=", "}")):
                    prop = inner[n - 2].text if n >= 2 and inner[n - 1].text == ":" else u.text
                    destructured.append(f"{u.text}={prop}")
            params.append("")
            k = match[k] + 1
        elif t.kind == "id":
            params.append(t.text)
            k += 1
            # A default value: skip to the next comma at this depth.
            while k < b and toks[k].text != ",":
                k = match[k] + 1 if toks[k].text in OPENERS and match[k] > k else k + 1
        else:
            k += 1
        if k < b and toks[k].text == ",":
            k += 1
    return params, destructured


MAX_OCCURRENCES = 3_000  # occurrences of one name looked at in one script


def occurrences(
    src: str, name: str, rest: re.Pattern[str], before: str = ""
) -> list[re.Match[str]]:
    """Where `name` stands as a whole identifier followed by `rest` (matched at the end of
    the name): found by the name first, which is much faster in a big script than a
    pattern that begins with a look-behind. `before` is a pattern the text before the
    name must end with (checked on the 40 characters before it)."""
    out: list[re.Match[str]] = []
    start = 0
    seen = 0
    back = re.compile(before + r"$") if before else None
    while seen < MAX_OCCURRENCES:
        i = src.find(name, start)
        if i < 0:
            break
        seen += 1
        start = i + len(name)
        if i > 0 and (src[i - 1].isalnum() or src[i - 1] in "_$"):
            continue
        if back is not None and not back.search(src, max(0, i - 40), i):
            continue
        m = rest.match(src, i + len(name))
        if m:
            out.append(m)
    return out


_DEF_FUNCTION = re.compile(r"\s*(?=\()")
_DEF_ASSIGNED = re.compile(
    r"\s*(?:=(?![=>])|:)\s*(?:async\s+)?(?:function\b\s*\*?\s*[\w$]*\s*(?=\()|(?=\([^()]*\)\s*=>)|(?=[A-Za-z_$][\w$]*\s*=>))"
)
_DEF_METHOD = re.compile(r"\s*(?=\([^()]*\)\s*\{)")


def definition_sites(src: str, name: str, limit: int = 4) -> list[int]:
    """Offsets where a function called `name` may be defined (at its parameters or its
    single parameter): `function name(`, `name = function (`, `name = (e) =>`,
    `name: e =>`, `name(e) {` (a method)."""
    if not re.fullmatch(r"[A-Za-z_$][\w$]*", name) or name in KEYWORDS:
        return []
    found = [m.end() for m in occurrences(src, name, _DEF_FUNCTION, r"function\s*\*?\s*")]
    found += [m.end() for m in occurrences(src, name, _DEF_ASSIGNED)]
    found += [
        m.end()
        for m in occurrences(src, name, _DEF_METHOD, r"(?:^|[;{},\s])(?:(?:static|async)\s+)*\#?")
    ]
    return sorted(set(found))[:limit]


_OBJECT = re.compile(r"\s*(?:=(?![=>])|:)\s*(?:Object\.freeze\s*\(\s*)?(?=\{)")


def object_literal_sites(src: str, name: str, limit: int = 3) -> list[int]:
    """Offsets of `{` where `name = {...}` or `name: {...}` (also frozen) is written."""
    if not re.fullmatch(r"[A-Za-z_$][\w$]*", name):
        return []
    return [m.end() for m in occurrences(src, name, _OBJECT)][:limit]


@dataclass(frozen=True)
class Prop:
    key: Tok  # an identifier, string or number; for `[X]: v` the first token of X
    computed: tuple[Tok, ...]  # the tokens of a computed key
    value: str  # the value's text on one line
    value_start: int  # offset of the value in the script


def object_props(src: str, brace: int, max_chars: int = 40_000, max_props: int = 300) -> list[Prop]:
    """The properties of the object literal whose `{` is at `brace`."""
    toks = lex(src, brace, max_chars=max_chars)
    if not toks or toks[0].text != "{":
        return []
    match = match_brackets(toks)
    end = match[0] if match[0] > 0 else len(toks)
    props: list[Prop] = []
    k = 1
    while k < end and len(props) < max_props:
        t = toks[k]
        computed: tuple[Tok, ...] = ()
        if t.text == "[" and match[k] > k:
            computed = tuple(toks[k + 1 : match[k]])
            key_end = match[k] + 1
        elif t.kind in ("id", "str", "num"):
            key_end = k + 1
        else:
            k += 1
            continue
        # The value: after `:` (or a method's parameters) up to a comma at this depth.
        v = key_end
        if v < end and toks[v].text == ":":
            v += 1
        elif not (v < end and toks[v].text == "("):
            # A shorthand `{a, b}` or a spread: no value.
            k = v + 1
            continue
        w = v
        while w < end and toks[w].text != ",":
            w = match[w] + 1 if toks[w].text in OPENERS and match[w] > w else w + 1
        key = computed[0] if computed else t
        props.append(
            Prop(key, computed, text_of(src, toks, v, w, 240), toks[v].start if v < end else t.end)
        )
        k = w + 1
    return props


def enclosing_condition(src: str, pos: int, back: int = 400) -> str | None:
    """The keyword (`if`, `while`) before the innermost unclosed `(` that holds `pos`,
    found scanning back at most `back` characters (strings are not told apart: a guess)."""
    depth = 0
    i = pos - 1
    stop = max(0, pos - back)
    while i >= stop:
        c = src[i]
        if c in ")]":
            depth += 1
        elif c in "([":
            if depth == 0:
                if c == "[":
                    return None
                m = re.search(r"([A-Za-z_$][\w$]*)\s*$", src[max(0, i - 30) : i])
                return m.group(1) if m else ""
            depth -= 1
        elif c in ";{}" and depth == 0:
            return None
        i -= 1
    return None

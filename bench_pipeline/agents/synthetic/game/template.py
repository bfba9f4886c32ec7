"""A deliberately tiny template language for the game's sources.

One template serves both languages and every spec, so the game logic is written once:

* `%% if EXPR` / `%% elif EXPR` / `%% else` / `%% end` on a line of their own select
  lines. EXPR is flag names joined by `and` / `or`, each optionally prefixed by `not`
  (`or` binds looser than `and`, as in Python). Blocks nest.
* `{{ name }}` is replaced by a value (colours, sizes, generated blocks of code).
* `%% import A, B from module` and `%% import type A from module` declare what a
  module imports; the caller's `format_imports` turns the collected list into the
  import statements, placed where the first directive stood (so a composer can drop
  inlined constants, type-only imports in JavaScript, or all imports in a single file).
* `«...»` marks TypeScript-only text (annotations, generics, casts): kept without the
  marks for TypeScript, dropped for JavaScript. It may not nest and may span lines.

Unknown flags and values raise `TemplateError`, so a typo in a template fails loudly at
generation time instead of silently producing a different game.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

DIRECTIVE = re.compile(r"^\s*%%\s*(if|elif|else|end|import)\b\s*(.*?)\s*$")
IMPORT = re.compile(
    r"^(type\s+)?([A-Za-z_$][\w$]*(?:\s*,\s*[A-Za-z_$][\w$]*)*)\s+from\s+([\w./-]+)$"
)
IMPORTS_MARK = "\x00imports\x00\n"
PLACEHOLDER = re.compile(r"\{\{\s*([a-z_][a-z0-9_]*)\s*\}\}")
TYPE_SPAN = re.compile(r"«(.*?)»", re.S)


class TemplateError(ValueError):
    """A template is malformed or refers to an unknown flag or value."""


@dataclass(frozen=True)
class Import:
    names: tuple[str, ...]
    module: str  # as written in the directive, e.g. "constants"
    type_only: bool


ImportFormatter = Callable[[list[Import]], str]


def standard_imports(imports: list[Import]) -> str:
    """ES module imports, one statement per directive (`.js` paths, as browsers need)."""
    return "".join(
        f"import {'type ' if i.type_only else ''}{{ {', '.join(i.names)} }} "
        f'from "./{i.module}.js";\n'
        for i in imports
    )


def _evaluate(expr: str, flags: Mapping[str, bool], where: str) -> bool:
    if not expr:
        raise TemplateError(f"{where}: a condition is missing")

    def atom(text: str) -> bool:
        words = text.split()
        negate = False
        while words and words[0] == "not":
            negate = not negate
            words = words[1:]
        if len(words) != 1:
            raise TemplateError(f"{where}: cannot read condition {expr!r}")
        if words[0] not in flags:
            raise TemplateError(f"{where}: unknown flag {words[0]!r}")
        return flags[words[0]] != negate

    return any(
        all(atom(part) for part in re.split(r"\s+and\s+", alternative))
        for alternative in re.split(r"\s+or\s+", expr)
    )


def _select_lines(text: str, flags: Mapping[str, bool], name: str, imports: list[Import]) -> str:
    # Each frame: (the enclosing block is active, a branch was already taken, this
    # branch is active).
    frames: list[tuple[bool, bool, bool]] = []
    active = True
    out: list[str] = []
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        where = f"{name}:{number}"
        match = DIRECTIVE.match(line)
        if match is None:
            if active:
                out.append(line)
            continue
        keyword, expr = match.groups()
        if keyword == "import":
            if active:
                found = IMPORT.match(expr)
                if found is None:
                    raise TemplateError(f"{where}: cannot read import {expr!r}")
                if not imports:
                    out.append(IMPORTS_MARK)
                names = tuple(n.strip() for n in found.group(2).split(","))
                imports.append(Import(names, found.group(3), bool(found.group(1))))
        elif keyword == "if":
            value = active and _evaluate(expr, flags, where)
            frames.append((active, value, value))
        elif not frames:
            raise TemplateError(f"{where}: '{keyword}' without 'if'")
        elif keyword == "elif":
            parent, taken, _ = frames[-1]
            value = parent and not taken and _evaluate(expr, flags, where)
            frames[-1] = (parent, taken or value, value)
        elif keyword == "else":
            if expr:
                raise TemplateError(f"{where}: 'else' takes no condition")
            parent, taken, _ = frames[-1]
            frames[-1] = (parent, True, parent and not taken)
        else:
            frames.pop()
        active = frames[-1][2] if frames else True
    if frames:
        raise TemplateError(f"{name}: {len(frames)} 'if' block(s) not closed with 'end'")
    return "".join(out)


def _fill_values(text: str, values: Mapping[str, str], name: str) -> str:
    def replace(match: re.Match[str]) -> str:
        key = match.group(1)
        if key not in values:
            raise TemplateError(f"{name}: unknown value {{{{ {key} }}}}")
        return values[key]

    return PLACEHOLDER.sub(replace, text)


def _types(text: str, typescript: bool, name: str) -> str:
    result = TYPE_SPAN.sub(lambda m: m.group(1) if typescript else "", text)
    if "«" in result or "»" in result:
        raise TemplateError(f"{name}: unbalanced «» type marks")
    return result


# A parameter list written one per line (because the TypeScript annotations made it
# long) whose annotations were dropped: "(\n  a,\n  b,\n)" back on one line when it fits.
PARAMS = re.compile(r"^(?P<head>.*)\(\n(?P<params>(?:[ \t]+[\w$]+,\n)+)[ \t]*\)(?P<tail>.*)$", re.M)
MAX_LINE = 100


def _join_short_params(text: str) -> str:
    def join(match: re.Match[str]) -> str:
        params = ", ".join(p.strip().rstrip(",") for p in match["params"].splitlines())
        line = f"{match['head']}({params}){match['tail']}"
        return line if len(line) <= MAX_LINE else match.group(0)

    return PARAMS.sub(join, text)


def tidy(text: str) -> str:
    """Trailing spaces off, runs of blank lines (left by skipped blocks) cut to one,
    exactly one final newline: generated files look hand-written and stay stable."""
    lines = [line.rstrip() for line in text.splitlines()]
    out: list[str] = []
    for line in lines:
        if not line and (not out or not out[-1]):
            continue
        out.append(line)
    while out and not out[-1]:
        out.pop()
    return "\n".join(out) + "\n"


def render(
    text: str,
    flags: Mapping[str, bool],
    values: Mapping[str, str],
    *,
    typescript: bool,
    name: str = "template",
    format_imports: ImportFormatter = standard_imports,
) -> str:
    """Render one template for one spec (see the module docstring for the syntax)."""
    imports: list[Import] = []
    selected = _select_lines(text, flags, name, imports)
    if imports:
        selected = selected.replace(IMPORTS_MARK, format_imports(imports), 1)
    filled = _fill_values(selected, values, name)
    typed = _types(filled, typescript, name)
    return tidy(typed if typescript else _join_short_params(typed))

"""From a `GameSpec` to the project's files: templates rendered per spec, then written.

The sources are written once, as TypeScript templates with «type marks»
(`templates/*.ts.tmpl`); JavaScript is the same text with the marks dropped, so both
languages always play the same game. `render_project` is pure (spec in, file map out);
`write_game` puts the files into a workspace.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

from bench_pipeline.agents.synthetic.game import faults as F
from bench_pipeline.agents.synthetic.game.cosmetics import Cosmetics, cosmetics_for
from bench_pipeline.agents.synthetic.game.spec import GameSpec
from bench_pipeline.agents.synthetic.game.template import Import, render

# Module order matters for the single-file variant: each part only uses what comes
# before it at the time it runs (functions are hoisted; top-level constants are not).
MODULES = ("constants", "dom", "pieces", "board", "game", "input", "render", "hud", "main")
MAX_LINE = 100

MODULE_HEADERS: dict[str, tuple[str, str]] = {
    "constants": (
        "Tunable numbers and colours, in one place.",
        "Game-wide settings: board size, timing, scoring and colours.",
    ),
    "pieces": (
        "The seven tetrominoes, their rotation and the 7-bag randomizer.",
        "Piece shapes, spawning and the order pieces arrive in.",
    ),
    "board": (
        "The playfield grid: collisions, locking pieces in and clearing full rows.",
        "Pure functions over the grid of cells; nothing here touches the page.",
    ),
    "game": (
        "Game state and rules: moves, gravity, scoring, levels and game over.",
        "The rules of play, applied once per animation frame.",
    ),
    "input": (
        "Keyboard controls mapped to game actions.",
        "Which key does what; keys are queued, the game loop applies them.",
    ),
    "hud": (
        "Score and lines, the start control and the end-of-game message.",
        "Everything around the playfield that shows the state of the game.",
    ),
    "main": (
        "Entry point: wires the modules together and runs the frame loop.",
        "Boots the game and drives it with requestAnimationFrame.",
    ),
}
RENDER_HEADERS = {
    "canvas": "Draws the playfield on a <canvas> with fillRect.",
    "dom": "Shows the playfield as a grid of <div> cells.",
    "svg": "Shows the playfield as <rect> cells in an <svg>.",
}

# (keys shown to the player, action) per control scheme.
CONTROL_HELP: dict[str, list[tuple[str, str]]] = {
    "arrows": [("← / →", "move"), ("↓", "soft drop"), ("↑", "rotate"), ("Space", "hard drop")],
    "wasd": [("A / D", "move"), ("S", "soft drop"), ("W", "rotate"), ("Space", "hard drop")],
    "arrows_space": [
        ("← / →", "move"),
        ("↓", "soft drop"),
        ("X", "rotate"),
        ("Space", "hard drop"),
    ],
}
# Never "game over" / "play again" here: the help is always on screen, and those words
# announce the end of a game (players and the gameplay bot read them that way).
START_HELP = {"auto": "start a new game", "key": "start", "button": None}
START_SENTENCE = {
    "auto": "The game starts as soon as the page loads; after a game over, Enter starts a new one.",
    "button": "Press the Start button to begin (and again after a game over).",
    "key": "Press Enter to start (and again after a game over).",
}
RENDERER_SENTENCE = {
    "canvas": "The playfield is drawn on a `<canvas>`.",
    "dom": "The playfield is a CSS grid of 200 `<div>` cells.",
    "svg": "The playfield is an `<svg>` of 200 `<rect>` cells.",
}


TEMPLATES = Path(__file__).parent / "templates"


@functools.cache
def _template(name: str) -> str:
    return (TEMPLATES / name).read_text(encoding="utf-8")


def _format_import(names: list[str], module: str, type_only: bool) -> str:
    keyword = "import type" if type_only else "import"
    line = f'{keyword} {{ {", ".join(names)} }} from "./{module}.js";'
    if len(line) <= MAX_LINE:
        return line + "\n"
    inner = "".join(f"  {name},\n" for name in names)
    return f'{keyword} {{\n{inner}}} from "./{module}.js";\n'


class _Composer:
    def __init__(self, spec: GameSpec) -> None:
        self.spec = spec
        self.look: Cosmetics = cosmetics_for(spec.seed)
        self.flags = F.flags_for(spec, self.look)
        self.constants = F.numeric_constants(spec, self.look)
        self.magic = "magic_numbers" in spec.quality_faults
        self.one_file = "one_giant_file" in spec.quality_faults
        self.inlined = {name: value for name, value, _ in self.constants} if self.magic else {}

    # ---- sources ---------------------------------------------------------------------
    def _imports(self, imports: list[Import]) -> str:
        if self.one_file:
            return ""
        # One statement per module (and kind), even when conditional directives
        # declared its names in several places.
        merged: dict[tuple[str, bool], list[str]] = {}
        for item in imports:
            if item.type_only and not self.spec.typescript:
                continue
            names = merged.setdefault((item.module, item.type_only), [])
            names += [n for n in item.names if n not in self.inlined and n not in names]
        return "".join(
            _format_import(sorted(names), module, type_only)
            for (module, type_only), names in merged.items()
            if names
        )

    def _values(self) -> dict[str, str]:
        look, theme = self.look, self.look.theme
        values = {f"header_{m}": h[look.wording] for m, h in MODULE_HEADERS.items()}
        values["header_render"] = RENDER_HEADERS[self.spec.renderer]
        values["numeric_constants"] = F.constants_block(self.constants, self.magic)
        values["levels"] = "\n".join(
            f"  {{ gravityMs: {look.gravity_ms - step} }}," for step in F.LEVEL_STEPS_MS
        )
        values.update(
            board_color=theme.board,
            empty_color=theme.empty,
            grid_color=theme.grid,
            piece_colors=", ".join(f'"{c}"' for c in theme.pieces),
        )
        return values

    def module(self, name: str) -> str:
        template = f"render_{self.spec.renderer}" if name == "render" else name
        source = render(
            _template(f"{template}.ts.tmpl"),
            self.flags,
            self._values(),
            typescript=self.spec.typescript,
            name=f"{template}.ts.tmpl",
            format_imports=self._imports,
        )
        if self.magic and name != "constants":
            source = F.inline_constants(source, self.inlined)
        return source

    def sources(self) -> dict[str, str]:
        ext = self.spec.extension
        modules = {name: self.module(name) for name in MODULES}
        if self.one_file:
            return {f"src/main.{ext}": F.merge_modules([modules[m] for m in MODULES])}
        return {f"src/{name}.{ext}": text for name, text in modules.items()}

    # ---- page, styles, project files -----------------------------------------------
    def _render_page_file(self, template: str, values: dict[str, str]) -> str:
        return render(_template(template), self.flags, values, typescript=False, name=template)

    def index_html(self) -> str:
        items = [f"          <li><kbd>{k}</kbd> {a}</li>" for k, a in self._help()]
        entry = "dist/main.js" if self.spec.typescript else "src/main.js"
        return self._render_page_file(
            "index.html.tmpl",
            {
                "title": self.look.title,
                "tagline": self.look.tagline,
                "help_items": "\n".join(items),
                "entry_script": entry,
            },
        )

    def _help(self) -> list[tuple[str, str]]:
        rows = list(CONTROL_HELP[self.spec.controls])
        start = START_HELP[self.spec.start]
        if start is not None:
            rows.append(("Enter", start))
        return rows

    def style_css(self) -> str:
        look, theme = self.look, self.look.theme
        rules = "\n".join(
            f"\n.cell.kind-{kind} {{\n  background: {color};\n}}"
            for kind, color in enumerate(theme.pieces, start=1)
        )
        return self._render_page_file(
            "style.css.tmpl",
            {
                "title": look.title,
                "theme_name": theme.name,
                "page_color": theme.page,
                "text_color": theme.text,
                "accent_color": theme.accent,
                "board_color": theme.board,
                "empty_color": theme.empty,
                "grid_color": theme.grid,
                "font": look.font,
                "cell_size": str(look.cell_size),
                "cell_gap": str(look.cell_gap),
                "dom_piece_rules": rules,
            },
        )

    def readme(self, sources: list[str]) -> str:
        rows = "\n".join(f"| {keys} | {action} |" for keys, action in self._help())
        if self.one_file:
            layout = f"All the game code is in `{sources[0]}`."
        else:
            what = {
                **{m: h[0] for m, h in MODULE_HEADERS.items()},
                "render": f"Renders the playfield ({self.spec.renderer}).",
                "dom": "Checked lookups of the page's elements.",
            }
            ext = self.spec.extension
            layout = "\n".join(f"- `src/{m}.{ext}`: {what[m]}" for m in MODULES)
        return self._render_page_file(
            "README.md.tmpl",
            {
                "title": self.look.title,
                "tagline": self.look.tagline,
                "renderer_sentence": RENDERER_SENTENCE[self.spec.renderer],
                "start_sentence": START_SENTENCE[self.spec.start],
                "control_rows": rows,
                "layout_section": layout,
            },
        )

    def typescript_project(self) -> dict[str, str]:
        tsconfig = {
            "compilerOptions": {
                "target": "ES2020",
                "module": "ES2020",
                "moduleResolution": "bundler",
                "lib": ["ES2020", "DOM"],
                "rootDir": "src",
                "outDir": "dist",
                "strict": True,
                "skipLibCheck": True,
            },
            "include": ["src"],
        }
        package = {
            "name": self.look.slug,
            "version": "1.0.0",
            "private": True,
            "description": self.look.tagline,
            "type": "module",
            "scripts": {"build": "tsc -p ."},
        }
        return {
            "tsconfig.json": json.dumps(tsconfig, indent=2) + "\n",
            "package.json": json.dumps(package, indent=2) + "\n",
        }

    def files(self) -> dict[str, str]:
        sources = self.sources()
        files = {
            **sources,
            "index.html": self.index_html(),
            "style.css": self.style_css(),
            "README.md": self.readme(sorted(sources)),
        }
        if self.spec.typescript:
            files.update(self.typescript_project())
        return dict(sorted(files.items()))


def render_project(spec: GameSpec) -> dict[str, str]:
    """The project's files (relative POSIX path -> text), without touching the disk."""
    return _Composer(spec).files()


def write_game(spec: GameSpec, workspace: Path) -> list[str]:
    """Write the project for `spec` into `workspace`; returns the relative paths, sorted.

    Files already in the workspace (a context file, say) are left alone unless the
    project has a file of the same name.
    """
    files = render_project(spec)
    for relative, text in files.items():
        path = workspace / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        # newline="\n": byte-identical output on every platform.
        with path.open("w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
    return sorted(files)

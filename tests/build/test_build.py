"""The build stage on real projects, with real bubblewrap, npm and the pinned tsc."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from bench_pipeline.build import build_project, detect_project, toolchain_bin
from bench_pipeline.build.project import NO_PROJECT
from bench_pipeline.sandbox import Sandbox, get_sandbox

PAGE = "<!doctype html><title>Tetris</title><canvas id=c></canvas><script src=main.js></script>\n"
TSCONFIG = {
    "compilerOptions": {
        "target": "es2022",
        "module": "es2022",
        "strict": True,
        "outDir": "dist",
        "rootDir": "src",
        "lib": ["es2022", "dom"],
    },
    "include": ["src"],
}
GOOD_TS = {
    "src/main.ts": (
        "import { clamp } from './board.js';\n"
        "const canvas = document.getElementById('c') as HTMLCanvasElement;\n"
        "canvas.width = clamp(300, 0, 200);\n"
    ),
    "src/board.ts": (
        "export function clamp(v: number, lo: number, hi: number): number {\n"
        "  return Math.max(lo, Math.min(hi, v));\n"
        "}\n"
    ),
}


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    chosen = get_sandbox("bubblewrap")
    reason = chosen.unavailable_reason()
    if reason:
        pytest.skip(reason)
    return chosen


@pytest.fixture(scope="module")
def toolchain() -> Path:
    found = toolchain_bin()
    if found is None or not (found / "tsc").exists():
        pytest.skip("the pinned toolchain is not installed (make setup)")
    return found


def write(root: Path, files: dict[str, str | dict[str, object]]) -> Path:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content if isinstance(content, str) else json.dumps(content, indent=2))
    return root


def assert_owned_by_caller(root: Path) -> None:
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            info = os.lstat(os.path.join(dirpath, name))
            assert info.st_uid == os.getuid(), os.path.join(dirpath, name)


def test_static_site(tmp_path: Path, sandbox: Sandbox, toolchain: Path) -> None:
    write(tmp_path, {"index.html": PAGE, "main.js": "console.log('tetris');\n"})
    result = build_project(tmp_path, sandbox, toolchain_bin=toolchain)
    assert result.build_ok and result.kind == "static" and result.steps == []
    assert result.served_dir == str(tmp_path.resolve()) and result.entry_point == "index.html"
    assert result.output_bytes == len(PAGE) + len("console.log('tetris');\n")
    assert "serving index.html" in result.message
    record = result.to_record()
    assert json.loads(json.dumps(record)) == record
    assert record["sandbox"] == "bubblewrap" and record["failed_step"] is None


def test_typescript_project_compiled_by_the_toolchain(
    tmp_path: Path, sandbox: Sandbox, toolchain: Path
) -> None:
    page = PAGE.replace("main.js", "dist/main.js")
    write(tmp_path, {"index.html": page, "tsconfig.json": TSCONFIG, **GOOD_TS})
    result = build_project(tmp_path, sandbox, toolchain_bin=toolchain)
    assert result.build_ok, result.message + result.log
    assert result.kind == "typescript"
    assert [s.name for s in result.steps] == ["tsc"]
    assert result.steps[0].argv == [str(toolchain / "tsc"), "-p", "."]
    assert result.served_dir == str(tmp_path.resolve())
    assert "clamp" in (tmp_path / "dist" / "main.js").read_text()
    assert (tmp_path / "dist" / "board.js").is_file()
    assert_owned_by_caller(tmp_path)


def test_typescript_files_without_tsconfig(
    tmp_path: Path, sandbox: Sandbox, toolchain: Path
) -> None:
    files = {"index.html": PAGE, "main.ts": "const n: number = 3;\nconsole.log(n);\n"}
    write(tmp_path, files)
    result = build_project(tmp_path, sandbox, toolchain_bin=toolchain)
    assert result.build_ok, result.message + result.log
    assert result.steps[0].argv == [str(toolchain / "tsc"), "main.ts"]
    assert (tmp_path / "main.js").is_file()


def test_type_error_fails_the_build_but_the_emitted_page_is_served(
    tmp_path: Path, sandbox: Sandbox, toolchain: Path
) -> None:
    page = PAGE.replace("main.js", "dist/main.js")
    bad = {"src/main.ts": "const width: number = 'wide';\nconsole.log(width);\n"}
    write(tmp_path, {"index.html": page, "tsconfig.json": TSCONFIG, **bad})
    result = build_project(tmp_path, sandbox, toolchain_bin=toolchain)
    assert not result.build_ok and result.kind == "typescript"
    assert result.served_dir == str(tmp_path.resolve())  # the bot plays what is there
    assert (tmp_path / "dist" / "main.js").is_file()  # tsc emits despite errors
    assert "tsc reported type errors" in result.message and "TS2322" in result.message
    assert "serving index.html" in result.message
    assert "error TS2322" in result.log
    assert result.to_record()["failed_step"] == "tsc"


def test_npm_build_script_without_dependencies(
    tmp_path: Path, sandbox: Sandbox, toolchain: Path
) -> None:
    build_js = (
        "const fs = require('fs');\n"
        "fs.mkdirSync('dist', { recursive: true });\n"
        "fs.copyFileSync('src/index.html', 'dist/index.html');\n"
        "fs.writeFileSync('dist/game.js', 'console.log(1)');\n"
        "console.log('built');\n"
    )
    package = {"name": "tetris", "version": "1.0.0", "scripts": {"build": "node build.js"}}
    write(tmp_path, {"package.json": package, "build.js": build_js, "src/index.html": PAGE})
    result = build_project(tmp_path, sandbox, toolchain_bin=toolchain)
    assert result.build_ok, result.message + result.log
    assert result.kind == "npm" and [s.name for s in result.steps] == ["build"]  # no install
    assert result.served_dir == str((tmp_path / "dist").resolve())
    assert result.entry_point == "dist/index.html"
    assert result.output_bytes == len(PAGE) + len("console.log(1)")
    assert "built" in result.log
    assert_owned_by_caller(tmp_path)


def test_built_output_wins_over_a_source_index_html(
    tmp_path: Path, sandbox: Sandbox, toolchain: Path
) -> None:
    """A Vite-style project: the root index.html points at TypeScript sources; dist is the game."""
    source_page = '<script type="module" src="/src/main.ts"></script>\n'
    build = "mkdir -p dist && cp index.html dist/index.html && echo bundled > dist/app.js"
    package = {"name": "vite-like", "scripts": {"build": build}}
    write(tmp_path, {"package.json": package, "index.html": source_page})
    result = build_project(tmp_path, sandbox, toolchain_bin=toolchain)
    assert result.build_ok and result.entry_point == "dist/index.html"


def test_build_script_calling_tsc_uses_the_toolchain_offline(
    tmp_path: Path, sandbox: Sandbox, toolchain: Path
) -> None:
    package = {"name": "ts-app", "scripts": {"build": "tsc -p . && cp index.html dist/"}}
    write(
        tmp_path,
        {"package.json": package, "index.html": PAGE, "tsconfig.json": TSCONFIG, **GOOD_TS},
    )
    result = build_project(tmp_path, sandbox, toolchain_bin=toolchain)
    assert result.build_ok, result.message + result.log
    assert result.kind == "npm" and result.entry_point == "dist/index.html"


def test_project_in_one_subfolder(tmp_path: Path, sandbox: Sandbox, toolchain: Path) -> None:
    package = {
        "name": "tetris",
        "scripts": {"build": "mkdir -p dist && cp page.html dist/index.html"},
    }
    write(tmp_path, {"tetris/package.json": package, "tetris/page.html": PAGE, "NOTES.md": "hi"})
    result = build_project(tmp_path, sandbox, toolchain_bin=toolchain)
    assert result.build_ok, result.message + result.log
    assert result.project_dir == "tetris" and result.entry_point == "tetris/dist/index.html"
    assert "(in tetris/)" in result.message


def test_garbage_package_json(tmp_path: Path, sandbox: Sandbox, toolchain: Path) -> None:
    write(tmp_path, {"package.json": "{ this is not json", "src/main.js": "x"})
    result = build_project(tmp_path, sandbox, toolchain_bin=toolchain)
    assert not result.build_ok and result.kind == "npm" and result.steps == []
    assert result.message.startswith("package.json is not valid JSON")
    assert result.served_dir is None


def test_empty_workspace(tmp_path: Path, sandbox: Sandbox, toolchain: Path) -> None:
    result = build_project(tmp_path, sandbox, toolchain_bin=toolchain)
    assert not result.build_ok and result.kind == "none"
    assert result.message == NO_PROJECT and result.served_dir is None
    assert result.to_record()["entry_point"] is None
    missing = build_project(tmp_path / "nope", sandbox, toolchain_bin=toolchain)
    assert not missing.build_ok and "does not exist" in missing.message


def test_build_that_produces_no_page(tmp_path: Path, sandbox: Sandbox, toolchain: Path) -> None:
    write(tmp_path, {"package.json": {"name": "x", "scripts": {"build": "echo nothing"}}})
    result = build_project(tmp_path, sandbox, toolchain_bin=toolchain)
    assert not result.build_ok and result.served_dir is None
    assert "no index.html, dist/index.html or build/index.html" in result.message


def test_symlinked_output_leaving_the_workspace_is_not_served(
    tmp_path: Path, sandbox: Sandbox, toolchain: Path
) -> None:
    outside = tmp_path / "outside"
    write(outside, {"index.html": PAGE})
    workspace = tmp_path / "ws"
    build = f"ln -s {outside} dist"
    write(workspace, {"package.json": {"name": "x", "scripts": {"build": build}}})
    result = build_project(workspace, sandbox, toolchain_bin=toolchain)
    assert not result.build_ok and result.served_dir is None


def test_hanging_build_is_a_readable_failure(
    tmp_path: Path, sandbox: Sandbox, toolchain: Path
) -> None:
    package = {"name": "x", "scripts": {"build": "node -e 'setInterval(() => {}, 1000)'"}}
    write(tmp_path, {"package.json": package, "index.html": PAGE})
    start = time.monotonic()
    result = build_project(tmp_path, sandbox, toolchain_bin=toolchain, timeout_s=3)
    assert time.monotonic() - start < 15
    assert not result.build_ok and result.steps[0].timed_out
    assert "npm run build hung: killed after the 3 s time limit" in result.message
    assert result.to_record()["timed_out"] is True


def test_exploding_build_is_a_readable_failure(
    tmp_path: Path, sandbox: Sandbox, toolchain: Path
) -> None:
    package = {"name": "x", "scripts": {"build": "yes build log"}}
    write(tmp_path, {"package.json": package, "index.html": PAGE})
    result = build_project(tmp_path, sandbox, toolchain_bin=toolchain, log_cap_bytes=10_000)
    assert not result.build_ok and "output limit hit" in result.message
    assert len(result.log.encode()) <= 10_000
    assert result.to_record()["limit_hit"] == "output"


def test_typescript_without_a_toolchain_is_a_readable_failure(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    write(tmp_path, {"index.html": PAGE, "main.ts": "export {};\n"})
    result = build_project(tmp_path, sandbox, toolchain_bin=None)
    assert not result.build_ok and "no TypeScript compiler" in result.message


def test_detection_without_running_anything(tmp_path: Path) -> None:
    write(tmp_path, {"package.json": {"name": "x", "devDependencies": {"vite": "^5"}}})
    (tmp_path / "package-lock.json").write_text("{}")
    project = detect_project(tmp_path)
    assert project.has_dependencies and project.has_lock and project.build_script is None
    assert project.kind == "npm"
    write(tmp_path, {"node_modules/dep/index.ts": "x", "src/a.ts": "x", "src/a.d.ts": "x"})
    assert [str(p) for p in detect_project(tmp_path).ts_files] == ["src/a.ts"]


@pytest.mark.slow
def test_npm_dependency_installed_from_the_registry(
    tmp_path: Path, sandbox: Sandbox, toolchain: Path
) -> None:
    build = "node -e \"require('is-number'); require('fs').mkdirSync('dist', {recursive: true}); require('fs').copyFileSync('index.html','dist/index.html')\""
    package = {
        "name": "with-dep",
        "version": "1.0.0",
        "dependencies": {"is-number": "7.0.0"},
        "scripts": {"build": build},
    }
    write(tmp_path, {"package.json": package, "index.html": PAGE})
    result = build_project(tmp_path, sandbox, toolchain_bin=toolchain, install_network=True)
    assert result.build_ok, result.message + result.log
    assert [s.name for s in result.steps] == ["install", "build"]
    assert result.steps[0].argv[:2] == ["npm", "install"]
    assert (tmp_path / "node_modules" / "is-number" / "package.json").is_file()
    assert result.entry_point == "dist/index.html"
    # node_modules is not part of what is served, and everything belongs to the caller.
    assert result.output_bytes == len(PAGE)
    assert_owned_by_caller(tmp_path)
    # With the lock file npm wrote, a rebuild uses `npm ci`.
    again = build_project(tmp_path, sandbox, toolchain_bin=toolchain, install_network=True)
    assert again.build_ok and again.steps[0].argv[:2] == ["npm", "ci"]


@pytest.mark.slow
def test_npm_dependency_without_install_network_fails_readably(
    tmp_path: Path, sandbox: Sandbox, toolchain: Path
) -> None:
    package = {"name": "offline", "version": "1.0.0", "dependencies": {"is-number": "7.0.0"}}
    write(tmp_path, {"package.json": package, "index.html": PAGE})
    start = time.monotonic()
    result = build_project(tmp_path, sandbox, toolchain_bin=toolchain, install_network=False)
    assert time.monotonic() - start < 60  # fails at once, no minutes of retries
    assert not result.build_ok and result.to_record()["failed_step"] == "install"
    assert "npm install failed" in result.message and "install_network=False" in result.message
    assert "is-number" in result.message or "ENOTCACHED" in result.log


def test_hostile_package_json_is_never_read_blindly(
    tmp_path: Path, sandbox: Sandbox, toolchain: Path
) -> None:
    """A FIFO would block the reader for ever; a link would read host files as the caller."""
    fifo_ws = tmp_path / "fifo"
    fifo_ws.mkdir()
    os.mkfifo(fifo_ws / "package.json")
    result = build_project(fifo_ws, sandbox, toolchain_bin=toolchain)
    assert not result.build_ok and "not a regular file" in result.message
    link_ws = tmp_path / "link"
    link_ws.mkdir()
    (link_ws / "package.json").symlink_to("/etc/passwd")
    result = build_project(link_ws, sandbox, toolchain_bin=toolchain)
    assert not result.build_ok and "not a regular file inside the project" in result.message

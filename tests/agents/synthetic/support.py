"""Helpers for the synthetic game tests: generate, compile and drive a game."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from bench_pipeline.agents.synthetic.game import GameSpec, write_game
from bench_pipeline.settings import project_root

HARNESS = Path(__file__).parent / "harness.mjs"
TSC = project_root() / "toolchain" / "node_modules" / ".bin" / "tsc"
NODE = shutil.which("node")

HAVE_TSC = NODE is not None and TSC.is_file()

needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed")
needs_tsc = pytest.mark.skipif(
    not HAVE_TSC, reason="the toolchain's tsc is not installed (npm ci in toolchain/)"
)


def tsc(workspace: Path) -> subprocess.CompletedProcess[str]:
    """`tsc -p` as the build stage runs it (errors go to stdout)."""
    return subprocess.run(
        [str(TSC), "-p", str(workspace)], capture_output=True, text=True, timeout=120
    )


def build(spec: GameSpec, workspace: Path) -> Path:
    """Write the game (and compile it for TypeScript); returns the directory of its JS."""
    write_game(spec, workspace)
    if spec.typescript:
        tsc(workspace)  # type_errors builds still emit: only the emitted JS matters here
        return workspace / "dist"
    return workspace / "src"


def drive(spec: GameSpec, workspace: Path) -> dict[str, Any]:
    """The harness's measurements of the game's rules, run in Node (no browser)."""
    js_dir = build(spec, workspace)
    assert NODE is not None
    done = subprocess.run(
        [NODE, str(HARNESS), str(js_dir)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)

"""What both sides of an isolated evaluation need: the evidence files' names, writing a
file whole or not at all, and killing the processes that name a folder."""

from __future__ import annotations

import os
import signal
from pathlib import Path

EVALUATION_FILE = "evaluation.json"
OBSERVATIONS_FILE = "observations.json"
CONSOLE_FILE = "console.txt"


def kill_matching(marker: str, *, spare: int | None = None) -> None:
    """Kill every process whose command line holds `marker` (an evaluation's Chromium and
    game server name its scratch folder), except `spare`."""
    for pid_dir in Path("/proc").glob("[0-9]*"):
        try:
            if int(pid_dir.name) == spare:
                continue
            if marker in (pid_dir / "cmdline").read_bytes().decode(errors="ignore"):
                os.kill(int(pid_dir.name), signal.SIGKILL)
        except (OSError, ValueError):
            continue


def write_atomic(path: Path, data: bytes) -> None:
    """Whole or not at all: an evaluation killed at its cap leaves no half-written file."""
    partial = path.with_name(f".{path.name}.partial")
    partial.write_bytes(data)
    os.replace(partial, path)

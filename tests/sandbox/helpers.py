"""Helpers shared by the sandbox tests."""

from __future__ import annotations

import os
from pathlib import Path

from bench_pipeline.sandbox import SandboxPolicy


def quick(**overrides: object) -> SandboxPolicy:
    """A policy with test-sized limits (seconds, not minutes)."""
    values: dict[str, object] = {"timeout_s": 20.0} | overrides
    return SandboxPolicy(**values)  # type: ignore[arg-type]


def host_process_count() -> int:
    return sum(1 for name in os.listdir("/proc") if name.isdigit())


def processes_with(marker: str) -> list[int]:
    """Host pids whose command line contains `marker` (a survivor check)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if marker.encode() in cmdline:
            found.append(int(name))
    return found

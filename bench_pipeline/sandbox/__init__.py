"""Sandboxes that run untrusted commands (agents, builds) with only a workspace writable.

    sandbox = get_sandbox("bubblewrap")
    result = sandbox.run(["npm", "run", "build"], workspace, SandboxPolicy(timeout_s=120))

How each back end isolates and limits: docs/sandbox.md.
"""

from __future__ import annotations

from typing import Any

from bench_pipeline.sandbox.base import (
    STANDARD_PATH,
    LineHook,
    Sandbox,
    SandboxPolicy,
    SandboxResult,
    SandboxUnavailable,
    sandbox_path,
)

BACKENDS = ("bubblewrap", "docker")


def get_sandbox(name: str, **kwargs: Any) -> Sandbox:
    """The back end called `name`, built with `kwargs` (e.g. image= for docker)."""
    # Imported here so that choosing bubblewrap never imports the docker SDK and back.
    if name == "bubblewrap":
        from bench_pipeline.sandbox.bubblewrap import BubblewrapSandbox

        return BubblewrapSandbox(**kwargs)
    if name == "docker":
        from bench_pipeline.sandbox.docker import DockerSandbox

        return DockerSandbox(**kwargs)
    raise ValueError(f"unknown sandbox {name!r}: choose one of {', '.join(BACKENDS)}")


__all__ = [
    "BACKENDS",
    "STANDARD_PATH",
    "LineHook",
    "Sandbox",
    "SandboxPolicy",
    "SandboxResult",
    "SandboxUnavailable",
    "get_sandbox",
    "sandbox_path",
]

"""Fixtures for the sandbox tests: a real bubblewrap sandbox and a workspace for it."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench_pipeline.sandbox import get_sandbox
from bench_pipeline.sandbox.bubblewrap import BubblewrapSandbox


@pytest.fixture(scope="session")
def bwrap() -> BubblewrapSandbox:
    sandbox = get_sandbox("bubblewrap")
    assert isinstance(sandbox, BubblewrapSandbox)
    reason = sandbox.unavailable_reason()
    if reason:
        pytest.skip(reason)
    return sandbox


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    return folder

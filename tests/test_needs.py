"""The tiers cannot miss a test: markers follow the fixtures (tests/needs.py), and a test
that reaches Chromium without asking for it fails."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.needs import NEEDS, TIERS


def test_every_needs_marker_is_a_declared_tier() -> None:
    assert set(NEEDS.values()) == set(TIERS)


def test_the_marker_follows_the_fixture(request: pytest.FixtureRequest) -> None:
    assert request.node.get_closest_marker("browser") is None


def test_asking_for_chromium_marks_the_test(request: pytest.FixtureRequest, chromium: str) -> None:
    assert request.node.get_closest_marker("browser") is not None
    assert Path(chromium).is_file()


def test_a_test_that_launches_chromium_without_the_fixture_fails(tmp_path: Path) -> None:
    """Run in a pytest of its own: one test forgets the fixture and catches the error (as
    the bot does with a browser that will not start), one asks for it."""
    root = Path(__file__).resolve().parents[1]
    case = root / "tests" / f"test_zz_needs_case_{tmp_path.name}.py"
    case.write_text(
        textwrap.dedent(
            """
            from playwright.sync_api import sync_playwright

            from bench_pipeline.bot.browser import chromium_executable


            def _launch():
                with sync_playwright() as p:
                    p.chromium.launch(executable_path=chromium_executable()).close()


            def test_forgot_the_fixture():
                try:
                    _launch()
                except RuntimeError:
                    pass  # swallowed by the code under test


            def test_asked_for_it(chromium):
                _launch()
            """
        )
    )
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-p",
                "no:cacheprovider",
                "-q",
                "-o",
                "addopts=",
                str(case),
            ],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        case.unlink()
    out = done.stdout + done.stderr
    assert re.search(r"2 passed.* 1 error", out), out
    assert "ERROR at teardown of test_forgot_the_fixture" in out, out
    assert "does not ask for the `chromium` fixture" in out, out

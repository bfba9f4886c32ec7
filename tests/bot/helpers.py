"""Helpers shared by the bot's tests."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import Page, sync_playwright

from bench_pipeline.bot.browser import chromium_executable
from bench_pipeline.bot.evaluate import PROBE


@contextmanager
def probed_page(folder: Path, html: str) -> Iterator[Page]:
    """`html` opened from a file in headless Chromium with the bot's probe installed (the
    probe's own functions, without a whole evaluation); skips where there is no Chromium."""
    executable = chromium_executable()
    if executable is None:
        pytest.skip("no Chromium on this machine")
    (folder / "index.html").write_text(html, encoding="utf-8")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable)
        page = browser.new_page()
        page.add_init_script(PROBE)
        page.goto((folder / "index.html").as_uri())
        yield page
        browser.close()

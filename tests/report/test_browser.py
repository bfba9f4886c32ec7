"""The site in a real headless Chromium, opened from disk (file://), as a reader would.

Full-page screenshots of every page go to test-artifacts/report/ at the repo root.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench_pipeline import settings
from bench_pipeline.bot.browser import CHROMIUM_ARGS, chromium_executable
from tests.report.conftest import Site

# Each test here opens Chromium: asking for it marks them `browser` (tests/needs.py).
pytestmark = pytest.mark.usefixtures("chromium")

SHOTS = settings.project_root() / "test-artifacts" / "report"
BROKEN_IMAGES = (
    "Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0))"
    ".map(i => i.getAttribute('src'))"
)
OVERFLOW = "[document.documentElement.scrollWidth, document.body.scrollWidth, window.innerWidth]"


def _row_names(page: Any, table: str) -> list[str]:
    return page.locator(f"#{table} tbody th[scope=row]").all_inner_texts()


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_site_works_in_chromium_from_disk(site: Site) -> None:
    from playwright.sync_api import sync_playwright

    SHOTS.mkdir(parents=True, exist_ok=True)
    for old in SHOTS.glob("*.png"):  # this test's own folder: only this run's screenshots
        old.unlink()
    run = next(
        r for r in site.fake.run_ids if r.startswith("study.") and r != site.fake.failed_agent
    )
    pages = {
        "index": "index.html",
        "compare": "compare.html",
        "compare-study": "compare/study.html",
        "methodology": "methodology.html",
        "accuracy": "accuracy.html",
        "run": f"runs/{run}.html",
        "run-failed": f"runs/{site.fake.failed_agent}.html",
        "runs-index": "runs/index.html",
        "runs-failing": "runs/failing.html",
    }
    errors: list[str] = []
    requests: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_executable(), args=CHROMIUM_ARGS)
        try:
            for width in (1280, 390):
                context = browser.new_context(viewport={"width": width, "height": 900})
                page = context.new_page()
                page.on("console", lambda m: m.type == "error" and errors.append(m.text))
                page.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
                page.on("request", lambda r: requests.append(r.url))
                for name, rel in pages.items():
                    page.goto((site.out / rel).as_uri(), wait_until="load")
                    assert page.evaluate(BROKEN_IMAGES) == [], rel
                    # The stylesheet and the script loaded (CSP allows only local files).
                    assert page.evaluate(
                        "getComputedStyle(document.querySelector('.table-wrap') || "
                        "document.body).overflowX"
                    ) in {"auto", "visible"}
                    if page.locator("table.sortable").count():
                        assert page.locator("th button.sort").count() > 0, rel
                    if width == 390:
                        root, body, inner = page.evaluate(OVERFLOW)
                        assert root <= inner and body <= inner, (rel, root, body, inner)
                    suffix = "" if width == 1280 else "-mobile"
                    page.screenshot(path=str(SHOTS / f"{name}{suffix}.png"), full_page=True)
                if width == 1280:
                    _check_sorting(page, site.out)
                context.close()
        finally:
            browser.close()
    assert errors == []
    assert requests and all(u.startswith("file://") for u in requests), [
        u for u in requests if not u.startswith("file://")
    ]


def _check_sorting(page: Any, out: Path) -> None:
    page.goto((out / "index.html").as_uri(), wait_until="load")
    table = "tm-planted"
    ranked = _row_names(page, table)
    assert ranked[0] == "claude-opus-4-6" and len(ranked) == 3
    headers = page.locator(f"#{table} thead th")
    names = [t.strip() for t in headers.all_inner_texts()]
    header = headers.nth(names.index("Model"))
    header.locator("button").click()
    assert header.get_attribute("aria-sort") == "ascending"
    by_name = _row_names(page, table)
    assert by_name == sorted(ranked) != ranked
    header.locator("button").click()
    assert _row_names(page, table) == sorted(ranked, reverse=True)
    score = headers.nth(names.index("Score"))
    assert page.locator(f"#{table}").get_by_role("button", name="Score", exact=True).count() == 1
    score.locator("button").click()  # ascending: the worst first
    assert _row_names(page, table) == list(reversed(ranked))
    assert header.get_attribute("aria-sort") is None

"""Checks the labelled corpus of small browser Tetris games in tests/bot/games/ (not the bot).

Static part: every game directory has an index.html and an expected.json whose labels are complete
and consistent with the directory (renderer element, start button text, local-only assets, README).
Browser part (one headless Chromium for all games): each game loads over http, its start mechanism
is performed, and a basic sanity property holds (throws on load only if that is its defect; the
screen changes by itself after start unless its defect is no gravity).
"""

from __future__ import annotations

import functools
import http.server
import json
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench_pipeline.bot.browser import CHROMIUM_ARGS, chromium_executable
from bench_pipeline.bot.contract import TEST_IDS

# Each test here opens Chromium: asking for it marks them `browser` (tests/needs.py).
pytestmark = pytest.mark.usefixtures("chromium")

GAMES_DIR = Path(__file__).parent / "games"
VERDICTS = {"PASS", "FAIL", "INCONCLUSIVE"}
RENDERERS = {"canvas", "dom", "svg"}
CONTROLS = ("left", "right", "down", "rotate", "hard_drop")
# the only absolute URL allowed in game sources: XML namespaces, which are never fetched
NAMESPACE = re.compile(r"http://www\.w3\.org/\d{4}/(svg|xlink|xhtml)")
ANY_URL = re.compile(r"\b(?:https?:)?//[\w.-]+\.[a-z]{2,}", re.IGNORECASE)


def _slugs() -> list[str]:
    return sorted(p.name for p in GAMES_DIR.iterdir() if p.is_dir())


def _expected(slug: str) -> dict[str, Any]:
    return json.loads((GAMES_DIR / slug / "expected.json").read_text())


SLUGS = _slugs()


def _fails_only_loads(exp: dict[str, Any]) -> bool:
    """A field of another size is judged in full on the board found: only loads fails."""
    return exp["tests"]["loads"] == "FAIL" and exp["tests"]["starts"] == "PASS"


def test_corpus_has_enough_games_and_a_readme() -> None:
    assert len(SLUGS) >= 14
    readme = (GAMES_DIR / "README.md").read_text()
    for slug in SLUGS:
        assert f"`{slug}`" in readme, f"README.md does not list {slug}"


@pytest.mark.parametrize("slug", SLUGS)
def test_expected_json_is_complete_and_matches_the_directory(slug: str) -> None:
    game = GAMES_DIR / slug
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", slug)
    assert (game / "index.html").is_file()
    exp = _expected(slug)
    assert set(exp) <= {
        "description",
        "renderer",
        "start",
        "dismiss",
        "name_form",
        "grid",
        "failing_loads",
        "controls",
        "tests",
        "tolerated",
    }
    if "grid" in exp:  # a playable field that is not 10x20: loads FAILs for that alone
        assert set(exp["grid"]) == {"cols", "rows"}
        assert (exp["grid"]["cols"], exp["grid"]["rows"]) != (10, 20)
        assert _fails_only_loads(exp)
    assert isinstance(exp["description"], str) and exp["description"].strip()
    assert "\n" not in exp["description"]
    assert exp["renderer"] in RENDERERS

    tests = exp["tests"]
    assert list(tests) == list(TEST_IDS), "all 16 ids, in contract order"
    assert set(tests.values()) <= VERDICTS
    for test_id, alternatives in exp.get("tolerated", {}).items():
        assert test_id in TEST_IDS
        assert alternatives and set(alternatives) <= VERDICTS
        assert tests[test_id] not in alternatives

    controls = exp["controls"]
    assert list(controls) == list(CONTROLS)
    for key in controls.values():
        assert key is None or (isinstance(key, str) and key)
    if controls["rotate"] is None:
        assert tests["rotate"] != "PASS"
    if controls["hard_drop"] is None:
        assert tests["hard_drop"] != "PASS"

    html = (game / "index.html").read_text()
    # every page of the game: index.html and any page its start leads to (e.g. a menu page's link)
    site = "".join(path.read_text() for path in sorted(game.glob("*.html")))
    start = exp["start"]
    assert re.fullmatch(r"auto|click:.+|key:.+", start)
    if start.startswith("click:#"):  # a CSS id selector: an element with no text to name it
        element_id = start.removeprefix("click:#")
        assert re.search(rf"""\bid\s*=\s*["']{re.escape(element_id)}["']""", html), start
    elif start.startswith("click:"):
        label = start.removeprefix("click:")
        # on index.html, or on the page a name form leads to
        assert re.search(rf"<button[^>]*>\s*{re.escape(label)}\s*</button>", site), label
    if "name_form" in exp:  # a form asking for a name, sent by its submit button
        submit = rf'<input[^>]*type="submit"[^>]*value="{re.escape(exp["name_form"])}"'
        assert re.search(submit, html), exp["name_form"]
    if tests["loads"] == "PASS":
        if exp["renderer"] == "canvas":
            assert "<canvas" in site
        if exp["renderer"] == "svg":
            assert "<svg" in site
    elif "grid" not in exp:
        # a game that fails to load cannot be observed at all
        assert tests["starts"] != "PASS"

    # everything is local: relative src/href that exist, no absolute URL anywhere
    for ref in re.findall(r"""(?:src|href)\s*=\s*["']([^"']+)["']""", site):
        assert not re.match(r"[a-z]+:|//", ref, re.IGNORECASE), f"{slug}: external ref {ref}"
        assert (game / ref).is_file(), f"{slug}: missing {ref}"
    for path in game.rglob("*"):
        if path.suffix in {".html", ".js", ".css"}:
            text = NAMESPACE.sub("", path.read_text())
            assert not ANY_URL.search(text), f"{path.relative_to(GAMES_DIR)} has a URL"
            assert "@import" not in text


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def guess_type(self, path: Any) -> str:
        # As the bot's own server does: the games are UTF-8, and some have no <meta charset>.
        guessed = super().guess_type(path)
        return f"{guessed}; charset=utf-8" if guessed.startswith("text/") else guessed


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    handler = functools.partial(_QuietHandler, directory=str(GAMES_DIR))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    executable = chromium_executable()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.mark.slow
@pytest.mark.timeout(60)
@pytest.mark.parametrize("slug", SLUGS)
def test_game_loads_starts_and_moves(slug: str, base_url: str, browser: Any) -> None:
    exp = _expected(slug)
    tests = exp["tests"]
    context = browser.new_context(viewport={"width": 900, "height": 800})
    page = context.new_page()
    errors: list[str] = []
    dialogs: list[str] = []
    page.on("pageerror", lambda exc: errors.append(f"pageerror: {exc}"))
    page.on(
        "console",
        lambda msg: (
            msg.type == "error"
            and "Failed to load resource" not in msg.text
            and errors.append(f"console.error: {msg.text}")
        ),
    )
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    try:
        page.goto(f"{base_url}/{slug}/", wait_until="load")
        page.wait_for_timeout(300)
        for _ in range(exp.get("failing_loads", 0)):
            # a bug that fires on some loads only: this one throws, a later one works
            assert errors, f"{slug} is labelled with failing loads but this one did not throw"
            errors.clear()
            page.reload(wait_until="load")
            page.wait_for_timeout(300)
        if tests["loads"] != "PASS" and "grid" not in exp:
            assert errors, f"{slug} is labelled loads={tests['loads']} but did not throw on load"
            return
        assert not errors, f"{slug} threw on load: {errors}"

        if "dismiss" in exp:  # an intro dialog that catches clicks until it is closed
            page.get_by_role("button", name=exp["dismiss"], exact=True).click()
        if "name_form" in exp:  # a name asked before the game's own page
            page.get_by_role("textbox").first.fill("Tester")
            page.get_by_role("button", name=exp["name_form"], exact=True).click()
            page.wait_for_load_state("load")
        start = exp["start"]
        url = page.url
        if start.startswith("click:#"):  # a CSS selector
            page.click(start.removeprefix("click:"))
        elif start.startswith("click:"):
            page.get_by_role("button", name=start.removeprefix("click:"), exact=True).click()
        elif start.startswith("key:"):
            page.keyboard.press(start.removeprefix("key:"))
        if page.url != url:  # the start led to another page of the site: the game is there
            page.wait_for_load_state("load")
        page.wait_for_timeout(200)

        first = page.screenshot()
        time.sleep(1.5)
        second = page.screenshot()
        if tests["gravity"] == "FAIL":
            assert first == second, f"{slug}: labelled no-gravity but the screen changed by itself"
            page.keyboard.press(exp["controls"]["down"])
            page.wait_for_timeout(100)
            assert page.screenshot() != second, f"{slug}: soft drop changed nothing"
        else:
            assert first != second, f"{slug}: nothing changed on screen 1.5 s after start"
        if tests["no_errors"] == "PASS":
            assert not errors, f"{slug}: {errors}"
        assert not dialogs, f"{slug}: unexpected dialog {dialogs}"
    finally:
        context.close()

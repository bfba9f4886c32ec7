"""The "Bot accuracy" page: from mart_bot_accuracy when a measurement was published, a plain
statement when none was."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from bench_pipeline import settings
from bench_pipeline.bot.accuracy import trust_sentence
from bench_pipeline.bot.browser import CHROMIUM_ARGS, chromium_executable
from bench_pipeline.bot.contract import BOT_VERSION, TEST_IDS
from bench_pipeline.report import build_site
from bench_pipeline.warehouse.artifacts import ArtifactStore
from bench_pipeline.warehouse.build import build_warehouse
from tests.report.conftest import Site
from tests.report.test_browser import OVERFLOW, SHOTS
from tests.report.test_site import _parse
from tests.warehouse.accuracy_files import write_accuracy_file
from tests.warehouse.fake_runs import write_store

# Each test here opens Chromium: asking for it marks them `browser` (tests/needs.py).
pytestmark = pytest.mark.usefixtures("chromium")


def _text(path: Path) -> str:
    """The page's text, tags removed and spaces collapsed (what a reader sees)."""
    raw = re.sub(r"<[^>]+>", "", path.read_text(encoding="utf-8"))
    return re.sub(r"\s+", " ", html.unescape(raw))


def _row(page: str, test_id: str) -> list[str]:
    match = re.search(rf'<tr>\s*<th scope="row"><code>{test_id}</code></th>(.*?)</tr>', page, re.S)
    assert match, test_id
    cells = re.findall(r"<td[^>]*>(.*?)</td>", match.group(1), re.S)
    return [re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", c))).strip() for c in cells]


def test_without_a_published_measurement_the_page_says_so(site: Site) -> None:
    page = site.out / "accuracy.html"
    assert "No bot accuracy measurement has been published yet" in _text(page)
    # The hint names both corpora: the one at hand in every checkout and the fair one.
    assert "benchmarks/bot_accuracy.py --corpus repo --publish" in _text(page)
    assert "benchmarks/bot_accuracy.py --corpus real --split heldout --publish" in _text(page)
    # Every page links to it from the site's navigation.
    for path in [
        site.out / "index.html",
        site.out / "methodology.html",
        *(site.out / "runs").glob("*.html"),
    ][:20]:
        nav = re.search(r'<nav aria-label="Site">(.*?)</nav>', path.read_text(), re.S)
        assert nav and re.search(
            r'href="(\.\./)?accuracy\.html"[^>]*>Bot accuracy<', nav.group(1)
        ), path


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict, dict]:
    root = tmp_path_factory.mktemp("accuracy-site")
    store = ArtifactStore(root / "artifacts")
    write_store(store)
    tune = write_accuracy_file(store.root, "real-tune.json", bot_version=BOT_VERSION)
    heldout = write_accuracy_file(
        store.root, "real-heldout.json", split="heldout", bot_version="0.0.1", games=4
    )
    db = root / "w.duckdb"
    build_warehouse(store, db, settings.sql_models_dir())
    out = root / "site"
    summary = build_site(db, store.root, out)
    assert not [w for w in summary.warnings if "mart_bot_accuracy" in w], summary.warnings
    return out / "accuracy.html", tune, heldout


def test_with_only_in_repo_figures_the_page_shows_them_and_says_which(tmp_path: Path) -> None:
    store = ArtifactStore(tmp_path / "artifacts")
    write_store(store)
    write_accuracy_file(
        store.root,
        "repo-old.json",
        corpus="repo",
        split="all",
        measured_at="2026-11-01T09:00:00+00:00",
    )
    write_accuracy_file(
        store.root, "repo-new.json", corpus="repo", split="all", bot_version=BOT_VERSION, games=4
    )
    db = tmp_path / "w.duckdb"
    build_warehouse(store, db, settings.sql_models_dir())
    build_site(db, store.root, tmp_path / "site")
    page = tmp_path / "site" / "accuracy.html"
    text = _text(page)
    assert "No bot accuracy measurement has been published yet" not in text
    assert "No figures of the real corpus (public games) have been published" in text
    assert "these are the latest of the repository's own test games" in text
    # The latest of the in-repo files, not the older one.
    assert f"Bot {BOT_VERSION}, measured 2026-11-30" in text
    assert "on 4 games" in text


def test_the_page_shows_each_published_measurement_with_its_figures(published) -> None:
    page_path, tune, heldout = published
    page, text = page_path.read_text(), _text(page_path)
    assert "No bot accuracy measurement" not in text
    # Held-out first (the fair measure), then tune; each with its bot version and date.
    assert text.index("Real corpus, heldout split") < text.index("Real corpus, tune split")
    assert f"Bot {BOT_VERSION}, measured 2026-11-30 09:00 UTC on 6 games" in text
    assert "Bot 0.0.1, measured 2026-11-30 09:00 UTC on 4 games" in text
    # An old bot's figures are flagged as such.
    assert f"These figures are for bot 0.0.1; the pipeline's bot is now {BOT_VERSION}." in text
    assert text.count("the pipeline's bot is now") == 1
    tune_section = page[page.index('id="real-tune"') :]
    figures = {t["test_id"]: t for t in tune["tests"]}
    rotate = _row(tune_section, "rotate")
    # trust; labelled, agreement, working right, defects caught, fPASS, fFAIL, INC., uncertain
    assert rotate[0] == trust_sentence(figures["rotate"])
    assert "it passed 1 of 2 broken cases" in rotate[0]
    assert rotate[1:] == ["6", "83 %", "100 % of 4", "50 % of 2", "1", "0", "0", "0"]
    gravity = _row(tune_section, "gravity")
    assert gravity[4] == "–"  # no broken game: nothing to count, a dash, not 0 %
    assert "how well it catches a defect is unknown" in gravity[0]
    assert _row(tune_section, "soft_drop")[6] == "1"
    overall = tune["overall"]
    assert (
        f"agreement 97 % over {overall['n_verdicts']} labelled verdicts" in text
        and "1 false PASS, 1 false FAIL, 1 INCONCLUSIVE" in text
    )
    for test_id in TEST_IDS:
        assert f"<code>{test_id}</code>" in tune_section
    parsed = _parse(page_path)
    # Per section: the per-test table, then one per renderer and one per author group.
    assert parsed.tags["h1"] == 1 and parsed.captions == parsed.tables == 2 * 3
    assert all(th.get("scope") in {"col", "row"} for th in parsed.ths)
    assert 'aria-current="page">Bot accuracy<' in page
    assert heldout["overall"]["n_verdicts"] == 64


def test_the_page_breaks_the_figures_down_per_renderer_and_author(published) -> None:
    page_path, tune, _ = published
    page = page_path.read_text()
    tune_section = page[page.index('id="real-tune"') :]
    renderer = tune_section[tune_section.index('id="real-tune-renderer"') :]
    author = tune_section[tune_section.index('id="real-tune-author"') :]
    assert "By renderer" in _text(page_path) and "By author" in _text(page_path)
    assert "the ai row is the one that applies to them" in _text(page_path)

    def cells(section: str, group: str) -> list[str]:
        return _row(section, group)

    groups = tune["groups"]
    # trust; games, verdicts, agreement, working right, defects caught, fPASS, fFAIL, INC, unc.
    # (tests/warehouse/accuracy_files.py: the false PASS is the WebGL game's, by a person.)
    webgl = cells(renderer, "webgl")
    assert webgl[0] == trust_sentence(groups["renderer"]["webgl"]["overall"])
    assert webgl[1:] == ["1", "16", "94 %", "100 % of 15", "0 % of 1", "1", "0", "0", "0"]
    canvas = cells(renderer, "canvas")
    assert canvas[1:4] == ["3", "48", "98 %"] and canvas[7] == "1"  # the false FAIL
    assert cells(renderer, "dom")[8] == "1"  # the INCONCLUSIVE line clear
    ai, human = cells(author, "ai"), cells(author, "human")
    assert ai[1:3] == ["3", "48"] and human[1:3] == ["3", "48"]
    assert (ai[6], human[6]) == ("0", "1")  # false PASS: the person's WebGL game
    # In the order of the contract's groups.
    order = [renderer.index(f"<code>{g}</code>") for g in ("canvas", "dom", "svg", "webgl")]
    assert order == sorted(order)


def test_a_group_without_a_game_says_it_was_not_measured(published) -> None:
    page_path, *_ = published
    heldout = page_path.read_text()
    heldout = heldout[heldout.index('id="real-heldout-renderer"') :]
    # The held-out file holds four games: none of them WebGL.
    webgl = _row(heldout, "webgl")
    assert webgl[0] == "No game of this group in the measurement: not measured."
    assert webgl[1:5] == ["0", "0", "–", "–"]


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_the_published_page_reads_on_a_phone_in_chromium(published) -> None:
    from playwright.sync_api import sync_playwright

    page_path = published[0]
    SHOTS.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_executable(), args=CHROMIUM_ARGS)
        try:
            for width in (1280, 390):
                page = browser.new_page(viewport={"width": width, "height": 900})
                page.on("console", lambda m: m.type == "error" and errors.append(m.text))
                page.on("pageerror", lambda e: errors.append(str(e)))
                page.goto(page_path.as_uri(), wait_until="load")
                root, body, inner = page.evaluate(OVERFLOW)
                assert root <= inner and body <= inner, (width, root, body, inner)
                assert page.locator("table").count() == 2 * 3
                suffix = "" if width == 1280 else "-mobile"
                page.screenshot(path=str(SHOTS / f"accuracy-published{suffix}.png"), full_page=True)
                page.close()
        finally:
            browser.close()
    assert errors == []

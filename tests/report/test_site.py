"""The static site over a real warehouse of fake runs: pages, links, escaping, errors."""

from __future__ import annotations

import html.parser
import os
import re
from collections import Counter
from pathlib import Path
from urllib.parse import unquote, urlsplit

import duckdb
import pytest

from bench_pipeline import settings
from bench_pipeline.report import ReportError, build_site, report_command
from bench_pipeline.report.files import Slugs
from bench_pipeline.warehouse.artifacts import ArtifactStore
from bench_pipeline.warehouse.build import build_warehouse
from tests.report.conftest import LEAKED_NAME, PAGE_SIZE, Site
from tests.report.fake_site import EVIL_RUN, EVIL_TEXT

TEXT_FILES = (".html", ".css", ".js")


class Page(html.parser.HTMLParser):
    """What the tests look at in one page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[tuple[str, str]] = []  # (attribute, value)
        self.ids: set[str] = set()
        self.tags: Counter[str] = Counter()
        self.imgs: list[dict[str, str | None]] = []
        self.svgs: list[dict[str, str | None]] = []
        self.ths: list[dict[str, str | None]] = []
        self.tables = 0
        self.captions = 0
        self.lang: str | None = None
        self.viewport = False
        self.h1_text = ""
        self._in_h1 = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags[tag] += 1
        if a.get("id"):
            self.ids.add(a["id"] or "")
        for key in ("href", "src", "srcset", "action", "poster", "data"):
            if a.get(key) is not None:
                self.links.append((key, a[key] or ""))
        if tag == "html":
            self.lang = a.get("lang")
        if tag == "meta" and a.get("name") == "viewport":
            self.viewport = True
        if tag == "img":
            self.imgs.append(a)
        if tag == "svg":
            self.svgs.append(a)
        if tag == "th":
            self.ths.append(a)
        if tag == "table":
            self.tables += 1
        if tag == "caption":
            self.captions += 1
        if tag == "h1":
            self._in_h1 = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "h1":
            self._in_h1 = False

    def handle_data(self, data: str) -> None:
        if self._in_h1:
            self.h1_text += data


def _parse(path: Path) -> Page:
    page = Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


@pytest.fixture(scope="module")
def pages(site: Site) -> dict[Path, Page]:
    return {p: _parse(p) for p in sorted(site.out.rglob("*.html"))}


def test_every_page_exists(site: Site) -> None:
    out = site.out
    for rel in ("index.html", "compare.html", "methodology.html", "runs/index.html"):
        assert (out / rel).is_file(), rel
    assert (out / "runs" / "failing.html").is_file()
    for experiment in ("study", "planted", "x", "y", "evil"):
        assert (out / "compare" / f"{experiment}.html").is_file()
    run_ids = {
        r
        for (r,) in duckdb.connect(str(site.fake.db), read_only=True)
        .execute("select run_id from fct_runs")
        .fetchall()
    }
    assert len(run_ids) == site.summary.runs == len(site.fake.run_ids)
    slugs = Slugs()  # a safe id is its own page name
    run_pages = [
        p
        for p in (out / "runs").glob("*.html")
        if not re.match(r"(index|page-\d+|failing(-\d+)?)\.html$", p.name)
    ]
    assert len(run_pages) == len(run_ids)
    for run_id in run_ids - {EVIL_RUN}:
        assert (out / "runs" / f"{slugs(run_id)}.html").is_file(), run_id
    assert site.summary.index == out / "index.html"
    assert site.summary.pages == len(list(out.rglob("*.html")))
    assert site.summary.models == 8  # (agent, model) pairs over the five experiments
    assert site.summary.warnings == ()


def test_every_relative_link_and_image_resolves_inside_the_site(
    site: Site, pages: dict[Path, Page]
) -> None:
    checked = 0
    for path, page in pages.items():
        for attr, value in page.links:
            parts = urlsplit(value)
            assert not parts.scheme and not parts.netloc, f"{path}: absolute {attr}={value!r}"
            assert not value.startswith("/"), f"{path}: root-relative {attr}={value!r}"
            if not parts.path:  # a fragment of this page
                assert parts.fragment in page.ids, f"{path}: no id {parts.fragment!r}"
                continue
            target = (path.parent / unquote(parts.path)).resolve()
            assert target.is_relative_to(site.out.resolve()), f"{path}: {value} leaves the site"
            assert target.is_file(), f"{path}: {attr}={value!r} does not exist"
            if parts.fragment and target.suffix == ".html":
                assert parts.fragment in pages[target].ids, f"{path}: {value}: no such anchor"
            checked += 1
    assert checked > 1000


def test_no_absolute_url_in_any_file_and_nothing_outside_the_site(site: Site) -> None:
    for path in site.out.rglob("*"):
        assert not path.is_symlink(), path
        if path.suffix in TEXT_FILES:
            text = path.read_text(encoding="utf-8")
            assert not re.search(r"https?://|//cdn|@import|url\(", text), path
            # The CSP (style-src 'self') would block an inline style, in an inline SVG too.
            assert not re.search(r"<style|\sstyle=", text), path
    # The symlinked "screenshot" pointing outside the artifact store was not published.
    assert not list(site.out.rglob(LEAKED_NAME))
    # CSS and JS are local files, the same for every page.
    assert {p.name for p in (site.out / "static").iterdir()} == {"style.css", "site.js"}


def test_run_ids_and_agent_output_are_escaped(site: Site, pages: dict[Path, Page]) -> None:
    evil_pages = [p for p, page in pages.items() if page.h1_text.strip() == f"Run {EVIL_RUN}"]
    assert len(evil_pages) == 1
    evil = evil_pages[0]
    assert re.fullmatch(r"[A-Za-z0-9_.-]+\.html", evil.name)
    raw = evil.read_text()
    assert EVIL_RUN not in raw and "evil.&lt;b&gt;&#34;x&#34;&amp;amp;&lt;/b&gt;&#39;.r0" in raw
    for path in site.out.rglob("*.html"):
        text = path.read_text()
        assert "<script>alert" not in text and "<img src=x" not in text, path
        assert text.count("<script") == text.count('<script src="'), path
    failed = (site.out / "runs" / f"{site.fake.failed_agent}.html").read_text()
    assert "&lt;script&gt;alert(&#34;pwned&#34;)&lt;/script&gt;" in failed
    assert EVIL_TEXT not in failed
    # Listed (escaped) on the index and the failing runs page as well.
    assert "&lt;script&gt;alert" in (site.out / "runs" / "failing.html").read_text()


def test_pages_are_accessible_by_structure(pages: dict[Path, Page]) -> None:
    for path, page in pages.items():
        assert page.lang == "en", path
        assert page.viewport, path
        assert page.tags["h1"] == 1, path
        for landmark in ("header", "nav", "main"):
            assert page.tags[landmark] >= 1, (path, landmark)
        assert page.captions == page.tables, path
        assert all(th.get("scope") in {"col", "row"} for th in page.ths), path
        for img in page.imgs:
            assert (img.get("alt") or "").strip(), (path, img)
            assert img.get("width") and img.get("height"), (path, img)
        for svg in page.svgs:
            assert svg.get("role") == "img" and (svg.get("aria-label") or "").strip(), path


def test_runs_index_is_paginated(site: Site, pages: dict[Path, Page]) -> None:
    runs_dir = site.out / "runs"
    n = site.summary.runs
    expected = -(-n // PAGE_SIZE)
    names = ["index.html"] + [f"page-{i}.html" for i in range(2, expected + 1)]
    assert expected >= 3
    assert not (runs_dir / f"page-{expected + 1}.html").exists()
    seen: list[str] = []
    for name in names:
        page = pages[runs_dir / name]
        rows = [v for a, v in page.links if a == "href" and re.fullmatch(r"[^/]+\.html", v)]
        run_links = [v for v in rows if not re.match(r"(index|page-\d+|failing(-\d+)?)\.html$", v)]
        assert 0 < len(run_links) <= PAGE_SIZE
        seen += run_links
        # Every page links to the others.
        assert "index.html" in rows and f"page-{expected}.html" in rows
    assert len(seen) == len(set(seen)) == n


def test_failing_runs_list_starts_with_the_worst(site: Site) -> None:
    text = (site.out / "runs" / "failing.html").read_text()
    agent = text.index(f"{site.fake.failed_agent}.html")
    build = text.index(f"{site.fake.failed_build}.html")
    assert agent < build
    assert "the build failed: npm run build failed (exit 2)" in text
    index = (site.out / "index.html").read_text()
    assert 'href="runs/failing.html"' in index


def test_index_answers_the_three_questions(site: Site) -> None:
    text = (site.out / "index.html").read_text()
    # The best model of the planted experiment, with its interval and verdict.
    assert re.search(
        r"claude-opus-4-6 \(synthetic\) leads with a mean score of [\d.]+ \(95 % interval", text
    )
    # The strongest meaningful effect: haiku's planted -25 gameplay points (half on the score).
    assert re.search(
        r"claude-haiku-4-5 lowers the score by [\d.]+ ± [\d.]+ points vs claude-sonnet-4-6 \(significant and larger than the noise\)",
        text,
    )
    assert 'href="compare/planted.html#score"' in text


def test_compare_pages_have_readings_charts_and_power(site: Site) -> None:
    planted = (site.out / "compare" / "planted.html").read_text()
    assert "Detecting an effect of 5 points needs" in planted
    assert "no detectable effect" in planted
    # No PNGs for this experiment: inline SVG charts, the interaction plot included.
    assert 'aria-label="Interaction plot of model × prompt_style on the gameplay score' in planted
    assert "<img" not in planted
    study = (site.out / "compare" / "study.html").read_text()
    # The score's charts are the analysis's PNGs (copied), the other outcomes' inline SVG.
    assert 'src="../charts/study/score.main_effects.png"' in study
    assert 'src="../charts/study/score.pareto.png"' in study
    assert "../charts/study/score.interaction_" in study
    assert 'aria-label="Main effects on the gameplay score' in study
    assert 'aria-label="Pareto chart of the two-level effects on the quality score' in study
    assert "Plackett-Burman" in study
    assert (site.out / "charts" / "study" / "score.main_effects.png").is_file()


def test_run_page_shows_evidence(site: Site) -> None:
    run = next(
        r
        for r in site.fake.run_ids
        if r.startswith("study.") and r not in {site.fake.failed_agent, site.fake.failed_build}
    )
    text = (site.out / "runs" / f"{run}.html").read_text()
    for needle in (
        "model",
        "plan_first",
        "01-loaded.png",
        "ArrowLeft",
        "10 × 20",
        "key:Enter",
        "Tool calls by tool",
        "workspace.tar.gz",
        "Build log",
        "built dist/index.html",
        "navigated to the game",
        "the prompt the agent got".capitalize(),
    ):
        assert needle in text, needle
    assert (site.out / "runs" / run / "01-loaded.png").is_file()
    assert (site.out / "runs" / run / "workspace.tar.gz").is_file()


def test_archives_over_the_cap_are_named_not_copied(site: Site, tmp_path: Path) -> None:
    summary = build_site(site.fake.db, site.fake.artifacts, tmp_path / "s", archive_max_bytes=10)
    assert not list((tmp_path / "s").rglob("workspace.tar.gz"))
    assert any("over the" in w for w in summary.warnings)
    run = site.fake.failed_build
    assert "over the site" in (tmp_path / "s" / "runs" / f"{run}.html").read_text()


def test_rebuild_replaces_an_earlier_site_but_never_a_foreign_folder(
    site: Site, tmp_path: Path
) -> None:
    out = tmp_path / "site"
    build_site(site.fake.db, site.fake.artifacts, out)
    stale = out / "runs" / "gone.html"
    stale.write_text("old")
    run = next(
        r
        for r in site.fake.run_ids
        if r.startswith("study.") and r not in {site.fake.failed_agent, site.fake.failed_build}
    )
    page, shot = out / "runs" / f"{run}.html", out / "runs" / run / "01-loaded.png"
    changed = out / "runs" / site.fake.run_ids[-2] / "02-end.png"
    source = site.fake.artifacts / "runs" / site.fake.run_ids[-2] / "bot_evaluation" / "02-end.png"
    before = {p: p.stat().st_ino for p in (page, shot, changed)}
    source_mtime = source.stat().st_mtime_ns
    os.utime(source, ns=(source_mtime + 10**9, source_mtime + 10**9))  # the bot ran again
    try:
        build_site(site.fake.db, site.fake.artifacts, out)
    finally:
        os.utime(source, ns=(source_mtime, source_mtime))
    assert not stale.exists() and (out / "index.html").is_file()
    assert not list(tmp_path.glob(".site.*"))  # no staging or old folder left behind
    # Unchanged pages and evidence were linked from the earlier site, not written again;
    # changed evidence was copied again. Either way each is one ordinary file now.
    assert page.stat().st_ino == before[page] and shot.stat().st_ino == before[shot]
    assert changed.stat().st_ino != before[changed]
    assert all(p.stat().st_nlink == 1 for p in (page, shot, changed))
    foreign = tmp_path / "home"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    with pytest.raises(ReportError, match="not empty"):
        build_site(site.fake.db, site.fake.artifacts, foreign)
    assert (foreign / "notes.txt").read_text() == "mine"


def test_missing_warehouse_is_one_clear_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = report_command(tmp_path / "s", db=tmp_path / "nope.duckdb", artifacts=tmp_path)
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("error: no warehouse at ")
    assert "Traceback" not in err and not (tmp_path / "s").exists()


def test_empty_or_bad_warehouse_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty.duckdb"
    build_warehouse(ArtifactStore(tmp_path / "a"), empty, settings.sql_models_dir())
    with pytest.raises(ReportError, match="no runs yet"):
        build_site(empty, tmp_path / "a", tmp_path / "s")
    blank = tmp_path / "blank.duckdb"
    duckdb.connect(str(blank)).close()
    with pytest.raises(ReportError, match="no fct_runs table"):
        build_site(blank, tmp_path / "a", tmp_path / "s")
    junk = tmp_path / "junk.duckdb"
    junk.write_text("not a database")
    assert report_command(tmp_path / "s", db=junk, artifacts=tmp_path) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: cannot open the warehouse") and err.count("\n") == 1
    assert not (tmp_path / "s").exists()


def test_report_command_prints_summary_and_index(
    site: Site, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = report_command(
        tmp_path / "s", db=site.fake.db, artifacts=site.fake.artifacts, page_size=500
    )
    out = capsys.readouterr().out.splitlines()
    assert code == 0
    assert re.match(rf"report: \d+ pages, {site.summary.runs} runs, 8 models, ", out[0])
    assert out[1] == f"open: {tmp_path / 's' / 'index.html'}"

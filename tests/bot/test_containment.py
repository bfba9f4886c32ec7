"""The bot's containment of the game: what is served, and what the page may reach.

Attack first, then the defence: each hostile folder or page below is shown doing harm
without the wall (a naive server, a plain browser) before the wall is shown to hold.
"""

from __future__ import annotations

import functools
import http.server
import os
import stat
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

from bench_pipeline.bot.browser import CHROMIUM_ARGS, chromium_executable
from bench_pipeline.bot.contain import browser_flags, contained_browser, install_guard
from bench_pipeline.bot.serve import TargetError, check_url, copy_game, serve_directory
from tests.hostile.exfiltration import Listener, leaky_game

# Each test here opens Chromium: asking for it marks them `browser` (tests/needs.py).
pytestmark = pytest.mark.usefixtures("chromium")

SECRET = "bench-secret-7f3a9c0e"


@pytest.fixture
def secret_file(tmp_path: Path) -> Path:
    """A throw-away secret outside the game folder (the stand-in for /root/<secret>)."""
    path = tmp_path / "outside" / "secret.txt"
    path.parent.mkdir()
    path.write_text(SECRET)
    return path


@pytest.fixture
def hostile_folder(tmp_path: Path, secret_file: Path) -> Path:
    """A game folder whose build planted a symlink out, a FIFO and a device node."""
    game = tmp_path / "game"
    (game / "assets").mkdir(parents=True)
    (game / "index.html").write_text("<!doctype html><title>game</title><p>hello</p>")
    (game / "assets" / "app.js").write_text("console.log('app');")
    (game / "leak.txt").symlink_to(secret_file)
    (game / "linked-dir").symlink_to(secret_file.parent, target_is_directory=True)
    (game / "same.js").symlink_to(game / "assets" / "app.js")  # stays inside: served
    os.mkfifo(game / "pipe")
    if os.geteuid() == 0:
        os.mknod(game / "zero", 0o644 | stat.S_IFCHR, os.makedev(1, 5))  # /dev/zero
    return game


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def test_a_naive_server_leaks_the_secret_through_the_symlink(
    hostile_folder: Path,
) -> None:
    """The attack: the standard library's server follows the symlink out of the folder."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(hostile_folder))
    handler.log_message = lambda *a: None  # type: ignore[method-assign]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        status, body = _get(f"http://127.0.0.1:{server.server_address[1]}/leak.txt")
    finally:
        server.shutdown()
        server.server_close()
    assert status == 200 and SECRET.encode() in body


def test_the_bots_server_serves_only_regular_files_inside(hostile_folder: Path) -> None:
    with serve_directory(hostile_folder) as url:
        assert _get(url)[0] == 200
        assert _get(url + "assets/app.js") == (200, b"console.log('app');")
        assert _get(url + "same.js")[0] == 200
        for name in (
            "leak.txt",
            "linked-dir/secret.txt",
            "pipe",
            "zero",
            "assets",
            "%2e%2e/outside/secret.txt",
        ):
            status, body = _get(url + name)
            # A FIFO would block a naive open() forever; here it is a 404 at once.
            assert status in (301, 404), (name, status)
            assert SECRET.encode() not in body


def test_the_copy_leaves_out_links_out_fifos_and_devices(
    hostile_folder: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "copy"
    skipped = copy_game(hostile_folder, copy)
    names = {line.split(":")[0] for line in skipped}
    assert {"leak.txt", "linked-dir", "pipe"} <= names
    assert os.geteuid() != 0 or "zero" in names
    for path in copy.rglob("*"):
        assert not path.is_symlink(), path
        assert path.is_dir() or path.is_file(), path
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    assert (copy / "same.js").read_text() == "console.log('app');"
    assert (copy / "index.html").stat().st_mode & 0o777 == 0o644


def test_the_copy_leaves_out_hard_links_out_and_files_others_may_not_read(
    tmp_path: Path,
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.txt"
    secret.write_text(SECRET)
    secret.chmod(0o600)
    game = tmp_path / "game"
    (game / "js").mkdir(parents=True)
    (game / "index.html").write_text("<p>game</p>")
    os.link(secret, game / "leak.txt")
    (game / "js" / "app.js").write_text("run()")
    (game / "js" / "app.js").chmod(0o640)  # group-only: the sandbox uid is no member
    (game / "style.css").write_text("p {}")
    os.link(game / "style.css", game / "js" / "style-again.css")  # both names inside
    (game / "tool.sh").write_text("#!/bin/sh")
    (game / "tool.sh").chmod(0o755)
    (game / "closed").mkdir(mode=0o700)
    (game / "closed" / "inside.js").write_text("hidden()")
    (game / "closed").chmod(0o700)
    skipped = dict(line.split(": ", 1) for line in copy_game(game, tmp_path / "copy"))
    assert skipped["closed"] == "a folder other users may not enter (mode 0700)"
    assert skipped["leak.txt"].startswith("a hard link (2 names")
    assert skipped["js/app.js"] == "not readable by other users (mode 0640)"
    copy = tmp_path / "copy"
    assert not (copy / "leak.txt").exists() and not (copy / "js" / "app.js").exists()
    assert (copy / "style.css").read_text() == (copy / "js" / "style-again.css").read_text()
    assert (copy / "tool.sh").stat().st_mode & 0o777 == 0o755  # permissions kept
    # The server refuses the same files when handed the folder itself.
    with serve_directory(game) as url:
        assert _get(url + "leak.txt")[0] == 404
        assert _get(url + "js/app.js")[0] == 404
        assert _get(url + "index.html")[0] == 200


def test_only_loopback_urls_are_targets() -> None:
    assert check_url("http://127.0.0.1:8080/") == "http://127.0.0.1:8080/"
    assert check_url("http://localhost:3000") == "http://localhost:3000"
    for bad in ("http://127.0.0.1.evil.example/", "https://example.com", "file:///etc/passwd"):
        with pytest.raises(TargetError):
            check_url(bad)


# ---- the browser ------------------------------------------------------------------------


@pytest.fixture
def listener() -> Iterator[Listener]:
    server = Listener()
    yield server
    server.close()


def _leaky_game(tmp_path: Path, secret_file: Path, listener_port: int) -> Path:
    return leaky_game(tmp_path / "leaky-game", secret_file, listener_port)


def _chromium() -> str:
    executable = chromium_executable()
    if executable is None:
        pytest.skip("no Chromium")
    return executable


@pytest.mark.slow
def test_without_containment_the_page_exfiltrates(
    tmp_path: Path, secret_file: Path, listener: Listener
) -> None:
    """The attack, end to end: a naive server + a plain browser hand the secret over."""
    game = _leaky_game(tmp_path, secret_file, listener.port)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(game))
    handler.log_message = lambda *a: None  # type: ignore[method-assign]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=_chromium(), args=CHROMIUM_ARGS)
            page = browser.new_page()
            page.goto(f"http://127.0.0.1:{server.server_address[1]}/")
            page.wait_for_function("window.__done === true", timeout=15000)
            page.wait_for_timeout(1500)
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
    time.sleep(0.5)
    assert listener.connections > 0
    assert SECRET.encode() in listener.received


@pytest.mark.slow
def test_the_browser_flags_alone_keep_a_page_that_read_the_secret_in(
    tmp_path: Path, secret_file: Path, listener: Listener
) -> None:
    """One wall on its own: a naive server hands the page the secret, there is no sandbox
    and no routing, and Chromium's own flags still let nothing reach the listener."""
    game = _leaky_game(tmp_path, secret_file, listener.port)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(game))
    handler.log_message = lambda *a: None  # type: ignore[method-assign]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=_chromium(), args=CHROMIUM_ARGS + browser_flags(url)
            )
            page = browser.new_page()
            # The page says what it read by setting window.__done, and 300 ms later submits
            # a form and navigates away. Polling for that text from here lost the race on
            # a loaded CI machine, so the page itself hands the text over the moment it is
            # done, through a binding whose message outlives the navigation.
            reported: list[str] = []
            page.expose_binding("__reportRead", lambda _source, text: reported.append(text))
            page.add_init_script(
                "Object.defineProperty(window, '__done', {configurable: true, set(v) {"
                " window.__reportRead(document.getElementById('out').textContent); }});"
            )
            page.goto(url)
            deadline = time.monotonic() + 15
            while not reported and time.monotonic() < deadline:
                page.wait_for_timeout(100)
            page.wait_for_timeout(1500)
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
    time.sleep(0.5)
    assert reported, "the page never said what it read"
    assert SECRET in reported[0]  # the read succeeded: this wall is only about what leaves
    assert listener.connections == 0 and listener.received == b""


@pytest.mark.slow
@pytest.mark.parametrize("sandboxed", [True, False], ids=["bubblewrap", "no-sandbox"])
def test_the_contained_browser_blocks_and_records_every_way_out(
    tmp_path: Path,
    secret_file: Path,
    listener: Listener,
    sandboxed: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The defence, with the same parts evaluate() uses; without bubblewrap (its fallback)
    the copy, the routing and the flags must hold on their own."""
    monkeypatch.setenv("BENCH_BOT_SANDBOX", "1" if sandboxed else "0")
    game = _leaky_game(tmp_path, secret_file, listener.port)
    workdir = tmp_path / "work"
    workdir.mkdir()
    started = time.monotonic()
    with sync_playwright() as p, contained_browser(str(game), workdir, _chromium()) as box:
        context = p.chromium.launch_persistent_context(
            str(workdir / "profile"),
            executable_path=box.executable,
            headless=True,
            args=CHROMIUM_ARGS + box.extra_args,
            service_workers="block",
        )
        install_guard(context, box, lambda: time.monotonic() - started)
        page = context.pages[0] if context.pages else context.new_page()
        page.goto(box.url)
        # Read the text in the same evaluation that sees the page done: 300 ms later the
        # page submits a form and navigates away, and a later read finds no #out at all.
        shown = page.wait_for_function(
            "window.__done === true && document.getElementById('out').textContent",
            timeout=15000,
        ).json_value()
        page.wait_for_timeout(1500)  # the form post and the beacons
        page_source = page.content()
        context.close()
    time.sleep(0.5)
    info = box.to_json()
    if sandboxed:
        assert info["sandbox"] == "bubblewrap", info["reason"]
        assert info["unprivileged"] is True
    else:
        assert info["sandbox"] is None and "BENCH_BOT_SANDBOX" in info["reason"]
    assert any(line.startswith("leak.txt") for line in info["skipped_files"])
    # Nothing read, nothing shown, nothing sent.
    assert shown.startswith("404:"), shown
    assert SECRET not in shown and SECRET not in page_source
    assert "root:x:0:0" not in shown
    assert listener.connections == 0 and listener.received == b""
    # And every attempt is on record.
    attempts = [(b["kind"], b["url"]) for b in info["blocked_requests"]]
    urls = " ".join(url for _, url in attempts)
    assert f"127.0.0.1:{listener.port}/fetch" in urls
    assert f"127.0.0.1:{listener.port}/img" in urls
    assert f"127.0.0.1:{listener.port}/beacon" in urls
    assert f"127.0.0.1:{listener.port}/form" in urls
    assert "127.0.0.1:5432" in urls
    assert "example.com/x" in urls
    assert ("websocket", f"ws://127.0.0.1:{listener.port}/ws") in attempts
    assert ("websocket", "ws://example.com/ws") in attempts
    assert SECRET not in repr(info)


@pytest.mark.slow
def test_file_urls_are_blocked_and_recorded(tmp_path: Path, secret_file: Path) -> None:
    """Through evaluate(): a page reaching for file:// and a database port."""
    from bench_pipeline.bot import evaluate

    game = tmp_path / "files"
    game.mkdir()
    (game / "index.html").write_text(
        f"""<!doctype html><body><img src="file://{secret_file}"><script>
fetch('file:///etc/passwd').catch(() => {{}});
fetch('http://127.0.0.1:5432/').catch(() => {{}});
</script></body>"""
    )
    artifacts = tmp_path / "evidence"
    result = evaluate(str(game), endurance_s=2.0, artifacts=artifacts).to_json()
    blocked = result["containment"]["blocked_requests"]
    kinds = {b["kind"] for b in blocked}
    assert "file" in kinds, blocked
    assert any("127.0.0.1:5432" in b["url"] for b in blocked), blocked
    events = (artifacts / "observations.json").read_text()
    assert "127.0.0.1:5432" in events
    for path in artifacts.iterdir():
        assert SECRET.encode() not in path.read_bytes(), path

"""Serve a game directory read-only on a loopback port (contract §2)."""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ENTRY_POINTS = ("index.html", "dist/index.html", "build/index.html")


class TargetError(ValueError):
    """A target the bot cannot evaluate at all (no directory, no entry point, bad URL)."""


def entry_point(directory: Path) -> Path:
    """The folder to serve: the first of index.html, dist/index.html, build/index.html."""
    if not directory.is_dir():
        raise TargetError(f"{directory} is not a directory")
    for candidate in ENTRY_POINTS:
        if (directory / candidate).is_file():
            return (directory / candidate).parent
    raise TargetError(
        f"{directory} has no index.html, dist/index.html or build/index.html to serve"
    )


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    # GET and HEAD only (SimpleHTTPRequestHandler has no write methods): read-only by design.
    def log_message(self, format: str, *args: object) -> None:
        pass

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        super().end_headers()


@contextmanager
def serve_directory(directory: Path) -> Iterator[str]:
    """Yield the http://127.0.0.1:PORT/ URL of `directory` while it is served."""
    root = entry_point(directory)
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="bench-serve", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def check_url(url: str) -> str:
    if not url.startswith(("http://127.0.0.1", "http://localhost", "http://[::1]")):
        raise TargetError(f"{url}: only http://127.0.0.1:… or http://localhost:… URLs are allowed")
    return url

"""Serve a game directory read-only on a loopback port.

The directory is untrusted (an agent's build), so the server hands out only regular files
that really lie inside it: a symlink out of the folder (`leak.txt -> /root/secret`), a
device or a FIFO (whose open would block a naive server forever) is a 404. Normally the
served folder is a sanitised copy (`copy_game`) and the server runs inside the bot's
sandbox as an unprivileged uid (`bench_pipeline/bot/contain.py`), so these checks are the
second wall, not the only one.

This module uses the standard library only: the sandbox runs it as a script
(`python3 -I serve.py --root DIR --port N --exec CHROMIUM ARGS…`) with the system Python.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import os
import shutil
import socket
import stat
import sys
import threading
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ENTRY_POINTS = ("index.html", "dist/index.html", "build/index.html")
# A game larger than this is not copied whole: what is left out is a 404 (and recorded).
COPY_LIMIT_BYTES = 256 * 1024 * 1024
COPY_MAX_FILES = 20_000


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


def open_regular_inside(root: Path, path: Path, *, linked_inside: int = 1) -> int | None:
    """A read-only fd on `path` when it resolves to a regular file inside `root` that any
    user may read and that has no name outside `root`, else None.

    Resolving first rejects symlinks out of the folder; O_NONBLOCK keeps a FIFO from
    blocking the open, and fstat (on what was really opened) rejects FIFOs and devices.
    A hard link is the same file under a second name, which may lie anywhere on the
    filesystem (`leak.txt` linked to a root-only `/root/secret`): a file with more names
    (`st_nlink`) than the `linked_inside` names known to be inside `root` is refused. So is
    a file other users may not read (no `o+r`): the sandbox's uid could not read it, and
    the server must not read it for that uid when it runs as root.
    """
    try:
        real = Path(os.path.realpath(path))
        real_root = Path(os.path.realpath(root))
    except (OSError, ValueError):
        return None
    if real != real_root and real_root not in real.parents:
        return None
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    info = os.fstat(fd)
    if (
        not stat.S_ISREG(info.st_mode)
        or info.st_nlink > max(1, linked_inside)
        or not info.st_mode & stat.S_IROTH
    ):
        os.close(fd)
        return None
    return fd


def _mode(path: Path) -> int:
    try:
        return os.lstat(path).st_mode
    except OSError:
        return 0


def _why_refused(path: Path) -> str:
    """Why `open_regular_inside` refused `path`, in the words of the skipped-files list."""
    try:
        info = os.lstat(path)
    except OSError as error:
        return f"unreadable ({error.strerror})"
    if stat.S_ISREG(info.st_mode):
        if info.st_nlink > 1:
            return f"a hard link ({info.st_nlink} names, some outside the served folder)"
        if not info.st_mode & stat.S_IROTH:
            return f"not readable by other users (mode {stat.S_IMODE(info.st_mode):04o})"
    return "not a regular file inside the served folder"


def _names_inside(source: Path) -> dict[tuple[int, int], int]:
    """(device, inode) -> names found inside `source`, for its regular files with several
    names: a hard link whose every name is inside the folder is the game's own file."""
    names: dict[tuple[int, int], int] = {}
    for dirpath, dirnames, filenames in os.walk(source, followlinks=False):
        for name in filenames:
            try:
                info = os.lstat(os.path.join(dirpath, name))
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
                key = (info.st_dev, info.st_ino)
                names[key] = names.get(key, 0) + 1
        dirnames[:] = [d for d in dirnames if not os.path.islink(os.path.join(dirpath, d))]
    return names


def copy_game(source: Path, destination: Path) -> list[str]:
    """Copy the regular files of `source` that resolve inside it to `destination`.

    Returns what was left out, one "path: reason" each (symlinks out of the folder, FIFOs,
    devices, sockets, hard links with a name outside the folder, files other users may not
    read, unreadable files, anything past the size cap). Symlinks that stay inside become
    plain copies, so the copy holds no link at all. A copy keeps its file's permissions
    (without write for others): it is readable by the sandbox's uid exactly when the file
    was readable by any user.
    """
    skipped: list[str] = []
    total = files = 0
    linked = _names_inside(source)
    destination.mkdir(parents=True, exist_ok=True)
    for dirpath, dirnames, filenames in os.walk(source, followlinks=False):
        here = Path(dirpath)
        relative_dir = here.relative_to(source)
        for name in list(dirnames):
            if (here / name).is_symlink():
                # A linked folder is skipped whole: walking it could leave the tree or loop.
                dirnames.remove(name)
                skipped.append(f"{relative_dir / name}: a symlinked folder")
                continue
            mode = _mode(here / name)
            if not mode & stat.S_IXOTH:
                # Other users cannot enter it: nor could the sandbox's uid read what is in it.
                dirnames.remove(name)
                skipped.append(
                    f"{relative_dir / name}: a folder other users may not enter "
                    f"(mode {stat.S_IMODE(mode):04o})"
                )
                continue
            (destination / relative_dir / name).mkdir(exist_ok=True)
        for name in filenames:
            relative = relative_dir / name
            try:
                info = os.stat(here / name)  # a symlink inside counts as its target
                inside = linked.get((info.st_dev, info.st_ino), 1)
            except OSError:
                inside = 1
            fd = open_regular_inside(source, here / name, linked_inside=inside)
            if fd is None:
                skipped.append(f"{relative}: {_why_refused(here / name)}")
                continue
            with os.fdopen(fd, "rb") as handle:
                opened = os.fstat(handle.fileno())
                size = opened.st_size
                if files >= COPY_MAX_FILES or total + size > COPY_LIMIT_BYTES:
                    skipped.append(f"{relative}: past the copy limit")
                    continue
                with open(destination / relative, "wb") as out:
                    shutil.copyfileobj(handle, out)
            (destination / relative).chmod(stat.S_IMODE(opened.st_mode) & 0o755)
            total += size
            files += 1
    for dirpath, _dirnames, _filenames in os.walk(destination):
        os.chmod(dirpath, 0o755)
    return skipped


# Text that is valid UTF-8 is declared so, as the usual static hosts do (GitHub Pages,
# Netlify, Vite): a page with no <meta charset> would otherwise be decoded as
# windows-1252, and its Chinese "开始游戏" button would read as mojibake to the player and
# to the bot alike. Text in another encoding keeps the browser's own guess.
TEXT_TYPES = ("text/", "application/javascript", "application/json")
CHARSET_SNIFF_BYTES = 4 * 1024 * 1024


def _content_type(guessed: str, fd: int) -> str:
    if not guessed.startswith(TEXT_TYPES) or "charset" in guessed:
        return guessed
    try:
        data = os.pread(fd, CHARSET_SNIFF_BYTES, 0)
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        # A file cut at the sniff limit may end inside a character: that is no reason.
        if error.start < len(data) - 4:
            return guessed
    except OSError:
        return guessed
    return f"{guessed}; charset=utf-8"


class _SafeHandler(http.server.SimpleHTTPRequestHandler):
    """GET and HEAD of regular files inside the root; no listings, no symlinks out."""

    def log_message(self, format: str, *args: object) -> None:
        pass

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def send_head(self):  # type: ignore[no-untyped-def]
        root = Path(self.directory)
        path = Path(self.translate_path(self.path))
        if os.path.isdir(path):
            if not urllib.parse.urlsplit(self.path).path.endswith("/"):
                self.send_response(301)
                parts = urllib.parse.urlsplit(self.path)
                self.send_header(
                    "Location", urllib.parse.urlunsplit(parts._replace(path=parts.path + "/"))
                )
                self.send_header("Content-Length", "0")
                self.end_headers()
                return None
            path = path / "index.html"
        fd = open_regular_inside(root, path)
        if fd is None:
            self.send_error(404, "File not found")
            return None
        handle = os.fdopen(fd, "rb")
        self.send_response(200)
        self.send_header("Content-type", _content_type(self.guess_type(str(path)), fd))
        self.send_header("Content-Length", str(os.fstat(fd).st_size))
        self.end_headers()
        return handle


def _server(root: Path, sock: socket.socket | None = None) -> http.server.ThreadingHTTPServer:
    handler = functools.partial(_SafeHandler, directory=str(root))
    if sock is None:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    else:
        server = http.server.ThreadingHTTPServer(
            sock.getsockname(), handler, bind_and_activate=False
        )
        server.socket.close()
        server.socket = sock
    server.daemon_threads = True
    return server


@contextmanager
def serve_directory(directory: Path, *, as_is: bool = False) -> Iterator[str]:
    """Yield the http://127.0.0.1:PORT/ URL of `directory` while it is served (in-process:
    the bot's fallback when it cannot sandbox the browser). `as_is`: serve `directory`
    itself rather than the folder of its entry point."""
    root = directory if as_is else entry_point(directory)
    server = _server(root)
    thread = threading.Thread(target=server.serve_forever, name="bench-serve", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def check_url(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "http" or parts.hostname not in ("127.0.0.1", "localhost", "::1"):
        raise TargetError(f"{url}: only http://127.0.0.1:… or http://localhost:… URLs are allowed")
    return url


def main(argv: list[str] | None = None) -> None:
    """Inside the sandbox: listen, serve from a child process, become Chromium.

    The socket is bound before Chromium starts, so the first navigation finds it ready;
    Chromium replaces this process (keeping the Playwright pipe on fds 3 and 4), and the
    server dies with the sandbox's pid namespace when Chromium exits.
    """
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", required=True, type=Path)
    parser.add_argument("--port", required=True, type=int)
    parser.add_argument("--exec", dest="command", nargs=argparse.REMAINDER, required=True)
    args = parser.parse_args(argv)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    sock.listen(64)
    if os.fork() == 0:
        # The server keeps neither Playwright's pipe (fds 3 and 4) nor its output streams.
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.closerange(3, sock.fileno())
        os.closerange(sock.fileno() + 1, 1024)
        try:
            _server(args.root, sock).serve_forever()
        finally:
            os._exit(0)
    sock.close()
    os.execv(args.command[0], args.command)


if __name__ == "__main__":
    main(sys.argv[1:])

"""Contain the game the bot plays: what it is served, what it may reach, whom it runs as.

A game is untrusted code. Without containment a build that ships `dist/leak.txt ->
/root/secret` had the secret served by a file server running as root, and the page's
JavaScript could send it anywhere. Three walls, each enough on its own for that attack:

1. **What is served.** The game folder is copied first (`serve.copy_game`): only regular
   files that resolve inside it; symlinks out, FIFOs, devices and sockets are left out and
   listed. The server checks the same again for every request.
2. **Where Chromium runs.** Chromium (and, for a directory, the file server) runs inside
   bubblewrap as a throw-away unprivileged uid with no capabilities, a read-only host, a
   fresh /tmp, /run, /root and /home hidden, and a network namespace of its own: the only
   thing the page can reach is the game's server on the sandbox's own loopback. Playwright
   drives Chromium over a pipe (fds 3 and 4), which needs no network. For a URL target
   (`http://127.0.0.1:PORT`) a bridge inside listens on PORT and reaches, through a Unix
   socket relayed by this process, that one host port and nothing else.
3. **What the page may request.** Every request of the browser context that is not to the
   game's own origin is aborted by Playwright routing, and so is every WebSocket; service
   workers are blocked; Chromium sends anything not bypassed to a dead proxy, resolves no
   host name, prefetches no DNS and sends no WebRTC UDP outside the proxy. Every blocked
   attempt is recorded (`blocked_requests` in the evaluation and observations.json).

When bubblewrap cannot run here (or BENCH_BOT_SANDBOX=0), walls 1 and 3 still hold and
the evaluation says why wall 2 is missing (`containment.sandbox` is null, with a reason).
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import socket
import stat
import tempfile
import threading
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench_pipeline.bot import serve
from bench_pipeline.bot.serve import check_url, copy_game, entry_point, serve_directory
from bench_pipeline.sandbox import bridge as bridge_module

# The port of the game's server inside the sandbox's own network namespace (nothing else
# listens there, so any port is free).
SANDBOX_PORT = 8000
# Where Chromium sends every request that is not to the game: nothing listens on the
# discard port, so such a request fails at once (routing has aborted it already).
DEAD_PROXY = "http://127.0.0.1:9"
SYSTEM_PYTHON = "/usr/bin/python3"
# Per-process rlimits for the browser (Chromium starts dozens of threads per process).
BROWSER_MEMORY_MB = 4096
BROWSER_MAX_THREADS = 4096
BROWSER_MAX_FILE_MB = 512
MIB = 1024 * 1024
# Host folders the browser has no business seeing: sockets of host services (/run), the
# administrator's and users' files.
MASKED_FOLDERS = ("/run", "/root", "/home")
MAX_BLOCKED_RECORDED = 200


@dataclass
class Containment:
    """How one evaluation's browser is contained; `to_json` goes into the evaluation."""

    url: str
    executable: str
    extra_args: list[str]
    sandbox: str | None = None  # "bubblewrap" or None (reason says why)
    network: str = "host loopback, browser-level blocking only"
    uid: int | None = None
    reason: str | None = None
    skipped_files: list[str] = field(default_factory=list)
    blocked: list[dict[str, Any]] = field(default_factory=list)
    blocked_total: int = 0

    @property
    def origin(self) -> str:
        parts = urllib.parse.urlsplit(self.url)
        return f"{parts.scheme}://{parts.netloc}"

    def record(self, t: float, kind: str, url: str) -> None:
        self.blocked_total += 1
        if len(self.blocked) < MAX_BLOCKED_RECORDED:
            self.blocked.append({"t": round(t, 3), "kind": kind, "url": url[:300]})

    def to_json(self) -> dict[str, Any]:
        return {
            "sandbox": self.sandbox,
            "network": self.network,
            # Root runs the browser as a throw-away uid; anyone else is unprivileged already.
            "unprivileged": self.uid is not None or os.geteuid() != 0,
            "reason": self.reason,
            "origin": self.origin,
            "skipped_files": self.skipped_files[:100],
            "blocked_requests": self.blocked,
            "blocked_total": self.blocked_total,
        }


def browser_flags(url: str) -> list[str]:
    """Chromium flags that keep the page on its own origin (the network-level wall)."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or "127.0.0.1"
    port = parts.port or 80
    netloc = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    return [
        # <-loopback> removes Chromium's implicit proxy bypass for loopback, so other local
        # ports (a database, a listener) go to the dead proxy too; only the game is direct.
        f"--proxy-server={DEAD_PROXY}",
        f"--proxy-bypass-list=<-loopback>;{netloc}",
        # Chromium passes IP literals through these rules too, so the loopback is excluded.
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
        "--dns-prefetch-disable",
        "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
        "--webrtc-ip-handling-policy=disable_non_proxied_udp",
    ]


def same_origin(url: str, origin: str) -> bool:
    parts = urllib.parse.urlsplit(url)
    scheme = {"ws": "http", "wss": "https"}.get(parts.scheme, parts.scheme)
    return f"{scheme}://{parts.netloc}" == origin


def install_guard(context: Any, containment: Containment, now: Callable[[], float]) -> None:
    """Abort every request and WebSocket of `context` that leaves the game's origin."""
    origin = containment.origin

    def on_route(route: Any) -> None:
        request = route.request
        if same_origin(request.url, origin):
            route.continue_()
            return
        containment.record(now(), request.resource_type, request.url)
        with contextlib.suppress(Exception):
            route.abort("blockedbyclient")

    def on_web_socket(socket: Any) -> None:
        # The page's own server may speak WebSocket (a URL target); nothing else may.
        if same_origin(socket.url, origin):
            socket.connect_to_server()
            return
        containment.record(now(), "websocket", socket.url)
        with contextlib.suppress(Exception):
            socket.close(code=1008, reason="blocked by the benchmark")

    context.route("**/*", on_route)
    context.route_web_socket(re.compile(".*"), on_web_socket)


def _usable_by_others(path: Path) -> bool:
    """Whether an unprivileged uid can execute/read `path` (every parent traversable)."""
    try:
        real = path.resolve()
        for parent in real.parents:
            if not parent.stat().st_mode & stat.S_IXOTH:
                return False
        return bool(real.stat().st_mode & stat.S_IROTH)
    except OSError:
        return False


def _sandbox_unavailable(executable: str) -> str | None:
    if os.environ.get("BENCH_BOT_SANDBOX", "1").strip().lower() in ("0", "no", "off", "false"):
        return "disabled by BENCH_BOT_SANDBOX"
    from bench_pipeline.sandbox.bubblewrap import BubblewrapSandbox

    reason = BubblewrapSandbox().unavailable_reason()
    if reason:
        return reason
    if os.geteuid() == 0:
        for needed in (executable, SYSTEM_PYTHON):
            if not _usable_by_others(Path(needed)):
                return f"{needed} cannot be run by an unprivileged uid"
    return None


@contextmanager
def contained_browser(target: str, workdir: Path, executable: str) -> Iterator[Containment]:
    """Prepare the game's server and the browser command for one evaluation.

    `workdir` is the evaluation's private temporary folder (removed by the caller); the
    Chromium profile is `workdir/profile`. Yields the Containment whose `executable` and
    `extra_args` the caller launches with Playwright.
    """
    url_target = target.startswith(("http://", "https://"))
    if url_target:
        check_url(target)
        source = None
    else:
        source = entry_point(Path(target))
    profile = workdir / "profile"
    profile.mkdir(parents=True, exist_ok=True)
    skipped: list[str] = []
    game = workdir / "game"
    if source is not None:
        skipped = copy_game(source, game)

    reason = _sandbox_unavailable(executable)
    if reason is not None:
        with contextlib.ExitStack() as stack:
            # The copy is served as it is: an entry point that was a link out is a 404.
            url = target if url_target else stack.enter_context(serve_directory(game, as_is=True))
            yield Containment(
                url=url,
                executable=executable,
                extra_args=browser_flags(url),
                reason=f"browser not sandboxed: {reason}",
                skipped_files=skipped,
            )
        return

    from bench_pipeline.sandbox.bubblewrap import (
        BubblewrapSandbox,
        _allocate_uid,
        _release_uid,
        _write_etc,
        kill_uid,
    )
    from bench_pipeline.sandbox.reap import etc_prefix

    sandbox = BubblewrapSandbox()
    uid = _allocate_uid() if sandbox.as_root else None
    etc_dir: Path | None = None
    relay: _UnixToTcpRelay | None = None
    try:
        read_only: list[Path] = []
        if url_target:
            url = target
            parts = urllib.parse.urlsplit(url)
            # The sandbox has a network of its own; a bridge in it listens on the target's
            # port and forwards to a Unix socket that this process relays to the host's
            # loopback port, and to nothing else.
            relay = _UnixToTcpRelay(workdir / "relay", "127.0.0.1", parts.port or 80)
            bridge = workdir / "bridge.py"
            shutil.copyfile(Path(bridge_module.__file__), bridge)
            bridge.chmod(0o644)
            read_only = [bridge, relay.folder]
            argv = [SYSTEM_PYTHON, "-I", "-S", str(bridge), str(parts.port or 80)]
            argv += [str(relay.socket_path), "--", executable]
        else:
            url = f"http://127.0.0.1:{SANDBOX_PORT}/"
            # Copied next to the game: the package itself may live where the uid cannot read.
            script = workdir / "serve.py"
            shutil.copyfile(serve.__file__, script)
            script.chmod(0o644)
            read_only = [game, script]
            argv = [SYSTEM_PYTHON, "-I", "-S", str(script), "--root", str(game)]
            argv += ["--port", str(SANDBOX_PORT), "--exec", executable]
        if uid is not None:
            # Named like the sandbox's own /etc folders, so its crash reaper sees a live
            # owner and leaves this uid's processes alone.
            etc_dir = Path(tempfile.mkdtemp(prefix=etc_prefix(uid)))
            _write_etc(etc_dir, uid)
            os.chown(profile, uid, uid)
        command = _bwrap_command(
            sandbox.bwrap, argv, profile=profile, read_only=read_only, uid=uid, etc_dir=etc_dir
        )
        launcher = workdir / "launch-chromium"
        # Playwright starts this with Chromium's arguments and the pipe on fds 3 and 4;
        # bwrap, prlimit, setpriv and the launchers inside all pass both through.
        launcher.write_text(f'#!/bin/sh\nexec {shlex.join(command)} "$@"\n')
        launcher.chmod(0o700)
        yield Containment(
            url=url,
            executable=str(launcher),
            # bwrap's /dev has no shared-memory tmpfs; Chromium then uses /tmp instead.
            extra_args=[*browser_flags(url), "--disable-dev-shm-usage"],
            sandbox="bubblewrap",
            network=(
                "own network namespace: only the target's port, relayed"
                if url_target
                else "own network namespace: only the game's server on its loopback"
            ),
            uid=uid,
            skipped_files=skipped,
        )
    finally:
        if uid is not None:
            kill_uid(uid)
            _release_uid(uid)
        if relay is not None:
            relay.close()
        if etc_dir is not None:
            shutil.rmtree(etc_dir, ignore_errors=True)


def _bwrap_command(
    bwrap: str,
    argv: list[str],
    *,
    profile: Path,
    read_only: list[Path],
    uid: int | None,
    etc_dir: Path | None,
) -> list[str]:
    """The browser's bubblewrap command line: the host read-only with /run, /root and /home
    hidden, a fresh /tmp, the profile writable, a network, pid, ipc and uts namespace of its
    own, rlimits, and (as root) a throw-away uid without capabilities."""
    cmd = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    cmd += ["--size", str(BROWSER_MEMORY_MB * MIB), "--perms", "1777", "--tmpfs", "/tmp"]
    # A folder holding a program the sandbox runs (a user's Playwright Chromium under
    # ~/.cache) stays visible.
    needed = [Path(arg).resolve() for arg in argv if arg.startswith("/")]
    for folder in MASKED_FOLDERS:
        if any(path.is_relative_to(folder) for path in needed):
            continue
        if os.path.isdir(folder) and not os.path.islink(folder):
            cmd += ["--size", str(MIB), "--perms", "0755", "--tmpfs", folder]
    made: set[Path] = set()
    binds = [(profile, "--bind"), *((path, "--ro-bind") for path in read_only)]
    for path, how in binds:
        for parent in reversed(path.parents):
            # Parents inside the fresh /tmp must exist and be traversable by the uid.
            if parent.is_relative_to("/tmp") and parent != Path("/tmp") and parent not in made:
                made.add(parent)
                cmd += ["--perms", "0755", "--dir", str(parent)]
        cmd += [how, str(path), str(path)]
    if etc_dir is not None:
        for name in ("passwd", "group"):
            cmd += ["--ro-bind", str(etc_dir / name), f"/etc/{name}"]
    cmd += ["--perms", "0777", "--dir", "/tmp/home"]
    if uid is not None:
        # As root the user namespace is not unshared: the uid must be a real host uid for
        # RLIMIT_NPROC to apply (docs/sandbox.md).
        cmd += ["--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try"]
        cmd += ["--unshare-net"]
    else:
        cmd += ["--unshare-all"]
    cmd += ["--die-with-parent", "--new-session", "--clearenv"]
    env = {"HOME": "/tmp/home", "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "TMPDIR": "/tmp"}
    for key, value in env.items():
        cmd += ["--setenv", key, value]
    cmd += ["--chdir", str(profile), "--"]
    cmd += [
        "prlimit",
        f"--nproc={BROWSER_MAX_THREADS}",
        f"--fsize={BROWSER_MAX_FILE_MB * MIB}",
        f"--data={BROWSER_MEMORY_MB * MIB}",
        "--core=0",
        "--",
    ]
    if uid is not None:
        cmd += [
            "setpriv",
            f"--reuid={uid}",
            f"--regid={uid}",
            "--clear-groups",
            "--nnp",
            "--inh-caps=-all",
            "--bounding-set=-all",
            "--",
        ]
    return cmd + argv


class _UnixToTcpRelay:
    """Accept on a Unix socket (bind-mounted into the sandbox) and relay each connection to
    one fixed host TCP address: the URL target's port is all the sandbox can reach."""

    def __init__(self, folder: Path, host: str, port: int) -> None:
        self.folder = folder
        folder.mkdir(mode=0o755)
        self.socket_path = folder / "target.sock"
        self.address = (host, port)
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(self.socket_path))
        self.socket_path.chmod(0o666)  # the sandbox uid connects to it
        self.server.listen(64)
        self._closed = threading.Event()
        threading.Thread(target=self._accept, name="bench-bot-relay", daemon=True).start()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        try:
            upstream = socket.create_connection(self.address, timeout=10)
        except OSError:
            client.close()
            return
        upstream.settimeout(None)

        def pump(source: socket.socket, sink: socket.socket) -> None:
            try:
                while chunk := source.recv(65536):
                    sink.sendall(chunk)
            except OSError:
                pass
            with contextlib.suppress(OSError):
                sink.shutdown(socket.SHUT_WR)

        back = threading.Thread(target=pump, args=(upstream, client), daemon=True)
        back.start()
        pump(client, upstream)
        back.join()
        client.close()
        upstream.close()

    def close(self) -> None:
        self._closed.set()
        with contextlib.suppress(OSError):
            self.server.shutdown(socket.SHUT_RDWR)
        self.server.close()

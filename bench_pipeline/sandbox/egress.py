"""Egress for sandboxed programs: a filtering HTTP proxy on the host, reached by a Unix socket.

A sandboxed program never shares the host's network namespace. When its policy allows the
network, the only way out is this proxy: it runs in the pipeline's process, listens on a
Unix socket that the sandbox gets bind-mounted (the sandbox's own loopback carries a small
bridge to it, see `bridge.py`), and forwards

- `CONNECT host:port` (https, anything TLS): a byte tunnel once the host passes, and
- plain-HTTP requests with an absolute URL (`GET http://host/path`): one request per
  connection (`Connection: close`), so every request is checked,

to hosts on the run's allow-list only. A destination is refused, and the refusal logged,
when the host is not on the list, when it resolves to a loopback, private, link-local,
carrier-grade NAT, multicast or otherwise non-public address (`BLOCKED_NETWORKS`: an
allow-listed name that resolves to 127.0.0.1 still reaches nothing), or when too many
connections are open at once. The proxy connects to the addresses it checked, never to a
second lookup of the name, so DNS cannot swap a public address for a private one in between.

Allow-list entries: `host` (ports 80 and 443), `host:port`, `*.domain` (any subdomain).
`local_services` maps exact `name:port` pairs to a service the harness runs for this program
on the host (the scripted model API): reached at that address only, without a lookup.
Defaults per harness are in `DEFAULT_ALLOW_HOSTS`; `BENCH_ALLOW_HOSTS_<NAME>` replaces one
(see `allow_hosts_for`).
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import logging
import os
import select
import socket
import socketserver
import threading
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

# Hosts each user of the network may reach when nothing else is configured: an agent CLI
# its model API, the build's install step the npm registry. "command" (any CLI) gets none.
DEFAULT_ALLOW_HOSTS: Mapping[str, tuple[str, ...]] = {
    "claude-code": ("api.anthropic.com",),
    # chatgpt.com and auth.openai.com: codex signed in with a ChatGPT login (auth.json)
    # talks to those instead of api.openai.com.
    "codex": ("api.openai.com", "chatgpt.com", "auth.openai.com"),
    "command": (),
    "install": ("registry.npmjs.org",),
}
ENV_PREFIX = "BENCH_ALLOW_HOSTS_"
DEFAULT_PORTS = (80, 443)

# Never reachable through the proxy, whatever the allow-list says. Not `is_private`: Python
# counts the documentation ranges (203.0.113.0/24 ...) as private, and some CI networks
# answer public names with such addresses (this project's CI resolves the npm registry
# into 203.0.113.0/24), while what must stay out of reach is the host and its own networks.
BLOCKED_NETWORKS = tuple(
    ipaddress.ip_network(net)
    for net in (
        "0.0.0.0/8",  # "this network" (0.0.0.0 reaches the host's own listeners)
        "10.0.0.0/8",
        "100.64.0.0/10",  # carrier-grade NAT
        "127.0.0.0/8",
        "169.254.0.0/16",  # link-local, cloud metadata services (169.254.169.254)
        "172.16.0.0/12",
        "192.0.0.0/24",  # IETF protocol assignments
        "192.168.0.0/16",
        "198.18.0.0/15",  # benchmarking
        "224.0.0.0/4",  # multicast
        "240.0.0.0/4",  # reserved, broadcast
        "::/128",
        "::1/128",
        "fc00::/7",  # unique local
        "fe80::/10",  # link-local
        "ff00::/8",  # multicast
    )
)

HEAD_LIMIT_BYTES = 64 * 1024
HEAD_TIMEOUT_S = 15.0
CONNECT_TIMEOUT_S = 10.0
# A model API may think for minutes between bytes; the sandbox's timeout ends the run anyway.
IDLE_TIMEOUT_S = 900.0
MAX_CONNECTIONS = 64
# Refusals kept in the report one by one (the rest are counted): a program looping on a
# refused host must not grow the record without end.
MAX_REFUSALS_KEPT = 200
_HOP_HEADERS = {"proxy-connection", "proxy-authorization", "connection", "keep-alive", "te"}


def proxy_environment(url: str) -> dict[str, str]:
    """Variables that point HTTP clients (curl, pip, git, npm, node, Claude Code, codex) at
    the proxy; the sandbox's own loopback (a dev server the agent started) stays direct."""
    local = "localhost,127.0.0.1,::1"
    return {
        "HTTP_PROXY": url,
        "HTTPS_PROXY": url,
        "http_proxy": url,
        "https_proxy": url,
        "npm_config_proxy": url,
        "npm_config_https_proxy": url,
        "NO_PROXY": local,
        "no_proxy": local,
        # node >= 24 honours HTTP(S)_PROXY for fetch() and http only when asked to.
        "NODE_USE_ENV_PROXY": "1",
    }


def allow_hosts_for(name: str, environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The allow-list of `name` ("claude-code", "codex", "command", "install"):
    `BENCH_ALLOW_HOSTS_<NAME>` (upper case, "-" as "_"; comma- or space-separated; set but
    empty means none) when set, else the default."""
    env = os.environ if environ is None else environ
    key = ENV_PREFIX + name.upper().replace("-", "_")
    if key in env:
        return parse_list(env[key])
    return DEFAULT_ALLOW_HOSTS.get(name, ())


def parse_list(text: str) -> tuple[str, ...]:
    return tuple(part for part in text.replace(",", " ").split() if part)


@dataclass(frozen=True)
class Rule:
    """One allow-list entry: a host name (or `*.domain`) and the ports it may be reached on."""

    host: str
    ports: tuple[int, ...]
    wildcard: bool = False

    @classmethod
    def parse(cls, entry: str) -> Rule:
        text = entry.strip().lower().rstrip(".")
        if "://" in text or "/" in text or not text:
            raise ValueError(f"allow-list entry {entry!r}: give a host or host:port, not a URL")
        host, ports = _split_host_port(text)
        wildcard = host.startswith("*.")
        if wildcard:
            host = host[2:]
        if not host or "*" in host:
            raise ValueError(f"allow-list entry {entry!r}: only a leading *. is allowed")
        return cls(host, (ports,) if ports is not None else DEFAULT_PORTS, wildcard)

    def matches(self, host: str, port: int) -> bool:
        if port not in self.ports:
            return False
        if self.wildcard:  # "*.example.org": any subdomain, not example.org itself
            return host.endswith("." + self.host)
        return host == self.host

    def __str__(self) -> str:
        name = ("*." if self.wildcard else "") + self.host
        return name if self.ports == DEFAULT_PORTS else f"{name}:{self.ports[0]}"


def _split_host_port(text: str) -> tuple[str, int | None]:
    """ "host", "host:443", "[::1]:443" -> (host, port or None)."""
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        return host, int(rest[1:]) if rest.startswith(":") else None
    if text.count(":") == 1:
        host, port = text.split(":")
        return host, int(port)
    return text, None


def parse_rules(entries: Iterable[str]) -> tuple[Rule, ...]:
    return tuple(Rule.parse(entry) for entry in entries)


def blocked_reason(address: str) -> str | None:
    """Why `address` may never be reached (loopback, private ...), or None for a public one."""
    ip = ipaddress.ip_address(address.split("%")[0])
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = ip.ipv4_mapped or ip.sixtofour
        if embedded is not None:
            inner = blocked_reason(str(embedded))
            return f"{inner} (embedded in {ip})" if inner else None
    for net in BLOCKED_NETWORKS:
        if ip in net:
            kind = (
                "loopback"
                if ip.is_loopback
                else "link-local"
                if ip.is_link_local
                else "private or reserved"
            )
            return f"{ip} is a {kind} address ({net})"
    return None


def own_address_reason(family: int, address: Any) -> str | None:
    """Why `address` is refused if it belongs to this host (its public interface address
    reaches the same listeners as loopback), else None.

    A UDP socket "connected" to an address sends nothing; the kernel only picks the source
    address it would use, and for a local destination that is the destination itself.
    """
    probe = socket.socket(family, socket.SOCK_DGRAM)
    try:
        probe.connect(address)
        if probe.getsockname()[0] == address[0]:
            return f"{address[0]} is an address of this host"
    except OSError:
        pass
    finally:
        probe.close()
    return None


class EgressProxy:
    """The filtering proxy of one sandboxed run (see the module docstring).

    `test_only_local_upstreams` lists exact "ip:port" pairs the proxy forwards to although
    they are loopback or private. It exists so that tests can prove an allowed request goes
    through without the internet; nothing in the pipeline sets it.
    """

    def __init__(
        self,
        allow_hosts: Sequence[str],
        *,
        test_only_local_upstreams: Sequence[str] = (),
        local_services: Mapping[str, str] | None = None,
        max_connections: int = MAX_CONNECTIONS,
        connect_timeout_s: float = CONNECT_TIMEOUT_S,
    ) -> None:
        self.rules = parse_rules(allow_hosts)
        self.test_upstreams = {
            _split_host_port(e.strip().lower()) for e in test_only_local_upstreams
        }
        self.local_services: dict[tuple[str, int], tuple[str, int]] = {}
        for name, address in (local_services or {}).items():
            host, port = _split_host_port(name.strip().lower())
            to_host, to_port = _split_host_port(address.strip())
            if port is None or to_port is None:
                raise ValueError(
                    f"local service {name!r} -> {address!r}: give host:port on both sides"
                )
            self.local_services[(host, port)] = (to_host, to_port)
        self.connect_timeout_s = connect_timeout_s
        self.max_connections = max_connections
        self._slots = threading.BoundedSemaphore(max_connections)
        self._lock = threading.Lock()
        self._refused: list[dict[str, Any]] = []
        self._refused_total = 0
        self._allowed: Counter[str] = Counter()
        self._failed: Counter[str] = Counter()
        self._open: set[socket.socket] = set()
        self._server: socketserver.ThreadingUnixStreamServer | None = None
        self._thread: threading.Thread | None = None
        self.socket_path: Path | None = None

    # ------------------------------------------------------------------ life cycle

    def start(self, socket_path: Path) -> None:
        """Listen on `socket_path` (mode 0666: the sandbox uid must connect; keep it in a
        folder only root can enter on the host) and serve in a background thread."""
        proxy = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                proxy._serve(self.request)

        server = socketserver.ThreadingUnixStreamServer(str(socket_path), Handler)
        server.daemon_threads = True
        os.chmod(socket_path, 0o666)
        self._server = server
        self.socket_path = socket_path
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True
        )
        self._thread.name = "egress-proxy"
        self._thread.start()

    def close(self) -> None:
        """Stop listening and cut every open connection (the run is over)."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        with self._lock:
            for sock in list(self._open):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
        if self.socket_path is not None:
            with contextlib.suppress(FileNotFoundError):
                self.socket_path.unlink()

    def __enter__(self) -> EgressProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ evidence

    def report(self) -> dict[str, Any]:
        """What the run was allowed and what it tried: for the run's records."""
        with self._lock:
            return {
                "allowed_hosts": [str(rule) for rule in self.rules],
                "test_only_local_upstreams": sorted(f"{h}:{p}" for h, p in self.test_upstreams),
                "local_services": sorted(f"{h}:{p}" for h, p in self.local_services),
                "connections": dict(sorted(self._allowed.items())),
                "failed": dict(sorted(self._failed.items())),
                "refused": list(self._refused),
                "refused_total": self._refused_total,
            }

    def _refuse(self, client: socket.socket, target: str, reason: str, status: int = 403) -> None:
        log.warning("egress refused: %s: %s", target, reason)
        with self._lock:
            self._refused_total += 1
            if len(self._refused) < MAX_REFUSALS_KEPT:
                self._refused.append({"target": target, "reason": reason, "at": time.time()})
        text = {400: "Bad Request", 403: "Forbidden", 503: "Service Unavailable"}[status]
        body = f"bench sandbox egress proxy refused {target}: {reason}\n".encode()
        head = (
            f"HTTP/1.1 {status} {text}\r\nContent-Type: text/plain\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        )
        with contextlib.suppress(OSError):
            client.sendall(head.encode() + body)
            # Closing with unread bytes (a request we refused unread, a body) resets the
            # connection, and the client would see the reset instead of the reason.
            client.shutdown(socket.SHUT_WR)
            client.settimeout(0.2)
            for _ in range(16):  # bounded: a client that keeps sending is just cut off
                if not client.recv(65536):
                    break

    # ------------------------------------------------------------------ one connection

    def _serve(self, client: socket.socket) -> None:
        if not self._slots.acquire(blocking=False):
            reason = f"more than {self.max_connections} connections open"
            self._refuse(client, "(any)", reason, 503)
            return
        try:
            self._track(client, True)
            self._serve_one(client)
        finally:
            self._track(client, False)
            self._slots.release()

    def _track(self, sock: socket.socket, add: bool) -> None:
        with self._lock:
            (self._open.add if add else self._open.discard)(sock)

    def _serve_one(self, client: socket.socket) -> None:
        head, rest = _read_head(client)
        if head is None:
            return
        lines = head.split(b"\r\n")
        try:
            method, target, version = lines[0].decode("latin-1").split(" ")
        except ValueError:
            self._refuse(client, "(unparsable)", "not an HTTP proxy request", 400)
            return
        if method.upper() == "CONNECT":
            try:
                host, port = _split_host_port(target.lower())
                assert port is not None
            except (ValueError, AssertionError):
                self._refuse(client, target, "CONNECT needs host:port", 400)
                return
            upstream = self._open_upstream(client, host, port)
            if upstream is None:
                return
            with contextlib.suppress(OSError):
                client.sendall(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            self._relay(client, upstream, rest)
            return
        parsed = _absolute_http(target)
        if parsed is None:
            self._refuse(client, target[:200], "only CONNECT and absolute http:// URLs", 400)
            return
        host, port, path = parsed
        upstream = self._open_upstream(client, host, port)
        if upstream is None:
            return
        # Origin-form request line, hop-by-hop headers dropped, one request per connection:
        # a second request on a kept-alive connection would skip the checks above.
        out = [f"{method} {path} {version}".encode("latin-1")]
        for line in lines[1:]:
            name = line.split(b":", 1)[0].strip().lower().decode("latin-1")
            if line and name not in _HOP_HEADERS:
                out.append(line)
        out.append(b"Connection: close")
        self._relay(client, upstream, b"\r\n".join(out) + b"\r\n\r\n" + rest)

    def _relay(self, client: socket.socket, upstream: socket.socket, first: bytes) -> None:
        # Tracked so that close() cuts a tunnel that is still open when the run ends.
        self._track(upstream, True)
        try:
            _relay(client, upstream, first)
        finally:
            self._track(upstream, False)

    def _open_upstream(self, client: socket.socket, host: str, port: int) -> socket.socket | None:
        host = host.rstrip(".")
        target = f"{host}:{port}"
        service = self.local_services.get((host, port))
        if service is not None:
            return self._connect_service(client, target, service)
        test_pair = (host, port) in self.test_upstreams
        if not test_pair and not any(rule.matches(host, port) for rule in self.rules):
            self._refuse(client, target, "not on the allow-list")
            return None
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as exc:
            self._refuse(client, target, f"cannot resolve: {exc}")
            return None
        if not test_pair:
            # Any bad address refuses the whole name: a record set mixing a public and a
            # loopback address is an attack, not a configuration.
            for info in infos:
                reason = blocked_reason(str(info[4][0])) or own_address_reason(info[0], info[4])
                if reason:
                    self._refuse(client, target, reason)
                    return None
        last: OSError | None = None
        for family, kind, proto, _, address in infos:
            sock = socket.socket(family, kind, proto)
            sock.settimeout(self.connect_timeout_s)
            try:
                sock.connect(address)
            except OSError as exc:
                sock.close()
                last = exc
                continue
            sock.settimeout(None)
            with self._lock:
                self._allowed[target] += 1
            return sock
        with self._lock:
            self._failed[target] += 1
        log.info("egress to %s failed: %s", target, last)
        self._bad_gateway(client)
        return None

    def _connect_service(
        self, client: socket.socket, target: str, address: tuple[str, int]
    ) -> socket.socket | None:
        """A service the harness runs for this sandbox (`local_services`): no name lookup,
        the configured address only."""
        try:
            sock = socket.create_connection(address, timeout=self.connect_timeout_s)
        except OSError as exc:
            with self._lock:
                self._failed[target] += 1
            log.info("egress to local service %s failed: %s", target, exc)
            self._bad_gateway(client)
            return None
        sock.settimeout(None)
        with self._lock:
            self._allowed[target] += 1
        return sock

    @staticmethod
    def _bad_gateway(client: socket.socket) -> None:
        with contextlib.suppress(OSError):
            client.sendall(
                b"HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
            )


def _read_head(client: socket.socket) -> tuple[bytes | None, bytes]:
    """The request head (without its blank line) and whatever followed it in the buffer."""
    client.settimeout(HEAD_TIMEOUT_S)
    data = b""
    try:
        while b"\r\n\r\n" not in data:
            if len(data) > HEAD_LIMIT_BYTES:
                return None, b""
            chunk = client.recv(8192)
            if not chunk:
                return None, b""
            data += chunk
    except OSError:
        return None, b""
    client.settimeout(None)
    head, _, rest = data.partition(b"\r\n\r\n")
    return head, rest


def _absolute_http(target: str) -> tuple[str, int, str] | None:
    """ "http://host[:port]/path" -> (host, port, "/path"); None for anything else."""
    if not target.lower().startswith("http://"):
        return None
    authority, slash, path = target[7:].partition("/")
    authority = authority.rsplit("@", 1)[-1].lower()  # user:pass@ is not the host
    try:
        host, port = _split_host_port(authority)
    except ValueError:
        return None
    return host, port or 80, slash + path if slash else "/"


def _relay(a: socket.socket, b: socket.socket, first_to_b: bytes = b"") -> None:
    """Copy bytes both ways until both sides are done (half-closes passed on)."""
    try:
        if first_to_b:
            b.sendall(first_to_b)
        peer = {a: b, b: a}
        open_reads = {a, b}
        while open_reads:
            ready, _, _ = select.select(list(open_reads), [], [], IDLE_TIMEOUT_S)
            if not ready:
                return
            for sock in ready:
                try:
                    data = sock.recv(65536)
                except OSError:
                    return
                if not data:
                    open_reads.discard(sock)
                    with contextlib.suppress(OSError):
                        peer[sock].shutdown(socket.SHUT_WR)
                    continue
                peer[sock].sendall(data)
    except OSError:
        return
    finally:
        b.close()


def egress_refused(record: Mapping[str, Any]) -> int | None:
    """Refused connections noted in an agent_generation record (its `details` JSON string
    carries the sandbox's egress report), or None when the run had no egress proxy."""
    try:
        details = json.loads(record.get("details") or "{}")
    except (TypeError, ValueError):
        return None
    egress = details.get("egress") if isinstance(details, dict) else None
    return int(egress.get("refused_total", 0)) if isinstance(egress, dict) else None

"""The egress proxy on its own: allow-list, address checks, forwarding, the evidence it keeps.

Each test talks to a real proxy over its real Unix socket, with throw-away local listeners
standing in for upstreams; a listener that must not be reached records every connection.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench_pipeline.sandbox import SandboxPolicy
from bench_pipeline.sandbox.bubblewrap import BubblewrapSandbox
from bench_pipeline.sandbox.egress import (
    DEFAULT_ALLOW_HOSTS,
    EgressProxy,
    Rule,
    allow_hosts_for,
    blocked_reason,
    parse_rules,
    proxy_environment,
)


class Listener:
    """A throw-away TCP server on the host: counts connections, answers one HTTP response."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.sock = socket.socket()
        self.sock.bind((host, 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.requests: list[bytes] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            with conn:
                data = b""
                conn.settimeout(5)
                try:
                    while b"\r\n\r\n" not in data:
                        chunk = conn.recv(4096)
                        if not chunk:
                            break
                        data += chunk
                    self.requests.append(data)
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\nupstream")
                except OSError:
                    pass

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    server = Listener()
    yield server
    server.close()


def ask(socket_path: Path, request: bytes) -> bytes:
    """Send one raw request to the proxy's Unix socket and read everything it answers."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(str(socket_path))
        sock.sendall(request)
        answer = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return answer
            answer += chunk


def tunnel(socket_path: Path, target: str, then: bytes) -> bytes:
    """CONNECT to `target`, then speak `then` through the tunnel; everything that came back."""
    return ask(socket_path, f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode() + then)


@pytest.fixture
def proxy_at(tmp_path: Path) -> Iterator[callable]:  # type: ignore[valid-type]
    proxies: list[EgressProxy] = []

    def start(allow: tuple[str, ...] = (), **kwargs: object) -> tuple[EgressProxy, Path]:
        proxy = EgressProxy(allow, **kwargs)  # type: ignore[arg-type]
        path = tmp_path / f"proxy{len(proxies)}.sock"
        proxy.start(path)
        proxies.append(proxy)
        return proxy, path

    yield start
    for proxy in proxies:
        proxy.close()


GET = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"


def test_a_host_off_the_allow_list_is_refused_and_logged(
    proxy_at, listener: Listener, caplog: pytest.LogCaptureFixture
) -> None:
    proxy, path = proxy_at(("api.anthropic.com",))
    answer = tunnel(path, f"127.0.0.1:{listener.port}", GET)
    assert answer.startswith(b"HTTP/1.1 403"), answer
    answer = ask(path, f"GET http://127.0.0.1:{listener.port}/ HTTP/1.1\r\n\r\n".encode())
    assert answer.startswith(b"HTTP/1.1 403"), answer
    assert listener.connections == 0
    report = proxy.report()
    assert report["allowed_hosts"] == ["api.anthropic.com"]
    assert report["refused_total"] == 2 and report["connections"] == {}
    assert {r["reason"] for r in report["refused"]} == {"not on the allow-list"}
    assert "egress refused: 127.0.0.1" in caplog.text


@pytest.mark.parametrize("name", ["localhost", "127.0.0.1", "0.0.0.0"])
def test_an_allow_listed_name_on_loopback_is_still_refused(
    proxy_at, listener: Listener, name: str
) -> None:
    """A careless allow-list entry (or DNS answering 127.0.0.1) must not open the host."""
    proxy, path = proxy_at((f"{name}:{listener.port}",))
    answer = tunnel(path, f"{name}:{listener.port}", GET)
    assert answer.startswith(b"HTTP/1.1 403"), answer
    assert listener.connections == 0
    reason = proxy.report()["refused"][0]["reason"]
    assert "loopback" in reason or "private or reserved" in reason, reason


def test_the_hosts_own_interface_address_is_refused(proxy_at) -> None:
    """The host's non-loopback address reaches the same listeners as 127.0.0.1."""
    server = Listener("0.0.0.0")
    try:
        probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            probe.connect(("192.0.2.1", 9))  # sends nothing: just picks a route
            own = probe.getsockname()[0]
        except OSError:
            pytest.skip("no non-loopback IPv4 route on this host")
        finally:
            probe.close()
        if own.startswith("127."):
            pytest.skip("the only IPv4 address is loopback")
        proxy, path = proxy_at((f"{own}:{server.port}",))
        answer = tunnel(path, f"{own}:{server.port}", GET)
        assert answer.startswith(b"HTTP/1.1 403"), answer
        assert server.connections == 0
        assert "address of this host" in proxy.report()["refused"][0]["reason"] or (
            "private" in proxy.report()["refused"][0]["reason"]
        )
    finally:
        server.close()


def test_an_allowed_upstream_is_reached_by_connect_and_by_plain_http(
    proxy_at, listener: Listener
) -> None:
    pair = f"127.0.0.1:{listener.port}"
    proxy, path = proxy_at((), test_only_local_upstreams=(pair,))
    answer = tunnel(path, pair, b"GET /through HTTP/1.1\r\nHost: up\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 200 Connection Established\r\n\r\nHTTP/1.1 200 OK")
    assert answer.endswith(b"upstream")
    plain = ask(
        path,
        f"GET http://{pair}/plain?q=1 HTTP/1.1\r\nHost: {pair}\r\n"
        "Proxy-Authorization: Basic c2VjcmV0\r\nConnection: keep-alive\r\n\r\n".encode(),
    )
    assert plain.startswith(b"HTTP/1.1 200 OK") and plain.endswith(b"upstream")
    assert listener.connections == 2
    # Plain HTTP reaches the upstream in origin form, one request per connection, and the
    # proxy's own credentials header never travels on.
    forwarded = listener.requests[1].decode()
    assert forwarded.startswith("GET /plain?q=1 HTTP/1.1\r\n")
    assert "Connection: close" in forwarded
    assert "Proxy-Authorization" not in forwarded and "keep-alive" not in forwarded
    assert proxy.report()["connections"] == {pair: 2}
    assert proxy.report()["refused_total"] == 0


def test_the_test_only_pair_opens_exactly_that_port(proxy_at, listener: Listener) -> None:
    other = Listener()
    try:
        _, path = proxy_at((), test_only_local_upstreams=(f"127.0.0.1:{listener.port}",))
        assert tunnel(path, f"127.0.0.1:{other.port}", GET).startswith(b"HTTP/1.1 403")
        assert tunnel(path, f"localhost:{listener.port}", GET).startswith(b"HTTP/1.1 403")
        assert other.connections == 0 and listener.connections == 0
    finally:
        other.close()


def test_garbage_and_non_proxy_requests_are_refused(proxy_at) -> None:
    proxy, path = proxy_at(("example.org",))
    assert ask(path, b"hello\r\n\r\n").startswith(b"HTTP/1.1 400")
    assert ask(path, b"GET /relative HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 400")
    assert ask(path, b"CONNECT example.org HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 400")
    # A port the entry does not name (bare hosts mean 80 and 443).
    assert ask(path, b"CONNECT example.org:22 HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 403")
    assert proxy.report()["refused_total"] == 4


def test_refusals_kept_in_the_report_are_bounded(proxy_at) -> None:
    proxy, path = proxy_at(())
    for _ in range(210):
        ask(path, b"CONNECT evil.example:443 HTTP/1.1\r\n\r\n")
    report = proxy.report()
    assert report["refused_total"] == 210 and len(report["refused"]) == 200


def test_close_cuts_open_tunnels(proxy_at, listener: Listener) -> None:
    pair = f"127.0.0.1:{listener.port}"
    proxy, path = proxy_at((), test_only_local_upstreams=(pair,))
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(10)
    sock.connect(str(path))
    sock.sendall(f"CONNECT {pair} HTTP/1.1\r\n\r\n".encode())
    assert sock.recv(100).startswith(b"HTTP/1.1 200")
    proxy.close()
    assert sock.recv(100) == b""  # the tunnel is gone, not left open after the run
    sock.close()
    assert not path.exists()


def test_blocked_ranges() -> None:
    for address in (
        "127.0.0.1",
        "127.8.8.8",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "0.0.0.0",
        "::1",
        "fe80::1",
        "fd00::2",
        "::ffff:127.0.0.1",
        "2002:7f00:1::",  # 6to4 around 127.0.0.1
    ):
        assert blocked_reason(address), address
    # Public addresses, and the documentation range the CI network answers the npm
    # registry with, are not blocked.
    for address in ("104.16.0.1", "203.0.113.80", "2606:4700::1"):
        assert blocked_reason(address) is None, address


def test_allow_list_entries() -> None:
    rules = parse_rules(["API.Anthropic.com.", "registry.npmjs.org:8443", "*.example.org"])
    assert [str(r) for r in rules] == [
        "api.anthropic.com",
        "registry.npmjs.org:8443",
        "*.example.org",
    ]
    assert rules[0].matches("api.anthropic.com", 443) and rules[0].matches("api.anthropic.com", 80)
    assert not rules[0].matches("api.anthropic.com", 8080)
    assert not rules[0].matches("evil-api.anthropic.com", 443)
    assert rules[1].matches("registry.npmjs.org", 8443)
    assert not rules[1].matches("registry.npmjs.org", 443)
    assert rules[2].matches("a.b.example.org", 443) and not rules[2].matches("example.org", 443)
    for bad in ("https://api.anthropic.com", "a.*.com", ""):
        with pytest.raises(ValueError):
            Rule.parse(bad)


def test_allow_lists_come_from_the_environment_or_the_defaults() -> None:
    assert allow_hosts_for("claude-code", {}) == ("api.anthropic.com",)
    assert allow_hosts_for("codex", {})[0] == "api.openai.com"
    assert allow_hosts_for("command", {}) == ()
    assert allow_hosts_for("install", {}) == ("registry.npmjs.org",)
    env = {"BENCH_ALLOW_HOSTS_CLAUDE_CODE": "a.example, b.example:8443"}
    assert allow_hosts_for("claude-code", env) == ("a.example", "b.example:8443")
    assert allow_hosts_for("install", {"BENCH_ALLOW_HOSTS_INSTALL": ""}) == ()
    assert set(DEFAULT_ALLOW_HOSTS) == {"claude-code", "codex", "command", "install"}


def test_proxy_environment_names_every_client_convention() -> None:
    env = proxy_environment("http://127.0.0.1:3128")
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        assert env[name] == "http://127.0.0.1:3128"
    assert env["npm_config_proxy"] == env["npm_config_https_proxy"] == "http://127.0.0.1:3128"
    assert "127.0.0.1" in env["NO_PROXY"].split(",")


def test_agent_allow_lists_follow_a_moved_api_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    from bench_pipeline.agents.cli_adapter import allowed_hosts

    monkeypatch.delenv("BENCH_ALLOW_HOSTS_CLAUDE_CODE", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    assert allowed_hosts("claude-code", "ANTHROPIC_BASE_URL") == ("api.anthropic.com",)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "https://gateway.example.com:8443/v1")
    assert allowed_hosts("claude-code", "ANTHROPIC_BASE_URL") == (
        "api.anthropic.com",
        "gateway.example.com:8443",
    )
    monkeypatch.setenv("BENCH_ALLOW_HOSTS_COMMAND", "api.example.org")
    assert allowed_hosts("command") == ("api.example.org",)


def test_refusal_counts_are_read_back_from_an_agent_record() -> None:
    import json

    from bench_pipeline.sandbox.egress import egress_refused

    record = {"details": json.dumps({"egress": {"refused_total": 3, "refused": []}})}
    assert egress_refused(record) == 3
    assert egress_refused({"details": json.dumps({"argv": []})}) is None
    assert egress_refused({}) is None and egress_refused({"details": "not json"}) is None


def test_connections_beyond_the_limit_are_refused(proxy_at, listener: Listener) -> None:
    """A program opening connections without end must not grow the pipeline's threads."""
    pair = f"127.0.0.1:{listener.port}"
    proxy, path = proxy_at((), test_only_local_upstreams=(pair,), max_connections=2)
    held = []
    for _ in range(2):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(10)
        sock.connect(str(path))
        sock.sendall(f"CONNECT {pair} HTTP/1.1\r\n\r\n".encode())
        assert sock.recv(100).startswith(b"HTTP/1.1 200")
        held.append(sock)
    assert ask(path, f"CONNECT {pair} HTTP/1.1\r\n\r\n".encode()).startswith(b"HTTP/1.1 503")
    assert proxy.report()["refused"][-1]["reason"] == "more than 2 connections open"
    for sock in held:
        sock.close()


def test_a_bad_allow_list_entry_is_a_one_line_error(
    bwrap: BubblewrapSandbox, workspace: Path
) -> None:

    policy = SandboxPolicy(timeout_s=20, network=True, allowed_hosts=("https://api.example.com",))
    result = bwrap.run(["true"], workspace, policy)
    assert result.exit_code is None and not result.ok
    assert result.error == (
        "allow-list entry 'https://api.example.com': give a host or host:port, not a URL"
    )

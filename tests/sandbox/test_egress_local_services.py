"""The egress proxy's local services: a service the harness runs for one sandboxed program
(the scripted model API), reached by one exact name and port and nothing else."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from bench_pipeline.sandbox.egress import EgressProxy
from tests.sandbox.test_egress import GET, Listener, ask, tunnel

NAME = "model-api.scripted.invalid"


def test_a_local_service_is_reached_by_its_name_only(tmp_path: Path) -> None:
    service, other = Listener(), Listener()
    proxy = EgressProxy((), local_services={f"{NAME}:80": f"127.0.0.1:{service.port}"})
    proxy.start(tmp_path / "proxy.sock")
    try:
        path = tmp_path / "proxy.sock"
        # Plain HTTP by name (how ANTHROPIC_BASE_URL=http://NAME goes through HTTP_PROXY).
        plain = ask(
            path, f"POST http://{NAME}/v1/messages HTTP/1.1\r\nHost: {NAME}\r\n\r\n".encode()
        )
        assert plain.startswith(b"HTTP/1.1 200 OK") and plain.endswith(b"upstream")
        assert service.requests[0].startswith(b"POST /v1/messages HTTP/1.1\r\n")
        # Not another port of the name, not the address itself, not the other loopback port.
        assert tunnel(path, f"{NAME}:443", GET).startswith(b"HTTP/1.1 403")
        assert tunnel(path, f"127.0.0.1:{service.port}", GET).startswith(b"HTTP/1.1 403")
        assert tunnel(path, f"localhost:{other.port}", GET).startswith(b"HTTP/1.1 403")
        assert service.connections == 1 and other.connections == 0
        report = proxy.report()
        assert report["local_services"] == [f"{NAME}:80"]
        assert report["connections"] == {f"{NAME}:80": 1} and report["refused_total"] == 3
    finally:
        proxy.close()
        service.close()
        other.close()


def test_a_local_service_that_is_down_is_a_bad_gateway(tmp_path: Path) -> None:
    # A bound port that does not listen: connections are refused, and no one else can take
    # the port meanwhile.
    gone = socket.socket()
    gone.bind(("127.0.0.1", 0))
    port = gone.getsockname()[1]
    proxy = EgressProxy((), local_services={f"{NAME}:80": f"127.0.0.1:{port}"})
    proxy.start(tmp_path / "proxy.sock")
    try:
        answer = ask(tmp_path / "proxy.sock", f"GET http://{NAME}/ HTTP/1.1\r\n\r\n".encode())
        assert answer.startswith(b"HTTP/1.1 502")
        assert proxy.report()["failed"] == {f"{NAME}:80": 1}
    finally:
        proxy.close()
        gone.close()


def test_a_local_service_needs_ports_on_both_sides() -> None:
    with pytest.raises(ValueError, match="give host:port on both sides"):
        EgressProxy((), local_services={NAME: "127.0.0.1:8080"})

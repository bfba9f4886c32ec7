"""Hostile programs against the host's network, under the real bubblewrap sandbox.

The attacks a sandboxed agent or build could make on the machine it runs on: the host's
loopback services (a throw-away listener, Postgres), its Unix sockets (Postgres' in
/var/run/postgresql, a path socket in a host folder, an abstract socket), and the egress
proxy itself (a host off the allow-list, a loopback destination). Each attack is run for
real, and the host side is checked afterwards: the throw-away listeners count every
connection they accept, and must have accepted none.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench_pipeline.sandbox import SandboxPolicy
from bench_pipeline.sandbox.bubblewrap import EGRESS_PORT, BubblewrapSandbox

# Run inside the sandbox: every attempt named on the command line, one JSON line each.
#   tcp:HOST:PORT   unix:PATH   abstract:NAME   connect:HOST:PORT   get:URL
ATTACK = r"""
import json, socket, sys
PROXY = ("127.0.0.1", {port})

def attempt(kind, arg):
    if kind == "tcp":
        host, port = arg.rsplit(":", 1)
        socket.create_connection((host.strip("[]"), int(port)), timeout=3).close()
        return "connected"
    if kind in ("unix", "abstract"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(3)
        s.connect(arg if kind == "unix" else "\0" + arg)
        s.close()
        return "connected"
    s = socket.create_connection(PROXY, timeout=5)
    if kind == "connect":
        s.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (arg, arg)).encode())
        head = s.recv(4096)
        if head.startswith(b"HTTP/1.1 200"):
            s.sendall(b"GET /via-tunnel HTTP/1.1\r\nHost: x\r\n\r\n")
            head += s.recv(4096)
    else:
        s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % arg).encode())
        head = s.recv(4096)
    s.close()
    return head.decode("latin-1")

for item in sys.argv[1:]:
    kind, arg = item.split(":", 1)
    try:
        outcome = attempt(kind, arg)
    except OSError as exc:
        outcome = "failed: %s" % exc
    print(json.dumps({"try": item, "outcome": outcome}), flush=True)
""".replace("{port}", str(EGRESS_PORT))


class TcpListener:
    """A throw-away TCP server on the host that counts every connection it accepts."""

    def __init__(self, host: str = "0.0.0.0") -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self._changed = threading.Condition()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self._changed:
                self.accepted += 1
                self._changed.notify_all()
            with conn:
                try:
                    conn.settimeout(3)
                    conn.recv(4096)
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\nupstream")
                except OSError:
                    pass


def settled_count(listener: TcpListener | UnixListener, connect: object) -> int:
    """Connections the listener accepted so far, counted without a race: connect once more
    from the host and wait until that connection is accepted. Accepts are FIFO, so anything
    the sandbox managed to open earlier has been counted by then; the host's own connections
    (this one and the precondition's) are subtracted by the callers."""
    before = listener.accepted
    connect()  # type: ignore[operator]
    with listener._changed:
        listener._changed.wait_for(lambda: listener.accepted > before, timeout=10)
    return listener.accepted


class UnixListener:
    """A throw-away Unix socket server (path or abstract) that counts connections."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(address)
        self.sock.listen(16)
        self.accepted = 0
        self._changed = threading.Condition()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self._changed:
                self.accepted += 1
                self._changed.notify_all()
            conn.close()

    def connect(self) -> None:
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        probe.connect(self.address)
        probe.close()

    def close(self) -> None:
        self.sock.close()


def tcp_connect(port: int) -> None:
    socket.create_connection(("127.0.0.1", port), timeout=3).close()


@pytest.fixture
def tcp_listener() -> Iterator[TcpListener]:
    listener = TcpListener()
    yield listener
    listener.sock.close()


def host_address() -> str | None:
    """This host's own non-loopback IPv4 address, if it has one."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.1", 9))  # sends nothing
        address = probe.getsockname()[0]
    except OSError:
        return None
    finally:
        probe.close()
    return None if address.startswith("127.") else address


def attack(
    bwrap: BubblewrapSandbox, workspace: Path, policy: SandboxPolicy, *tries: str
) -> tuple[dict[str, str], dict | None]:
    result = bwrap.run(["python3", "-c", ATTACK, *tries], workspace, policy)
    assert result.exit_code == 0 and result.error is None, result.stderr + str(result.error)
    outcomes = {}
    for line in result.stdout.splitlines():
        row = json.loads(line)
        outcomes[row["try"]] = row["outcome"]
    assert set(outcomes) == set(tries), result.stdout
    return outcomes, result.egress


def allowed(**overrides: object) -> SandboxPolicy:
    """An agent-like policy: network on, its model API allowed."""
    values: dict[str, object] = {
        "timeout_s": 30.0,
        "network": True,
        "allowed_hosts": ("api.anthropic.com",),
    }
    return SandboxPolicy(**(values | overrides))  # type: ignore[arg-type]


# ---------------------------------------------------------------- the host's loopback


@pytest.mark.parametrize("network", [True, False], ids=["network-allowed", "network-off"])
def test_a_host_listener_gets_no_connection(
    bwrap: BubblewrapSandbox, workspace: Path, tcp_listener: TcpListener, network: bool
) -> None:
    port = tcp_listener.port
    # Precondition: the listener answers on the host, so "no connection" means something.
    assert settled_count(tcp_listener, lambda: tcp_connect(port)) == 1
    tries = [f"tcp:127.0.0.1:{port}", f"tcp:localhost:{port}", f"tcp:[::1]:{port}"]
    own = host_address()
    if own:
        tries.append(f"tcp:{own}:{port}")
    if network:
        tries += [
            f"connect:127.0.0.1:{port}",
            f"connect:localhost:{port}",
            f"get:http://127.0.0.1:{port}/",
            f"get:http://[::1]:{port}/",
        ]
        if own:
            tries.append(f"connect:{own}:{port}")
    policy = allowed() if network else SandboxPolicy(timeout_s=30.0)
    outcomes, egress = attack(bwrap, workspace, policy, *tries)
    for attempt, outcome in outcomes.items():
        assert not outcome.startswith("connected"), (attempt, outcome)
        assert "upstream" not in outcome, (attempt, outcome)
        if attempt.startswith(("connect:", "get:")):
            assert outcome.startswith("HTTP/1.1 403"), (attempt, outcome)
    # Only the host's own two connections: the precondition and the count's own.
    assert settled_count(tcp_listener, lambda: tcp_connect(port)) == 2
    if network:
        assert egress is not None
        assert egress["allowed_hosts"] == ["api.anthropic.com"]
        assert egress["refused_total"] == sum(t.startswith(("connect:", "get:")) for t in tries)
        assert egress["connections"] == {}
    else:
        assert egress is None


def test_a_loopback_name_on_the_allow_list_is_still_refused(
    bwrap: BubblewrapSandbox, workspace: Path, tcp_listener: TcpListener
) -> None:
    port = tcp_listener.port
    policy = allowed(allowed_hosts=(f"localhost:{port}", f"127.0.0.1:{port}"))
    outcomes, egress = attack(
        bwrap, workspace, policy, f"connect:localhost:{port}", f"connect:127.0.0.1:{port}"
    )
    assert all(o.startswith("HTTP/1.1 403") for o in outcomes.values()), outcomes
    assert settled_count(tcp_listener, lambda: tcp_connect(port)) == 1  # the count's own
    assert egress is not None
    assert all("loopback" in r["reason"] for r in egress["refused"]), egress


def test_a_host_off_the_allow_list_is_refused_and_recorded(
    bwrap: BubblewrapSandbox, workspace: Path
) -> None:
    outcomes, egress = attack(
        bwrap,
        workspace,
        allowed(),
        "connect:registry.npmjs.org:443",
        "get:http://example.com/",
        "connect:api.anthropic.com:22",
    )
    assert all(o.startswith("HTTP/1.1 403") for o in outcomes.values()), outcomes
    assert egress is not None
    refused = {r["target"]: r["reason"] for r in egress["refused"]}
    assert refused == {
        "registry.npmjs.org:443": "not on the allow-list",
        "example.com:80": "not on the allow-list",
        "api.anthropic.com:22": "not on the allow-list",
    }


def test_an_allow_listed_upstream_goes_through(
    bwrap: BubblewrapSandbox, workspace: Path, tcp_listener: TcpListener
) -> None:
    """Without the internet: a throw-away local upstream, allowed by the test-only setting."""
    pair = f"127.0.0.1:{tcp_listener.port}"
    policy = allowed(test_only_local_upstreams=(pair,))
    outcomes, egress = attack(bwrap, workspace, policy, f"connect:{pair}", f"get:http://{pair}/")
    assert outcomes[f"connect:{pair}"].startswith("HTTP/1.1 200 Connection Established")
    assert outcomes[f"get:http://{pair}/"].startswith("HTTP/1.1 200 OK")
    assert settled_count(tcp_listener, lambda: tcp_connect(tcp_listener.port)) == 3
    assert egress is not None and egress["connections"] == {pair: 2}
    assert egress["refused_total"] == 0


def test_clients_use_the_proxy_from_the_environment(
    bwrap: BubblewrapSandbox, workspace: Path
) -> None:
    """curl and node's npm read the proxy variables: a refused host is refused by the proxy
    (not by a missing route), so the refusal is on record."""
    if shutil.which("curl") is None:
        pytest.skip("curl is not installed")
    result = bwrap.run(
        ["curl", "-sS", "-m", "10", "-o", "/dev/null", "https://example.com/"],
        workspace,
        allowed(),
    )
    assert result.exit_code != 0
    assert "403" in result.stderr, result.stderr
    assert result.egress is not None
    assert [r["target"] for r in result.egress["refused"]] == ["example.com:443"]


# ---------------------------------------------------------------- Postgres


def _postgres_reachable() -> bool:
    try:
        socket.create_connection(("127.0.0.1", 5432), timeout=2).close()
    except OSError:
        return False
    return True


@pytest.mark.postgres
@pytest.mark.parametrize("network", [True, False], ids=["network-allowed", "network-off"])
def test_postgres_is_unreachable_by_tcp_and_by_its_socket(
    bwrap: BubblewrapSandbox, workspace: Path, network: bool
) -> None:
    if not _postgres_reachable():
        pytest.skip("no Postgres on 127.0.0.1:5432")
    sockets = [
        p
        for p in ("/var/run/postgresql/.s.PGSQL.5432", "/run/postgresql/.s.PGSQL.5432")
        if Path(p).exists()
    ]
    tries = ["tcp:127.0.0.1:5432", "tcp:localhost:5432", *(f"unix:{p}" for p in sockets)]
    if network:
        tries += ["connect:127.0.0.1:5432", "connect:localhost:5432"]
    policy = allowed() if network else SandboxPolicy(timeout_s=30.0)
    outcomes, _ = attack(bwrap, workspace, policy, *tries)
    for attempt, outcome in outcomes.items():
        assert not outcome.startswith(("connected", "HTTP/1.1 200")), (attempt, outcome)
    # What the report saw: psql as the superuser over the socket, the way it got in before.
    if shutil.which("psql"):
        psql = bwrap.run(
            ["sh", "-c", "psql -h /var/run/postgresql -U postgres -c 'select 1' 2>&1; "
             "psql -h /run/postgresql -U postgres -c 'select 1' 2>&1; "
             "psql -h 127.0.0.1 -U postgres -c 'select 1' 2>&1; ls -A /run /var/run"],
            workspace,
            policy,
        )  # fmt: skip
        assert "(1 row)" not in psql.stdout, psql.stdout
        assert "postgresql" not in psql.stdout.split("\n")[-2:], psql.stdout


# ---------------------------------------------------------------- Unix sockets of the host


@pytest.mark.parametrize("network", [True, False], ids=["network-allowed", "network-off"])
def test_an_abstract_socket_of_the_host_is_unreachable(
    bwrap: BubblewrapSandbox, workspace: Path, network: bool
) -> None:
    """Abstract sockets belong to a network namespace: the sandbox's own never has the
    host's, with or without egress."""
    name = f"bench-test-{uuid.uuid4().hex}"
    listener = UnixListener("\0" + name)
    try:
        assert settled_count(listener, listener.connect) == 1  # reachable on the host
        policy = allowed() if network else SandboxPolicy(timeout_s=30.0)
        outcomes, _ = attack(bwrap, workspace, policy, f"abstract:{name}")
        assert outcomes[f"abstract:{name}"].startswith("failed"), outcomes
        assert settled_count(listener, listener.connect) == 2
    finally:
        listener.close()


@pytest.mark.parametrize("network", [True, False], ids=["network-allowed", "network-off"])
def test_path_sockets_of_the_host_are_masked(
    bwrap: BubblewrapSandbox, workspace: Path, tmp_path: Path, network: bool
) -> None:
    """Sockets the read-only view of / would show: in a host folder (/var/tmp, the project
    tree), under /run, and under /tmp inside a folder bound back into the sandbox."""
    folders = [
        Path(tempfile.mkdtemp(prefix="bench-sock-", dir="/var/tmp")),
        Path(tempfile.mkdtemp(prefix=".bench-sock-", dir=Path(__file__).resolve().parent)),
        Path(tempfile.mkdtemp(prefix="bench-sock-", dir="/run")),
    ]
    shared = tmp_path / "shared"  # under /tmp, bound read-only into the sandbox below
    shared.mkdir()
    folders.append(shared)
    listeners = []
    try:
        for folder in folders:
            folder.chmod(0o755)
            listeners.append(UnixListener(str(folder / "service.sock")))
            os.chmod(folder / "service.sock", 0o777)  # as open as a careless service makes it
        for listener in listeners:  # precondition: each answers on the host
            assert settled_count(listener, listener.connect) == 1
        policy = (allowed if network else SandboxPolicy)(timeout_s=30.0, read_only=(shared,))
        tries = [f"unix:{listener.address}" for listener in listeners]
        outcomes, _ = attack(bwrap, workspace, policy, *tries)
        for attempt, outcome in outcomes.items():
            assert outcome.startswith("failed"), (attempt, outcome)
        counts = [settled_count(listener, listener.connect) for listener in listeners]
        assert counts == [2] * len(listeners)
    finally:
        for listener in listeners:
            listener.close()
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)


def test_run_and_var_run_are_empty_inside(bwrap: BubblewrapSandbox, workspace: Path) -> None:
    result = bwrap.run(
        ["sh", "-c", "ls -A /run /var/run /tmp"], workspace, SandboxPolicy(timeout_s=30.0)
    )
    assert result.ok, result.stderr
    assert "postgresql" not in result.stdout and "mysqld" not in result.stdout
    assert "dbus" not in result.stdout and "docker.sock" not in result.stdout


def test_with_network_only_the_sandboxs_own_loopback_exists(
    bwrap: BubblewrapSandbox, workspace: Path
) -> None:
    result = bwrap.run(["cat", "/proc/net/dev"], workspace, allowed())
    names = [line.split(":")[0].strip() for line in result.stdout.splitlines()[2:]]
    assert names == ["lo"], result.stdout
    # The bridge does not change what the program's exit looks like.
    failing = bwrap.run(["sh", "-c", "echo out; echo err >&2; exit 7"], workspace, allowed())
    assert (failing.exit_code, failing.stdout, failing.stderr) == (7, "out\n", "err\n")
    assert failing.error is None


def test_a_process_listing_shows_no_host_process(bwrap: BubblewrapSandbox, workspace: Path) -> None:
    """The bridge is the only companion the program gets, and it runs as the same uid."""
    result = bwrap.run(
        ["sh", "-c", "for p in /proc/[0-9]*; do cat $p/comm; done"], workspace, allowed()
    )
    comms = sorted(result.stdout.split())
    assert "postgres" not in comms and "dagster" not in " ".join(comms)
    assert "python3" in comms  # the bridge


def test_the_host_probe_itself_works() -> None:
    """The subprocess side of these tests: the attack script runs on the host as a control,
    reaching the same listener the sandboxed copy cannot."""
    listener = TcpListener()
    try:
        done = subprocess.run(
            ["python3", "-c", ATTACK, f"tcp:127.0.0.1:{listener.port}"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
        assert json.loads(done.stdout)["outcome"] == "connected"
        assert settled_count(listener, lambda: tcp_connect(listener.port)) == 2
    finally:
        listener.sock.close()


# ---------------------------------------------------------------- through the public path

AGENT_SCRIPT = r"""#!/usr/bin/python3
# A `command` agent that attacks the host's network, then writes a page and exits 0.
import socket, sys
workspace, port, unix_path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
tries = []
def attempt(name, fn):
    try:
        fn()
        tries.append(name + " connected")
    except OSError as exc:
        tries.append(name + " failed " + str(exc))
def tcp(host):
    socket.create_connection((host, port), timeout=3).close()
def unix(path):
    s = socket.socket(socket.AF_UNIX); s.settimeout(3); s.connect(path); s.close()
def via_proxy(target):
    s = socket.create_connection(("127.0.0.1", 3128), timeout=5)
    s.sendall(("CONNECT %s HTTP/1.1\r\n\r\n" % target).encode())
    head = s.recv(200); s.close()
    if head.startswith(b"HTTP/1.1 200"):
        return
    raise OSError(head.split(b"\r\n")[0].decode())
attempt("tcp-loopback", lambda: tcp("127.0.0.1"))
attempt("postgres", lambda: socket.create_connection(("127.0.0.1", 5432), timeout=3).close())
attempt("postgres-socket", lambda: unix("/var/run/postgresql/.s.PGSQL.5432"))
attempt("host-socket", lambda: unix(unix_path))
attempt("proxy-loopback", lambda: via_proxy("127.0.0.1:%d" % port))
attempt("proxy-elsewhere", lambda: via_proxy("example.com:443"))
for line in tries:
    print(line, flush=True)
page = "<!doctype html><title>t</title><canvas id=c width=200 height=400></canvas>"
open(workspace + "/index.html", "w").write(page)
"""


@pytest.mark.slow
def test_bench_run_with_a_hostile_command_agent(tmp_path: Path, tcp_listener: TcpListener) -> None:
    """`bench run` with the `command` harness: the agent's script attacks the host's network;
    the host listeners see nothing, the refusals are in the run's record, and the run still
    lands in fct_runs."""
    bench = Path(__file__).resolve().parents[2] / ".venv" / "bin" / "bench"
    if not bench.exists():
        pytest.skip(f"{bench} is not installed (make setup)")
    script_dir = Path(tempfile.mkdtemp(prefix="bench-agent-", dir="/var/tmp"))
    sock_dir = Path(tempfile.mkdtemp(prefix="bench-sock-", dir="/var/tmp"))
    script_dir.chmod(0o755)
    script = script_dir / "hostile-agent"
    script.write_text(AGENT_SCRIPT)
    script.chmod(0o755)
    unix_listener = UnixListener(str(sock_dir / "service.sock"))
    try:
        assert settled_count(tcp_listener, lambda: tcp_connect(tcp_listener.port)) == 1
        assert settled_count(unix_listener, unix_listener.connect) == 1
        experiment = tmp_path / "egress.yaml"
        experiment.write_text(
            "name: egress_hostile\nrepeats: 1\n"
            "axes:\n  agent: {levels: [command]}\n  model: {levels: [claude-sonnet-4-6]}\n"
            "designs:\n  - type: main_effects\n"
        )
        env = os.environ | {
            "BENCH_DATA_DIR": str(tmp_path / "data"),
            "DAGSTER_HOME": str(tmp_path / "dagster_home"),
            "BENCH_AGENT_COMMAND": f"{script} {{workspace}} {tcp_listener.port} "
            f"{unix_listener.address}",
            "BENCH_BOT_ENDURANCE_S": "2",
        }
        for name in ("BENCH_ARTIFACTS_DIR", "BENCH_WAREHOUSE", "BENCH_ALLOW_HOSTS_COMMAND"):
            env.pop(name, None)
        done = subprocess.run(
            [str(bench), "run", str(experiment), "--endurance-seconds", "2"],
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        # The host side first: nothing reached either listener.
        assert settled_count(tcp_listener, lambda: tcp_connect(tcp_listener.port)) == 2
        assert settled_count(unix_listener, unix_listener.connect) == 2
        # What the agent saw, in its own transcript.
        records = tmp_path / "data" / "artifacts" / "records" / "agent_generation"
        (record_file,) = records.glob("*.json")
        record = json.loads(record_file.read_text())
        transcript = Path(record["transcript_path"]).read_text()
        for name in ("tcp-loopback", "postgres ", "postgres-socket", "host-socket", "proxy-"):
            lines = [line for line in transcript.splitlines() if line.startswith(name)]
            assert lines and all(" failed " in line for line in lines), transcript
        # The evidence: the command harness is allowed no host, and both proxy attempts
        # are on record as refused.
        egress = json.loads(record["details"])["egress"]
        assert egress["allowed_hosts"] == []
        refused = {r["target"]: r["reason"] for r in egress["refused"]}
        assert refused == {
            f"127.0.0.1:{tcp_listener.port}": "not on the allow-list",
            "example.com:443": "not on the allow-list",
        }
        # And the run landed in the warehouse.
        query = subprocess.run(
            [str(bench), "sql", "select run_id, agent, status from fct_runs", "--json"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        rows = json.loads(query.stdout)
        assert len(rows) == 1 and rows[0]["agent"] == "command", rows
    finally:
        unix_listener.close()
        shutil.rmtree(script_dir, ignore_errors=True)
        shutil.rmtree(sock_dir, ignore_errors=True)

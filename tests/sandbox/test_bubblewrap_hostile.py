"""Hostile programs under the real bubblewrap sandbox: each contained, reported, host unchanged.

Every test checks the host afterwards (files that must not exist, processes that must not
survive), not only what the sandbox reports.
"""

from __future__ import annotations

import os
import resource
import shutil
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from bench_pipeline.sandbox.bubblewrap import BubblewrapSandbox, processes_of_uid
from tests.sandbox.helpers import host_process_count, processes_with, quick

PY_CONNECT = (
    "import socket\n"
    "try:\n"
    "    socket.create_connection(({host!r}, {port}), timeout=3).close()\n"
    "    print('connected')\n"
    "except OSError as exc:\n"
    "    print('refused', exc)\n"
)


def test_no_network_without_the_policy(bwrap: BubblewrapSandbox, workspace: Path) -> None:
    policy = quick(timeout_s=15)
    for host, port in (("1.1.1.1", 53), ("registry.npmjs.org", 443)):
        result = bwrap.run(
            ["python3", "-c", PY_CONNECT.format(host=host, port=port)], workspace, policy
        )
        assert result.stdout.startswith("refused"), (host, result.stdout, result.stderr)
    node = bwrap.run(
        [
            "node",
            "-e",
            "require('dns').lookup('registry.npmjs.org', e => console.log(e && e.code))",
        ],
        workspace,
        policy,
    )
    assert node.stdout.strip() in {"EAI_AGAIN", "ENOTFOUND"}, node.stdout + node.stderr
    # Only a loopback interface exists in the sandbox's network namespace.
    interfaces = bwrap.run(["cat", "/proc/net/dev"], workspace, policy).stdout
    assert [line.split(":")[0].strip() for line in interfaces.splitlines()[2:]] == ["lo"]


def test_network_policy_keeps_a_network_namespace_of_its_own(
    bwrap: BubblewrapSandbox, workspace: Path
) -> None:
    """network=True never means the host's network: only the sandbox's own loopback, with
    the egress bridge on it (the attacks are in tests/hostile/test_network.py)."""
    devices = bwrap.run(["cat", "/proc/net/dev"], workspace, quick(network=True)).stdout
    names = [line.split(":")[0].strip() for line in devices.splitlines()[2:]]
    assert names == ["lo"], devices
    # The one listener in that namespace: the bridge on 127.0.0.1:3128 (state 0A = LISTEN).
    tcp = bwrap.run(["cat", "/proc/net/tcp"], workspace, quick(network=True)).stdout
    listening = [row.split()[1] for row in tcp.splitlines()[1:] if row.split()[3] == "0A"]
    assert listening == ["0100007F:0C38"], tcp


def test_writes_outside_the_workspace_fail(bwrap: BubblewrapSandbox, workspace: Path) -> None:
    tag = uuid.uuid4().hex[:8]
    targets = [
        Path("/root") / f"pwned-{tag}",  # the real HOME
        Path("/work") / f"pwned-{tag}",
        workspace.parent / f"pwned-{tag}",  # next to the workspace
        Path("/etc") / f"pwned-{tag}",
        Path("/usr/local/bin") / f"pwned-{tag}",
    ]
    script = "; ".join(f"echo x > {t} && echo WROTE {t}" for t in targets)
    # The sandbox's /tmp is its own tmpfs: writing there works and never reaches the host.
    host_tmp = Path(tempfile.gettempdir()) / f"pwned-{tag}"
    script += f"; echo inside > {host_tmp} && cat {host_tmp}; true"
    result = bwrap.run(["sh", "-c", script], workspace, quick())
    assert "WROTE" not in result.stdout, result.stdout
    assert result.stdout == "inside\n"
    assert result.stderr.count("Read-only file system") + result.stderr.count(
        "Permission denied"
    ) == len(targets)
    for target in [*targets, host_tmp]:
        assert not target.exists(), target
    assert sorted(p.name for p in workspace.iterdir()) == []


def test_host_secrets_are_not_readable(bwrap: BubblewrapSandbox, workspace: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("only root runs the command as a separate uid")
    result = bwrap.run(["sh", "-c", "ls /root; cat /etc/shadow; echo done"], workspace, quick())
    assert result.stdout == "done\n"
    assert "Permission denied" in result.stderr


def test_symlink_planted_in_the_workspace_does_not_redirect_the_chown(
    bwrap: BubblewrapSandbox, workspace: Path, tmp_path: Path
) -> None:
    """Ownership is handed back with lchown: a link to a host file must not give it away."""
    victim = tmp_path / "victim.txt"
    victim.write_text("host file\n")
    before = victim.stat()
    result = bwrap.run(["ln", "-s", str(victim), "link"], workspace, quick())
    assert result.ok, result.stderr
    after = victim.stat()
    assert (after.st_uid, after.st_gid, after.st_mode) == (
        before.st_uid,
        before.st_gid,
        before.st_mode,
    )
    assert os.lstat(workspace / "link").st_uid == os.getuid()


def test_setuid_file_made_in_the_sandbox_is_not_setuid_root_after(
    bwrap: BubblewrapSandbox, workspace: Path
) -> None:
    """The files are handed back to root by chown: the kernel drops set-uid/gid bits then."""
    result = bwrap.run(
        ["sh", "-c", "cp /bin/true t && chmod 6755 t && ls -l t"], workspace, quick()
    )
    assert result.ok and result.stdout.startswith("-rwsr-sr-x"), result.stdout + result.stderr
    info = (workspace / "t").stat()
    assert info.st_uid == os.getuid() and not info.st_mode & 0o6000


@pytest.mark.slow
@pytest.mark.parametrize(
    "argv",
    [
        ["bash", "-c", "id -u; :(){ :|:& };:; sleep 30"],
        ["python3", "-c", "import os\nprint(os.getuid(), flush=True)\nwhile True:\n    os.fork()"],
    ],
    ids=["bash-fork-bomb", "python-fork-loop"],
)
def test_fork_bomb_is_contained(bwrap: BubblewrapSandbox, workspace: Path, argv: list[str]) -> None:
    before = host_process_count()
    start = time.monotonic()
    result = bwrap.run(argv, workspace, quick(timeout_s=3, max_processes=64))
    assert time.monotonic() - start < 12
    assert result.limit_hit == "processes", result.summary()
    assert not result.ok and result.error is None
    if os.geteuid() == 0:
        uid = int(result.stdout.split()[0])
        assert processes_of_uid(uid) == []  # nothing of the run survives
    # The host's process count is back to normal (other work may run on this host too; the
    # zombie of bwrap's own init is reaped by the host's init, which may take a moment).
    deadline = time.monotonic() + 10
    while host_process_count() > before + 20 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert host_process_count() <= before + 20


def test_detached_processes_do_not_survive(bwrap: BubblewrapSandbox, workspace: Path) -> None:
    marker = "3131.25"
    script = (
        f"setsid sleep {marker} > /dev/null 2>&1 < /dev/null & "
        f"(nohup sleep {marker} > /dev/null 2>&1 &) ; "
        f"(trap '' TERM HUP; exec sleep {marker}) > /dev/null 2>&1 & "
        "echo detached"
    )
    result = bwrap.run(["sh", "-c", script], workspace, quick())
    assert result.stdout == "detached\n"
    time.sleep(0.2)
    assert processes_with(f"sleep {marker}") == []


def test_infinite_loop_is_killed_at_the_timeout(bwrap: BubblewrapSandbox, workspace: Path) -> None:
    start = time.monotonic()
    result = bwrap.run(["sh", "-c", "while :; do :; done"], workspace, quick(timeout_s=2))
    assert result.timed_out and result.exit_code is None
    assert 1.9 <= time.monotonic() - start < 6
    assert "killed after the 2 s time limit" in result.summary()


def test_program_ignoring_sigterm_is_killed_too(bwrap: BubblewrapSandbox, workspace: Path) -> None:
    marker = "3232.25"
    script = f"trap '' TERM; sleep {marker} & trap '' TERM; wait"
    result = bwrap.run(["sh", "-c", script], workspace, quick(timeout_s=2))
    assert result.timed_out
    time.sleep(0.2)
    assert processes_with(f"sleep {marker}") == []


@pytest.mark.parametrize(
    "argv", [["yes"], ["head", "-c", "5G", "/dev/zero"]], ids=["yes", "5G-of-zeros"]
)
def test_printing_gigabytes_is_stopped_quickly(
    bwrap: BubblewrapSandbox, workspace: Path, argv: list[str]
) -> None:
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    start = time.monotonic()
    result = bwrap.run(argv, workspace, quick(output_cap_bytes=1_000_000))
    assert time.monotonic() - start < 5
    assert result.limit_hit == "output" and result.exit_code is None and not result.ok
    assert len(result.stdout.encode()) <= 1_000_000
    assert result.stdout_bytes < 100 * 1024 * 1024
    peak_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert peak_after - peak_before < 64 * 1024  # our memory stayed bounded (< 64 MiB more)


def test_huge_file_hits_the_file_size_limit(bwrap: BubblewrapSandbox, workspace: Path) -> None:
    result = bwrap.run(["head", "-c", "50M", "/dev/zero"], workspace, quick(), stdout_file=None)
    assert result.limit_hit == "output"  # (printing it: the output rule)
    written = bwrap.run(
        ["sh", "-c", "head -c 50M /dev/zero > big.bin"], workspace, quick(max_file_mb=5)
    )
    assert written.limit_hit == "file_size", written.summary() + written.stderr
    assert not written.ok
    assert (workspace / "big.bin").stat().st_size <= 5 * 1024 * 1024
    from_python = bwrap.run(
        ["python3", "-c", "open('big2.bin', 'wb').write(bytes(50 << 20))"],
        workspace,
        quick(max_file_mb=5),
    )
    assert from_python.limit_hit == "file_size" and "File too large" in from_python.stderr
    assert (workspace / "big2.bin").stat().st_size <= 5 * 1024 * 1024


@pytest.mark.parametrize(
    "argv",
    [
        ["python3", "-c", "a = []\nwhile True: a.append(bytearray(10**7))"],
        ["node", "-e", "const a = []; for (;;) a.push(Buffer.alloc(1e7, 1))"],
        [
            "node",
            "--max-old-space-size=8000",
            "-e",
            "const a=[]; for(;;) a.push(new Array(1e6).fill(1.5))",
        ],
    ],
    ids=["python", "node-buffers", "node-heap"],
)
def test_memory_hog_hits_the_memory_limit(
    bwrap: BubblewrapSandbox, workspace: Path, argv: list[str]
) -> None:
    result = bwrap.run(argv, workspace, quick(memory_mb=300))
    assert result.limit_hit == "memory", result.summary() + result.stderr[-500:]
    assert not result.ok and result.duration_s < 15


def test_many_small_processes_share_one_memory_limit(
    bwrap: BubblewrapSandbox, workspace: Path
) -> None:
    """Per-process rlimits would let 4 x 120 MB through a 256 MB limit; the cgroup does not."""
    from bench_pipeline.sandbox.cgroup import CgroupSet

    probe = CgroupSet.create(max_processes=8, memory_bytes=1 << 30, cpus=None)
    has_memory = "memory" in probe.dirs
    probe.remove()
    if not has_memory:
        pytest.skip(probe.unavailable or "no memory cgroup here: rlimits only")
    hog = "import time; a = bytearray(120 << 20); a[::4096] = b'x' * len(a[::4096]); time.sleep(2)"
    script = f'for i in 1 2 3 4; do python3 -c "{hog}" & done; wait'
    result = bwrap.run(["sh", "-c", script], workspace, quick(memory_mb=256))
    assert result.limit_hit == "memory", result.summary()


def test_unreachable_workspace_is_a_readable_error(bwrap: BubblewrapSandbox) -> None:
    if os.geteuid() != 0:
        pytest.skip("only the separate sandbox uid can be locked out")
    private = Path(tempfile.mkdtemp(prefix="bench-sandbox-private-", dir="/var/tmp"))
    try:
        private.chmod(0o700)
        workspace = private / "ws"
        workspace.mkdir()
        result = bwrap.run(["true"], workspace, quick())
        assert result.error and "cannot enter" in result.error and not result.ok
    finally:
        shutil.rmtree(private)

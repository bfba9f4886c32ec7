"""The docker back end: a fake engine for the streaming/kill logic, the real one when present.

No docker engine runs on the CI host, so the real-engine tests skip with the back end's own
reason; the fake client checks what we ask the engine for and how we follow its stream.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from bench_pipeline.sandbox import SandboxPolicy, SandboxUnavailable, get_sandbox
from bench_pipeline.sandbox.docker import DockerSandbox
from bench_pipeline.sandbox.quota import mount_available
from tests.sandbox.helpers import quick

Frame = tuple[bytes | None, bytes | None]


class FakeContainer:
    def __init__(self, frames: list[Frame], *, exit_code: int = 0, hang: bool = False) -> None:
        self.frames = frames
        self.exit_code = exit_code
        self.hang = hang  # keeps the stream open until killed (a program that never ends)
        self.killed = threading.Event()
        self.removed = False
        self.attrs: dict[str, Any] = {"State": {"OOMKilled": False}}

    def start(self) -> None:
        pass

    def attach(self, **kwargs: Any) -> Iterator[Frame]:
        assert kwargs == {
            "stdout": True,
            "stderr": True,
            "stream": True,
            "logs": True,
            "demux": True,
        }

        def frames() -> Iterator[Frame]:
            for frame in self.frames:
                if self.killed.is_set():
                    return
                yield frame
            if self.hang:
                self.killed.wait(30)

        return frames()

    def kill(self) -> None:
        self.killed.set()

    def wait(self, timeout: float | None = None) -> dict[str, int]:
        return {"StatusCode": 137 if self.killed.is_set() else self.exit_code}

    def reload(self) -> None:
        pass

    def remove(self, force: bool = False) -> None:
        self.removed = True


class FakeClient:
    def __init__(self, container: FakeContainer) -> None:
        self.container = container
        self.created: dict[str, Any] = {}
        self.containers = SimpleNamespace(create=self._create)
        self.images = SimpleNamespace(get=lambda name: object(), pull=lambda name: object())

    def ping(self) -> bool:
        return True

    def _create(self, image: str, **kwargs: Any) -> FakeContainer:
        self.created = {"image": image, **kwargs}
        return self.container


def fake(container: FakeContainer) -> tuple[DockerSandbox, FakeClient]:
    client = FakeClient(container)
    return DockerSandbox(client=client), client


def test_container_is_configured_from_the_policy(workspace: Path, tmp_path: Path) -> None:
    sandbox, client = fake(FakeContainer([]))
    tools = tmp_path / "tools"
    tools.mkdir()
    (workspace / "src").mkdir()
    policy = SandboxPolicy(
        memory_mb=512, max_processes=64, cpus=1.5, read_only=[tools], env={"CI": "1"}
    )
    sandbox.run(["npm", "run", "build"], workspace, policy, cwd=workspace / "src")
    created = client.created
    assert created["image"] == "node:20-bookworm-slim"
    assert created["command"] == ["npm", "run", "build"]
    assert created["network_disabled"] is True
    assert created["mem_limit"] == "512m" and created["pids_limit"] == 64
    assert created["nano_cpus"] == 1_500_000_000
    assert created["working_dir"] == "/workspace/src"
    assert created["volumes"] == {
        str(workspace): {"bind": "/workspace", "mode": "rw"},
        str(tools): {"bind": str(tools), "mode": "ro"},
    }
    assert created["read_only"] is True and created["cap_drop"] == ["ALL"]
    assert created["user"] == f"{os.getuid()}:{os.getgid()}"
    assert created["environment"] == {"HOME": "/tmp", "LANG": "C.UTF-8", "CI": "1"}
    limits = {u["Name"]: u["Hard"] for u in created["ulimits"]}
    assert limits["fsize"] == policy.max_file_mb * 1024 * 1024
    assert client.container.removed
    assert created["network_mode"] == "none"


def test_structure_only_no_engine_network_even_when_the_policy_allows_it(
    workspace: Path,
) -> None:
    """Structure-level (no docker engine on the CI host): a policy asking for egress is not
    given the engine's bridge network, which reaches the host's services through its gateway;
    no container is even created, and the result says why in one line."""
    networked, client = fake(FakeContainer([]))
    result = networked.run(
        ["npm", "install"], workspace, SandboxPolicy(network=True, allowed_hosts=("x.org",))
    )
    assert client.created == {}  # no container was made
    assert result.error is not None and "no network" in result.error
    assert "BENCH_SANDBOX=bubblewrap" in result.error
    assert result.exit_code is None and not result.ok
    config = networked.container_config(["true"], workspace, SandboxPolicy(), workspace)
    assert config["network_mode"] == "none" and config["network_disabled"] is True


def test_output_is_streamed_with_the_shared_rules(workspace: Path, tmp_path: Path) -> None:
    frames: list[Frame] = [(b"one\ntw", None), (None, b"warn\n"), (b"o\n", None), (b"three", None)]
    sandbox, client = fake(FakeContainer(frames, exit_code=2))
    lines: list[str] = []
    transcript = tmp_path / "out.log"
    result = sandbox.run(
        ["x"], workspace, quick(), on_stdout_line=lines.append, stdout_file=transcript
    )
    assert (result.exit_code, result.stdout, result.stderr) == (2, "one\ntwo\nthree", "warn\n")
    assert lines == ["one", "two", "three"]
    assert transcript.read_text() == "one\ntwo\nthree\n"
    assert result.backend == "docker" and client.container.removed


def test_hook_stop_kills_the_container(workspace: Path) -> None:
    frames: list[Frame] = [(f"step {i}\n".encode(), None) for i in range(100)]
    sandbox, client = fake(FakeContainer(frames, hang=True))
    result = sandbox.run(
        ["agent"],
        workspace,
        quick(),
        on_stdout_line=lambda s: "over budget" if s == "step 2" else None,
    )
    assert result.stopped == "over budget" and result.exit_code is None
    assert client.container.killed.is_set() and client.container.removed


def test_timeout_kills_a_silent_container(workspace: Path) -> None:
    sandbox, client = fake(FakeContainer([], hang=True))
    result = sandbox.run(["sleep", "infinity"], workspace, quick(timeout_s=0.5))
    assert result.timed_out and result.exit_code is None and result.duration_s < 5
    assert client.container.killed.is_set() and client.container.removed


def test_flood_is_killed_with_the_output_limit(workspace: Path) -> None:
    frames: list[Frame] = [(b"y\n" * 32768, None)] * 1000  # 64 MiB
    sandbox, client = fake(FakeContainer(frames, hang=True))
    result = sandbox.run(["yes"], workspace, quick(output_cap_bytes=100_000))
    assert result.limit_hit == "output" and result.exit_code is None
    assert result.stdout_bytes < 1_000_000 and client.container.killed.is_set()


def test_oom_kill_is_reported(workspace: Path) -> None:
    container = FakeContainer([(None, b"Killed\n")], exit_code=137)
    container.attrs["State"]["OOMKilled"] = True
    sandbox, _ = fake(container)
    assert sandbox.run(["hog"], workspace, quick()).limit_hit == "memory"


# ----------------------------------------------------------------- the real engine


@pytest.fixture(scope="module")
def docker_sandbox() -> DockerSandbox:
    sandbox = get_sandbox("docker")
    assert isinstance(sandbox, DockerSandbox)
    reason = sandbox.unavailable_reason()
    if reason:
        pytest.skip(reason)
    return sandbox


def test_no_engine_is_a_clear_reason() -> None:
    sandbox = DockerSandbox()
    reason = sandbox.unavailable_reason()
    if reason is None:
        pytest.skip("a docker engine runs here")
    assert "docker engine" in reason and "bubblewrap" in reason
    with pytest.raises(SandboxUnavailable):
        sandbox.run(["true"], Path("/"), SandboxPolicy())


@pytest.mark.slow
def test_real_engine_runs_and_isolates(docker_sandbox: DockerSandbox, workspace: Path) -> None:
    result = docker_sandbox.run(
        ["sh", "-c", "echo hi > f && cat f && ls /workspace && env"],
        workspace,
        quick(timeout_s=120),
    )
    assert result.ok, result.stderr
    assert (workspace / "f").read_text() == "hi\n"
    assert "ANTHROPIC_API_KEY" not in result.stdout


@pytest.mark.slow
def test_real_engine_has_no_network(docker_sandbox: DockerSandbox, workspace: Path) -> None:
    script = "require('dns').lookup('registry.npmjs.org', e => console.log(e ? e.code : 'ok'))"
    result = docker_sandbox.run(["node", "-e", script], workspace, quick(timeout_s=120))
    assert result.stdout.strip() != "ok"


@pytest.mark.slow
def test_real_engine_contains_a_fork_bomb(docker_sandbox: DockerSandbox, workspace: Path) -> None:
    result = docker_sandbox.run(
        ["sh", "-c", ":(){ :|:& };:"], workspace, quick(timeout_s=5, max_processes=64)
    )
    assert not result.ok


@pytest.mark.slow
def test_real_engine_kills_at_the_timeout(docker_sandbox: DockerSandbox, workspace: Path) -> None:
    result = docker_sandbox.run(["sleep", "600"], workspace, quick(timeout_s=3))
    assert result.timed_out and result.duration_s < 20


class FillingContainer(FakeContainer):
    """Writes into the bound workspace from the host side while it "runs", the way the
    container's process would through its bind mount: past the quota, and many files."""

    def __init__(self, workspace: Path) -> None:
        super().__init__([(b"started\n", None)])
        self.workspace = workspace
        self.refused: list[str] = []
        self.mounted = ""

    def start(self) -> None:
        self.mounted = next(
            (line for line in Path("/proc/self/mountinfo").read_text().splitlines()
             if f" {self.workspace} " in line),
            "",
        )  # fmt: skip
        try:
            with open(self.workspace / "big", "wb") as fh:
                fh.write(bytes(6 * 1024 * 1024))
        except OSError as exc:
            self.refused.append(exc.strerror or str(exc))
        for i in range(200):
            try:
                (self.workspace / f"f{i}").touch()
            except OSError as exc:
                self.refused.append(exc.strerror or str(exc))
                break


def test_structure_only_the_quota_is_kept_by_the_kernel_under_the_container(
    workspace: Path,
) -> None:
    """Structure-level (no engine here): while the container exists, its workspace is the
    run's size- and inode-limited tmpfs, so writes past either are refused by the kernel;
    afterwards the files are back in the host folder, within the quota, and the run is a
    disk limit hit."""
    if not mount_available():
        pytest.skip("the kernel-kept quota needs root (mount)")
    (workspace / "keep.txt").write_text("kept")
    container = FillingContainer(workspace)
    sandbox, _client = fake(container)
    policy = SandboxPolicy(disk_quota_mb=4, disk_quota_files=50)
    result = sandbox.run(["true"], workspace, policy)
    assert "tmpfs" in container.mounted and "bench-quota-" in container.mounted
    assert container.refused and "No space left on device" in container.refused[0]
    assert result.limit_hit == "disk", result.summary()
    names = {p.name for p in workspace.iterdir()}
    assert "keep.txt" in names and len(names) <= 50
    assert sum(p.stat().st_size for p in workspace.iterdir()) <= 4 * 1024 * 1024
    # This run's tmpfs is gone (other workers' runs may hold theirs meanwhile).
    assert str(workspace) not in Path("/proc/self/mountinfo").read_text()

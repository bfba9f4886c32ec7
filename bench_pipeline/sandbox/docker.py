"""The docker back end: the command in a throw-away container that sees only the workspace.

Unlike bubblewrap, the container does not see the host filesystem at all: its root is the
image (read-only), the workspace is mounted at /workspace, policy.read_only folders at their
host paths (read-only) and policy.writable ones at their host paths (read-write). Limits
are the engine's cgroups (memory, pids, CPU) plus an RLIMIT_FSIZE ulimit.

The network is always the engine's "none" network (a loopback of the container's own). A
policy asking for egress is refused with a readable `SandboxResult.error` rather than given
the engine's bridge network: that network reaches the host through its gateway address
(Postgres or the Dagster UI listening on 0.0.0.0), and the filtering egress proxy is wired
into the bubblewrap back end only (see docs/sandbox.md).
"""

from __future__ import annotations

import contextlib
import os
import queue
import random
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from bench_pipeline.sandbox.base import (
    LineHook,
    Sandbox,
    SandboxPolicy,
    SandboxResult,
)
from bench_pipeline.sandbox.disk import DiskWatch
from bench_pipeline.sandbox.process import STUCK_AFTER_KILL_S, OutputCollector
from bench_pipeline.sandbox.quota import (
    FullWatch,
    QuotaError,
    QuotaMount,
    mount_available,
    report_copy_out,
)

DEFAULT_IMAGE = "node:20-bookworm-slim"
WORKSPACE_IN_CONTAINER = "/workspace"
MIB = 1024 * 1024
SIGXFSZ_EXIT = 128 + 25
_END = object()  # the attach stream is over
NO_EGRESS = (
    "the docker back end gives no network (no egress proxy there); run steps that need "
    "the network with BENCH_SANDBOX=bubblewrap, or build with install_network=False"
)


class DockerSandbox(Sandbox):
    name = "docker"

    def __init__(self, *, image: str = DEFAULT_IMAGE, client: Any | None = None) -> None:
        self.image = image
        self._client = client  # injectable for tests; else docker.from_env() on first use
        self._reason: str | None = None
        self._checked = client is not None

    def _docker_client(self) -> Any:
        if self._client is None:
            import docker  # imported late: the bubblewrap path must not need the SDK

            self._client = docker.from_env(timeout=10)
        return self._client

    def unavailable_reason(self) -> str | None:
        if self._checked:
            return self._reason
        self._checked = True
        try:
            self._docker_client().ping()
        except Exception as exc:  # the SDK raises many types; any of them means "no engine"
            self._client = None
            detail = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
            self._reason = (
                f"no docker engine reachable ({detail}): start dockerd or set DOCKER_HOST, "
                "or use the bubblewrap back end"
            )
        return self._reason

    def _ensure_image(self, client: Any) -> str | None:
        """None when the image is there (pulled if needed), else why it is not."""
        try:
            client.images.get(self.image)
            return None
        except Exception:
            pass
        try:
            client.images.pull(self.image)
            return None
        except Exception as exc:
            return f"docker image {self.image} is missing and could not be pulled: {exc}"

    def container_config(
        self,
        argv: Sequence[str],
        workspace: Path,
        policy: SandboxPolicy,
        cwd: Path,
    ) -> dict[str, Any]:
        """Keyword arguments of containers.create (public for tests and debugging)."""
        from docker.types import Ulimit

        volumes: dict[str, dict[str, str]] = {
            str(workspace): {"bind": WORKSPACE_IN_CONTAINER, "mode": "rw"}
        }
        for path in policy.read_only:
            volumes[str(Path(path).resolve())] = {"bind": str(Path(path).resolve()), "mode": "ro"}
        for path in policy.writable:
            volumes[str(Path(path).resolve())] = {"bind": str(Path(path).resolve()), "mode": "rw"}
        relative = cwd.relative_to(workspace)
        working_dir = WORKSPACE_IN_CONTAINER + ("" if str(relative) == "." else f"/{relative}")
        env = {"HOME": "/tmp", "LANG": "C.UTF-8"} | dict(policy.env)
        file_bytes = policy.max_file_mb * MIB
        config: dict[str, Any] = {
            "command": list(argv),
            "working_dir": working_dir,
            "environment": env,
            # Never a network of the engine's: see the module docstring.
            "network_disabled": True,
            "network_mode": "none",
            "mem_limit": f"{policy.memory_mb}m",
            "memswap_limit": f"{policy.memory_mb}m",  # no swap beyond the memory limit
            "pids_limit": policy.max_processes,
            "volumes": volumes,
            # Files written to the workspace belong to the caller, as with bubblewrap.
            "user": f"{os.getuid()}:{os.getgid()}",
            "read_only": True,  # the image is as read-only as the host is under bubblewrap
            "tmpfs": {"/tmp": f"rw,exec,nosuid,size={policy.memory_mb}m,mode=1777"},
            "cap_drop": ["ALL"],
            "security_opt": ["no-new-privileges"],
            "ulimits": [
                Ulimit(name="fsize", soft=file_bytes, hard=file_bytes),
                Ulimit(name="core", soft=0, hard=0),
            ],
            "init": True,  # tini as pid 1 reaps orphans and passes signals on
            "stdin_open": False,
            "tty": False,
            "labels": {"bench_pipeline.sandbox": "1"},
        }
        if policy.cpus:
            config["nano_cpus"] = int(policy.cpus * 1e9)
        return config

    def run(
        self,
        argv: Sequence[str],
        workspace: Path,
        policy: SandboxPolicy,
        *,
        cwd: Path | None = None,
        on_stdout_line: LineHook | None = None,
        stdout_file: Path | None = None,
    ) -> SandboxResult:
        workspace, run_cwd = self._prepare(workspace, cwd)
        shown = list(argv)
        if policy.network:
            return SandboxResult(self.name, shown, None, 0.0, error=NO_EGRESS)
        client = self._docker_client()
        start = time.monotonic()
        problem = self._ensure_image(client)
        if problem:
            return SandboxResult(self.name, shown, None, time.monotonic() - start, error=problem)

        collector = OutputCollector(policy, on_stdout_line, stdout_file)
        container = None
        writable = [workspace, *(Path(p).resolve() for p in policy.writable)]
        mount: QuotaMount | None = None
        result: SandboxResult | None = None
        try:
            if policy.disk_quota_mb and mount_available():
                # The kernel keeps the quota, as under bubblewrap: the container's bind
                # mounts of these host folders land on the run's tmpfs (sandbox/quota.py).
                me = (os.getuid(), os.getgid())
                mount = QuotaMount(
                    writable,
                    policy.disk_quota_mb * MIB,
                    policy.disk_quota_files,
                    inside=me,
                    outside=me,
                    uid_tag=random.randrange(10**8, 10**9),
                )
                try:
                    mount.__enter__()
                except (QuotaError, OSError) as exc:
                    mount = None
                    result = SandboxResult(
                        self.name, shown, None, 0.0, limit_hit="disk", error=f"sandbox: {exc}"
                    )
                    return collector.fill(result)
            try:
                container = client.containers.create(
                    self.image,
                    **self.container_config(argv, workspace, policy, run_cwd),
                )
                container.start()
            except Exception as exc:
                result = SandboxResult(
                    self.name, shown, None, time.monotonic() - start, error=str(exc)
                )
                return collector.fill(result)
            # The clock starts with the container, not with the image pull.
            if not policy.disk_quota_mb:
                return self._follow(container, collector, policy, shown, time.monotonic())
            running = container

            def stop() -> None:
                with contextlib.suppress(Exception):  # already gone: nothing to stop
                    running.kill()

            watch: DiskWatch | FullWatch
            if mount is not None:
                watch = FullWatch(mount, stop=stop)
                message = mount.message()
            else:
                quota = policy.disk_quota_mb * MIB
                watch = DiskWatch(writable, quota, stop=stop, max_entries=policy.disk_quota_files)
            with watch:
                result = self._follow(container, collector, policy, shown, time.monotonic())
            if isinstance(watch, DiskWatch):
                message = watch.message()
            if watch.tripped:  # the same disk quota as bubblewrap (sandbox/quota.py)
                result.limit_hit, result.exit_code = "disk", None
                result.stderr = f"{result.stderr}\nsandbox: {message}".lstrip("\n")
            return result
        finally:
            collector.finish()
            if container is not None:
                with contextlib.suppress(Exception):
                    container.remove(force=True)
            if mount is not None:
                # The container is gone: copy the files back out, bounded (sandbox/quota.py).
                mount.__exit__(None, None, None)
                if result is not None:
                    report_copy_out(result, mount)

    def _follow(
        self,
        container: Any,
        collector: OutputCollector,
        policy: SandboxPolicy,
        shown: list[str],
        start: float,
    ) -> SandboxResult:
        """Stream the output into the collector until the container ends or must be killed.

        The SDK's attach stream blocks, so a thread reads it into a queue and this thread
        keeps the clock: a silent program still gets killed on time.
        """
        chunks: queue.Queue[Any] = queue.Queue(maxsize=256)
        stream = container.attach(stdout=True, stderr=True, stream=True, logs=True, demux=True)

        done = threading.Event()

        def put(item: object) -> bool:
            # Bounded queue (a flood must not pile up in memory), but never blocked for good:
            # once we stopped listening the reader just ends.
            while not done.is_set():
                with contextlib.suppress(queue.Full):
                    chunks.put(item, timeout=0.1)
                    return True
            return False

        def pump(frames: Iterator[tuple[bytes | None, bytes | None]]) -> None:
            try:
                for frame in frames:
                    if not put(frame):
                        return
            except Exception:
                pass  # the connection closes when the container is killed or removed
            finally:
                put(_END)

        reader = threading.Thread(target=pump, args=(stream,), name="docker-attach", daemon=True)
        reader.start()
        deadline = start + policy.timeout_s
        kill_reason: str | None = None
        timed_out = False
        killed_at: float | None = None
        while True:
            now = time.monotonic()
            if kill_reason is None and now >= deadline:
                timed_out, kill_reason = True, "timeout"
            if kill_reason is not None and killed_at is None:
                killed_at = now
                with contextlib.suppress(Exception):
                    container.kill()  # SIGKILL to the container: its whole cgroup goes
            if killed_at is not None and now - killed_at > STUCK_AFTER_KILL_S:
                break
            wait = 0.25 if kill_reason is not None else max(0.01, min(0.25, deadline - now))
            try:
                item = chunks.get(timeout=wait)
            except queue.Empty:
                continue
            if item is _END:
                break
            out, err = item
            for name, data in (("stdout", out), ("stderr", err)):
                if data and kill_reason is None:
                    stop = collector.feed(name, data)  # type: ignore[arg-type]
                    if stop is not None:
                        kill_reason = stop
        done.set()
        with contextlib.suppress(Exception):
            close = getattr(stream, "close", None)
            if close is not None:
                close()
        exit_code: int | None = None
        oom_killed = False
        with contextlib.suppress(Exception):
            status = container.wait(timeout=STUCK_AFTER_KILL_S)
            exit_code = int(status.get("StatusCode"))
        with contextlib.suppress(Exception):
            container.reload()
            oom_killed = bool(container.attrs.get("State", {}).get("OOMKilled"))
        result = SandboxResult(
            self.name,
            shown,
            None if kill_reason is not None else exit_code,
            time.monotonic() - start,
            timed_out=timed_out,
        )
        collector.finish()
        collector.fill(result)
        if result.limit_hit is None:
            if oom_killed:
                result.limit_hit = "memory"
            elif exit_code == SIGXFSZ_EXIT:
                result.limit_hit = "file_size"
        return result

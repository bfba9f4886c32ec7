"""What every sandbox back end promises: run one command with only its workspace writable.

A back end (bubblewrap, docker, ...) turns a `SandboxPolicy` into isolation; the result is
always a `SandboxResult` a person can read, whatever went wrong inside. A sandboxed
program that misbehaves (hangs, forks without end, prints gigabytes) is a *result*, never
an exception: only a broken host (no bubblewrap, no docker engine) raises `SandboxUnavailable`.
"""

from __future__ import annotations

import abc
import os
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Called with every complete stdout line (decoded, without its newline) while the program
# runs. Returning a string stops the program (its whole process tree is killed) and that
# string becomes `SandboxResult.stopped` - how an agent adapter enforces a budget.
LineHook = Callable[[str], str | None]


# Where programs are found inside a sandbox when the policy does not set PATH itself.
STANDARD_PATH = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")


def sandbox_path(*first: Path | str) -> str:
    """A PATH for sandboxed programs: `first` (e.g. a pinned toolchain), the standard folders,
    then the folder of the host's `node` when it lives elsewhere (nvm, a tarball install)."""
    node = shutil.which("node")
    node_dir = str(Path(node).resolve().parent) if node else None
    dirs = [str(d) for d in first] + list(STANDARD_PATH)
    if node_dir and node_dir not in dirs:
        dirs.append(node_dir)
    return os.pathsep.join(dict.fromkeys(dirs))  # keeps order, drops repeats


# A workspace (plus an agent's HOME) may hold this much: a Vite project with node_modules
# is 100-300 MB; gigabytes are a runaway, not a game.
DEFAULT_DISK_QUOTA_MB = 1024
# ... and this many files, folders and links (inodes): a big node_modules holds ~100,000;
# 400,000 empty files cost the host inodes and every later copy minutes.
DEFAULT_DISK_QUOTA_FILES = 250_000


class SandboxUnavailable(RuntimeError):
    """The back end cannot run here (not installed, no engine); the message says how to fix it."""


@dataclass(frozen=True)
class SandboxPolicy:
    """Limits for one sandboxed command. Defaults suit a build step."""

    timeout_s: float = 300.0
    # The program always gets its own network namespace (never the host's). network=True adds
    # egress through the filtering proxy to `allowed_hosts` only (sandbox/egress.py); the host's
    # loopback and private networks stay out of reach either way.
    network: bool = False
    # Hosts the proxy lets through: "host" (ports 80, 443), "host:port", "*.domain".
    allowed_hosts: Sequence[str] = ()
    # FOR TESTS ONLY: exact "ip:port" pairs on loopback/private addresses the proxy forwards to
    # anyway (a throw-away local upstream proves an allowed request goes through without the
    # internet). Nothing in the pipeline sets it.
    test_only_local_upstreams: Sequence[str] = ()
    # Services the harness itself runs on the host for this program (the scripted model API):
    # "name:port" as the program asks for it -> the "ip:port" it really listens on. Reached
    # only by that exact name and port, whatever the allow-list; the name should be one that
    # never resolves (*.invalid), so nothing else can answer to it.
    local_services: Mapping[str, str] = field(default_factory=dict)
    memory_mb: int = 4096
    max_processes: int = 256
    max_file_mb: int = 512
    # stdout/stderr kept in the result (each); the rest is counted and dropped.
    output_cap_bytes: int = 1_000_000
    # Extra environment for the program (the sandbox starts from a clean environment).
    env: Mapping[str, str] = field(default_factory=dict)
    # Host folders the program may also read (the host is read-only anyway under bubblewrap;
    # docker mounts only the workspace plus these, read-only).
    read_only: Sequence[Path] = ()
    # Host folders besides the workspace the program may write (e.g. an agent's HOME).
    writable: Sequence[Path] = ()
    # Kill the program once one stream wrote this many bytes (None: 4x output_cap_bytes, and
    # always once stdout+stderr reach 64 MiB): output nobody keeps is a runaway, not a log.
    output_kill_bytes: int | None = None
    # CPU cores the program may use (None: no CPU limit). Docker: nano_cpus; bubblewrap: a
    # cgroup CPU quota when the host lets us create cgroups.
    cpus: float | None = None
    # Total bytes the workspace and `writable` folders may hold on disk (None: no quota).
    # Past it the run is killed and reported as limit_hit="disk" (see sandbox/disk.py).
    disk_quota_mb: int | None = field(default_factory=lambda: default_disk_quota_mb())
    # Files, folders and links the same folders may hold (inodes), with the same quota.
    disk_quota_files: int = field(default_factory=lambda: default_disk_quota_files())


def default_disk_quota_mb() -> int | None:
    """BENCH_SANDBOX_DISK_MB (0 or "none": no quota), else DEFAULT_DISK_QUOTA_MB."""
    raw = os.environ.get("BENCH_SANDBOX_DISK_MB", "").strip().lower()
    if not raw:
        return DEFAULT_DISK_QUOTA_MB
    if raw in ("0", "none", "off"):
        return None
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"BENCH_SANDBOX_DISK_MB must be a number of MiB, not {raw!r}") from None


def default_disk_quota_files() -> int:
    """BENCH_SANDBOX_DISK_FILES, else DEFAULT_DISK_QUOTA_FILES."""
    raw = os.environ.get("BENCH_SANDBOX_DISK_FILES", "").strip()
    if not raw:
        return DEFAULT_DISK_QUOTA_FILES
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(f"BENCH_SANDBOX_DISK_FILES must be a positive number, not {raw!r}")
    return value


@dataclass
class SandboxResult:
    backend: str
    argv: list[str]
    exit_code: int | None  # None: killed before it exited (timeout, hook stop, limit)
    duration_s: float
    timed_out: bool = False
    stopped: str | None = None  # the reason returned by the line hook
    # "processes" | "memory" | "file_size" | "output" | "disk", best effort
    limit_hit: str | None = None
    stdout: str = ""
    stderr: str = ""
    stdout_bytes: int = 0  # everything the program wrote, kept or not
    stderr_bytes: int = 0
    error: str | None = None  # the sandbox could not start the program (not the program's fault)
    # With network=True: the allow-list, connections made and refused (EgressProxy.report()).
    egress: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not (self.timed_out or self.stopped or self.error)

    def summary(self) -> str:
        """One line for logs and records."""
        cmd = " ".join(self.argv)[:120]
        if self.error:
            return f"{cmd}: could not run: {self.error}"
        if self.timed_out:
            return f"{cmd}: killed after the {self.duration_s:.0f} s time limit"
        if self.stopped:
            return f"{cmd}: stopped: {self.stopped}"
        tail = f" ({self.limit_hit} limit hit)" if self.limit_hit else ""
        return f"{cmd}: exit {self.exit_code} in {self.duration_s:.1f} s{tail}"

    def to_json(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "argv": self.argv,
            "exit_code": self.exit_code,
            "duration_s": round(self.duration_s, 3),
            "timed_out": self.timed_out,
            "stopped": self.stopped,
            "limit_hit": self.limit_hit,
            "stdout_bytes": self.stdout_bytes,
            "stderr_bytes": self.stderr_bytes,
            "error": self.error,
            "egress": self.egress,
            "summary": self.summary(),
        }


class Sandbox(abc.ABC):
    name: str

    @abc.abstractmethod
    def unavailable_reason(self) -> str | None:
        """None when this back end can run here, else one line saying why not and how to fix."""

    @abc.abstractmethod
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
        """Run `argv` with `workspace` (absolute, existing) as the only writable folder.

        `cwd` defaults to the workspace and must lie inside it. When `stdout_file` is
        given, every stdout line is also appended there as it arrives (a transcript),
        capped at 20x `output_cap_bytes`.
        """

    def _prepare(self, workspace: Path, cwd: Path | None) -> tuple[Path, Path]:
        """Checks every back end makes before it runs anything: the back end works here,
        the workspace exists, and the working folder lies inside it."""
        reason = self.unavailable_reason()
        if reason:
            raise SandboxUnavailable(reason)
        workspace = Path(workspace).resolve()
        if not workspace.is_dir():
            raise ValueError(f"workspace {workspace} is not an existing folder")
        run_cwd = Path(cwd).resolve() if cwd is not None else workspace
        if run_cwd != workspace and workspace not in run_cwd.parents:
            raise ValueError(f"cwd {run_cwd} is not inside the workspace {workspace}")
        return workspace, run_cwd

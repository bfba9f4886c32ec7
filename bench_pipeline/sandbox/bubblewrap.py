"""The bubblewrap back end: the host read-only, the workspace writable, nothing else.

Layers, outermost first (see docs/sandbox.md for why each one):

    sh (joins the run's cgroups, when we may create them)
      bwrap   new mount/pid/net/ipc/uts/cgroup namespaces (always its own network, even
              when the policy allows egress); / read-only, fresh /tmp, /run and
              /var/run, host sockets masked, workspace rw; dies with us, and its pid
              namespace with it
        prlimit   RLIMIT_NPROC / FSIZE / DATA / CORE, hard, for everything below
          setpriv   becomes a uid of its own for this run, no capabilities, no_new_privs
            [bridge.py   with network=True: 127.0.0.1:3128 -> the egress proxy's socket]
              the command

Running as root, we do not unshare the user namespace: the command must run as a real,
unprivileged host uid because the kernel never applies RLIMIT_NPROC to uid 0 (nor to
root mapped into a user namespace). Each run gets a uid nobody else uses, so the process
limit is the run's alone and every process of the run can be found (and killed) by uid.
The workspace is chowned to that uid for the run and back to the caller afterwards.
"""

from __future__ import annotations

import contextlib
import functools
import os
import random
import re
import shutil
import signal
import stat
import subprocess
import tempfile
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

from bench_pipeline.sandbox import fdtree
from bench_pipeline.sandbox.base import (
    STANDARD_PATH,
    LineHook,
    Sandbox,
    SandboxPolicy,
    SandboxResult,
    sandbox_path,
)
from bench_pipeline.sandbox.cgroup import CgroupSet
from bench_pipeline.sandbox.disk import DiskWatch
from bench_pipeline.sandbox.egress import EgressProxy, proxy_environment
from bench_pipeline.sandbox.process import run_process
from bench_pipeline.sandbox.processes import kill_uid, processes_of_uid
from bench_pipeline.sandbox.quota import (
    FullWatch,
    QuotaError,
    QuotaMount,
    mount_available,
    report_copy_out,
)
from bench_pipeline.sandbox.reap import etc_prefix, reap_once

MIB = 1024 * 1024
# Sandbox uids come from a range no distribution hands out (system and login users live far
# below; systemd's dynamic users are 61184-65519, container subuids usually start at 100000
# but in steps of 65536 per user and we avoid the first block).
UID_RANGE = (3_000_000, 3_900_000)
SANDBOX_USER = "sandbox"
HOME_IN_SANDBOX = "/tmp/home"
SIGXFSZ_EXIT = 128 + signal.SIGXFSZ
# bwrap itself, its pid-1 reaper and the cgroup-joining shell count against pids.max.
WRAPPER_PROCESSES = 3
# With network=True: where the egress proxy's socket and the bridge appear in the sandbox,
# and the port of the sandbox's own loopback the bridge listens on.
EGRESS_DIR_IN_SANDBOX = "/run/bench-egress"
EGRESS_PORT = 3128
BRIDGE_SCRIPT = Path(__file__).with_name("bridge.py")
# Host folders holding sockets (Postgres, MariaDB, D-Bus, Docker, systemd ...): each gets
# a fresh tmpfs in the sandbox. /tmp (X11, tmux, ...) already is one.
MASKED_FOLDERS = ("/run", "/var/run")
# More path sockets than this outside the masked folders is not a host we expect; the rest
# is still masked by the folders above, so the command line stays bounded.
MAX_SOCKET_MASKS = 512

# Best-effort signs, in a program's stderr, of a limit being hit when no cgroup counts it.
_FORK_FAILED = re.compile(
    r"fork: (retry: )?Resource temporarily unavailable|Cannot fork|"
    r"BlockingIOError: \[Errno 11\]|spawn EAGAIN|uv_thread_create|"
    r"can't fork|Resource temporarily unavailable.*(fork|clone|thread)",
    re.IGNORECASE,
)
_OUT_OF_MEMORY = re.compile(
    r"JavaScript heap out of memory|Fatal process out of memory|MemoryError|"
    r"Cannot allocate memory|std::bad_alloc|out of memory|Array buffer allocation failed",
    re.IGNORECASE,
)
_FILE_TOO_LARGE = re.compile(r"File too large|EFBIG|File size limit exceeded", re.IGNORECASE)

_uids_in_use: set[int] = set()
_uids_lock = threading.Lock()


def _allocate_uid() -> int:
    """A uid for one run: unique within this process, random across processes.

    Two pipelines drawing the same uid out of 900,000 while both run is improbable enough
    (and would only make them share one process budget); no run leaves a process behind,
    so no earlier run's uid is still in use. Scanning /proc to be sure cost more than the
    rest of the sandbox setup.
    """
    with _uids_lock:
        while True:
            uid = random.randrange(*UID_RANGE)
            if uid not in _uids_in_use:
                _uids_in_use.add(uid)
                return uid


def _release_uid(uid: int) -> None:
    with _uids_lock:
        _uids_in_use.discard(uid)


def _tasks_of_uid(uid: int) -> int:
    """Threads of the uid's processes: what RLIMIT_NPROC really counts."""
    total = 0
    for pid in processes_of_uid(uid):
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        threads = [line.split()[1] for line in status.splitlines() if line.startswith("Threads:")]
        total += int(threads[0]) if threads else 1
    return total


def _chown_tree(root: Path, uid: int, gid: int) -> None:
    """lchown everything under root: never follows a symlink the sandbox may have planted,
    at any depth or path length (sandbox/fdtree.py); an entry that fails does not stop the
    others."""
    if root.is_dir() and not root.is_symlink():
        fdtree.chown_tree(root, uid, gid, errors=[])


def _ancestors(path: Path) -> list[Path]:
    return list(reversed(path.parents))[1:]  # without "/"


def _under(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


@functools.cache
def _probe(bwrap: str) -> str | None:
    """Run `true` once in the real setup; None when it works, else why not."""
    argv = [
        bwrap,
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--proc", "/proc",
        "--tmpfs", "/tmp",
        *((*_NAMESPACES_ROOT, "--unshare-net") if os.geteuid() == 0 else ("--unshare-all",)),
        "--die-with-parent",
        "--new-session",
        "true",
    ]  # fmt: skip
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap does not run here: {exc}"
    if done.returncode != 0:
        detail = done.stderr.strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        return (
            f"bubblewrap cannot create its namespaces here ({detail[0]}); allow user namespaces "
            "(sysctl kernel.unprivileged_userns_clone=1) or run as root, or use docker"
        )
    return None


# --unshare-all minus the user namespace (see the module docstring).
_NAMESPACES_ROOT = (
    "--unshare-ipc",
    "--unshare-pid",
    "--unshare-uts",
    "--unshare-cgroup-try",
)


class BubblewrapSandbox(Sandbox):
    name = "bubblewrap"

    def __init__(self, *, bwrap: str | None = None, use_cgroups: bool = True) -> None:
        self.bwrap = bwrap or shutil.which("bwrap") or "bwrap"
        self.use_cgroups = use_cgroups
        # Root runs the command as a throw-away uid; anyone else runs it as themselves
        # inside a user namespace (bwrap's unprivileged mode).
        self.as_root = os.geteuid() == 0

    def unavailable_reason(self) -> str | None:
        if shutil.which(self.bwrap) is None:
            return "bubblewrap not found: apt-get install bubblewrap"
        if shutil.which("prlimit") is None:
            return "prlimit not found: apt-get install util-linux"
        if self.as_root and shutil.which("setpriv") is None:
            return "setpriv not found: apt-get install util-linux"
        return _probe(shutil.which(self.bwrap) or self.bwrap)

    # ---------------------------------------------------------------- the command line

    def command(
        self,
        argv: Sequence[str],
        workspace: Path,
        policy: SandboxPolicy,
        *,
        cwd: Path,
        uid: int | None,
        etc_dir: Path | None,
        egress_dir: Path | None = None,
    ) -> list[str]:
        """The full bwrap command line for one run (public for tests and debugging).

        `egress_dir` holds the egress proxy's `proxy.sock` and a copy of `bridge.py` when the
        policy allows the network."""
        cmd = [self.bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        # /tmp is a fresh tmpfs (sticky, world-writable like a real /tmp) bounded in size:
        # without a cgroup it is the only thing that stops /tmp from eating the host's RAM.
        cmd += ["--size", str(policy.memory_mb * MIB), "--perms", "1777", "--tmpfs", "/tmp"]
        for folder in MASKED_FOLDERS:
            # /var/run is usually a symlink to /run: masking /run covers it.
            if os.path.isdir(folder) and not os.path.islink(folder):
                cmd += ["--size", str(MIB), "--perms", "0755", "--tmpfs", folder]
        made: set[Path] = set()
        binds = [(Path(p), "--ro-bind") for p in policy.read_only]
        binds += [(Path(p), "--bind") for p in [workspace, *policy.writable]]
        # Shallowest first: a folder nested in another one is mounted on top of it, so a
        # read-only folder inside the workspace stays read-only (and the other way round).
        for path, how in sorted(binds, key=lambda bind: len(bind[0].parts)):
            cmd += [*self._mkdirs_in_tmp(path, made), how, str(path), str(path)]
        if etc_dir is not None:
            for name in ("passwd", "group"):
                cmd += ["--ro-bind", str(etc_dir / name), f"/etc/{name}"]
        env = self.environment(policy, uid, egress=egress_dir is not None)
        if env["HOME"] == HOME_IN_SANDBOX:
            cmd += ["--perms", "0777", "--dir", HOME_IN_SANDBOX]
        cmd += _socket_masks([workspace, *policy.writable, *policy.read_only])
        if egress_dir is not None:
            cmd += [
                # bwrap would create the folder 0700, closed to the sandbox uid.
                "--perms", "0755", "--dir", EGRESS_DIR_IN_SANDBOX,
                "--bind", str(egress_dir / "proxy.sock"), f"{EGRESS_DIR_IN_SANDBOX}/proxy.sock",
                "--ro-bind", str(egress_dir / "bridge.py"), f"{EGRESS_DIR_IN_SANDBOX}/bridge.py",
            ]  # fmt: skip
        # Always a network namespace of its own, egress or not: the host's loopback services
        # (Postgres, Redis, the Dagster UI) and its abstract Unix sockets live in the host's.
        cmd += [*_NAMESPACES_ROOT, "--unshare-net"] if self.as_root else ["--unshare-all"]
        cmd += ["--die-with-parent", "--new-session", "--clearenv"]
        for key, value in env.items():
            cmd += ["--setenv", key, value]
        cmd += ["--chdir", str(cwd), "--"]
        cmd += self._limits(policy, uid)
        if uid is not None:
            cmd += [
                "setpriv",
                f"--reuid={uid}",
                f"--regid={uid}",
                "--clear-groups",
                "--nnp",  # setuid binaries on the host cannot give privileges back
                "--inh-caps=-all",
                "--bounding-set=-all",
                "--",
            ]
        if egress_dir is not None:
            # Runs as the sandbox uid like the command: it holds no privilege worth taking.
            cmd += [
                _bridge_python() or "python3", "-I", "-S", f"{EGRESS_DIR_IN_SANDBOX}/bridge.py",
                str(EGRESS_PORT), f"{EGRESS_DIR_IN_SANDBOX}/proxy.sock", "--",
            ]  # fmt: skip
        return cmd + list(argv)

    @staticmethod
    def _mkdirs_in_tmp(path: Path, made: set[Path]) -> list[str]:
        """Parents of a bind target that lie in the sandbox's fresh /tmp must be created, and
        traversable by the sandbox uid (pytest's /tmp/pytest-of-root is 0700 on the host)."""
        args: list[str] = []
        if not _under(path, Path("/tmp")):
            return args
        for parent in _ancestors(path):
            if parent != Path("/tmp") and _under(parent, Path("/tmp")) and parent not in made:
                made.add(parent)
                args += ["--perms", "0755", "--dir", str(parent)]
        return args

    @staticmethod
    def _limits(policy: SandboxPolicy, uid: int | None) -> list[str]:
        # RLIMIT_NPROC counts every process of the uid: our throw-away uid has none besides
        # the run's, but a non-root caller's own processes (its desktop, its shells) count
        # too, so they are added on top.
        nproc = policy.max_processes
        if uid is None:
            nproc += _tasks_of_uid(os.getuid())
        # RLIMIT_DATA, not RLIMIT_AS: V8 reserves far more address space than it uses and
        # node does not even start under a 512 MB AS limit, while DATA counts only memory a
        # process can actually write to (heap, anonymous mappings).
        return [
            "prlimit",
            f"--nproc={nproc}",
            f"--fsize={_file_limit_bytes(policy)}",
            f"--data={policy.memory_mb * MIB}",
            "--core=0",
            "--",
        ]

    @staticmethod
    def environment(
        policy: SandboxPolicy, uid: int | None, *, egress: bool = False
    ) -> dict[str, str]:
        env = {
            "PATH": sandbox_path(),
            "HOME": HOME_IN_SANDBOX,
            "LANG": "C.UTF-8",
            "TMPDIR": "/tmp",
        }
        if uid is not None:
            env |= {"USER": SANDBOX_USER, "LOGNAME": SANDBOX_USER}
        env |= dict(policy.env)
        if egress:
            env |= proxy_environment(f"http://127.0.0.1:{EGRESS_PORT}")
        return env

    # ---------------------------------------------------------------- running

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
        policy = _resolved(policy)
        writable = [workspace, *policy.writable]
        blocked = self._unreachable(writable + list(policy.read_only)) if self.as_root else None
        if blocked:
            return SandboxResult(self.name, list(argv), None, 0.0, error=blocked)

        if self.as_root:
            reap_once()  # what a killed pipeline left behind (sandbox/reap.py)
        uid = _allocate_uid() if self.as_root else None
        owner = (os.getuid(), os.getgid())
        quota = policy.disk_quota_mb
        # The kernel keeps the quota (a tmpfs per run, sandbox/quota.py) whenever we may
        # mount; the watchdog (sandbox/disk.py) is the fallback without root.
        kernel_quota = bool(quota) and uid is not None and mount_available()
        cgroups = CgroupSet.create(
            max_processes=policy.max_processes + WRAPPER_PROCESSES,
            # The quota's tmpfs pages are charged to the run's memory cgroup too: what it
            # holds on disk and in memory together stays under memory_mb (docs/sandbox.md).
            memory_bytes=policy.memory_mb * MIB,
            cpus=policy.cpus,
            enabled=self.use_cgroups and self.as_root,
        )
        # Named after its owner and uid before anything carries that uid (sandbox/reap.py).
        etc_dir = Path(tempfile.mkdtemp(prefix=etc_prefix(uid))) if uid is not None else None
        proxy: EgressProxy | None = None
        # The proxy's socket and the bridge live in the run's root-only /etc folder (the
        # crash reaper removes it), or in a folder of their own without one.
        egress_dir: Path | None = None
        mount: QuotaMount | None = None
        chowned = False
        try:
            if policy.network:
                egress_dir = etc_dir or Path(tempfile.mkdtemp(prefix="bench-egress-"))
                proxy, problem = _start_egress(policy, egress_dir)
                if problem:
                    return SandboxResult(self.name, list(argv), None, 0.0, error=problem)
            if uid is not None:
                assert etc_dir is not None
                _write_etc(etc_dir, uid)
                if kernel_quota:
                    assert quota
                    mount = QuotaMount(
                        writable,
                        quota * MIB,
                        policy.disk_quota_files,
                        inside=(uid, uid),
                        outside=owner,
                        uid_tag=uid,
                    )
                    try:
                        mount.__enter__()
                    except (QuotaError, OSError) as exc:
                        mount = None
                        return SandboxResult(
                            self.name, list(argv), None, 0.0, limit_hit="disk",
                            error=f"sandbox: {exc}",
                        )  # fmt: skip
                else:
                    chowned = True
                    for folder in writable:
                        _chown_tree(folder, uid, uid)

            def sweep() -> None:
                # The pid namespace dies with bwrap; this reaches anything that would not.
                if cgroups.active:
                    cgroups.kill_all(wait_s=0.5)
                elif uid is not None:
                    kill_uid(uid, wait_s=0.5)

            cmd = cgroups.join_command() + self.command(
                argv,
                workspace,
                policy,
                cwd=run_cwd,
                uid=uid,
                etc_dir=etc_dir,
                egress_dir=egress_dir,
            )
            watch: DiskWatch | FullWatch | None = None
            if mount is not None:
                watch = FullWatch(mount, stop=sweep)
            elif quota:
                watch = DiskWatch(
                    writable, quota * MIB, stop=sweep, max_entries=policy.disk_quota_files
                )
            with watch if watch is not None else contextlib.nullcontext():
                result = run_process(
                    cmd,
                    backend=self.name,
                    policy=policy,
                    env={"PATH": os.environ.get("PATH", sandbox_path()), "LANG": "C.UTF-8"},
                    on_stdout_line=on_stdout_line,
                    stdout_file=stdout_file,
                    display_argv=argv,
                    extra_kill=sweep,
                )
            if watch is not None and watch.tripped:
                # Whatever the program did after the kill (SIGXFSZ, ENOSPC messages), the
                # disk quota is why it stopped.
                message = mount.message() if mount is not None else watch.message()  # type: ignore[union-attr]
                result.limit_hit, result.exit_code = "disk", None
                result.stderr = f"{result.stderr}\nsandbox: {message}".lstrip("\n")
            # Nothing of the run may outlive it (and nothing may still write while we hand the
            # files back): by cgroup (which a process cannot leave: its files are root's and
            # /sys is read-only), and by uid, which no detaching trick changes either. Waiting
            # on the uid also waits for the run's zombies: bwrap returns as soon as the command
            # ends, while its pid namespace is still being torn down.
            survivors = cgroups.active and not cgroups.kill_all()
            if uid is not None:
                survivors = not kill_uid(uid) or survivors
            if survivors and result.error is None:
                result.error = "some sandboxed processes could not be killed"
            if mount is not None:
                done, mount = mount, None
                done.__exit__(None, None, None)
                report_copy_out(result, done)
            result.limit_hit = result.limit_hit or self._limit_hit(result, cgroups)
            if result.exit_code == 125 and "sandbox: cannot join cgroup" in result.stderr:
                result.error = "could not move the command into its cgroup"
            if proxy is not None:
                proxy.close()
                result.egress = proxy.report()
            return result
        finally:
            if proxy is not None:
                proxy.close()
            if mount is not None:  # an exception mid-run: the files still come back out
                with contextlib.suppress(Exception):
                    if uid is not None:
                        kill_uid(uid)
                    mount.__exit__(None, None, None)
            if egress_dir is not None and egress_dir != etc_dir:
                shutil.rmtree(egress_dir, ignore_errors=True)
            cgroups.remove()
            if uid is not None:
                if chowned:
                    for folder in writable:
                        _chown_tree(folder, *owner)
                _release_uid(uid)
            if etc_dir is not None:
                shutil.rmtree(etc_dir, ignore_errors=True)

    @staticmethod
    def _limit_hit(result: SandboxResult, cgroups: CgroupSet) -> str | None:
        counted = cgroups.limit_hit()
        if counted:
            return counted
        if result.exit_code == SIGXFSZ_EXIT or _FILE_TOO_LARGE.search(result.stderr):
            return "file_size"
        if _OUT_OF_MEMORY.search(result.stderr):
            return "memory"
        if _FORK_FAILED.search(result.stderr):
            return "processes"
        return None

    @staticmethod
    def _unreachable(paths: Iterable[Path]) -> str | None:
        """The sandbox uid must be able to walk down to every folder it is given.

        Parents inside /tmp are recreated traversable in the sandbox; others are the host's
        own and cannot be changed from inside (/root is 0700).
        """
        for path in paths:
            for parent in _ancestors(Path(path)):
                if _under(parent, Path("/tmp")):
                    break
                try:
                    mode = parent.stat().st_mode
                except OSError:
                    continue
                if not mode & 0o001:
                    return (
                        f"the sandbox user cannot enter {parent} (mode {mode & 0o777:o}), a "
                        f"parent of {path}: keep workspaces under a world-traversable folder"
                    )
        return None


def _file_limit_bytes(policy: SandboxPolicy) -> int:
    """RLIMIT_FSIZE: no single file may outgrow the disk quota either, so a quota overrun
    is bounded by what can be written between two polls of the disk watch."""
    limit = policy.max_file_mb * MIB
    if policy.disk_quota_mb:
        limit = min(limit, policy.disk_quota_mb * MIB)
    return limit


def _resolved(policy: SandboxPolicy) -> SandboxPolicy:
    """The policy with absolute, symlink-free paths (bind mounts need real paths)."""
    from dataclasses import replace

    return replace(
        policy,
        read_only=tuple(Path(p).resolve() for p in policy.read_only),
        writable=tuple(Path(p).resolve() for p in policy.writable),
    )


def _bridge_python() -> str | None:
    """The host's python3 from the standard folders: visible in the sandbox (the venv's may
    live under a folder the sandbox uid cannot enter, e.g. /root/.pyenv)."""
    return shutil.which("python3", path=os.pathsep.join(STANDARD_PATH))


def _start_egress(policy: SandboxPolicy, folder: Path) -> tuple[EgressProxy | None, str | None]:
    """The run's egress proxy, listening in `folder` (root-only: no other host user reaches
    the socket) next to a copy of the bridge: (proxy, None), or (None, why not)."""
    if _bridge_python() is None:
        return None, "network needs python3 in /usr/bin (the sandbox's egress bridge)"
    try:
        proxy = EgressProxy(
            policy.allowed_hosts,
            test_only_local_upstreams=policy.test_only_local_upstreams,
            local_services=policy.local_services,
        )
    except ValueError as exc:
        return None, str(exc)
    try:
        shutil.copyfile(BRIDGE_SCRIPT, folder / "bridge.py")
        (folder / "bridge.py").chmod(0o644)
        proxy.start(folder / "proxy.sock")
    except OSError as exc:
        return None, f"could not start the egress proxy: {exc}"
    return proxy, None


def _host_sockets() -> list[str]:
    """Paths of the host's bound Unix sockets (this network namespace's /proc/net/unix)."""
    try:
        lines = Path("/proc/net/unix").read_text(errors="replace").splitlines()[1:]
    except OSError:
        return []
    paths = []
    for line in lines:
        fields = line.split(maxsplit=7)
        if len(fields) == 8 and fields[7].startswith("/"):
            paths.append(fields[7])
    return sorted(set(paths))


def _socket_masks(bound: Sequence[Path]) -> list[str]:
    """bwrap arguments putting /dev/null over every host socket the sandbox would still see.

    /run, /var/run and /tmp are fresh tmpfs inside, so only sockets elsewhere (a MariaDB
    socket under /var/lib, one in /work), or under /tmp inside a folder bound back in, are
    left; /dev/null over one makes connect() fail (ECONNREFUSED). Only sockets that exist now
    are known: a socket created later elsewhere than those folders is not masked.
    """
    tmpfs = [Path("/tmp"), *(Path(f).resolve() for f in MASKED_FOLDERS)]
    args: list[str] = []
    for raw in _host_sockets():
        try:
            path = Path(os.path.realpath(raw))
            if not stat.S_ISSOCK(path.lstat().st_mode):
                continue
        except OSError:
            continue  # deleted since it was bound
        hidden = any(_under(path, folder) for folder in tmpfs)
        if hidden and not any(_under(path, Path(b)) for b in bound):
            continue
        args += ["--ro-bind", "/dev/null", str(path)]
        if len(args) >= 3 * MAX_SOCKET_MASKS:
            break
    return args


def _write_etc(etc_dir: Path, uid: int) -> None:
    """passwd/group that know the sandbox uid: node's os.userInfo() (used by some npm
    packages) throws when the current uid has no passwd entry."""
    (etc_dir / "passwd").write_text(
        "root:x:0:0:root:/root:/usr/sbin/nologin\n"
        f"{SANDBOX_USER}:x:{uid}:{uid}:sandbox:{HOME_IN_SANDBOX}:/bin/sh\n"
        "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
    )
    (etc_dir / "group").write_text(f"root:x:0:\n{SANDBOX_USER}:x:{uid}:\nnogroup:x:65534:\n")
    for name in ("passwd", "group"):
        (etc_dir / name).chmod(0o644)

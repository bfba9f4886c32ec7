"""What a killed pipeline leaves behind, and taking it back on the next start.

A sandboxed run cleans up in `finally`: its cgroups, its generated /etc folder, and the
workspace handed back to the caller's uid. SIGKILL (OOM killer, a closed terminal, a
crashed worker) skips all of that. `reap_stale()` finds it again and undoes it:

- cgroups named `bench-sandbox-<pid>-<start>-...` whose owner is gone: their processes are
  killed and the folders removed;
- `bench-sandbox-etc-<pid>-<start>-<uid>-...` folders in the temp dir whose owner is gone;
- processes running as a sandbox uid (UID_RANGE) that no live run claims: killed;
- files under the given roots (workspaces, the artifact store) still owned by a sandbox
  uid that no live run claims: lchowned back to the caller, never following a link.

"Owner" is the pipeline process that made them, named by pid *and* start time (field 22 of
/proc/<pid>/stat), so a recycled pid is not mistaken for the owner. A second pipeline
running at the same time is therefore left alone: its folders name a live owner, and its
uid is named by its live /etc folder, which exists before any of its processes or files
carry that uid (see the ordering note in `_restore_ownership`).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from bench_pipeline.sandbox import fdtree, processes, quota
from bench_pipeline.sandbox.cgroup import CONTROLLERS, CgroupSet, _v1_mounts
from bench_pipeline.sandbox.processes import kill_uid, start_time

# bubblewrap.UID_RANGE (kept equal by tests/sandbox/test_reap.py; bubblewrap imports us).
UID_RANGE = (3_000_000, 3_900_000)
ETC_PREFIX = "bench-sandbox-etc-"
# New names: bench-sandbox-<pid>-<start>-<n>-<ns>; older ones: bench-sandbox-<pid>-<n>-<ns>.
_CGROUP_NAME = re.compile(r"^bench-sandbox-(\d+)-(\d+)-(\d+)(?:-(\d+))?$")
_ETC_NAME = re.compile(r"^bench-sandbox-etc-(\d+)-(\d+)-(\d+)-")
# Stale cgroups sit inside the cgroup the pipeline was in, a few levels below the mount.
CGROUP_SEARCH_DEPTH = 8


def etc_prefix(uid: int) -> str:
    """mkdtemp prefix of a run's generated /etc folder: owner and uid in the name."""
    return f"{ETC_PREFIX}{processes.owner_tag()}-{uid}-"


def owner_alive(pid: int, started: int | None) -> bool:
    """True when `pid` runs and (if known) started at `started`."""
    now = start_time(pid)
    return now is not None and (started is None or started == now)


def in_sandbox_range(uid: int) -> bool:
    return UID_RANGE[0] <= uid < UID_RANGE[1]


def _uid_of(pid: str) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("Uid:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def sandbox_processes() -> dict[int, list[int]]:
    """uid -> pids, for every process running as a sandbox uid."""
    found: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            uid = _uid_of(name)
            if uid is not None and in_sandbox_range(uid):
                found.setdefault(uid, []).append(int(name))
    return found


@dataclass
class EtcFolder:
    path: Path
    uid: int | None
    live: bool


def etc_folders(temp_dir: Path | None = None) -> list[EtcFolder]:
    """Every run's generated /etc folder in the temp dir, and whether its owner lives."""
    root = Path(temp_dir or tempfile.gettempdir())
    running = sandbox_processes()
    found = []
    try:
        entries = list(root.iterdir())
    except OSError:
        return []
    for path in entries:
        if not path.name.startswith(ETC_PREFIX) or path.is_symlink() or not path.is_dir():
            continue
        match = _ETC_NAME.match(path.name)
        if match:
            pid, started, uid = (int(g) for g in match.groups())
            found.append(EtcFolder(path, uid, owner_alive(pid, started)))
        else:
            # Made before owners were named: live while a process of its uid runs.
            legacy_uid = _passwd_uid(path / "passwd")
            found.append(EtcFolder(path, legacy_uid, legacy_uid in running))
    return found


def _passwd_uid(passwd: Path) -> int | None:
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in passwd.read_text().splitlines():
            fields = line.split(":")
            if len(fields) > 2 and in_sandbox_range(int(fields[2])):
                return int(fields[2])
    return None


def live_uids(temp_dir: Path | None = None) -> set[int]:
    return {f.uid for f in etc_folders(temp_dir) if f.live and f.uid is not None}


def stale_cgroups() -> dict[str, dict[str, Path]]:
    """name -> {controller: folder} for our cgroups whose owner is gone."""
    stale: dict[str, dict[str, Path]] = {}
    for controller, (mount, _root) in _v1_mounts().items():
        if controller not in CONTROLLERS:
            continue
        base_depth = len(mount.parts)
        for dirpath, dirnames, _files in os.walk(mount):
            here = Path(dirpath)
            if len(here.parts) - base_depth >= CGROUP_SEARCH_DEPTH:
                dirnames[:] = []
            keep = []
            for name in dirnames:
                match = _CGROUP_NAME.match(name)
                if match is None:
                    keep.append(name)
                    continue
                pid = int(match.group(1))
                started = int(match.group(2)) if match.group(4) is not None else None
                if not owner_alive(pid, started):
                    stale.setdefault(name, {})[controller] = here / name
            dirnames[:] = keep  # never descend into a run's own cgroup
    return stale


@dataclass
class ReapReport:
    cgroups: list[str] = field(default_factory=list)
    etc_folders: list[str] = field(default_factory=list)
    killed: dict[int, int] = field(default_factory=dict)  # uid -> processes killed
    chowned: int = 0
    mounts: list[str] = field(default_factory=list)  # quota filesystems copied out, unmounted
    errors: list[str] = field(default_factory=list)

    @property
    def anything(self) -> bool:
        return bool(
            self.cgroups
            or self.etc_folders
            or self.killed
            or self.chowned
            or self.mounts
            or self.errors
        )

    def summary(self) -> str:
        parts = []
        if self.cgroups:
            parts.append(f"{len(self.cgroups)} stale sandbox cgroup(s) removed")
        if self.etc_folders:
            parts.append(f"{len(self.etc_folders)} stale sandbox /etc folder(s) removed")
        if self.killed:
            parts.append(f"{sum(self.killed.values())} orphaned sandbox process(es) killed")
        if self.mounts:
            parts.append(f"{len(self.mounts)} stale disk quota mount(s) copied out and removed")
        if self.chowned:
            parts.append(f"{self.chowned} file(s) given back from sandbox uids")
        parts += [f"could not clean up: {e}" for e in self.errors]
        return "; ".join(parts) or "nothing left over by earlier sandbox runs"


def reap_stale(roots: Iterable[Path] = (), temp_dir: Path | None = None) -> ReapReport:
    """Undo what killed pipelines left (see the module docstring). Needs root; a no-op else."""
    report = ReapReport()
    if os.geteuid() != 0:
        return report
    for name, dirs in stale_cgroups().items():
        cgroups = CgroupSet(dirs=dict(dirs))
        cgroups.remove()
        if any(d.exists() for d in dirs.values()):
            report.errors.append(f"cgroup {name} still has processes")
        else:
            report.cgroups.append(name)
    for folder in etc_folders(temp_dir):
        if not folder.live:
            shutil.rmtree(folder.path, ignore_errors=True)
            report.etc_folders.append(folder.path.name)
    _kill_orphans(report, temp_dir)
    # A killed run's quota filesystem: its files are copied back out (owned by us, bounded
    # like the end of a run) before anything walks the folders it covered.
    mounts, problems = quota.reap_mounts(owner_alive)
    report.mounts += mounts
    report.errors += problems
    _restore_ownership(roots, report, temp_dir)
    return report


def _kill_orphans(report: ReapReport, temp_dir: Path | None) -> None:
    running = sandbox_processes()
    if not running:
        return
    live = live_uids(temp_dir)  # read after the scan: a run starting now is already named
    for uid, pids in running.items():
        if uid in live:
            continue
        if kill_uid(uid):
            report.killed[uid] = len(pids)
        else:
            report.errors.append(f"processes of uid {uid} survived SIGKILL")


def _restore_ownership(roots: Iterable[Path], report: ReapReport, temp_dir: Path | None) -> None:
    """lchown back to us every file under `roots` owned by a sandbox uid no live run claims.

    Order matters with a second pipeline running: we walk first and read the live uids
    after. A live run names its uid (its /etc folder) before it chowns anything, so any file
    the walk found owned by a live run's uid was chowned after that name existed, and the
    later read sees it. The second walk changes only files of the uids the first one found
    (a run starting in between is not among them).

    Both walks are relative to directory descriptors and iterative (sandbox/fdtree.py): no
    depth or path length stops them, and one file that cannot be changed is reported with
    its run and does not stop the others.
    """
    roots = [Path(r) for r in roots if Path(r).is_dir() and not Path(r).is_symlink()]
    found: set[int] = set()

    def survey(_fds: list[int], _name: str, info: os.stat_result, _depth: int) -> bool:
        for owner in (info.st_uid, info.st_gid):
            if in_sandbox_range(owner):
                found.add(owner)
        return True

    for root in roots:
        with contextlib.suppress(OSError), fdtree.open_dir(root) as fd:
            survey([fd], "", os.fstat(fd), 0)
            fdtree.walk([fd], survey, errors=[])
    if not found:
        return
    stale = found - live_uids(temp_dir)
    if not stale:
        return
    for root in roots:
        _give_back(root, stale, report)


def _give_back(root: Path, stale: set[int], report: ReapReport) -> None:
    """lchown to us what under `root` belongs to a `stale` uid; failures name their run."""
    me, my_group = os.getuid(), os.getgid()
    parts: list[str] = []

    def visit(fds: list[int], name: str, info: os.stat_result, depth: int) -> bool:
        del parts[depth - 1 :]
        parts.append(name)
        if info.st_uid in stale or info.st_gid in stale:
            try:
                # The kernel drops set-uid/set-gid bits of a regular file on chown.
                os.chown(name, me, my_group, dir_fd=fds[0], follow_symlinks=False)
                report.chowned += 1
            except FileNotFoundError:
                pass
            except OSError as exc:
                report.errors.append(_naming_the_run(root, parts, exc))
        return True

    errors: list[str] = []
    try:
        with fdtree.open_dir(root) as fd:
            info = os.fstat(fd)
            if info.st_uid in stale or info.st_gid in stale:
                os.fchown(fd, me, my_group)
                report.chowned += 1
            fdtree.walk([fd], visit, errors=errors)
    except OSError as exc:
        errors.append(f"{root}: {exc.strerror or exc}")
    report.errors += [f"under {root}: {e}" for e in errors[:3]]


def _naming_the_run(root: Path, parts: list[str], exc: OSError) -> str:
    """`run <id>: cannot give <path> back: <why>`, the path shortened to stay one line."""
    run = next((parts[i + 1] for i in range(len(parts) - 1) if parts[i] == "runs"), None)
    path = "/".join(parts)
    shown = path if len(path) <= 160 else f"{path[:80]}...{path[-60:]} ({len(parts)} deep)"
    prefix = f"run {run}: " if run else ""
    return f"{prefix}cannot give {root}/{shown} back: {exc.strerror or exc}"


def default_roots() -> list[Path]:
    """Where sandboxed runs write: the data folder (workspaces live in the artifact store)
    and the artifact store when it lies elsewhere."""
    from bench_pipeline import settings

    roots = [settings.data_dir()]
    artifacts = settings.artifacts_dir()
    if not any(artifacts == r or r in artifacts.parents for r in roots):
        roots.append(artifacts)
    return roots


_reaped: dict[str, ReapReport] = {}


def reap_once(roots: Iterable[Path] | None = None) -> ReapReport:
    """`reap_stale` at most once per process (the first sandboxed run, `bench run`, `bench
    ui`): later runs of this process cannot find leftovers of a *dead* owner it missed."""
    if "done" not in _reaped:
        try:
            _reaped["done"] = reap_stale(default_roots() if roots is None else roots)
        except Exception as exc:  # a failed clean-up must never stop the run that follows
            _reaped["done"] = ReapReport(errors=[f"{type(exc).__name__}: {exc}"])
    return _reaped["done"]

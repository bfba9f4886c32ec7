"""Check that a folder can hold the artifact store and the warehouse of a shared deployment.

The pipeline relies on three file-system behaviours (bench_pipeline/warehouse/artifacts.py
and writer.py): a file written to a temp name and renamed over the old one replaces it
atomically; a reader that opened the old file keeps reading it; and the warehouse builders'
file lock excludes every other process - on every machine that mounts the folder. Local disks
and NFS/EFS/Filestore (with locking enabled) behave so; S3/GCS FUSE mounts do not. Run this
with the project's Python on a worker, against the mount point, before the first sweep:

    python deploy/check_shared_volume.py /data

and, for the lock across machines, on two workers at the same time:

    worker A:  python deploy/check_shared_volume.py /data --hold 60
    worker B:  python deploy/check_shared_volume.py /data --expect-locked

Exit status: 0 every check passed; 1 one failed (the output names it and the likely cause).
It uses the project's own atomic write, lock and warehouse writer, so it checks exactly what a
run does; it leaves nothing behind but the (empty) lock file of the cross-machine check.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from filelock import FileLock, Timeout

CROSS_HOST_LOCK = ".bench-volume-check.lock"
# A uid from the range the bubblewrap sandbox gives runs (bench_pipeline/sandbox/bubblewrap.py).
SANDBOX_UID = 3_899_999

_TRY_LOCK = """
import sys
from filelock import FileLock, Timeout
try:
    FileLock(sys.argv[1]).acquire(timeout=0.5)
except Timeout:
    sys.exit(3)
sys.exit(0)
"""


# The project's modules are imported inside the checks: --hold and --expect-locked need only
# filelock, and start at once.


def check_atomic_replace(work: Path) -> str:
    from bench_pipeline.warehouse.artifacts import atomic_write_bytes

    target = work / "records" / "stage" / "run.json"
    atomic_write_bytes(target, b"old\n")
    with target.open("rb") as reader:
        atomic_write_bytes(target, b"new\n")
        # A reader that opened the old file keeps it (warehouse readers rely on this).
        if reader.read() != b"old\n":
            raise AssertionError("a reader of the replaced file saw the new content")
    if target.read_bytes() != b"new\n":
        raise AssertionError("rename did not replace the file")
    leftovers = [p.name for p in target.parent.iterdir() if p.name != target.name]
    if leftovers:
        raise AssertionError(f"temporary files left next to the record: {leftovers}")
    return "temp file + rename replaces a record; an open reader keeps the old one"


def check_lock_excludes(work: Path) -> str:
    from bench_pipeline.warehouse.writer import lock_for

    lock = lock_for(work / "warehouse.duckdb")
    with lock:
        code = subprocess.call([sys.executable, "-c", _TRY_LOCK, lock.lock_file])
    if code != 3:
        raise AssertionError("another process took the warehouse lock while it was held")
    return "the warehouse file lock excludes another process"


def check_warehouse_swap(work: Path) -> str:
    import duckdb

    from bench_pipeline.warehouse.writer import updating

    db = work / "warehouse.duckdb"
    for value in (1, 2):
        with updating(db) as con:
            con.execute(f"CREATE OR REPLACE TABLE t AS SELECT {value} AS v")
    with duckdb.connect(str(db), read_only=True) as con:
        got = con.execute("SELECT v FROM t").fetchall()
    if got != [(2,)]:
        raise AssertionError(f"the swapped-in warehouse reads {got}, expected [(2,)]")
    return "DuckDB copy-change-swap of the warehouse works"


def check_sandbox_chown(work: Path) -> str:
    if os.geteuid() != 0:
        return "skipped (not root): the sandbox chowns workspaces only when running as root"
    path = work / "workspace"
    path.mkdir()
    try:
        os.chown(path, SANDBOX_UID, SANDBOX_UID)
        os.chown(path, 0, 0)
    except PermissionError as error:
        raise AssertionError(
            f"root cannot chown here ({error}): an NFS export with root_squash? "
            "The sandbox hands each run's workspace to a uid of its own; export with "
            "no_root_squash (or the provider's equivalent) for this volume"
        ) from error
    return "root can hand a workspace to a sandbox uid (no root squashing)"


CHECKS: list[tuple[str, Callable[[Path], str]]] = [
    ("atomic replace", check_atomic_replace),
    ("file lock", check_lock_excludes),
    ("warehouse swap", check_warehouse_swap),
    ("sandbox chown", check_sandbox_chown),
]


def run_checks(root: Path) -> int:
    work = root / f".bench-volume-check-{socket.gethostname()}-{os.getpid()}"
    work.mkdir(parents=True)
    failed = 0
    try:
        for name, check in CHECKS:
            try:
                print(f"ok    {name}: {check(work)}")
            except (AssertionError, OSError) as error:
                failed += 1
                print(f"FAIL  {name}: {error}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if failed:
        print(
            f"{failed} check(s) failed: do not use {root} as the live store "
            "(docs/deploy.md, Storage)"
        )
    return 1 if failed else 0


def hold(root: Path, seconds: float) -> int:
    lock = FileLock(str(root / CROSS_HOST_LOCK))
    with lock:
        print(f"holding {lock.lock_file} for {seconds:.0f} s: run --expect-locked elsewhere")
        sys.stdout.flush()
        time.sleep(seconds)
    return 0


def expect_locked(root: Path) -> int:
    try:
        FileLock(str(root / CROSS_HOST_LOCK)).acquire(timeout=2)
    except Timeout:
        print("ok    the lock held by the other worker excluded this one")
        return 0
    print(
        "FAIL  got the check lock: either no worker holds it right now (start --hold on "
        "another machine first) or locks do not cross machines on this mount (NFS mounted "
        "with `nolock`/`local_lock`? a FUSE object-store mount?)"
    )
    return 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path, help="the mount point, e.g. /data")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--hold", type=float, metavar="SECONDS", help="hold the check lock")
    mode.add_argument(
        "--expect-locked", action="store_true", help="succeed only if another holder excludes us"
    )
    args = parser.parse_args(argv)
    if not args.root.is_dir():
        print(f"{args.root} is not a folder", file=sys.stderr)
        return 2
    if args.hold is not None:
        return hold(args.root, args.hold)
    if args.expect_locked:
        return expect_locked(args.root)
    return run_checks(args.root)


if __name__ == "__main__":
    sys.exit(main())

"""The storage helpers of deploy/: the shared-volume check (run for real, on a local folder)
and the object-storage mirror (run for real against stand-in `aws`/`rclone` commands that
record what they are asked to do - no bucket is reachable from here)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from bench_pipeline.warehouse.artifacts import ArtifactStore
from tests.deploy.conftest import DEPLOY

CHECK = DEPLOY / "check_shared_volume.py"
MIRROR = DEPLOY / "mirror_store.sh"


def _check(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(CHECK), *args], capture_output=True, text=True, timeout=120
    )


@pytest.mark.slow
def test_shared_volume_check_passes_on_a_local_folder(tmp_path: Path) -> None:
    result = _check(str(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    for name in ("atomic replace", "file lock", "warehouse swap", "sandbox chown"):
        assert f"ok    {name}:" in result.stdout
    assert list(tmp_path.iterdir()) == []  # nothing left behind


@pytest.mark.slow
def test_shared_volume_lock_check_across_two_processes(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, str(CHECK), str(tmp_path), "--hold", "30"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert "holding" in holder.stdout.readline()  # the lock is taken
        assert _check(str(tmp_path), "--expect-locked").returncode == 0
    finally:
        holder.terminate()
        holder.wait(timeout=30)
    # Nobody holds it any more: the check must say it got the lock.
    alone = _check(str(tmp_path), "--expect-locked")
    assert alone.returncode == 1 and "FAIL" in alone.stdout


FAKE_CLI = """#!/bin/sh
# Stand-in for {name}: records its arguments; `cp`/`copyto` keep a copy of the uploaded file.
printf '%s\\n' "$*" >> "{log}"
case "$1 $2" in
  "s3 cp"|"copyto "*) cp "$([ "$1" = s3 ] && echo "$3" || echo "$2")" "{uploads}/$(date +%s%N)" ;;
esac
"""


def _fake_cli(bin_dir: Path, name: str, log: Path, uploads: Path) -> None:
    path = bin_dir / name
    path.write_text(FAKE_CLI.format(name=name, log=log, uploads=uploads))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def store_with_a_run(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    store = ArtifactStore(data / "artifacts")
    store.write_record("run_spec", "demo.c1.r1", {"cell_id": "c1"})
    (store.run_dir("demo.c1.r1", "sandboxed_build") / "workspace/node_modules").mkdir(parents=True)
    (data / "warehouse.duckdb").write_bytes(b"warehouse v1")
    return data


@pytest.mark.parametrize(
    ("dest", "tool"), [("s3://bucket/bench", "aws"), ("remote:bucket/bench", "rclone")]
)
def test_mirror_uploads_the_store_and_a_warehouse_snapshot(
    store_with_a_run: Path, tmp_path: Path, dest: str, tool: str
) -> None:
    bin_dir, uploads, log = tmp_path / "bin", tmp_path / "uploads", tmp_path / "calls.log"
    bin_dir.mkdir()
    uploads.mkdir()
    _fake_cli(bin_dir, tool, log, uploads)
    result = subprocess.run(
        ["sh", str(MIRROR), dest],
        env={
            **os.environ,
            "PATH": f"{bin_dir}:{os.environ['PATH']}",
            "BENCH_DATA_DIR": str(store_with_a_run),
        },
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    calls = log.read_text().splitlines()
    sync = calls[0]
    assert f"{store_with_a_run}/artifacts {dest}/artifacts" in sync
    # Temp files of writes in progress, warehouse build copies/locks and node_modules stay out.
    for pattern in ("*.tmp", "*.building-*", "*.lock", "node_modules"):
        assert pattern in sync, pattern
    if tool == "rclone":
        assert sync.startswith("copy ")  # never `sync`: it would delete in the bucket
    else:
        assert sync.startswith("s3 sync ") and "--delete" not in sync
    # The warehouse goes up as a snapshot copied first (a stamped one and the latest).
    assert len(calls) == 3
    targets = [next(t for t in call.split() if t.startswith(dest)) for call in calls[1:]]
    assert targets[0].startswith(f"{dest}/warehouse/warehouse-")
    assert targets[1] == f"{dest}/warehouse/warehouse.duckdb"
    source = calls[1].split()[2 if tool == "aws" else 1]
    assert not source.startswith(str(store_with_a_run))  # a copy, not the live file
    assert [p.read_bytes() for p in uploads.iterdir()] == [b"warehouse v1"] * 2


def test_mirror_refuses_an_unknown_destination_or_a_missing_store(tmp_path: Path) -> None:
    env = {**os.environ, "BENCH_DATA_DIR": str(tmp_path)}
    missing = subprocess.run(["sh", str(MIRROR), "s3://b/p"], env=env, capture_output=True)
    assert missing.returncode == 2
    (tmp_path / "artifacts").mkdir()
    unknown = subprocess.run(["sh", str(MIRROR), "/local/path"], env=env, capture_output=True)
    assert unknown.returncode == 2 and b"unknown destination" in unknown.stderr


def test_mirror_script_is_posix_sh() -> None:
    # It runs in slim images (rclone/rclone has no bash): `sh -n` parses it as POSIX sh.
    assert subprocess.run(["sh", "-n", str(MIRROR)]).returncode == 0
    assert MIRROR.read_text().startswith("#!/bin/sh\n")
    assert os.access(MIRROR, os.X_OK)

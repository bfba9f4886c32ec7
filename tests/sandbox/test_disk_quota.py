"""The disk quota: what counts as usage, when the watch trips, and how a real sandboxed run
that writes past it is stopped and reported."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from bench_pipeline.sandbox import SandboxPolicy, fdtree
from bench_pipeline.sandbox.base import DEFAULT_DISK_QUOTA_MB, default_disk_quota_mb
from bench_pipeline.sandbox.bubblewrap import BubblewrapSandbox
from bench_pipeline.sandbox.disk import DiskWatch, disk_usage
from bench_pipeline.sandbox.quota import mount_available
from tests.sandbox.helpers import quick

MIB = 1024 * 1024


def test_usage_counts_apparent_or_allocated_once_and_never_follows_links(tmp_path: Path) -> None:
    (tmp_path / "data").write_bytes(b"x" * (4 * MIB))
    os.link(tmp_path / "data", tmp_path / "hardlink")  # the same blocks twice
    with open(tmp_path / "sparse", "wb") as fh:
        fh.truncate(10 * MIB)  # 10 MiB apparent, nothing allocated: counted whole
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (outside / "big").write_bytes(b"y" * (8 * MIB))
    (tmp_path / "link").symlink_to(outside)
    nested = tmp_path / "a" / "b"
    nested.mkdir(parents=True)
    subprocess.run(["fallocate", "-l", "2M", str(nested / "reserved")], check=True)

    used = disk_usage([tmp_path])
    # 4 MiB of data + 10 MiB sparse (what any copy of it writes) + 2 MiB preallocated + a
    # few blocks of folders and the link itself.
    assert 16 * MIB <= used < 17 * MIB


def test_watch_trips_once_at_the_final_measurement(tmp_path: Path) -> None:
    stops: list[int] = []
    with DiskWatch([tmp_path], 1 * MIB, stop=lambda: stops.append(1)) as watch:
        (tmp_path / "f").write_bytes(b"z" * (2 * MIB))
    assert watch.tripped and stops == [1]
    assert watch.peak_bytes >= 2 * MIB
    assert "over the 1 MiB disk quota" in watch.message()


def test_watch_stays_quiet_under_the_quota(tmp_path: Path) -> None:
    stops: list[int] = []
    with DiskWatch([tmp_path], 8 * MIB, stop=lambda: stops.append(1)) as watch:
        (tmp_path / "f").write_bytes(b"z" * MIB)
    assert not watch.tripped and stops == []


def test_quota_default_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BENCH_SANDBOX_DISK_MB", raising=False)
    assert SandboxPolicy().disk_quota_mb == DEFAULT_DISK_QUOTA_MB == 1024
    monkeypatch.setenv("BENCH_SANDBOX_DISK_MB", "300")
    assert SandboxPolicy().disk_quota_mb == 300
    monkeypatch.setenv("BENCH_SANDBOX_DISK_MB", "none")
    assert SandboxPolicy().disk_quota_mb is None
    monkeypatch.setenv("BENCH_SANDBOX_DISK_MB", "lots")
    with pytest.raises(ValueError, match="BENCH_SANDBOX_DISK_MB must be a number of MiB"):
        default_disk_quota_mb()


def test_a_run_within_the_quota_is_untouched(bwrap: BubblewrapSandbox, workspace: Path) -> None:
    result = bwrap.run(
        ["sh", "-c", "head -c 3M /dev/zero > f && echo ok"], workspace, quick(disk_quota_mb=8)
    )
    assert result.ok and result.limit_hit is None, result.summary()
    assert (workspace / "f").stat().st_size == 3 * MIB


def test_many_small_files_past_the_quota_stop_the_run(
    bwrap: BubblewrapSandbox, workspace: Path
) -> None:
    # Each file is far below the per-file limit: only the total can stop this.
    script = "i=0; while :; do i=$((i+1)); head -c 1M /dev/zero > f$i || exit 3; done"
    result = bwrap.run(["sh", "-c", script], workspace, quick(disk_quota_mb=20, max_file_mb=512))
    assert result.limit_hit == "disk" and result.exit_code is None, result.summary()
    assert not result.ok
    assert "disk quota" in result.stderr
    assert "(disk limit hit)" in result.summary()
    assert disk_usage([workspace]) < 200 * MIB  # the quota plus what one poll lets through
    # The files are the caller's again, as after any run.
    assert {p.stat().st_uid for p in workspace.iterdir()} == {os.getuid()}


def test_a_single_file_cannot_outgrow_the_quota(bwrap: BubblewrapSandbox, workspace: Path) -> None:
    # RLIMIT_FSIZE is lowered to the quota: one file stops at it whatever max_file_mb says.
    result = bwrap.run(
        ["sh", "-c", "head -c 64M /dev/zero > big"],
        workspace,
        quick(disk_quota_mb=16, max_file_mb=512),
    )
    assert result.limit_hit in ("file_size", "disk"), result.summary()
    assert (workspace / "big").stat().st_size <= 16 * MIB


def test_extra_writable_folders_count_against_the_quota(
    bwrap: BubblewrapSandbox, workspace: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    script = f"i=0; while :; do i=$((i+1)); head -c 1M /dev/zero > {home}/f$i || exit 3; done"
    result = bwrap.run(["sh", "-c", script], workspace, quick(disk_quota_mb=10, writable=[home]))
    assert result.limit_hit == "disk", result.summary()


def test_no_quota_when_disabled(bwrap: BubblewrapSandbox, workspace: Path) -> None:
    result = bwrap.run(
        ["sh", "-c", "for i in 1 2 3; do head -c 4M /dev/zero > f$i; done"],
        workspace,
        quick(disk_quota_mb=None),
    )
    assert result.ok and result.limit_hit is None, result.summary()
    assert disk_usage([workspace]) >= 12 * MIB


def _kernel_quota(bwrap: BubblewrapSandbox) -> None:
    if not (bwrap.as_root and mount_available()):
        pytest.skip("the kernel-kept quota needs root (a tmpfs per run)")


def test_the_kernel_keeps_the_quota_whatever_the_path_length(
    bwrap: BubblewrapSandbox, workspace: Path
) -> None:
    """17 folders of 250-character names: no path reaches the files, the kernel does."""
    _kernel_quota(bwrap)
    attack = (
        "import os\n"
        "for i in range(17):\n"
        "    n = str(i).zfill(250); os.mkdir(n); os.chdir(n)\n"
        "for i in range(3):\n"
        "    try:\n"
        "        open('f%d' % i, 'wb').write(bytes(6 << 20))\n"
        "    except OSError as e: print('refused', i, e.strerror)\n"
    )
    result = bwrap.run(["/usr/bin/python3", "-c", attack], workspace, quick(disk_quota_mb=8))
    # Refused by the kernel (ENOSPC), then stopped: whether it printed that first is a race.
    assert result.limit_hit == "disk", result.summary()
    assert "disk quota" in result.stderr
    held = fdtree.usage(workspace)
    assert held.apparent_bytes <= 8 * MIB and held.entries >= 17
    # This run's tmpfs is gone (other workers' runs may hold theirs meanwhile).
    assert str(workspace) not in Path("/proc/self/mountinfo").read_text()


def test_the_kernel_keeps_the_file_quota(bwrap: BubblewrapSandbox, workspace: Path) -> None:
    _kernel_quota(bwrap)
    script = "i=0; while [ $i -lt 2000 ]; do : > f$i || exit 3; i=$((i+1)); done"
    result = bwrap.run(["sh", "-c", script], workspace, quick(disk_quota_files=300))
    assert result.limit_hit == "disk" and "300 files" in result.stderr, result.summary()
    assert len(os.listdir(workspace)) <= 300


def test_sparse_files_count_their_full_length_on_the_way_out(
    bwrap: BubblewrapSandbox, workspace: Path
) -> None:
    """Four 6 MiB sparse files hold nothing on the tmpfs; copied out they would be 24 MiB.
    What passes the quota by apparent size stays behind, named, as a disk limit hit."""
    _kernel_quota(bwrap)
    script = "for i in 1 2 3 4; do truncate -s 6M s$i; done"
    result = bwrap.run(["sh", "-c", script], workspace, quick(disk_quota_mb=8))
    assert result.limit_hit == "disk", result.summary()
    assert "sparse files count their full length" in result.stderr
    assert fdtree.usage(workspace).apparent_bytes <= 8 * MIB


def test_the_host_folder_never_holds_a_file_of_the_sandbox_uid(
    bwrap: BubblewrapSandbox, workspace: Path
) -> None:
    """The program writes on its tmpfs; the host folder gets the caller's copies only."""
    _kernel_quota(bwrap)
    (workspace / "before.txt").write_text("kept")
    script = "echo new > new.txt; rm before.txt; mkdir -p a/b; ln -s /etc/shadow a/b/l; id -u"
    result = bwrap.run(["sh", "-c", script], workspace, quick())
    assert result.ok, result.summary()
    assert int(result.stdout) != os.getuid()  # it ran as the sandbox uid
    assert sorted(os.listdir(workspace)) == ["a", "new.txt"]  # deletions come back too
    owners = {p.lstat().st_uid for p in [workspace, *workspace.rglob("*")]}
    assert owners == {os.getuid()}
    assert os.readlink(workspace / "a" / "b" / "l") == "/etc/shadow"

"""Tree operations that what they clean cannot break: depth, path length, links, bounds."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from bench_pipeline.sandbox import fdtree

MIB = 1024 * 1024


def _chain(root: Path, name: str, depth: int, *, file_every: int = 0) -> int:
    """`depth` nested folders called `name` under root (made by descriptor); returns the
    number of entries made."""
    made = 0
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for level in range(depth):
            os.mkdir(name, dir_fd=fd)
            below = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = below
            made += 1
            if file_every and level % file_every == 0:
                os.close(os.open("f.js", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
                made += 1
    finally:
        os.close(fd)
    return made


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_a_deep_chain_is_measured_copied_chowned_and_removed(tmp_path: Path) -> None:
    """os.walk and shutil.rmtree recurse (RecursionError past ~1,000 levels); this does not,
    and holds a bounded number of descriptors whatever the depth (2,500 levels here: 2.5
    times the recursion limit; tests/hostile/test_disk_kernel_quota.py goes to 10,000)."""
    source, copy = tmp_path / "source", tmp_path / "copy"
    source.mkdir()
    copy.mkdir()
    made = _chain(source, "d", 2_500, file_every=500)
    fds_before = _open_fds()

    assert fdtree.usage(source).entries == made
    with fdtree.open_dir(source) as src, fdtree.open_dir(copy) as dst:
        report = fdtree.copy_tree(src, dst, fdtree.CopyLimits())
    assert report.entries == made and not report.errors and report.limit is None
    assert fdtree.usage(copy).entries == made
    if os.geteuid() == 0:
        errors: list[str] = []
        assert fdtree.chown_tree(copy, 4321, 4321, errors) == made + 1
        assert errors == []
    fdtree.remove_tree(source)
    fdtree.remove_tree(copy)
    assert not source.exists() and not copy.exists()
    assert _open_fds() <= fds_before  # nothing leaked


def test_names_past_the_path_length_limit_are_reached(tmp_path: Path) -> None:
    """17 folders of 250 characters: every path-based call fails (ENAMETOOLONG)."""
    made = _chain(tmp_path, "n" * 250, 17)
    deepest = tmp_path.joinpath(*["n" * 250] * 17)
    with pytest.raises(OSError, match="too long"):
        os.lstat(deepest)
    assert fdtree.usage(tmp_path).entries == made
    fdtree.remove_tree(tmp_path / ("n" * 250))
    assert list(tmp_path.iterdir()) == []


def test_links_are_copied_as_links_and_never_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("host")
    source, copy = tmp_path / "source", tmp_path / "copy"
    source.mkdir()
    copy.mkdir()
    (source / "to-file").symlink_to(outside / "secret")
    (source / "to-dir").symlink_to(outside)
    os.mkfifo(source / "pipe")
    with fdtree.open_dir(source) as src, fdtree.open_dir(copy) as dst:
        report = fdtree.copy_tree(src, dst, fdtree.CopyLimits())
    assert os.readlink(copy / "to-file") == str(outside / "secret")
    assert os.readlink(copy / "to-dir") == str(outside)
    assert not (copy / "pipe").exists() and report.dropped_count == 1
    assert fdtree.usage(source).apparent_bytes == 0  # the links' targets are not counted
    fdtree.remove_tree(source)
    assert (outside / "secret").read_text() == "host"  # removal did not follow the link


def test_copies_are_bounded_by_apparent_bytes_entries_and_time(tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    for i in range(4):
        with open(source / f"sparse{i}", "wb") as fh:
            fh.truncate(3 * MIB)  # 3 MiB apparent, nothing allocated
    for i in range(50):
        (source / f"empty{i:02}").touch()

    def copy(limits: fdtree.CopyLimits) -> tuple[fdtree.CopyReport, fdtree.Usage]:
        target = tmp_path / f"copy{time.monotonic_ns()}"
        target.mkdir()
        with fdtree.open_dir(source) as src, fdtree.open_dir(target) as dst:
            report = fdtree.copy_tree(src, dst, limits)
        return report, fdtree.usage(target)

    report, held = copy(fdtree.CopyLimits(max_bytes=7 * MIB))
    assert report.limit == "bytes" and report.dropped_count == 2
    assert held.apparent_bytes == 6 * MIB and held.entries == 52  # sparse counted whole
    report, held = copy(fdtree.CopyLimits(max_entries=10))
    assert report.limit == "entries" and held.entries == 10
    report, held = copy(fdtree.CopyLimits(deadline=time.monotonic() - 1))
    assert report.limit == "time" and held.entries == 0


def test_a_sync_rewrites_only_what_changed_and_removes_what_is_gone(tmp_path: Path) -> None:
    source, target = tmp_path / "source", tmp_path / "target"
    source.mkdir()
    target.mkdir()
    for name in ("same.js", "changed.js", "gone.js"):
        (target / name).write_text(name)
    (target / "old-dir").mkdir()
    (target / "old-dir" / "x").write_text("x")
    (target / "was-file").write_text("file")
    with fdtree.open_dir(target) as src, fdtree.open_dir(source) as dst:
        fdtree.copy_tree(src, dst, fdtree.CopyLimits())  # in: modification times kept
    kept_inode = (target / "same.js").stat().st_ino
    (source / "changed.js").write_text("changed, longer")
    (source / "gone.js").unlink()
    fdtree.remove_tree(source / "old-dir")
    (source / "was-file").unlink()
    (source / "was-file").mkdir()
    (source / "new.js").write_text("new")

    with fdtree.open_dir(source) as src, fdtree.open_dir(target) as dst:
        report = fdtree.sync_tree(src, dst, fdtree.CopyLimits(max_bytes=1000))
    assert not report.errors and report.limit is None
    assert sorted(os.listdir(target)) == ["changed.js", "new.js", "same.js", "was-file"]
    assert (target / "changed.js").read_text() == "changed, longer"
    assert (target / "same.js").stat().st_ino == kept_inode  # not written again
    assert (target / "was-file").is_dir()

    (source / "big.bin").write_bytes(bytes(2000))
    (target / "big.bin").write_bytes(b"older copy")
    with fdtree.open_dir(source) as src, fdtree.open_dir(target) as dst:
        report = fdtree.sync_tree(src, dst, fdtree.CopyLimits(max_bytes=1000))
    assert report.limit == "bytes" and not (target / "big.bin").exists()  # no stale copy

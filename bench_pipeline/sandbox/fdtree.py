"""Walking, copying, chowning and removing trees that a sandboxed program built.

What a program leaves in its workspace is hostile input to whoever cleans it up: a
10,000-deep folder chain broke `os.walk` (RecursionError) and `shutil.rmtree`, and 17
folders of 250-character names made every path-based call fail with ENAMETOOLONG (a
quota watchdog then counted that subtree as empty). So everything here:

- is iterative (an explicit stack, never recursion);
- works relative to directory file descriptors (`dir_fd=`, `os.listdir(fd)`), so no path
  is ever longer than one name, whatever the depth;
- never follows a symlink (O_NOFOLLOW on every open, `follow_symlinks=False` on every
  stat and chown);
- holds at most MAX_OPEN_FDS descriptors however deep the tree: deeper down, ancestors'
  descriptors are closed and reopened through ".." on the way back up, checked against
  the device and inode they had;
- keeps going past an entry it cannot handle and reports it (first MAX_ERRORS), so one bad
  file never stops the clean-up of the others.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

MAX_OPEN_FDS = 64
MAX_ERRORS = 20
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_COPY_CHUNK = 1024 * 1024


@dataclass
class _Frame:
    fds: list[int]  # one per tree walked in lockstep; -1 while closed to save descriptors
    ident: list[tuple[int, int]]  # (st_dev, st_ino) of each, to check a reopen through ".."
    names: list[str]  # entries of the first tree still to visit
    name: str  # this folder's name in its parent ("" for the root)
    owned: bool  # opened by the walk (closed by it) rather than given by the caller


# visit(parent_fds, name, lstat_in_first_tree, depth) -> True to descend into a folder.
Visit = Callable[[list[int], str, os.stat_result, int], bool]
# leave(parent_fds, name, depth): after a folder's entries were all visited.
Leave = Callable[[list[int], str, int], None]


class TreeChanged(OSError):
    """A folder reopened through ".." is not the one left: the tree moved under the walk."""


def walk(
    roots: list[int],
    visit: Visit,
    leave: Leave | None = None,
    *,
    errors: list[str] | None = None,
) -> None:
    """Depth-first over the tree of `roots[0]`, in lockstep with the other roots (copies:
    `visit` makes the folder in them before returning True). Children are listed once per
    folder, files before descending. An OSError raised by `visit` on one entry is recorded
    in `errors` (or raised when None) and the walk goes on."""
    stack = [
        _Frame(list(roots), [_ident(fd) for fd in roots], sorted(os.listdir(roots[0])), "", False)
    ]
    try:
        while stack:
            top = stack[-1]
            if not top.names:
                stack.pop()
                if stack:
                    _restore(stack[-1], top)
                    if leave is not None:
                        _guard(errors, top.name, leave, stack[-1].fds, top.name, len(stack))
                _close(top)
                continue
            name = top.names.pop()
            try:
                info = os.stat(name, dir_fd=top.fds[0], follow_symlinks=False)
                descend = visit(top.fds, name, info, len(stack))
            except OSError as exc:
                _note(errors, name, exc)
                continue
            if not (descend and stat.S_ISDIR(info.st_mode)):
                continue
            try:
                child = _open_children(top, name)
            except OSError as exc:
                _note(errors, name, exc)
                continue
            stack.append(child)
            if len(stack) > MAX_OPEN_FDS:
                _close(stack[len(stack) - MAX_OPEN_FDS])
    finally:
        for frame in stack:
            _close(frame)


def _open_children(parent: _Frame, name: str) -> _Frame:
    fds: list[int] = []
    try:
        for fd in parent.fds:
            fds.append(os.open(name, _DIR_FLAGS, dir_fd=fd))
        names = sorted(os.listdir(fds[0]))
    except OSError:
        for fd in fds:
            os.close(fd)
        raise
    return _Frame(fds, [_ident(fd) for fd in fds], names, name, True)


def _restore(parent: _Frame, child: _Frame) -> None:
    """Reopen a parent whose descriptors were closed, through the child's "..", checked."""
    if parent.fds[0] >= 0:
        return
    fds = [os.open("..", _DIR_FLAGS, dir_fd=fd) for fd in child.fds]
    if [_ident(fd) for fd in fds] != parent.ident:
        for fd in fds:
            os.close(fd)
        raise TreeChanged(f"a folder above {child.name!r} moved during the walk")
    parent.fds = fds


def _close(frame: _Frame) -> None:
    if frame.owned and frame.fds[0] >= 0:
        for fd in frame.fds:
            os.close(fd)
        frame.fds = [-1] * len(frame.fds)


def _ident(fd: int) -> tuple[int, int]:
    info = os.fstat(fd)
    return info.st_dev, info.st_ino


def _guard(errors: list[str] | None, name: str, fn: Callable[..., None], *args: object) -> None:
    try:
        fn(*args)
    except OSError as exc:
        _note(errors, name, exc)


def _note(errors: list[str] | None, name: str, exc: OSError) -> None:
    if errors is None:
        raise exc
    if len(errors) < MAX_ERRORS:
        shown = name if len(name) <= 80 else name[:77] + "..."
        errors.append(f"{shown}: {exc.strerror or exc}")
    elif len(errors) == MAX_ERRORS:
        errors.append("... (further errors not listed)")


@contextmanager
def open_dir(path: Path | str) -> Iterator[int]:
    """A descriptor of the folder at `path` (never through a final symlink)."""
    fd = os.open(path, _DIR_FLAGS)
    try:
        yield fd
    finally:
        os.close(fd)


# ------------------------------------------------------------------------- operations


@dataclass
class Usage:
    apparent_bytes: int = 0  # st_size: what a copy of it would write
    allocated_bytes: int = 0  # st_blocks: what it holds on disk now
    entries: int = 0  # inodes (hard links once)


def usage(root: Path | str) -> Usage:
    """What the tree under `root` holds; unreadable folders are not counted as empty but
    raise (an attacker's unreadable folder is exactly what must not be missed)."""
    found = Usage()
    seen: set[tuple[int, int]] = set()

    def visit(_fds: list[int], _name: str, info: os.stat_result, _depth: int) -> bool:
        if info.st_nlink > 1 and not stat.S_ISDIR(info.st_mode):
            key = (info.st_dev, info.st_ino)
            if key in seen:
                return False
            seen.add(key)
        found.entries += 1
        found.allocated_bytes += info.st_blocks * 512
        if stat.S_ISREG(info.st_mode):
            found.apparent_bytes += info.st_size
        return True

    with open_dir(root) as fd:
        walk([fd], visit)
    return found


def chown_tree(root: Path | str, uid: int, gid: int, errors: list[str] | None = None) -> int:
    """lchown `root` and everything under it; returns how many entries were changed. With
    `errors` given, an entry that fails is listed there and the rest still changed."""
    changed = 0

    def visit(fds: list[int], name: str, info: os.stat_result, _depth: int) -> bool:
        nonlocal changed
        if (info.st_uid, info.st_gid) != (uid, gid):
            # The kernel drops set-uid/set-gid bits of a regular file on chown.
            os.chown(name, uid, gid, dir_fd=fds[0], follow_symlinks=False)
            changed += 1
        return True

    with open_dir(root) as fd:
        os.fchown(fd, uid, gid)
        walk([fd], visit, errors=errors)
    return changed + 1


def clear_dir(fd: int, errors: list[str] | None = None) -> None:
    """Remove everything inside the folder of `fd`, depth first, without recursion."""

    def visit(fds: list[int], name: str, info: os.stat_result, _depth: int) -> bool:
        if stat.S_ISDIR(info.st_mode):
            # A folder the program made unwritable (chmod 0500) must still be emptied.
            os.chmod(name, 0o700, dir_fd=fds[0])
            return True
        os.unlink(name, dir_fd=fds[0])
        return False

    def leave(fds: list[int], name: str, _depth: int) -> None:
        os.rmdir(name, dir_fd=fds[0])

    walk([fd], visit, leave, errors=errors)


def remove_tree(path: Path | str, errors: list[str] | None = None) -> None:
    """`shutil.rmtree` without its recursion or its path-length limit."""
    path = Path(path)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(info.st_mode):
        os.unlink(path)
        return
    with open_dir(path) as fd:
        clear_dir(fd, errors)
    os.rmdir(path)


@dataclass
class CopyLimits:
    max_bytes: int | None = None  # apparent size: a sparse file counts whole
    max_entries: int | None = None  # files, folders and links
    deadline: float | None = None  # time.monotonic() past which nothing more is copied
    owner: tuple[int, int] | None = None  # (uid, gid) of every copy; None: the caller's
    skip_dirs: frozenset[str] = frozenset()  # folder names never copied (node_modules)


@dataclass
class CopyReport:
    entries: int = 0
    bytes: int = 0
    # "bytes" | "entries" | "time": the first bound reached (what stopped or trimmed the copy)
    limit: str | None = None
    dropped: list[str] = field(default_factory=list)  # the first ones, with why
    dropped_count: int = 0
    errors: list[str] = field(default_factory=list)

    def drop(self, name: str, why: str) -> None:
        self.dropped_count += 1
        if len(self.dropped) < MAX_ERRORS:
            shown = name if len(name) <= 80 else name[:77] + "..."
            self.dropped.append(f"{shown} ({why})")

    def summary(self) -> str:
        text = f"{self.entries} entries, {self.bytes} bytes copied"
        if self.dropped_count:
            text += f"; {self.dropped_count} left out: " + ", ".join(self.dropped[:5])
        return text


def _past_limits(limits: CopyLimits, report: CopyReport) -> bool:
    """Whether a copy must stop (its deadline or entry bound passed), said in the report."""
    if limits.deadline is not None and time.monotonic() > limits.deadline:
        report.limit = report.limit or "time"
        return True
    if limits.max_entries is not None and report.entries >= limits.max_entries:
        report.limit = report.limit or "entries"
        return True
    return False


def copy_tree(src_fd: int, dst_fd: int, limits: CopyLimits) -> CopyReport:
    """Copy the contents of folder `src_fd` into folder `dst_fd`, bounded by `limits`.

    Regular files, folders and symlinks (as links, never followed); FIFOs, sockets and
    devices are left out. Modes keep their permission bits only (no set-uid). Past the
    byte bound a file is left out (a smaller one later may still fit); past the entry
    bound or the deadline the copy stops. What was left out is listed in the report.
    """
    report = CopyReport()
    owner = limits.owner

    def stopped() -> bool:
        return _past_limits(limits, report)

    def visit(fds: list[int], name: str, info: os.stat_result, _depth: int) -> bool:
        src, dst = fds
        mode = info.st_mode
        if stopped():
            report.drop(name, f"past the copy's {report.limit} limit")
            return False
        if stat.S_ISDIR(mode):
            if name in limits.skip_dirs:
                return False
            os.mkdir(name, 0o700, dir_fd=dst)
            fd = os.open(name, _DIR_FLAGS, dir_fd=dst)
            try:
                if owner is not None:
                    os.fchown(fd, *owner)
                os.fchmod(fd, stat.S_IMODE(mode) & 0o777 | 0o700)
            finally:
                os.close(fd)
            report.entries += 1
            return True
        if stat.S_ISLNK(mode):
            target = os.readlink(name, dir_fd=src)
            os.symlink(target, name, dir_fd=dst)
            if owner is not None:
                os.chown(name, *owner, dir_fd=dst, follow_symlinks=False)
            report.entries += 1
            return False
        if not stat.S_ISREG(mode):
            report.drop(name, "not a regular file, folder or link")
            return False
        size = info.st_size
        if limits.max_bytes is not None and report.bytes + size > limits.max_bytes:
            report.limit = report.limit or "bytes"
            report.drop(name, f"{size} bytes, over the copy's byte limit")
            return False
        _copy_file(src, dst, name, size, stat.S_IMODE(mode) & 0o777, owner, info.st_mtime_ns)
        report.entries += 1
        report.bytes += size
        return False

    walk([src_fd, dst_fd], visit, errors=report.errors)
    return report


def _copy_file(
    src: int,
    dst: int,
    name: str,
    size: int,
    mode: int,
    owner: tuple[int, int] | None,
    mtime_ns: int | None = None,
) -> None:
    """One regular file, at most `size` bytes (what was counted), holes written as data:
    its apparent size is what was counted against the bound."""
    fin = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=src)
    try:
        if not stat.S_ISREG(os.fstat(fin).st_mode):
            raise OSError(0, "replaced while it was copied")
        fout = os.open(
            name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
            dir_fd=dst,
        )  # fmt: skip
        try:
            left = size
            while left > 0:
                sent = os.sendfile(fout, fin, None, min(left, _COPY_CHUNK))
                if sent == 0:
                    break
                left -= sent
            if owner is not None:
                os.fchown(fout, *owner)
            os.fchmod(fout, mode)
            if mtime_ns is not None:  # what `sync_tree` compares to skip unchanged files
                os.utime(fout, ns=(mtime_ns, mtime_ns))
        finally:
            os.close(fout)
    finally:
        os.close(fin)


def sync_tree(src_fd: int, dst_fd: int, limits: CopyLimits) -> CopyReport:
    """Make folder `dst_fd` hold what folder `src_fd` holds, bounded like `copy_tree`, but
    leaving alone a regular file of the same size and modification time (a `node_modules`
    copied in and not touched is not written again: deleting and rewriting 20,000 files on
    the host took ~30 s per run at load 11). Entries of `dst` that `src` lacks are removed;
    what passes a bound is removed from `dst` too (never an older copy left in its place).

    A program could make a changed file look unchanged (same size, old mtime): then the
    host keeps the copy it had before the run, which came from the host in the first place.
    """
    report = CopyReport()
    owner = limits.owner

    def stopped() -> bool:
        return _past_limits(limits, report)

    def existing(dst: int, name: str) -> os.stat_result | None:
        try:
            return os.stat(name, dir_fd=dst, follow_symlinks=False)
        except FileNotFoundError:
            return None

    def discard(dst: int, name: str, have: os.stat_result | None) -> None:
        if have is None:
            return
        if stat.S_ISDIR(have.st_mode):
            fd = os.open(name, _DIR_FLAGS, dir_fd=dst)
            try:
                clear_dir(fd, report.errors)
            finally:
                os.close(fd)
            os.rmdir(name, dir_fd=dst)
        else:
            os.unlink(name, dir_fd=dst)

    def prune(src: int, dst: int, name: str) -> None:
        """Remove what the folder `name` holds in dst but not in src."""
        s_fd = os.open(name, _DIR_FLAGS, dir_fd=src) if name else os.dup(src)
        try:
            d_fd = os.open(name, _DIR_FLAGS, dir_fd=dst) if name else os.dup(dst)
            try:
                for extra in set(os.listdir(d_fd)) - set(os.listdir(s_fd)):
                    discard(d_fd, extra, existing(d_fd, extra))
            finally:
                os.close(d_fd)
        finally:
            os.close(s_fd)

    def fix(dst: int, name: str, have: os.stat_result, mode: int) -> None:
        if owner is not None and (have.st_uid, have.st_gid) != owner:
            os.chown(name, *owner, dir_fd=dst, follow_symlinks=False)
        if stat.S_IMODE(have.st_mode) != mode:
            os.chmod(name, mode, dir_fd=dst)

    def visit(fds: list[int], name: str, info: os.stat_result, _depth: int) -> bool:
        src, dst = fds
        mode = info.st_mode
        have = existing(dst, name)
        if stopped() or (stat.S_ISDIR(mode) and name in limits.skip_dirs):
            report.drop(name, f"past the copy's {report.limit} limit")
            discard(dst, name, have)
            return False
        if stat.S_ISDIR(mode):
            wanted = stat.S_IMODE(mode) & 0o777 | 0o700
            if have is not None and stat.S_ISDIR(have.st_mode):
                fix(dst, name, have, wanted)
                prune(src, dst, name)
            else:
                discard(dst, name, have)
                os.mkdir(name, 0o700, dir_fd=dst)
                fd = os.open(name, _DIR_FLAGS, dir_fd=dst)
                try:
                    if owner is not None:
                        os.fchown(fd, *owner)
                    os.fchmod(fd, wanted)
                finally:
                    os.close(fd)
            report.entries += 1
            return True
        if stat.S_ISLNK(mode):
            target = os.readlink(name, dir_fd=src)
            unchanged = have is not None and stat.S_ISLNK(have.st_mode)
            if unchanged and os.readlink(name, dir_fd=dst) == target:
                assert have is not None
                if owner is not None and (have.st_uid, have.st_gid) != owner:
                    os.chown(name, *owner, dir_fd=dst, follow_symlinks=False)
                report.entries += 1
                return False
            discard(dst, name, have)
            os.symlink(target, name, dir_fd=dst)
            if owner is not None:
                os.chown(name, *owner, dir_fd=dst, follow_symlinks=False)
            report.entries += 1
            return False
        if not stat.S_ISREG(mode):
            report.drop(name, "not a regular file, folder or link")
            discard(dst, name, have)
            return False
        size = info.st_size
        if limits.max_bytes is not None and report.bytes + size > limits.max_bytes:
            report.limit = report.limit or "bytes"
            report.drop(name, f"{size} bytes, over the copy's byte limit")
            discard(dst, name, have)
            return False
        wanted = stat.S_IMODE(mode) & 0o777
        same = (
            have is not None
            and stat.S_ISREG(have.st_mode)
            and have.st_size == size
            and have.st_mtime_ns == info.st_mtime_ns
            and have.st_nlink == 1
        )
        if same:
            assert have is not None
            fix(dst, name, have, wanted)
        else:
            discard(dst, name, have)
            _copy_file(src, dst, name, size, wanted, owner, info.st_mtime_ns)
        report.entries += 1
        report.bytes += size
        return False

    try:
        prune(src_fd, dst_fd, "")
    except OSError as exc:
        report.errors.append(f"(top folder): {exc.strerror or exc}")
    walk([src_fd, dst_fd], visit, errors=report.errors)
    return report

"""Cost of the kernel-kept disk quota (a tmpfs per run, copied in and out) against no quota
and against the path-walking watchdog it replaced (still the fallback without root).

Prints figures; asserts nothing (the machines are shared and noisy). Needs root.
    .venv/bin/python benchmarks/disk_quota.py [--runs 5] [--files 20000] [--mb 85]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from bench_pipeline.sandbox import SandboxPolicy, bubblewrap, fdtree, get_sandbox


def _fill(workspace: Path, files: int, total_mb: int) -> None:
    """A node_modules-like tree: `files` files in folders of 100, `total_mb` in all."""
    size = total_mb * 1024 * 1024 // max(files, 1)
    chunk = os.urandom(size)
    for i in range(files):
        folder = workspace / "node_modules" / f"pkg{i // 100}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{i}.js").write_bytes(chunk)


def _time(workspace: Path, policy: SandboxPolicy, runs: int) -> float:
    sandbox = get_sandbox("bubblewrap")
    took = []
    for _ in range(runs):
        started = time.perf_counter()
        result = sandbox.run(["true"], workspace, policy)
        took.append(time.perf_counter() - started)
        assert result.ok, result.summary()
    return statistics.median(took)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--mb", type=int, default=85)
    args = parser.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("needs root: the kernel-kept quota mounts a tmpfs per run")
    print(f"load average {os.getloadavg()[0]:.1f}; median of {args.runs} runs of `true`")
    with tempfile.TemporaryDirectory(prefix="bench-quota-bench-") as tmp:
        for label, files, mb in (("empty", 0, 0), (f"{args.files} files", args.files, args.mb)):
            workspace = Path(tmp) / label.replace(" ", "_")
            workspace.mkdir()
            _fill(workspace, files, mb)
            none = _time(workspace, SandboxPolicy(disk_quota_mb=None), args.runs)
            kernel = _time(workspace, SandboxPolicy(disk_quota_mb=1024), args.runs)
            original = bubblewrap.mount_available
            bubblewrap.mount_available = lambda: False  # type: ignore[assignment]
            try:
                watchdog = _time(workspace, SandboxPolicy(disk_quota_mb=1024), args.runs)
            finally:
                bubblewrap.mount_available = original  # type: ignore[assignment]
            print(
                f"{label:>14} ({mb} MB): no quota {none:.2f} s, kernel quota {kernel:.2f} s "
                f"(+{kernel - none:.2f}), watchdog {watchdog:.2f} s (+{watchdog - none:.2f})"
            )
            fdtree.remove_tree(workspace)


if __name__ == "__main__":
    main()

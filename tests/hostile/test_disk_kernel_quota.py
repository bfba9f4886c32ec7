"""Hostile: the disk quota by blocks, inodes and apparent size, and clean-up of what an
agent leaves, all through `bench run` (a `command` agent, or a replayed recording).

The attacks of issue 32, scaled down (a quota of a few MiB, a few hundred files) so that they
prove the same point in seconds:

- 17 nested folders of 250-character names, then three writes past the quota: a watchdog
  walking paths could not open them and counted them as empty;
- more empty files than the file quota: they cost no bytes at all;
- sparse files whose apparent sizes add up past the quota: they cost no blocks, and every
  later copy (archive, build, quality) would write them whole;
- a recording holding a 2 GiB sparse file (16 KB on disk), replayed;
- a 10,000-deep folder chain: `os.walk` (RecursionError) broke the run and every later
  start's clean-up;
- a leftover of a sandbox uid too deep and too long-named for paths, with one file that
  cannot be given back: the next start names that run and gives back everything else.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench_pipeline.sandbox import fdtree
from bench_pipeline.sandbox.reap import in_sandbox_range
from bench_pipeline.warehouse.build import query
from tests.hostile.test_disk_and_leftovers import BENCH, REPO, _bench_env, _experiment

pytestmark = pytest.mark.slow

MIB = 1024 * 1024
QUOTA_MB = 8

# 17 folders of 250-character names (a path of ~4,300 characters), then 3 x 6 MiB.
LONG_PATHS = (
    "/usr/bin/python3 -c '"
    "import os\n"
    "for i in range(17):\n"
    "    n = str(i).zfill(250); os.mkdir(n); os.chdir(n)\n"
    "for i in range(3):\n"
    '    with open("f%d" % i, "wb") as f:\n'
    "        for _ in range(6): f.write(bytes(1 << 20))\n"
    "'"
)
# Far more empty files than the file quota allows: no bytes, only inodes.
MANY_FILES = (
    "/usr/bin/python3 -c '"
    "import os\n"
    'os.mkdir("many")\n'
    'for i in range(3000): open("many/f%d" % i, "w").close()\n'
    "'"
)
# Four sparse files of 6 MiB each: each under the per-file limit, 24 MiB apparent, ~0 on disk.
SPARSE = "sh -c 'for i in 1 2 3 4; do truncate -s 6M s$i.js || exit 7; done; echo ok > a.js'"
# A 10,000-deep folder chain with a file every 1,000 levels.
DEEP = (
    "/usr/bin/python3 -c '"
    "import os\n"
    "for i in range(10000):\n"
    '    os.mkdir("d"); os.chdir("d")\n'
    '    if i % 1000 == 0: open("x.js", "w").write("1")\n'
    "'"
)


@pytest.fixture(autouse=True)
def _remove_deep_trees(tmp_path: Path) -> Iterator[None]:
    """pytest's own clean-up of old temporary folders is `shutil.rmtree`, which recursion
    breaks on a 10,000-deep tree: these tests remove what they made themselves."""
    yield
    for child in tmp_path.iterdir():
        fdtree.remove_tree(child, errors=[])


def _bench_run(tmp_path: Path, agents: list[str], command: str, **env: str) -> Any:
    done = subprocess.run(
        [str(BENCH), "run", str(_experiment(tmp_path, agents)), "--endurance-seconds", "2"],
        cwd=REPO,
        env=_bench_env(tmp_path, command, **env),
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done


def _runs(tmp_path: Path) -> dict[str, tuple[str, str]]:
    db = tmp_path / "data" / "warehouse.duckdb"
    _, rows = query(db, "select run_id, agent, status from fct_runs order by agent")
    return {agent: (run_id, status) for run_id, agent, status in rows}


def _record(tmp_path: Path, stage: str, run_id: str) -> dict[str, Any]:
    path = tmp_path / "data" / "artifacts" / "records" / stage / f"{run_id}.json"
    return json.loads(path.read_text())


def _sandbox_owned(root: Path) -> int:
    """Entries under `root` owned by a sandbox uid, found by descriptor (any depth/length)."""
    owned = 0

    def visit(_fds: list[int], _name: str, info: os.stat_result, _depth: int) -> bool:
        nonlocal owned
        owned += in_sandbox_range(info.st_uid) or in_sandbox_range(info.st_gid)
        return True

    with fdtree.open_dir(root) as fd:
        fdtree.walk([fd], visit)
    return owned


def _no_quota_mounts(under: Path) -> bool:
    """No tmpfs of this test's runs is still mounted (other workers' runs may hold theirs)."""
    return str(under) not in Path("/proc/self/mountinfo").read_text()


def _stage_dirs(tmp_path: Path, run_id: str) -> list[Path]:
    run = tmp_path / "data" / "artifacts" / "runs" / run_id
    return [
        run / "agent_generation" / "workspace",
        run / "sandboxed_build" / "workspace",
        run / "quality_metrics" / "source",
    ]


def _assert_disk_limit(tmp_path: Path, run_id: str) -> dict[str, Any]:
    record = _record(tmp_path, "agent_generation", run_id)
    assert record["status"] == "failed", record["message"]
    assert "disk limit" in record["message"], record["message"]
    sandbox = json.loads(record["details"])["sandbox"]
    assert sandbox["limit_hit"] == "disk", sandbox
    return record


def test_long_paths_cannot_hide_writes_past_the_quota(tmp_path: Path) -> None:
    _bench_run(tmp_path, ["synthetic", "command"], LONG_PATHS, BENCH_SANDBOX_DISK_MB=str(QUOTA_MB))
    runs = _runs(tmp_path)
    assert runs["synthetic"][1] == "completed", runs  # the sweep went on
    assert runs["command"][1] == "failed", runs
    run_id = runs["command"][0]
    record = _assert_disk_limit(tmp_path, run_id)
    assert "disk quota" in json.loads(record["details"])["stderr_tail"]
    workspace = _stage_dirs(tmp_path, run_id)[0]
    held = fdtree.usage(workspace)
    # The kernel refused the writes: what is left is within the quota, whatever its paths.
    # (allocated: plus the host filesystem's blocks for the 17 folders themselves)
    assert held.apparent_bytes <= QUOTA_MB * MIB
    assert held.allocated_bytes <= QUOTA_MB * MIB + 17 * 4096
    assert held.entries >= 17  # the long-named folders came back, readable by descriptor
    assert _sandbox_owned(tmp_path / "data") == 0
    assert _no_quota_mounts(tmp_path)


def test_empty_files_past_the_file_quota_stop_the_run(tmp_path: Path) -> None:
    _bench_run(tmp_path, ["command"], MANY_FILES, BENCH_SANDBOX_DISK_FILES="500")
    run_id, status = _runs(tmp_path)["command"]
    assert status == "failed"
    _assert_disk_limit(tmp_path, run_id)
    for folder in _stage_dirs(tmp_path, run_id):
        if folder.exists():
            assert fdtree.usage(folder).entries <= 500, folder
    assert _sandbox_owned(tmp_path / "data") == 0


def test_sparse_files_count_their_full_length_in_every_stage(tmp_path: Path) -> None:
    _bench_run(tmp_path, ["command"], SPARSE, BENCH_SANDBOX_DISK_MB=str(QUOTA_MB))
    run_id, status = _runs(tmp_path)["command"]
    assert status == "failed"
    record = _assert_disk_limit(tmp_path, run_id)
    stderr = json.loads(record["details"])["stderr_tail"]
    assert "sparse files count their full length" in stderr, stderr
    # No stage holds more than the quota by apparent size: nothing was blown up on copy.
    for folder in _stage_dirs(tmp_path, run_id):
        if folder.exists():
            assert fdtree.usage(folder).apparent_bytes <= QUOTA_MB * MIB, folder
    assert record["workspace_bytes"] <= QUOTA_MB * MIB


def test_a_replayed_sparse_file_is_held_to_the_quota(tmp_path: Path) -> None:
    from tests.hostile.test_recordings import GAME, TRANSCRIPT

    experiment = _experiment(tmp_path, ["synthetic"])
    from bench_pipeline.design import design_experiment, load_experiment

    design = design_experiment(load_experiment(experiment)).to_json_dict()
    (run_id,) = [run["run_id"] for run in design["runs"]]
    recording = tmp_path / "recordings" / run_id
    recording.mkdir(parents=True)
    (recording / "transcript.jsonl").write_bytes(TRANSCRIPT.read_bytes())
    (recording / "metadata.json").write_text(
        json.dumps(
            {"agent": "claude-code", "model": "claude-sonnet-4-6", "exit_code": 0, "duration_s": 9}
        )
    )
    workspace = recording / "workspace"
    workspace.mkdir()
    for page in GAME.iterdir():
        if page.is_file() and page.name != "expected.json":
            (workspace / page.name).write_bytes(page.read_bytes())
    with open(workspace / "assets.bin", "wb") as fh:
        fh.truncate(2 * 1024 * MIB)  # 2 GiB apparent, nothing on disk
    assert os.stat(workspace / "assets.bin").st_blocks * 512 < MIB

    done = subprocess.run(
        [str(BENCH), "run", str(experiment), "--endurance-seconds", "2"],
        cwd=REPO,
        env=_bench_env(tmp_path, "true", BENCH_REPLAY_DIR=str(tmp_path / "recordings")),
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    record = _record(tmp_path, "agent_generation", run_id)
    assert record["status"] == "error", record
    assert record["message"].startswith(f"run {run_id}: recording {recording}: ")
    assert "disk quota" in record["message"] and "apparent size" in record["message"]
    for folder in _stage_dirs(tmp_path, run_id):
        if folder.exists():
            assert fdtree.usage(folder).apparent_bytes < 1024 * MIB, folder


def test_a_10000_deep_tree_is_archived_and_cleaned_up(tmp_path: Path) -> None:
    _bench_run(tmp_path, ["command"], DEEP)
    run_id, status = _runs(tmp_path)["command"]
    record = _record(tmp_path, "agent_generation", run_id)
    assert status != "error" and record["status"] == "completed", record["message"]
    # The first levels are archived; what lies deeper is listed as skipped, not a crash.
    assert record["files"] >= 1
    assert any("deeper than" in s for s in record["skipped_files"]), record["skipped_files"]
    assert _sandbox_owned(tmp_path / "data") == 0
    # The next start has nothing to complain about.
    again = subprocess.run(
        [str(BENCH), "run", str(tmp_path / "missing.yaml")],
        cwd=REPO,
        env=_bench_env(tmp_path, "true"),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert again.returncode == 2
    assert "could not clean up" not in again.stderr, again.stderr


def _leftover_tree(root: Path, uid: int) -> tuple[int, int]:
    """A 10,000-deep chain and 17 folders of 250-character names under `root`, owned by
    `uid`, made by descriptor; returns (entries made, descriptor of the deepest long one)."""
    made = 0
    with fdtree.open_dir(root) as top:
        for name, depth in (("d", 10_000), ("n" * 250, 17)):
            fd = os.dup(top)
            for _ in range(depth):
                os.mkdir(name, dir_fd=fd)
                os.chown(name, uid, uid, dir_fd=fd, follow_symlinks=False)
                below = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
                os.close(fd)
                fd = below
                made += 1
            out = os.open("f.js", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
            os.fchown(out, uid, uid)
            os.close(out)
            made += 1
            if name != "d":
                return made, fd
            os.close(fd)
    raise AssertionError("unreachable")


def test_the_next_start_gives_back_a_deep_long_named_leftover_naming_a_stuck_run(
    tmp_path: Path,
) -> None:
    if os.geteuid() != 0:
        pytest.skip("sandbox uids and the reaper need root")
    uid = 3_654_321
    workspace = tmp_path / "data" / "artifacts" / "runs" / "run-stuck" / "agent_generation"
    workspace = workspace / "workspace"
    workspace.mkdir(parents=True)
    made, deepest = _leftover_tree(workspace, uid)
    # One file the kernel will not let anyone chown (immutable): its run must be named, and
    # everything else still given back.
    os.close(os.open("stuck.js", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=deepest))
    os.chown("stuck.js", uid, uid, dir_fd=deepest)
    stuck = f"/proc/self/fd/{deepest}/stuck.js"
    immutable = subprocess.run(["chattr", "+i", stuck], capture_output=True, check=False)
    try:
        assert _sandbox_owned(workspace) == made + 1
        again = subprocess.run(
            [str(BENCH), "run", str(tmp_path / "missing.yaml")],
            cwd=REPO,
            env=_bench_env(tmp_path, "true"),
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert again.returncode == 2, again.stderr
        assert "RecursionError" not in again.stderr and "too long" not in again.stderr
        if immutable.returncode == 0:
            assert _sandbox_owned(workspace) == 1  # only the immutable file
            line = next(x for x in again.stderr.splitlines() if "could not clean up" in x)
            assert "run run-stuck: cannot give" in line and "stuck.js" in line, line
        else:
            assert _sandbox_owned(workspace) == 0
        assert f"{made} file(s) given back" in again.stderr or "given back" in again.stderr
    finally:
        subprocess.run(["chattr", "-i", stuck], capture_output=True, check=False)
        os.close(deepest)
    assert stat.S_ISDIR(os.lstat(workspace).st_mode)

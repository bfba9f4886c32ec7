"""The bot under attack, by the public commands: a page that floods the browser's events,
Ctrl-C in the middle of an evaluation, and a game folder holding a hard link to a root-only
file and a file only its owner may read.

The flood is the one that broke the cap: `console.error` and uncaught exceptions by the
thousand per frame queue events in Playwright's driver faster than Python reads them, and
the evaluation went on reading them minutes after the browser was killed. Here the cap is
short (`--hard-cap-seconds 15`), and the checks are what must hold whatever the clock:
the command returns (a generous guard only stops a hang), nothing it started is still
running, no scratch folder is left, the evidence is bounded in bytes.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from bench_pipeline.bot.observations import LIMITS

REPO = Path(__file__).resolve().parents[2]
EVALUATE = [sys.executable, "-m", "bench_pipeline.cli", "evaluate"]
BASE_JS = REPO / "tests" / "bot" / "hostile" / "base.js"
CAP_S = 15
# Only a hang guard: an evaluation capped at 15 s that is still running after this long
# did not hold its cap (before the isolation it ran 97 s past a 60 s cap on this page).
HANG_GUARD_S = 240
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("chromium")]

FLOOD_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>flood</title></head>
<body style="background:#333;color:#eee;font-family:sans-serif">
<canvas id="field" width="240" height="480"></canvas><p>Score <span id="score">0</span></p>
<script src="base.js"></script>
<script>
baseGame.start();
const boom = () => { throw new Error("boom " + "y".repeat(5000)); };
function flood() {
  for (let i = 0; i < 2000; i++) { console.error("flood " + i + " " + "x".repeat(5000)); setTimeout(boom, 0); }
  requestAnimationFrame(flood);
}
requestAnimationFrame(flood);
</script>
</body></html>
"""


def _cap(seconds: float) -> list[str]:
    return ["--hard-cap-seconds", str(seconds), "--endurance-seconds", "3"]


def _flood_game(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "index.html").write_text(FLOOD_PAGE)
    shutil.copyfile(BASE_JS, folder / "base.js")
    return folder


def _env(tmp_path: Path) -> dict[str, str]:
    # The system temp dir, not one of the test's own: the crash reaper of every other
    # pipeline on the machine finds live sandbox runs by their /etc folders there, and
    # would take this evaluation's browser for an orphan if its folder were elsewhere.
    return dict(os.environ)


# Every scratch folder of an isolated evaluation is named so, and so is every process that
# works in one (Chromium's profile, the game's server, the child's own argument).
SCRATCH = "bench-bot-run-"


def _processes_naming(text: str) -> list[str]:
    found = []
    for pid_dir in Path("/proc").glob("[0-9]*"):
        try:
            cmdline = (pid_dir / "cmdline").read_bytes().decode(errors="ignore")
        except OSError:
            continue
        if text in cmdline and pid_dir.name != str(os.getpid()):
            found.append(f"{pid_dir.name}: {cmdline[:200]}")
    return found


def _browser_running() -> bool:
    return any("chromium" in p for p in _processes_naming(SCRATCH))


@pytest.fixture(autouse=True)
def _own_scratch(monkeypatch: pytest.MonkeyPatch) -> None:
    """This test's evaluations carry a tag in their scratch folder's name (inherited by
    `bench evaluate` and `bench run` subprocesses): the checks below look for this test's
    processes and folders alone, while other tests' evaluations run beside it."""
    global SCRATCH
    tag = uuid.uuid4().hex[:12]
    monkeypatch.setenv("BENCH_BOT_SCRATCH_TAG", tag)
    SCRATCH = f"bench-bot-run-{tag}-"


@pytest.fixture
def left_behind() -> Callable[[], list[str]]:
    """What an evaluation made in the temp dir since the test began and left there: its
    scratch folders, and sandbox /etc folders whose owner is gone."""
    from bench_pipeline.sandbox.reap import etc_folders

    temp = Path(tempfile.gettempdir())
    before = set(temp.iterdir())

    def new() -> list[str]:
        scratch = [p.name for p in temp.glob(f"{SCRATCH}*") if p not in before]
        etc = [f.path.name for f in etc_folders(temp) if not f.live and f.path not in before]
        return sorted(scratch + etc)

    return new


def _wait_gone(text: str) -> list[str]:
    # Processes killed a moment ago may still be exiting.
    for _ in range(50):
        left = _processes_naming(text)
        if not left:
            return []
        time.sleep(0.1)
    return left


def test_a_flood_of_events_ends_at_the_cap_with_bounded_evidence(
    tmp_path: Path, left_behind: Callable[[], list[str]]
) -> None:
    game = _flood_game(tmp_path / "flood")
    evidence = tmp_path / "evidence"
    done = subprocess.run(
        [*EVALUATE, str(game), "--json", "--artifacts", str(evidence), *_cap(CAP_S)],
        cwd=REPO,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    # The evaluation's own clock says it ended by the cap (the command's start-up aside).
    assert result["duration_s"] <= CAP_S + 1, result["notes"]
    assert result["tests"]["no_errors"] in ("FAIL", "INCONCLUSIVE"), result["reasons"]
    # Nothing the evaluation started is still running, and it left no scratch folder.
    assert _wait_gone(SCRATCH) == []
    assert left_behind() == []
    # The evidence is bounded in bytes whatever the page logged.
    console = (evidence / "console.txt").read_bytes()
    assert len(console) <= LIMITS.console_bytes
    assert len(console.splitlines()) <= 3 * LIMITS.console + 10
    assert (evidence / "observations.json").stat().st_size <= LIMITS.log_bytes
    log = json.loads((evidence / "observations.json").read_text())
    assert sum(log["overflow"].values()) > 0, "a flood this size was counted past the limits"
    assert b"more" in console and b"not kept" in console, console[-500:]


def test_ctrl_c_ends_bench_evaluate_with_its_browser_and_scratch(
    tmp_path: Path, left_behind: Callable[[], list[str]]
) -> None:
    game = _flood_game(tmp_path / "flood")
    proc = subprocess.Popen(
        [*EVALUATE, str(game), "--artifacts", str(tmp_path / "evidence"), *_cap(120)],
        cwd=REPO,
        env=_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # Wait until the browser of this evaluation runs (its profile is in our temp dir).
        for _ in range(600):
            if _browser_running():
                break
            if proc.poll() is not None:
                break
            time.sleep(0.1)
        assert proc.poll() is None, "the evaluation ended before its browser was seen"
        time.sleep(2)  # the page is flooding by now
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=HANG_GUARD_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, (proc.returncode, err[-2000:])
    assert "interrupted" in err and "Traceback" not in err, err[-2000:]
    assert _wait_gone(SCRATCH) == []
    assert left_behind() == []


def test_hard_links_and_owner_only_files_are_not_served(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("the attack needs a root-only file")
    secret = f"bench-secret-{os.urandom(8).hex()}"
    outside = tmp_path / "outside"
    outside.mkdir(mode=0o700)
    root_only = outside / "secret.txt"
    root_only.write_text(secret)
    root_only.chmod(0o600)
    game = tmp_path / "game"
    game.mkdir()
    os.link(root_only, game / "leak.txt")  # the same file, a second name inside the game
    private = game / "private.txt"
    private.write_text(secret + "-private")
    private.chmod(0o600)
    (game / "data.txt").write_text("shared-text")
    os.link(game / "data.txt", game / "data-again.txt")  # both names inside: the game's own
    page = """<!doctype html><html><head><meta charset="utf-8"></head><body><pre id="o"></pre>
<script>
(async () => {
  for (const name of ["leak.txt", "private.txt", "data.txt", "data-again.txt"]) {
    const r = await fetch(name);
    const text = await r.text();
    console.error("fetched " + name + " " + r.status + " " + text);
    document.getElementById("o").textContent += name + " " + r.status + " " + text + "\\n";
  }
})();
</script></body></html>"""
    (game / "index.html").write_text(page)
    evidence = tmp_path / "evidence"
    done = subprocess.run(
        [*EVALUATE, str(game), "--json", "--artifacts", str(evidence), *_cap(30)],
        cwd=REPO,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert secret not in done.stdout and secret not in done.stderr
    for path in evidence.rglob("*"):
        assert secret.encode() not in path.read_bytes(), path
    result = json.loads(done.stdout)
    skipped = result["containment"]["skipped_files"]
    assert any(s.startswith("leak.txt: a hard link") for s in skipped), skipped
    assert any(s.startswith("private.txt: not readable by other users") for s in skipped), skipped
    assert not any("data" in s for s in skipped), skipped
    # The game's own files were served: the page read them.
    console = (evidence / "console.txt").read_text()
    assert "fetched data.txt 200 shared-text" in console, console
    assert "fetched data-again.txt 200 shared-text" in console, console
    assert "fetched leak.txt 404" in console, console
    # The originals are untouched: still root-only.
    assert root_only.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("sandbox", ["1", "0"], ids=["bubblewrap", "no-sandbox"])
def test_an_evaluation_that_never_comes_back_is_ended_at_the_cap(
    tmp_path: Path, sandbox: str, left_behind: Callable[[], list[str]]
) -> None:
    """Whatever keeps the evaluation from finishing (here its process is stopped outright,
    so not even its own watchdog and guard run), the command ends it at the cap: the
    verdicts say so, nothing it started runs on, no scratch folder stays. Without
    bubblewrap Chromium runs in a process group of its own: it is found by its profile."""
    game = _flood_game(tmp_path / "flood")
    evidence = tmp_path / "evidence"
    evidence.mkdir()
    # A log an earlier evaluation left here must not pass for this one's.
    (evidence / "observations.json").write_text("{}")
    proc = subprocess.Popen(
        [*EVALUATE, str(game), "--json", "--artifacts", str(evidence), *_cap(CAP_S)],
        cwd=REPO,
        env={**_env(tmp_path), "BENCH_BOT_SANDBOX": sandbox},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        child = None
        for _ in range(600):
            # This test's child only (its scratch folder carries the test's tag): another
            # worker's evaluation must never be the one stopped.
            found = [p for p in _processes_naming(SCRATCH) if "bench_pipeline.bot.child" in p]
            if found:
                child = int(found[0].split(":")[0])
                break
            time.sleep(0.05)
        assert child is not None, "no evaluation process was started"
        # Stopped once its browser runs, so that there is a browser to end.
        for _ in range(600):
            if _browser_running():
                break
            time.sleep(0.1)
        os.kill(child, signal.SIGSTOP)
        out, err = proc.communicate(timeout=HANG_GUARD_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err[-2000:]
    result = json.loads(out)
    assert set(result["tests"].values()) == {"INCONCLUSIVE"}
    assert "hard cap of 15s" in result["reasons"]["loads"]
    assert result["duration_s"] <= CAP_S + 1
    assert _wait_gone(SCRATCH) == []
    assert left_behind() == []
    assert not (evidence / "observations.json").exists()
    assert json.loads((evidence / "evaluation.json").read_text())["tests"] == result["tests"]


def test_bench_run_with_a_flooding_game_holds_the_cap_and_the_evidence_bounds(
    tmp_path: Path,
    left_behind: Callable[[], list[str]],
) -> None:
    """The whole pipeline: a `command` agent writes the flooding game, it is built and the
    bot plays it under BENCH_BOT_HARD_CAP_S; the run completes with its record."""
    import base64
    import shlex

    page = base64.b64encode(FLOOD_PAGE.encode()).decode()
    base = base64.b64encode(BASE_JS.read_bytes()).decode()
    script = 'cd "$1" && echo "$2" | base64 -d > index.html && echo "$3" | base64 -d > base.js'
    command = ["sh", "-c", script, "agent", "{workspace}", page, base]
    experiment = tmp_path / "flood.yaml"
    experiment.write_text(
        "name: flood\nrepeats: 1\naxes:\n  agent: {levels: [command]}\n"
        "  model: {levels: [claude-sonnet-4-6]}\ndesigns:\n  - type: main_effects\n"
    )
    data = tmp_path / "data"
    env = {
        **os.environ,
        "BENCH_DATA_DIR": str(data),
        "DAGSTER_HOME": str(tmp_path / "dagster"),
        "BENCH_AGENT_COMMAND": shlex.join(command),
        "BENCH_BOT_ENDURANCE_S": "3",
        "BENCH_BOT_HARD_CAP_S": str(CAP_S),
    }
    for name in ("BENCH_ARTIFACTS_DIR", "BENCH_WAREHOUSE", "BENCH_REPLAY_DIR"):
        env[name] = ""
    done = subprocess.run(
        [sys.executable, "-m", "bench_pipeline.cli", "run", str(experiment)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    output = done.stdout[-3000:] + done.stderr[-3000:]
    assert done.returncode == 0, output
    records = list((data / "artifacts" / "records" / "bot_evaluation").glob("*.json"))
    assert len(records) == 1, output
    record = json.loads(records[0].read_text())
    assert record["duration_s"] <= CAP_S + 1, record
    evidence = Path(record["artifacts_dir"])
    assert (evidence / "console.txt").stat().st_size <= LIMITS.console_bytes
    assert (evidence / "observations.json").stat().st_size <= LIMITS.log_bytes
    assert _wait_gone(SCRATCH) == []
    assert left_behind() == []


def test_a_killed_bench_evaluate_leaves_nothing_running_or_on_disk(
    tmp_path: Path, left_behind: Callable[[], list[str]]
) -> None:
    """SIGKILL gives the command no chance to clean up: its evaluation sees it gone and
    cleans up for itself."""
    game = _flood_game(tmp_path / "flood")
    proc = subprocess.Popen(
        [*EVALUATE, str(game), "--artifacts", str(tmp_path / "evidence"), *_cap(120)],
        cwd=REPO,
        env=_env(tmp_path),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(600):
            if _browser_running():
                break
            time.sleep(0.1)
        assert proc.poll() is None, "the evaluation ended before its browser was seen"
    finally:
        proc.kill()
        proc.wait()
    for _ in range(100):  # the child's guard looks every 0.2 s
        if not _processes_naming(SCRATCH) and not left_behind():
            break
        time.sleep(0.1)
    assert _wait_gone(SCRATCH) == []
    assert left_behind() == []

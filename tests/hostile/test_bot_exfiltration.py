"""Exfiltration through the gameplay bot, by the public commands.

A hostile build ships `leak.txt -> <a secret outside the game folder>`, a FIFO, a device
node, and JavaScript that fetches the secret and sends it to a listener on another
loopback port (fetch, image beacon, sendBeacon, WebSocket, form post). The attack itself
is shown to work without containment in tests/bot/test_containment.py; here the bot is
driven the way users and the pipeline drive it, and the host is checked afterwards: no
byte of the secret in any output, artifact or warehouse file, and no connection at the
listener.
"""

from __future__ import annotations

import base64
import json
import os
import shlex
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hostile.exfiltration import (
    Listener,
    exfiltrating_page,
    files_containing,
    leaky_game,
    new_secret,
)

REPO = Path(__file__).resolve().parents[2]
BENCH = [sys.executable, "-m", "bench_pipeline.cli"]
pytestmark = pytest.mark.slow


@pytest.fixture
def listener() -> Iterator[Listener]:
    server = Listener()
    yield server
    server.close()


@pytest.fixture
def secret(tmp_path: Path) -> tuple[str, Path]:
    value = new_secret()
    path = tmp_path / "outside" / "secret.txt"
    path.parent.mkdir()
    path.write_text(value)
    return value, path


def _bench(*args: str, env: dict[str, str] | None = None, timeout: float = 600):
    return subprocess.run(
        [*BENCH, *args],
        cwd=REPO,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_bench_evaluate_on_a_leaky_build(
    tmp_path: Path, secret: tuple[str, Path], listener: Listener
) -> None:
    value, secret_file = secret
    game = leaky_game(tmp_path / "game", secret_file, listener.port)
    # A FIFO the page loads as a script (a naive server's open() blocks forever on it) and
    # a device node it loads as an image (/dev/zero: endless bytes).
    os.mkfifo(game / "pipe.js")
    html = (game / "index.html").read_text()
    extra = '<script src="pipe.js"></script>'
    if os.geteuid() == 0:
        os.mknod(game / "zero.png", 0o644 | stat.S_IFCHR, os.makedev(1, 5))
        extra += '<img src="zero.png">'
    (game / "index.html").write_text(html.replace("<body>", "<body>" + extra, 1))
    evidence = tmp_path / "evidence"

    done = _bench(
        "evaluate", str(game), "--json", "--artifacts", str(evidence), "--endurance-seconds", "3"
    )
    time.sleep(0.5)  # whatever was still in flight reaches the listener by now

    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert value not in done.stdout and value not in done.stderr
    assert files_containing(evidence, value.encode()) == []
    assert listener.connections == 0 and listener.received == b""
    containment = result["containment"]
    assert containment["sandbox"] == "bubblewrap", containment["reason"]
    assert containment["unprivileged"] is True
    skipped = " ".join(containment["skipped_files"])
    assert "leak.txt" in skipped and "pipe.js" in skipped
    urls = " ".join(b["url"] for b in containment["blocked_requests"])
    for way in ("fetch", "img", "beacon", "form", "ws"):
        assert f"127.0.0.1:{listener.port}/{way}" in urls, (way, urls)
    assert "127.0.0.1:5432" in urls
    assert "blocked_requests" in json.loads((evidence / "observations.json").read_text())


def test_bench_run_with_a_leaky_agent_lands_in_the_warehouse_without_the_secret(
    tmp_path: Path, secret: tuple[str, Path], listener: Listener
) -> None:
    """The whole pipeline: a `command` agent writes the leaky game, it is built and played."""
    value, secret_file = secret
    page = base64.b64encode(exfiltrating_page(listener.port).encode()).decode()
    script = (
        'cd "$1" && echo "$2" | base64 -d > index.html && ln -s "$3" leak.txt && echo wrote a game'
    )
    command = ["sh", "-c", script, "agent", "{workspace}", page, str(secret_file)]
    experiment = tmp_path / "leaky.yaml"
    experiment.write_text(
        "name: leaky\nrepeats: 1\naxes:\n  agent: {levels: [command]}\n"
        "  model: {levels: [claude-sonnet-4-6]}\ndesigns:\n  - type: main_effects\n"
    )
    data = tmp_path / "data"
    env = {
        "BENCH_DATA_DIR": str(data),
        "DAGSTER_HOME": str(tmp_path / "dagster"),
        "BENCH_AGENT_COMMAND": shlex.join(command),
        "BENCH_BOT_ENDURANCE_S": "3",
    }
    for name in ("BENCH_ARTIFACTS_DIR", "BENCH_WAREHOUSE", "BENCH_REPLAY_DIR"):
        env[name] = ""

    done = _bench("run", str(experiment), "--endurance-seconds", "3", env=env, timeout=900)
    time.sleep(0.5)

    output = done.stdout + done.stderr
    assert value not in output
    assert files_containing(data, value.encode()) == []
    assert files_containing(tmp_path / "dagster", value.encode()) == []
    assert listener.connections == 0 and listener.received == b""
    rows = _bench(
        "sql", "select run_id, status, build_ok, gameplay_score from fct_runs", "--json", env=env
    )
    assert rows.returncode == 0, rows.stderr[-2000:]
    runs = json.loads(rows.stdout)
    assert len(runs) == 1, (runs, output[-3000:])
    # The bot played the page it was given: it loaded (a 404 for leak.txt is no crash).
    evaluations = list((data / "artifacts").rglob("evaluation.json"))
    assert evaluations, output[-3000:]
    evaluation = json.loads(evaluations[0].read_text())
    assert evaluation["containment"]["sandbox"] == "bubblewrap"
    urls = " ".join(b["url"] for b in evaluation["containment"]["blocked_requests"])
    assert f"127.0.0.1:{listener.port}/fetch" in urls

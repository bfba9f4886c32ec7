"""SonarQube client against a real local HTTP server answering the documented Web API
responses (fixtures in `sonar_fixtures/`) and a fake `sonar-scanner` on PATH."""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from bench_pipeline.quality.sonar import (
    METRIC_KEYS,
    NOT_CONFIGURED,
    SonarConfig,
    rating_letter,
    sonar_metrics,
)

FIXTURES = Path(__file__).parent / "sonar_fixtures"
TOKEN = "squ_0123456789abcdef"
KEY = "demo.c0a1b2c3d4e5.r0"
TASK_ID = "AVAn5RKqYwETbXvgas-I"


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


@dataclass
class FakeSonar:
    """What the fake server answers, and what it was asked."""

    url: str = ""
    # Fixture answered by each /api/ce/task poll, in order; the last one repeats.
    task_fixtures: list[str] = field(default_factory=lambda: ["task_success.json"])
    measures: bytes = field(default_factory=lambda: fixture("measures_component.json"))
    delay_s: float = 0.0
    requests: list[dict[str, Any]] = field(default_factory=list)
    polls: int = 0


def _handler(state: FakeSonar) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            pass

        def _send(self, status: int, body: bytes = b"") -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            url = urlparse(self.path)
            query = {k: v[0] for k, v in parse_qs(url.query).items()}
            auth = self.headers.get("Authorization")
            state.requests.append({"path": url.path, "query": query, "auth": auth})
            if state.delay_s:
                time.sleep(state.delay_s)
            if auth != f"Bearer {TOKEN}":
                # SonarQube answers a bad or missing token with a bare 401.
                self._send(401)
            elif url.path == "/api/ce/task":
                if query.get("id") != TASK_ID:
                    self._send(404, fixture("error_task_not_found.json"))
                    return
                index = min(state.polls, len(state.task_fixtures) - 1)
                state.polls += 1
                self._send(200, fixture(state.task_fixtures[index]))
            elif url.path == "/api/measures/component":
                if query.get("component") != KEY:
                    self._send(404, fixture("error_component_not_found.json"))
                    return
                assert query.get("metricKeys", "").split(",") == list(METRIC_KEYS)
                self._send(200, state.measures)
            else:
                self._send(404, b'{"errors": [{"msg": "Unknown url"}]}')

    return Handler


@pytest.fixture
def server() -> Iterator[FakeSonar]:
    state = FakeSonar()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    httpd.daemon_threads = True
    httpd.block_on_close = False  # a deliberately slow answer must not hold up teardown
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield state
    httpd.shutdown()
    httpd.server_close()


FAKE_SCANNER = """#!{python}
# A stand-in for sonar-scanner: logs how it was called, then writes the report-task.txt
# the real scanner leaves for the compute engine task it submitted.
import json, os, sys, time
from pathlib import Path

props = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("-D") and "=" in a)
Path(os.environ["FAKE_SCANNER_LOG"]).write_text(json.dumps({{"argv": sys.argv[1:], "cwd": os.getcwd()}}))
time.sleep(float(os.environ.get("FAKE_SCANNER_SLEEP", "0")))
code = int(os.environ.get("FAKE_SCANNER_EXIT", "0"))
if code:
    print("ERROR: Error during SonarScanner execution, token=" + props.get("sonar.token", ""))
    sys.exit(code)
if os.environ.get("FAKE_SCANNER_NO_REPORT"):
    sys.exit(0)
work = Path(".scannerwork")
work.mkdir(exist_ok=True)
url = props["sonar.host.url"]
(work / "report-task.txt").write_text(
    "projectKey=" + props["sonar.projectKey"] + "\\n"
    "serverUrl=" + url + "\\n"
    "serverVersion=10.7.0\\n"
    "dashboardUrl=" + url + "/dashboard?id=" + props["sonar.projectKey"] + "\\n"
    "ceTaskId={task}\\n"
    "ceTaskUrl=" + url + "/api/ce/task?id={task}\\n"
)
"""


@pytest.fixture
def scanner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The fake `sonar-scanner` first on PATH; returns the file its call is logged to."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "sonar-scanner"
    script.write_text(FAKE_SCANNER.format(python=sys.executable, task=TASK_ID))
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    log = tmp_path / "scanner-call.json"
    monkeypatch.setenv("FAKE_SCANNER_LOG", str(log))
    monkeypatch.delenv("FAKE_SCANNER_EXIT", raising=False)
    monkeypatch.delenv("FAKE_SCANNER_NO_REPORT", raising=False)
    monkeypatch.delenv("FAKE_SCANNER_SLEEP", raising=False)
    return log


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "game.js").write_text("const x = 1;\n")
    return folder


def config(url: str, token: str = TOKEN, **overrides: Any) -> SonarConfig:
    return SonarConfig(url, token, **{"poll_interval_s": 0.02, "timeout_s": 10, **overrides})


def assert_all_null(record: dict[str, Any], reason_part: str) -> dict[str, str]:
    for key in METRIC_KEYS:
        assert record[key] is None, key
    reasons = json.loads(record["unavailable"])
    assert set(reasons) == set(METRIC_KEYS)
    assert all(reason_part in r for r in reasons.values()), reasons
    assert all(TOKEN not in r for r in reasons.values())
    return reasons


# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "token"), [(None, None), ("http://sonar:9000", None), (None, TOKEN), ("", " ")]
)
def test_not_configured_gives_null_fields_with_the_reason(
    project: Path, url: str | None, token: str | None
) -> None:
    report = sonar_metrics(project, KEY, SonarConfig(url, token))
    assert_all_null(report.to_record(), NOT_CONFIGURED)
    assert report.unavailable["bugs"] == NOT_CONFIGURED
    assert not (project / ".scannerwork").exists()


def test_success_scans_waits_and_reads_the_measures(
    project: Path, server: FakeSonar, scanner: Path
) -> None:
    server.task_fixtures = ["task_pending.json", "task_in_progress.json", "task_success.json"]
    report = sonar_metrics(project, KEY, config(server.url + "/"))
    record = report.to_record()
    assert record == {
        "cognitive_complexity": 42,
        "bugs": 3,
        "vulnerabilities": 0,  # a real zero, sent by the server
        "code_smells": 17,
        "sqale_rating": "A",
        "reliability_rating": "C",
        "security_rating": "E",
        "unavailable": None,
    }
    json.dumps(record)
    # Polled until SUCCESS, every request with the token as Bearer auth.
    assert [r["path"] for r in server.requests] == ["/api/ce/task"] * 3 + [
        "/api/measures/component"
    ]
    assert all(r["query"].get("id") == TASK_ID for r in server.requests[:3])
    assert all(r["auth"] == f"Bearer {TOKEN}" for r in server.requests)
    call = json.loads(scanner.read_text())
    assert call["cwd"] == str(project)
    assert call["argv"] == [
        f"-Dsonar.projectKey={KEY}",
        "-Dsonar.sources=.",
        f"-Dsonar.host.url={server.url}",
        f"-Dsonar.token={TOKEN}",
    ]
    assert not (project / ".scannerwork").exists()  # the scanner's cache is not left behind


def test_measures_only_without_scanning(project: Path, server: FakeSonar) -> None:
    report = sonar_metrics(project, KEY, config(server.url), run_scanner=False)
    assert report.bugs == 3 and report.unavailable == {}
    assert [r["path"] for r in server.requests] == ["/api/measures/component"]


def test_a_metric_the_server_does_not_report_is_null_with_its_own_reason(
    project: Path, server: FakeSonar
) -> None:
    server.measures = fixture("measures_partial.json")
    report = sonar_metrics(project, KEY, config(server.url), run_scanner=False)
    assert (report.bugs, report.code_smells, report.sqale_rating) == (0, 4, "B")
    assert report.cognitive_complexity is None and report.security_rating is None
    assert set(report.unavailable) == {
        "cognitive_complexity",
        "vulnerabilities",
        "reliability_rating",
        "security_rating",
    }
    assert "reported no cognitive_complexity" in report.unavailable["cognitive_complexity"]


def test_rejected_token(project: Path, server: FakeSonar, scanner: Path) -> None:
    report = sonar_metrics(project, KEY, config(server.url, token="squ_wrong"))
    reasons = assert_all_null(report.to_record(), "HTTP 401")
    assert "squ_wrong" not in json.dumps(reasons)
    assert server.requests[0]["auth"] == "Bearer squ_wrong"


def test_unknown_component(project: Path, server: FakeSonar) -> None:
    report = sonar_metrics(project, "no.such.project", config(server.url), run_scanner=False)
    reasons = assert_all_null(report.to_record(), "HTTP 404")
    assert "not found" in reasons["bugs"]  # the server's own message is kept


def test_server_down(project: Path, scanner: Path) -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    report = sonar_metrics(project, KEY, config(f"http://127.0.0.1:{port}"))
    assert_all_null(report.to_record(), "cannot reach SonarQube")


def test_failed_analysis_task(project: Path, server: FakeSonar, scanner: Path) -> None:
    server.task_fixtures = ["task_pending.json", "task_failed.json"]
    report = sonar_metrics(project, KEY, config(server.url))
    reasons = assert_all_null(report.to_record(), "ended FAILED")
    assert "Fail to extract report" in reasons["bugs"]
    assert "/api/measures/component" not in [r["path"] for r in server.requests]


def test_a_task_that_never_finishes_hits_the_time_cap(
    project: Path, server: FakeSonar, scanner: Path
) -> None:
    server.task_fixtures = ["task_in_progress.json"]
    started = time.monotonic()
    report = sonar_metrics(project, KEY, config(server.url, timeout_s=0.8, poll_interval_s=0.05))
    assert time.monotonic() - started < 5
    assert_all_null(report.to_record(), "still IN_PROGRESS")
    assert server.polls >= 2


def test_a_slow_answer_hits_the_request_timeout(project: Path, server: FakeSonar) -> None:
    server.delay_s = 1.0
    started = time.monotonic()
    report = sonar_metrics(project, KEY, config(server.url, http_timeout_s=0.2), run_scanner=False)
    assert time.monotonic() - started < 0.9
    assert_all_null(report.to_record(), "did not answer")


def test_invalid_json(project: Path, server: FakeSonar) -> None:
    server.measures = b"<html>Bad gateway</html>"
    report = sonar_metrics(project, KEY, config(server.url), run_scanner=False)
    assert_all_null(report.to_record(), "invalid JSON")


def test_scanner_missing(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    report = sonar_metrics(project, KEY, config("http://127.0.0.1:9"))
    assert_all_null(report.to_record(), "sonar-scanner not found on PATH: sonar-scanner")


def test_scanner_failure_is_reported_without_the_token(
    project: Path, server: FakeSonar, scanner: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_SCANNER_EXIT", "2")
    report = sonar_metrics(project, KEY, config(server.url))
    reasons = assert_all_null(report.to_record(), "sonar-scanner failed (exit 2)")
    assert "token=***" in reasons["bugs"]
    assert server.requests == []


def test_a_scanner_that_hangs_is_stopped_at_the_time_cap(
    project: Path, server: FakeSonar, scanner: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_SCANNER_SLEEP", "30")
    started = time.monotonic()
    report = sonar_metrics(project, KEY, config(server.url, timeout_s=0.5))
    assert time.monotonic() - started < 5
    assert_all_null(report.to_record(), "sonar-scanner timed out")
    assert server.requests == []


def test_scanner_without_report_and_a_stale_report_is_not_read(
    project: Path, server: FakeSonar, scanner: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stale = project / ".scannerwork" / "report-task.txt"
    stale.parent.mkdir()
    stale.write_text(f"ceTaskId={TASK_ID}\n")
    monkeypatch.setenv("FAKE_SCANNER_NO_REPORT", "1")
    report = sonar_metrics(project, KEY, config(server.url))
    assert_all_null(report.to_record(), "wrote no .scannerwork/report-task.txt")
    assert server.requests == []
    assert (project / ".scannerwork").is_dir()  # it was there before: left alone


def test_rating_letters() -> None:
    assert [rating_letter(v) for v in ("1.0", "2.0", "3", 4.0, "5.0")] == list("ABCDE")
    assert [rating_letter(v) for v in ("0.0", "6.0", "2.5", "x", None, "")] == [None] * 6


def test_config_repr_hides_the_token() -> None:
    assert TOKEN not in repr(SonarConfig("http://sonar:9000", TOKEN))

"""SonarQube measures of a project: run the scanner, wait for the server, read the metrics.

Optional by design: with no server configured (the default here), every Sonar field is None,
never zero, and `unavailable` says why. The same holds for every failure on the way (scanner
missing or failing, token rejected, project unknown, server down, analysis failed or too
slow): the report carries the reason, nothing raises.

Web API used (SonarQube 10+, token sent as `Authorization: Bearer <token>`):

- `GET /api/ce/task?id=<ceTaskId>` -> `{"task": {"id", "status", "analysisId", ...}}`,
  status one of PENDING, IN_PROGRESS, SUCCESS, FAILED, CANCELED;
- `GET /api/measures/component?component=<key>&metricKeys=<k1,k2,...>`
  -> `{"component": {"key", "measures": [{"metric": "bugs", "value": "3"}, ...]}}`;
  a metric the server has no value for is simply absent from `measures`;
- errors come as `{"errors": [{"msg": "..."}]}` with a 4xx status.

The scanner writes `<project>/.scannerwork/report-task.txt` (Java properties) whose
`ceTaskId` names the server-side analysis to wait for.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

NOT_CONFIGURED = "no SonarQube server configured (set BENCH_SONAR_URL and BENCH_SONAR_TOKEN)"
METRIC_KEYS = (
    "cognitive_complexity",
    "bugs",
    "vulnerabilities",
    "code_smells",
    "sqale_rating",
    "reliability_rating",
    "security_rating",
)
RATING_METRICS = frozenset({"sqale_rating", "reliability_rating", "security_rating"})
WORK_DIR = ".scannerwork"
REPORT_TASK = "report-task.txt"
PENDING_STATUSES = frozenset({"PENDING", "IN_PROGRESS"})
OUTPUT_TAIL_CHARS = 600


@dataclass(frozen=True)
class SonarConfig:
    """Where the server is. `timeout_s` caps the whole analysis (scanner plus waiting for
    the server's compute engine); `http_timeout_s` caps each Web API request."""

    url: str | None
    token: str | None = field(repr=False)  # kept out of logs and tracebacks
    scanner: str = "sonar-scanner"
    timeout_s: float = 300
    poll_interval_s: float = 2.0
    http_timeout_s: float = 30.0

    @property
    def configured(self) -> bool:
        return bool((self.url or "").strip() and (self.token or "").strip())


@dataclass
class SonarReport:
    """SonarQube's measures of one project. A None field has its reason in `unavailable`."""

    cognitive_complexity: int | None = None
    bugs: int | None = None
    vulnerabilities: int | None = None
    code_smells: int | None = None
    sqale_rating: str | None = None  # maintainability, A (best) to E
    reliability_rating: str | None = None
    security_rating: str | None = None
    unavailable: dict[str, str] = field(default_factory=dict)

    @classmethod
    def failed(cls, reason: str) -> SonarReport:
        """Every field None for the same reason."""
        return cls(unavailable=dict.fromkeys(METRIC_KEYS, reason))

    def to_record(self) -> dict[str, Any]:
        """Flat and JSON-able: `unavailable` as JSON text (None when every field is known)."""
        record: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self)}
        record["unavailable"] = (
            json.dumps(self.unavailable, sort_keys=True) if self.unavailable else None
        )
        return record


class SonarError(Exception):
    """A step failed; the message is the reason recorded (never contains the token)."""


def rating_letter(value: str | float | None) -> str | None:
    """SonarQube's numeric rating (1.0 = A … 5.0 = E) as its letter; None if not one."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    index = round(number)
    # Ratings are whole numbers sent as "1.0"; anything else is not a rating we understand.
    if abs(number - index) > 1e-6 or not 1 <= index <= 5:
        return None
    return "ABCDE"[index - 1]


def _count(value: str | float | None) -> int | None:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return int(number) if number.is_integer() and number >= 0 else None


class _Client:
    """The few Web API calls needed, each turning every failure into a SonarError."""

    def __init__(self, config: SonarConfig) -> None:
        self.base = str(config.url).strip().rstrip("/")
        self.token = str(config.token).strip()
        self.timeout_s = config.http_timeout_s

    def get(self, path: str, params: dict[str, str], *, deadline: float | None = None) -> Any:
        url = f"{self.base}{path}?{urllib.parse.urlencode(params)}"
        request = urllib.request.Request(
            url,
            headers={"Authorization": f"Bearer {self.token}", "Accept": "application/json"},
        )
        timeout = self.timeout_s
        if deadline is not None:
            timeout = max(0.1, min(timeout, deadline - time.monotonic()))
        where = f"{self.base}{path}"
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                body = response.read()
        except urllib.error.HTTPError as exc:
            raise SonarError(self._http_error(exc, where)) from None
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, TimeoutError):
                raise SonarError(
                    f"SonarQube did not answer within {timeout:.0f}s: {where}"
                ) from None
            raise SonarError(f"cannot reach SonarQube at {self.base}: {exc.reason}") from None
        except TimeoutError:
            raise SonarError(f"SonarQube did not answer within {timeout:.0f}s: {where}") from None
        except (OSError, ValueError, http.client.HTTPException) as exc:
            # Reset connections, cut-off answers, a URL without a scheme.
            raise SonarError(f"request to SonarQube failed ({where}): {exc}") from None
        try:
            return json.loads(body)
        except ValueError:
            snippet = body[:120].decode("utf-8", errors="replace")
            raise SonarError(f"invalid JSON from SonarQube ({where}): {snippet!r}") from None

    @staticmethod
    def _http_error(exc: urllib.error.HTTPError, where: str) -> str:
        # The server explains 4xx answers as {"errors": [{"msg": ...}]}: keep its words.
        detail = ""
        try:
            payload = json.loads(exc.read() or b"{}")
            messages = [e.get("msg") for e in payload.get("errors", []) if isinstance(e, dict)]
            detail = "; ".join(str(m) for m in messages if m)
        except (ValueError, AttributeError, OSError):
            pass
        meaning = {
            401: "the token was rejected (check BENCH_SONAR_TOKEN)",
            403: "the token lacks permission (it needs Browse and Execute Analysis)",
            404: "not found",
        }.get(exc.code, "request failed")
        return f"SonarQube HTTP {exc.code} at {where}: {meaning}" + (
            f" ({detail})" if detail else ""
        )


def _redact(text: str, token: str) -> str:
    # Real tokens are long; a very short test token would mangle the message instead.
    return text.replace(token, "***") if len(token) >= 8 else text


def _run_scanner(project_dir: Path, project_key: str, config: SonarConfig, deadline: float) -> str:
    """Run the scanner in the project; the compute engine task id it submitted."""
    scanner = shutil.which(config.scanner)
    if scanner is None:
        raise SonarError(f"sonar-scanner not found on PATH: {config.scanner}")
    report = project_dir / WORK_DIR / REPORT_TASK
    # A report left by an earlier scan would name an old task: never read that one.
    report.unlink(missing_ok=True)
    token = str(config.token).strip()
    command = [
        scanner,
        f"-Dsonar.projectKey={project_key}",
        "-Dsonar.sources=.",
        f"-Dsonar.host.url={str(config.url).strip().rstrip('/')}",
        f"-Dsonar.token={token}",
    ]
    timeout = max(0.1, deadline - time.monotonic())
    try:
        # Its own process group: the real scanner is a shell script running Java, and a
        # timeout must stop the JVM too, not only the script.
        process = subprocess.Popen(
            command,
            cwd=project_dir,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            start_new_session=True,
        )
    except OSError as exc:
        raise SonarError(_redact(f"sonar-scanner could not start: {exc}", token)) from None
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise SonarError(f"sonar-scanner timed out after {timeout:.0f}s") from None
    if process.returncode != 0:
        tail = (output or "").strip()[-OUTPUT_TAIL_CHARS:]
        raise SonarError(
            _redact(f"sonar-scanner failed (exit {process.returncode}): {tail}", token)
        )
    try:
        text = report.read_text(encoding="utf-8", errors="replace")
    except OSError:
        raise SonarError(f"sonar-scanner wrote no {WORK_DIR}/{REPORT_TASK}") from None
    properties = dict(
        line.split("=", 1) for line in text.splitlines() if "=" in line and not line.startswith("#")
    )
    task_id = properties.get("ceTaskId", "").strip()
    if not task_id:
        raise SonarError(f"no ceTaskId in {WORK_DIR}/{REPORT_TASK}")
    return task_id


def _wait_for_task(client: _Client, task_id: str, config: SonarConfig, deadline: float) -> None:
    """Poll the compute engine until the analysis is processed (SUCCESS) or not."""
    status = "unknown"
    while True:
        payload = client.get("/api/ce/task", {"id": task_id}, deadline=deadline)
        task = payload.get("task") if isinstance(payload, dict) else None
        if not isinstance(task, dict):
            raise SonarError(f"unexpected /api/ce/task answer for task {task_id}")
        status = str(task.get("status") or "unknown")
        if status == "SUCCESS":
            return
        if status not in PENDING_STATUSES:
            message = task.get("errorMessage")
            raise SonarError(
                f"SonarQube analysis task {task_id} ended {status}"
                + (f": {message}" if message else "")
            )
        if time.monotonic() + config.poll_interval_s > deadline:
            raise SonarError(
                f"SonarQube analysis task {task_id} still {status} after {config.timeout_s:.0f}s"
            )
        time.sleep(config.poll_interval_s)


def _read_measures(client: _Client, project_key: str, deadline: float) -> SonarReport:
    payload = client.get(
        "/api/measures/component",
        {"component": project_key, "metricKeys": ",".join(METRIC_KEYS)},
        deadline=deadline,
    )
    component = payload.get("component") if isinstance(payload, dict) else None
    measures = component.get("measures") if isinstance(component, dict) else None
    if not isinstance(measures, list):
        raise SonarError(f"unexpected /api/measures/component answer for {project_key}")
    values = {
        m["metric"]: m.get("value")
        for m in measures
        if isinstance(m, dict) and isinstance(m.get("metric"), str)
    }
    report = SonarReport()
    for key in METRIC_KEYS:
        if key not in values:
            report.unavailable[key] = f"SonarQube reported no {key} for {project_key}"
            continue
        value = rating_letter(values[key]) if key in RATING_METRICS else _count(values[key])
        if value is None:
            report.unavailable[key] = f"SonarQube sent an unreadable {key}: {values[key]!r}"
        setattr(report, key, value)
    return report


def sonar_metrics(
    project_dir: Path, project_key: str, config: SonarConfig, run_scanner: bool = True
) -> SonarReport:
    """Scan `project_dir` as `project_key` and read its measures back.

    `run_scanner=False` skips the scan and the wait: the measures of the last analysis the
    server has. Never raises: any failure is a report of None fields with the reason.
    """
    if not config.configured:
        return SonarReport.failed(NOT_CONFIGURED)
    deadline = time.monotonic() + config.timeout_s
    client = _Client(config)
    project_dir = Path(project_dir)
    created_work_dir = not (project_dir / WORK_DIR).exists()
    try:
        if run_scanner:
            task_id = _run_scanner(project_dir, project_key, config, deadline)
            _wait_for_task(client, task_id, config, deadline)
        return _read_measures(client, project_key, deadline)
    except SonarError as exc:
        # Our messages never contain the token; the scanner's output is redacted where read.
        return SonarReport.failed(str(exc))
    except Exception as exc:
        # Sonar is an optional extra: a bug or surprise here must not fail the quality stage.
        reason = f"SonarQube measures failed unexpectedly: {type(exc).__name__}: {exc}"
        return SonarReport.failed(_redact(reason, client.token))
    finally:
        # The scanner's cache is not part of the agent's project: do not leave it behind.
        if run_scanner and created_work_dir:
            shutil.rmtree(project_dir / WORK_DIR, ignore_errors=True)

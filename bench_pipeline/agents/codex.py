"""Codex CLI (`codex exec --json`) as an agent adapter.

The argv, for a cell with model M and effort E:

    <abs path of codex> exec --json --model M --sandbox workspace-write --skip-git-repo-check
        -c model_reasoning_effort=E -c sandbox_workspace_write.network_access=true
        -c web_search="live"|"disabled" -c tools.web_search=true|false  PROMPT

- `--sandbox workspace-write`: Codex's own sandbox, inside ours, keeps its commands to the
  workspace. Where nested sandboxing fails (Codex's Linux sandbox needs namespaces or
  landlock that an outer sandbox may deny), pass `sandbox_mode="danger-full-access"`: the
  outer sandbox still confines the run.
- `sandbox_workspace_write.network_access=true`: the agent's shell may reach the network
  (npm installs for the framework axis), as Claude Code's Bash may.
- `effort` -> `model_reasoning_effort`: low, medium, high, and max -> "xhigh" (only the
  newest Codex models accept xhigh; others reject it).
- `tool_web_search` -> both spellings of the web search switch: `web_search` (current
  Codex, "live"/"disabled"; newer versions search by default, so off must be explicit) and
  `tools.web_search` (older versions). Codex ignores config keys it does not know.
- `tool_browser`, `tool_subagents`: Codex exec has no stable switch for either; they are
  recorded in the details as not mapped.
- `max_turns`: Codex has no such flag; the harness counts model round trips in the stream
  (see `CodexJsonMeter`) and stops the run past the limit.

Scripted model API (a `scripted-<scenario>` model, see scripted_server.py): a model provider
`-c model_providers.scripted={base_url="http://model-api.scripted.invalid/v1", ...}
-c model_provider=scripted`, as a user adds one for a gateway, with a placeholder key and
`--model gpt-5.5`; no login is copied. Non-essential traffic is off on every run
(`QUIET_CONFIG`).

Budget: `codex exec --json` prints token usage only when its turn ends, i.e. at the end of
the run. While it works, the harness reads the cumulative `token_count` events Codex writes
to its session log under the per-run CODEX_HOME, so an expensive run is stopped mid-way.

Credentials: OPENAI_API_KEY / CODEX_API_KEY / OPENAI_BASE_URL are copied when set (CODEX_API_KEY
is filled from OPENAI_API_KEY when only that is set, since `codex exec` reads CODEX_API_KEY).
A ChatGPT login is used by copying `auth.json` (only that file: a user's config.toml would
change model settings behind the benchmark's back) from the harness's CODEX_HOME (default
~/.codex) into the run's private CODEX_HOME; the copy is deleted when the run ends.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import time
from collections.abc import Sequence
from pathlib import Path

from bench_pipeline.agents.base import AgentSetupError, AgentTask
from bench_pipeline.agents.cli_adapter import (
    SCRIPTED_MAX_RETRIES,
    CliAdapter,
    CliPlan,
    ScriptedApi,
    allowed_hosts,
    host_env,
    prompt_arg,
    resolve_executable,
)
from bench_pipeline.agents.scripted_server import SCRIPTED_API_KEY
from bench_pipeline.agents.transcripts import CodexJsonMeter

INSTALL_HINT = (
    "run `make setup` (installs the pinned Codex CLI into toolchain/agents) or use agent: synthetic"
)
PASSTHROUGH_VARS = ("OPENAI_API_KEY", "CODEX_API_KEY", "OPENAI_BASE_URL")
REASONING_EFFORT = {"low": "low", "medium": "medium", "high": "high", "max": "xhigh"}
SANDBOX_MODES = ("workspace-write", "danger-full-access")
# What Codex is told it runs when the model API is the scripted one (see claude_code.py).
SCRIPTED_API_MODEL = "gpt-5.5"
SCRIPTED_KEY_VAR = "BENCH_SCRIPTED_API_KEY"
# Codex's own switches for traffic a benchmark run does not need (config keys; Codex ignores
# keys it does not know): no analytics events, no OpenTelemetry export, no update check, no
# plugin catalogue sync.
QUIET_CONFIG = (
    "analytics.enabled=false",
    'otel.exporter="none"',
    'otel.trace_exporter="none"',
    "check_for_update_on_startup=false",
    "feedback.enabled=false",
    # The curated-plugins sync at start-up (github.com, api.github.com, chatgpt.com).
    "features.plugins=false",
)
# The session log is looked for at most this often until found (a recursive glob per line
# would be wasteful), and then read incrementally at most this often.
SESSION_SCAN_INTERVAL_S = 0.5
SESSION_READ_INTERVAL_S = 0.1
SESSION_READ_MAX_BYTES = 4 * 1024 * 1024  # per poll: a runaway log is read in pieces


def host_codex_home() -> Path:
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")


class SessionLogReader:
    """Follows Codex's session log (`$CODEX_HOME/sessions/**/rollout-*.jsonl`) and feeds its
    cumulative token counts to the meter, so the running cost is known mid-turn."""

    def __init__(self, codex_home: Path, meter: CodexJsonMeter) -> None:
        self.sessions = codex_home / "sessions"
        self.meter = meter
        self.path: Path | None = None
        self._offset = 0
        self._partial = b""
        self._next_poll = 0.0

    def poll(self, *, force: bool = False) -> None:
        now = time.monotonic()
        if now < self._next_poll and not force:
            return
        if self.path is None:
            self._next_poll = now + SESSION_SCAN_INTERVAL_S
            # Sub-agent threads write logs of their own; the main thread's log comes first.
            logs = sorted(self.sessions.glob("**/rollout-*.jsonl"), key=_mtime)
            if not logs:
                return
            self.path = logs[0]
        self._next_poll = now + SESSION_READ_INTERVAL_S
        data = _read_regular_file(self.path, self._offset, SESSION_READ_MAX_BYTES)
        self._offset += len(data)
        *lines, self._partial = (self._partial + data).split(b"\n")
        for line in lines:
            self._line(line)

    def _line(self, line: bytes) -> None:
        try:
            event = json.loads(line)
        except ValueError:
            return
        payload = event.get("payload") if isinstance(event, dict) else None
        if not isinstance(payload, dict) or payload.get("type") != "token_count":
            return
        info = payload.get("info")
        total = info.get("total_token_usage") if isinstance(info, dict) else None
        if isinstance(total, dict):
            self.meter.feed_session_totals(total)


def _read_regular_file(path: Path, offset: int, limit: int) -> bytes:
    """Up to `limit` bytes from `offset`, only if `path` is a regular file and not a link:
    the log lies in a folder the agent controls, and a planted FIFO or link to a huge or
    private file must neither block nor feed the harness."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return b""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return b""
        return os.pread(fd, limit, offset)
    except OSError:
        return b""
    finally:
        os.close(fd)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


class CodexAdapter(CliAdapter):
    name = "codex"

    def __init__(
        self,
        executable: str = "codex",
        *,
        sandbox_mode: str = "workspace-write",
        extra_args: Sequence[str] = (),
    ) -> None:
        if sandbox_mode not in SANDBOX_MODES:
            raise AgentSetupError(
                f"codex sandbox mode {sandbox_mode!r} cannot build a project; "
                f"use one of {', '.join(SANDBOX_MODES)}"
            )
        self.executable = executable
        self.sandbox_mode = sandbox_mode
        self.extra_args = list(extra_args)

    def build(self, task: AgentTask, home: Path, scripted: ScriptedApi | None = None) -> CliPlan:
        exe = resolve_executable(self.executable, INSTALL_HINT)
        effort = str(task.config.get("effort", "medium"))
        if effort not in REASONING_EFFORT:
            raise AgentSetupError(
                f"effort {effort!r} has no Codex reasoning effort; known: "
                f"{', '.join(REASONING_EFFORT)}"
            )
        web = bool(task.config.get("tool_web_search"))
        argv = [
            str(exe),
            "exec",
            "--json",
            "--model",
            SCRIPTED_API_MODEL if scripted else task.model,
            "--sandbox",
            self.sandbox_mode,
            "--skip-git-repo-check",
            "-c",
            f"model_reasoning_effort={REASONING_EFFORT[effort]}",
            "-c",
            "sandbox_workspace_write.network_access=true",
            "-c",
            f'web_search="{"live" if web else "disabled"}"',
            "-c",
            f"tools.web_search={'true' if web else 'false'}",
            *(arg for item in QUIET_CONFIG for arg in ("-c", item)),
            *(self._scripted_provider(scripted) if scripted else ()),
            *self.extra_args,
            prompt_arg(task.prompt),
        ]
        codex_home = home / ".codex"
        codex_home.mkdir()
        if scripted:
            # The scripted API gets no login nor key of the user's: a placeholder key.
            login_copied = False
            env = {SCRIPTED_KEY_VAR: SCRIPTED_API_KEY, "CODEX_HOME": str(codex_home)}
        else:
            login_copied = self._copy_login(codex_home)
            env = {**host_env(PASSTHROUGH_VARS), "CODEX_HOME": str(codex_home)}
            if "OPENAI_API_KEY" in env and "CODEX_API_KEY" not in env:
                env["CODEX_API_KEY"] = env["OPENAI_API_KEY"]
        # Codex will not set up its own sandbox's helpers when CODEX_HOME lies under the temp
        # folder (TMPDIR, else /tmp), and then no command it runs works: a private temp folder
        # in the run's HOME keeps a run folder under /tmp (a test's, a scratch store) usable.
        tmp = home / "tmp"
        tmp.mkdir()
        env["TMPDIR"] = str(tmp)
        meter = CodexJsonMeter()
        reader = SessionLogReader(codex_home, meter)
        hint = ""
        if not scripted and not login_copied and "CODEX_API_KEY" not in env:
            hint = f"note: no OPENAI_API_KEY/CODEX_API_KEY set and no {host_codex_home()}/auth.json"
        return CliPlan(
            label="codex",
            argv=argv,
            meter=meter,
            env=env,
            structured="codex exec --json",
            allowed_hosts=() if scripted else allowed_hosts(self.name, "OPENAI_BASE_URL"),
            on_line=reader.poll,
            finish=lambda: self._finish(reader, codex_home),
            details={
                "codex_sandbox": self.sandbox_mode,
                "reasoning_effort": REASONING_EFFORT[effort],
                "web_search": web,
                "login_copied": login_copied,
                "unmapped_axes": {
                    "tool_browser": bool(task.config.get("tool_browser")),
                    "tool_subagents": bool(task.config.get("tool_subagents")),
                },
            },
            failure_hint=hint,
        )

    @staticmethod
    def _scripted_provider(api: ScriptedApi) -> tuple[str, ...]:
        """A model provider for the scripted API, as a user adds one for a gateway."""
        retries = SCRIPTED_MAX_RETRIES
        provider = (
            f'{{name="scripted",base_url="{api.base_url}/v1",wire_api="responses",'
            f'env_key="{SCRIPTED_KEY_VAR}",request_max_retries={retries},'
            f"stream_max_retries={retries}}}"
        )
        return ("-c", f"model_providers.scripted={provider}", "-c", "model_provider=scripted")

    @staticmethod
    def _finish(reader: SessionLogReader, codex_home: Path) -> None:
        # The last token counts of a killed run (timeout) price its partial usage.
        reader.poll(force=True)
        # The run folder is kept as an artifact: no copy of the login stays in it.
        (codex_home / "auth.json").unlink(missing_ok=True)

    @staticmethod
    def _copy_login(codex_home: Path) -> bool:
        auth = host_codex_home() / "auth.json"
        if not auth.is_file():
            return False
        shutil.copyfile(auth, codex_home / "auth.json")
        (codex_home / "auth.json").chmod(0o600)
        return True

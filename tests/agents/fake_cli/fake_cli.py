"""Stand-ins for the `claude` and `codex` CLIs, for what the real ones cannot be made to show.

The real CLIs run in tests/agents/test_real_cli.py against the scripted model API
(bench_pipeline/agents/scripted_server.py). These fakes remain for a CLI's own misbehaviour
(stdout that is not JSON, a crash, a transcript cut mid-line) and for how the user's
credentials reach a run (a scripted run never gets them).

Each fake parses its argv the way the real CLI does (refusing what the real one refuses,
e.g. stream-json without --verbose, or bypassPermissions as root without IS_SANDBOX=1),
logs its invocation to `$HOME/fake_cli_invocation.json`, then replays a recorded session
from `transcripts/` line by line with a small delay (real streaming), performing the file
writes the session describes in its working directory. `$HOME/fake_cli_progress` holds the
number of the last line printed, so a test can tell how far a stopped run got.

The scenario is chosen by a marker in the prompt, `FAKE_SCENARIO=<name>` (the sandbox
starts from a clean environment, so an environment variable would not get through):

    success    the whole recorded session
    budget     a long session whose cost grows every message (to be stopped mid-way)
    garbage    text that is not JSON, exit 0
    crash      a few events, a stack trace on stderr, exit 1
    hang       a few events, then sleeps forever (to be killed at the time limit)
    truncated  the whole session, but its last line cut in half, exit 0

A second marker, `FAKE_DELAY_S=<seconds>`, sets the pause after each printed line (0.02 s by
default): a test that stops the CLI mid-way uses a longer one, so that on a loaded machine
the session cannot reach its end before the harness's kill does.

Runs under the system `python3` (the sandbox's clean PATH finds that one); stdlib only.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.dont_write_bytecode = True  # the fake's own folder is read-only in the sandbox

HERE = Path(__file__).resolve().parent
TRANSCRIPTS = HERE / "transcripts"
DELAY_S = 0.02
delay_s = DELAY_S  # set from the prompt's FAKE_DELAY_S marker
SCENARIOS = ("success", "budget", "garbage", "crash", "hang", "truncated")
SHOWN_ENV = (
    "HOME",
    "PATH",
    "MAX_THINKING_TOKENS",
    "IS_SANDBOX",
    "DISABLE_AUTOUPDATER",
    "CODEX_HOME",
)
SECRET_ENV = (
    "ANTHROPIC_API_KEY",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "OPENAI_API_KEY",
    "CODEX_API_KEY",
)
GARBAGE = (
    "Welcome to the agent CLI v9.9!",
    "<html><body><h1>502 Bad Gateway</h1></body></html>",
    "Traceback (most recent call last): nothing useful here",
)


class Parser(argparse.ArgumentParser):
    """Errors the way the real CLIs do: one line on stderr, exit 1 (not argparse's 2)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        fail(f"error: {message}")


def fail(message: str, code: int = 1) -> None:
    sys.stderr.write(message + "\n")
    sys.stderr.flush()
    sys.exit(code)


def home() -> Path:
    return Path(os.environ.get("HOME") or "/tmp")


def pace_from(prompt: str) -> None:
    global delay_s
    match = re.search(r"FAKE_DELAY_S=([0-9.]+)", prompt)
    delay_s = float(match.group(1)) if match else DELAY_S


def scenario_of(prompt: str) -> str:
    match = re.search(r"FAKE_SCENARIO=(\w+)", prompt)
    name = match.group(1) if match else "success"
    if name not in SCENARIOS:
        fail(f"fake CLI: unknown scenario {name!r}")
    return name


def log_invocation(cli: str, scenario: str, args: dict[str, Any]) -> None:
    record = {
        "cli": cli,
        "argv": sys.argv[1:],
        "args": args,
        "scenario": scenario,
        "cwd": os.getcwd(),
        "uid": os.getuid(),
        "env": {name: os.environ.get(name) for name in SHOWN_ENV},
        # Names only: the values are credentials.
        "secrets_present": sorted(name for name in SECRET_ENV if os.environ.get(name)),
        "env_names": sorted(os.environ),
    }
    if os.environ.get("CODEX_HOME"):
        record["codex_home_files"] = sorted(os.listdir(os.environ["CODEX_HOME"]))
    (home() / "fake_cli_invocation.json").write_text(json.dumps(record, indent=1))


def emit(text: str, number: int, newline: bool = True) -> None:
    sys.stdout.write(text + ("\n" if newline else ""))
    sys.stdout.flush()
    # Atomically: the fake may be killed at any instant, and a test reads this file after.
    partial = home() / "fake_cli_progress.tmp"
    partial.write_text(str(number))
    os.replace(partial, home() / "fake_cli_progress")
    time.sleep(delay_s)


def load(name: str) -> list[str]:
    return (TRANSCRIPTS / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()


def local_path(path: str, recorded_cwd: str) -> Path:
    """A path of the recorded session, moved into today's working directory."""
    if path.startswith(recorded_cwd + "/"):
        path = path[len(recorded_cwd) + 1 :]
    return Path.cwd() / path.lstrip("/")


def replay(
    lines: list[str],
    scenario: str,
    effect: Callable[[int, dict[str, Any]], int | None],
) -> int:
    """Print `lines` as the scenario says; `effect` runs before each parsed line is printed
    and may end the session early by returning an exit code."""
    if scenario == "garbage":
        for number, text in enumerate(GARBAGE, start=1):
            emit(text, number)
        return 0
    if scenario in ("crash", "hang"):
        lines = lines[:3]
    for number, line in enumerate(lines, start=1):
        event = json.loads(line)
        code = effect(number - 1, event)
        if code is not None:
            return code
        if scenario == "truncated" and number == len(lines):
            emit(line[: len(line) // 2], number, newline=False)
            return 0
        emit(line, number)
    if scenario == "crash":
        fail(
            "file:///usr/lib/node_modules/agent/cli.js:4242\n"
            "    throw new APIError(529, 'Overloaded');\n"
            'Error: 529 {"type":"error","error":{"type":"overloaded_error"}}'
        )
    if scenario == "hang":
        time.sleep(3600)
    (home() / "fake_cli_done").write_text("reached the end of the session\n")
    return 0


# ------------------------------------------------------------------------------ claude


def claude_main() -> int:
    parser = Parser(prog="claude")
    parser.add_argument("prompt", nargs="?")
    parser.add_argument("-p", "--print", action="store_true", dest="print_mode")
    parser.add_argument("--output-format", choices=("text", "json", "stream-json"))
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--model")
    parser.add_argument("--max-turns", type=int)
    parser.add_argument(
        "--permission-mode",
        choices=("default", "acceptEdits", "bypassPermissions", "plan", "dontAsk"),
    )
    parser.add_argument("--allowedTools", action="append", default=[])
    parser.add_argument("--disallowedTools", action="append", default=[])
    args = parser.parse_args()
    if not args.print_mode:
        fail("fake claude: only print mode (-p) is supported")
    if not args.prompt or not args.prompt.strip():
        fail("Error: Input must be provided either through stdin or as a prompt argument")
    if args.output_format != "stream-json":
        fail("fake claude: the harness must ask for --output-format stream-json")
    if not args.verbose:
        fail("Error: When using --print, --output-format=stream-json requires --verbose")
    if not args.model or args.max_turns is None:
        fail("fake claude: the harness must pass --model and --max-turns")
    if (
        args.permission_mode == "bypassPermissions"
        and os.getuid() == 0
        and os.environ.get("IS_SANDBOX") != "1"
    ):
        fail(
            "--dangerously-skip-permissions cannot be used with root/sudo privileges "
            "for security reasons"
        )
    scenario = scenario_of(args.prompt)
    pace_from(args.prompt)
    log_invocation("claude", scenario, vars(args))
    lines = load("claude_budget" if scenario == "budget" else "claude_success")
    messages: dict[str, None] = {}
    recorded_cwd = json.loads(lines[0]).get("cwd", "")

    def effect(index: int, event: dict[str, Any]) -> int | None:
        message = event.get("message") or {}
        if event.get("type") == "assistant" and event.get("parent_tool_use_id") is None:
            if message.get("id") not in messages and len(messages) >= args.max_turns:
                # Claude Code 2.x counts the prompt as a turn: num_turns = replies + 1.
                emit(json.dumps(max_turns_result(args.max_turns, len(messages))), index + 1)
                return 1
            messages[message.get("id")] = None
        for block in message.get("content") or []:
            if block.get("type") == "tool_use":
                apply_claude_tool(block.get("name"), block.get("input") or {}, recorded_cwd)
        return None

    return replay(lines, scenario, effect)


def max_turns_result(max_turns: int, replies: int) -> dict[str, Any]:
    return {
        "type": "result",
        "subtype": "error_max_turns",
        "is_error": True,
        "num_turns": replies + 1,
        "terminal_reason": "max_turns",
        "errors": [f"Reached maximum number of turns ({max_turns})"],
        "session_id": "fake",
    }


def apply_claude_tool(name: str, tool_input: dict[str, Any], recorded_cwd: str) -> None:
    if name == "Write":
        target = local_path(tool_input["file_path"], recorded_cwd)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(tool_input["content"], encoding="utf-8")
    elif name == "Edit":
        target = local_path(tool_input["file_path"], recorded_cwd)
        text = target.read_text(encoding="utf-8")
        target.write_text(text.replace(tool_input["old_string"], tool_input["new_string"], 1))


# ------------------------------------------------------------------------------- codex


def codex_main() -> int:
    parser = Parser(prog="codex")
    sub = parser.add_subparsers(dest="command")
    run = sub.add_parser("exec")
    run.error = parser.error  # type: ignore[method-assign]
    run.add_argument("prompt", nargs="?")
    run.add_argument("--json", action="store_true")
    run.add_argument("-m", "--model")
    run.add_argument(
        "-s", "--sandbox", choices=("read-only", "workspace-write", "danger-full-access")
    )
    run.add_argument("--skip-git-repo-check", action="store_true")
    run.add_argument("-c", "--config", action="append", default=[])
    run.add_argument("-C", "--cd")
    run.add_argument("--full-auto", action="store_true")
    run.add_argument("--dangerously-bypass-approvals-and-sandbox", action="store_true")
    args = parser.parse_args()
    if args.command != "exec":
        fail("fake codex: only `codex exec` is supported")
    if not args.json:
        fail("fake codex: the harness must ask for --json")
    if not args.prompt or not args.prompt.strip():
        fail("No prompt provided. Either specify one as an argument or pipe it into stdin.")
    if not args.model:
        fail("fake codex: the harness must pass --model")
    for override in args.config:
        if "=" not in override:
            fail(f"Invalid override (missing '='): {override}")
    if not args.skip_git_repo_check and not Path(".git").exists():
        fail("Not inside a trusted directory and --skip-git-repo-check was not specified.")
    scenario = scenario_of(args.prompt)
    pace_from(args.prompt)
    log_invocation("codex", scenario, vars(args))
    name = "codex_budget" if scenario == "budget" else "codex_success"
    lines = load(name)
    extra = json.loads((TRANSCRIPTS / f"{name}.fake.json").read_text(encoding="utf-8"))
    codex_home = Path(os.environ.get("CODEX_HOME") or home() / ".codex")
    log = codex_home / "sessions" / "2026" / "01" / "15"
    log.mkdir(parents=True, exist_ok=True)
    session_log = log / f"rollout-2026-01-15T10-00-00-{json.loads(lines[0])['thread_id']}.jsonl"
    write_session_log(session_log, {"type": "session_meta", "payload": {"cwd": os.getcwd()}})

    def effect(index: int, event: dict[str, Any]) -> int | None:
        totals = extra["session_log"].get(str(index))
        if totals is not None:
            write_session_log(
                session_log,
                {
                    "type": "event_msg",
                    "payload": {"type": "token_count", "info": {"total_token_usage": totals}},
                },
            )
        item = event.get("item") or {}
        if event.get("type") == "item.completed" and item.get("type") == "file_change":
            for change in item.get("changes") or []:
                target = local_path(change["path"], extra["recorded_cwd"])
                if change.get("kind") == "delete":
                    target.unlink()
                    continue
                rel = str(target.relative_to(Path.cwd()))
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(extra["files"][rel], encoding="utf-8")
        return None

    return replay(lines, scenario, effect)


def write_session_log(path: Path, event: dict[str, Any]) -> None:
    with path.open("a", encoding="utf-8") as log:
        log.write(json.dumps({"timestamp": "2026-01-15T10:00:00Z", **event}) + "\n")


def main(cli: str) -> int:
    return claude_main() if cli == "claude" else codex_main()

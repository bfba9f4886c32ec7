"""Transcript analysis: the wasted-turn classifiers, productivity and self-testing flags on
handcrafted Claude stream-json and Codex JSONL lines, the recorded fake-CLI transcripts, a
synthetic agent's transcript, and broken files (cut, garbage, empty, missing)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from bench_pipeline.agents.base import AgentTask
from bench_pipeline.agents.synthetic.agent import SyntheticAdapter
from bench_pipeline.design.axes import default_config
from bench_pipeline.quality.transcript import (
    CLASSIFIERS,
    analyze_transcript,
    events_table,
    has_ascii_art,
    is_doc_url,
    unwrap_shell,
)

FAKE_TRANSCRIPTS = Path(__file__).parents[1] / "agents" / "fake_cli" / "transcripts"

# ---------------------------------------------------------------------------------------------
# Line builders


class Claude:
    """Claude Code stream-json lines; tool ids are numbered in call order."""

    def __init__(self) -> None:
        self.lines = [
            json.dumps(
                {
                    "type": "system",
                    "subtype": "init",
                    "session_id": "s1",
                    "model": "claude-sonnet-4-6",
                    "tools": ["Bash", "Read", "Write", "WebFetch", "WebSearch"],
                }
            )
        ]
        self.calls = 0
        self.messages = 0

    def _assistant(self, block: dict[str, Any]) -> None:
        self.messages += 1
        self.lines.append(
            json.dumps(
                {
                    "type": "assistant",
                    "message": {
                        "id": f"msg_{self.messages}",
                        "content": [block],
                        "usage": {"input_tokens": 10, "output_tokens": 5},
                    },
                    "parent_tool_use_id": None,
                    "session_id": "s1",
                }
            )
        )

    def text(self, text: str) -> Claude:
        self._assistant({"type": "text", "text": text})
        return self

    def call(
        self, name: str, result: str = "ok", *, is_error: bool = False, **tool_input: Any
    ) -> Claude:
        self.calls += 1
        tool_id = f"toolu_{self.calls:02d}"
        self._assistant({"type": "tool_use", "id": tool_id, "name": name, "input": tool_input})
        block = {"type": "tool_result", "tool_use_id": tool_id, "content": result}
        if is_error:
            block["is_error"] = True
        self.lines.append(
            json.dumps(
                {
                    "type": "user",
                    "message": {"role": "user", "content": [block]},
                    "session_id": "s1",
                }
            )
        )
        return self

    def bash(self, command: str, result: str = "", **kwargs: Any) -> Claude:
        return self.call("Bash", result, command=command, **kwargs)

    def end(self) -> Claude:
        self.lines.append(
            json.dumps(
                {
                    "type": "result",
                    "subtype": "success",
                    "is_error": False,
                    "num_turns": self.messages,
                    "session_id": "s1",
                    "result": "done",
                }
            )
        )
        return self


class Codex:
    """Codex exec --json lines."""

    def __init__(self) -> None:
        self.lines = [json.dumps({"type": "thread.started", "thread_id": "t1"})]
        self.lines.append(json.dumps({"type": "turn.started"}))
        self.items = 0

    def _item(self, item: dict[str, Any], started: bool = False) -> Codex:
        self.items += 1
        item = {"id": f"item_{self.items}", **item}
        if started:
            self.lines.append(json.dumps({"type": "item.started", "item": item}))
        self.lines.append(json.dumps({"type": "item.completed", "item": item}))
        return self

    def command(self, command: str, exit_code: int = 0, output: str = "") -> Codex:
        return self._item(
            {
                "type": "command_execution",
                "command": f"bash -lc {shlex.quote(command)}",  # how Codex reports commands
                "aggregated_output": output,
                "exit_code": exit_code,
                "status": "completed" if exit_code == 0 else "failed",
            },
            started=True,
        )

    def message(self, text: str) -> Codex:
        return self._item({"type": "agent_message", "text": text})

    def item(self, **item: Any) -> Codex:
        return self._item(item)

    def end(self) -> Codex:
        self.lines.append(
            json.dumps(
                {
                    "type": "turn.completed",
                    "usage": {"input_tokens": 100, "cached_input_tokens": 0, "output_tokens": 50},
                }
            )
        )
        return self


def write(tmp_path: Path, lines: list[str], name: str = "transcript.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def call_labels(tmp_path: Path, lines: list[str]) -> list[str | None]:
    """The wasted label of every tool call, in order."""
    return [r["wasted"] for r in events_table(write(tmp_path, lines)) if r["kind"] == "tool_call"]


def breakdown(record: dict[str, Any]) -> dict[str, int]:
    return json.loads(record["wasted_breakdown"])


# ---------------------------------------------------------------------------------------------
# reading_docs


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("WebSearch", {"query": "tetris SRS wall kicks"}),
        ("WebFetch", {"url": "https://developer.mozilla.org/en-US/docs/Web/API/Canvas_API"}),
        ("WebFetch", {"url": "https://example.com/anything"}),
        ("Bash", {"command": "curl -s https://developer.mozilla.org/en-US/docs/Web/API"}),
        ("Bash", {"command": "wget -qO- https://vitejs.dev/guide/"}),
        ("Bash", {"command": "curl https://example.org/docs/canvas | head -50"}),
        ("Bash", {"command": "man tput"}),
        ("Bash", {"command": "npx vite --help"}),
        ("Read", {"file_path": "/ws/node_modules/vite/README.md"}),
        ("Grep", {"pattern": "defineConfig", "path": "node_modules/vite/dist"}),
        ("Bash", {"command": "cat node_modules/typescript/lib/lib.dom.d.ts | grep Canvas"}),
    ],
)
def test_reading_docs_claude_positive(tmp_path: Path, tool: str, tool_input: dict) -> None:
    lines = Claude().call(tool, "page text", **tool_input).end().lines
    assert call_labels(tmp_path, lines) == ["reading_docs"]


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("WebFetch", {"url": "http://localhost:8000/index.html"}),
        ("Bash", {"command": "curl -s http://127.0.0.1:5173/ | head"}),
        ("Bash", {"command": "curl -sSLo vendor/lib.js https://cdn.example.com/lib.min.js"}),
        ("Bash", {"command": "ls node_modules"}),
        ("Bash", {"command": "npm install --save-dev vite"}),
        ("Read", {"file_path": "/ws/src/game.js"}),
        ("Write", {"file_path": "/ws/docs/notes.md", "content": "x"}),
    ],
)
def test_reading_docs_claude_negative(tmp_path: Path, tool: str, tool_input: dict) -> None:
    lines = Claude().call(tool, "ok", **tool_input).end().lines
    assert call_labels(tmp_path, lines) == [None]


def test_reading_docs_codex(tmp_path: Path) -> None:
    lines = (
        Codex()
        .item(type="web_search", query="tetris scoring rules")
        .command("curl -s https://tetris.wiki/Scoring")
        .command("curl -s http://localhost:8000/")
        .command("cat src/game.js")
        .end()
        .lines
    )
    assert call_labels(tmp_path, lines) == ["reading_docs", "reading_docs", None, None]


def test_doc_urls() -> None:
    assert is_doc_url("https://docs.python.org/3/library/http.server.html")
    assert is_doc_url("https://stackoverflow.com/questions/1")
    assert is_doc_url("https://en.wikipedia.org/wiki/Tetris")
    assert not is_doc_url("http://localhost:3000/docs/")
    assert not is_doc_url("https://cdn.jsdelivr.net/npm/phaser/dist/phaser.min.js")


# ---------------------------------------------------------------------------------------------
# ascii_art

BOARD = """Here is the board layout:
+----------+
|..........|
|....##....|
|...###....|
|##########|
+----------+
"""
BOX = "┌──────┬──────┐\n│  ▓▓  │      │\n├──────┼──────┤\n│      │ ░░░░ │\n└──────┴──────┘"
CODE = """```js
const board = Array.from({ length: ROWS }, () => Array(COLS).fill(0));
function draw() {
  ctx.fillRect(x * SIZE, y * SIZE, SIZE, SIZE);
}
for (let y = 0; y < ROWS; y++) drawRow(y);
```"""
TABLE = "| file | lines |\n|---|---|\n| game.js | 240 |\n| index.html | 30 |\n| style.css | 12 |"
SHORT = "Done!\n----\n====\n****\n----\nThat is all."


@pytest.mark.parametrize(("text", "art"), [(BOARD, True), (BOX, True)])
def test_ascii_art_positive(tmp_path: Path, text: str, art: bool) -> None:
    assert has_ascii_art(text) is art
    report = analyze_transcript(write(tmp_path, Claude().text(text).end().lines)).to_record()
    assert report["wasted_turns"] == 1 and breakdown(report)["ascii_art"] == 1


@pytest.mark.parametrize("text", [CODE, TABLE, SHORT, "I built the game.\n\nOpen index.html."])
def test_ascii_art_negative(tmp_path: Path, text: str) -> None:
    assert not has_ascii_art(text)
    report = analyze_transcript(write(tmp_path, Claude().text(text).end().lines))
    assert report.wasted_turns == 0


def test_ascii_art_codex_message(tmp_path: Path) -> None:
    lines = Codex().message(BOX).message("All done.").end().lines
    rows = events_table(write(tmp_path, lines))
    labels = [r["wasted"] for r in rows if r["kind"] == "assistant_text"]
    assert labels == ["ascii_art", None]


# ---------------------------------------------------------------------------------------------
# blocking_dev_server


@pytest.mark.parametrize(
    ("command", "result"),
    [
        ("npm run dev", "VITE v5 ready in 300 ms"),
        ("cd app && npx vite", ""),
        ("python3 -m http.server 8000", ""),
        ("npx serve .", ""),
        ("http-server -p 8080", ""),
        ("live-server --port=8081", ""),
        ("npm start", ""),
        ("npm run dev &> dev.log", ""),  # a redirect, not a background job
        ("npm run dev &", "Command timed out after 2m 0.0s"),  # the result says it blocked
    ],
)
def test_blocking_dev_server_positive(tmp_path: Path, command: str, result: str) -> None:
    assert call_labels(tmp_path, Claude().bash(command, result).end().lines) == [
        "blocking_dev_server"
    ]


@pytest.mark.parametrize(
    ("command", "extra"),
    [
        ("npm run dev &", {}),
        ("npm run dev > dev.log 2>&1 & sleep 2 && curl -s localhost:5173", {}),
        ("nohup python3 -m http.server 8000 > /tmp/s.log 2>&1 &", {}),
        ("timeout 5 npx vite", {}),
        ("(python3 -m http.server 8000 &)", {}),
        ("npx vite", {"run_in_background": True}),
        ("npx vite build", {}),
        ("npm run build", {}),
        ("npm install", {}),
    ],
)
def test_blocking_dev_server_negative(tmp_path: Path, command: str, extra: dict) -> None:
    lines = Claude().call("Bash", "started", command=command, **extra).end().lines
    assert call_labels(tmp_path, lines) == [None]


def test_blocking_dev_server_codex(tmp_path: Path) -> None:
    lines = (
        Codex()
        .command("python3 -m http.server 8000", exit_code=124, output="")
        .command("python3 -m http.server 8000 &")
        .end()
        .lines
    )
    assert call_labels(tmp_path, lines) == ["blocking_dev_server", None]


def test_unwrap_shell() -> None:
    assert unwrap_shell("bash -lc 'npm test'") == "npm test"
    assert unwrap_shell('/bin/bash -lc "cd app && npm run build"') == "cd app && npm run build"
    assert unwrap_shell("npm test") == "npm test"
    assert unwrap_shell("bash -lc 'npm run dev…") == "npm run dev…"  # truncated quote


# ---------------------------------------------------------------------------------------------
# repeated_failures


def test_repeated_failures_count_the_repeats_after_the_first(tmp_path: Path) -> None:
    lines = (
        Claude()
        .bash("npx tsc", "Exit code 2\nerror TS2304", is_error=True)
        .bash("npx tsc", "Exit code 2\nerror TS2304", is_error=True)
        .bash("npx  tsc", "Exit code 2\nerror TS2304", is_error=True)  # same, other spacing
        .bash("npx tsc", "")
        .end()
        .lines
    )
    assert call_labels(tmp_path, lines) == [None, "repeated_failures", "repeated_failures", None]


def test_repeated_failures_negative(tmp_path: Path) -> None:
    lines = (
        Claude()
        .bash("npm test", "Exit code 1", is_error=True)
        .bash("npm test", "all passed")  # retried after a fix: succeeded
        .bash("npm test", "Exit code 1", is_error=True)
        .call("Edit", "ok", file_path="/ws/game.js")  # something else in between
        .bash("npm test", "Exit code 1", is_error=True)
        .bash("npm run lint", "Exit code 1", is_error=True)  # a different command
        .end()
        .lines
    )
    assert call_labels(tmp_path, lines) == [None] * 6


def test_repeated_failures_from_exit_code_text_and_codex(tmp_path: Path) -> None:
    # A Claude result can say "Exit code N" without the is_error flag.
    claude = (
        Claude()
        .bash("node game.js", "Exit code 1\nReferenceError")
        .bash("node game.js", "Exit code 1\nReferenceError")
    )
    assert call_labels(tmp_path, claude.end().lines) == [None, "repeated_failures"]
    codex = Codex().command("npx eslint .", exit_code=1).command("npx eslint .", exit_code=1)
    codex.command("npx eslint .", exit_code=1)
    assert call_labels(tmp_path, codex.end().lines) == [
        None,
        "repeated_failures",
        "repeated_failures",
    ]


# ---------------------------------------------------------------------------------------------
# Productivity, breakdowns, self-testing, errors


def test_productivity_ratio_arithmetic(tmp_path: Path) -> None:
    lines = (
        Claude()
        .call("WebSearch", "results", query="tetris rules")  # wasted
        .call("Write", "ok", file_path="/ws/game.js", content="x")  # useful
        .bash("npm test", "Exit code 1", is_error=True)  # failed
        .bash("npm test", "Exit code 1", is_error=True)  # failed and wasted (a repeat)
        .bash("node --check game.js", "")  # useful
        .text(BOARD)  # wasted, but not a tool call: outside the ratio
        .end()
        .lines
    )
    report = analyze_transcript(write(tmp_path, lines))
    assert report.tool_calls == 5
    assert report.productivity_ratio == 0.4  # 2 useful of 5
    assert report.wasted_turns == 3
    assert report.wasted_breakdown == {
        "reading_docs": 1,
        "ascii_art": 1,
        "blocking_dev_server": 0,
        "repeated_failures": 1,
    }
    assert report.errors == 2
    assert report.tool_breakdown == {"Bash": 3, "WebSearch": 1, "Write": 1}
    assert report.turns == 6  # the result event's num_turns


def test_no_tool_calls_means_no_ratio(tmp_path: Path) -> None:
    report = analyze_transcript(write(tmp_path, Claude().text("Hello").end().lines))
    assert report.tool_calls == 0 and report.productivity_ratio is None
    assert report.self_tested is False and report.unavailable is None


@pytest.mark.parametrize(
    ("command", "tests", "build", "browser"),
    [
        ("npm test", True, False, False),
        ("npx vitest run", True, False, False),
        ("npx jest --ci", True, False, False),
        ("npx playwright test", True, False, True),
        ("node --test tests/", True, False, False),
        ("cd app && pytest -q", True, False, False),
        ("npm run build", False, True, False),
        ("npx tsc --noEmit", False, True, False),
        ("npx vite build", False, True, False),
        ("npx esbuild src/main.ts --bundle --outfile=dist/main.js", False, True, False),
        ("npx webpack --mode production", False, True, False),
        ("node --check src/game.js", False, True, False),
        ("npx playwright screenshot http://localhost:8000 shot.png", False, False, True),
        ("node -e \"require('puppeteer')\"", False, False, True),
        ("chromium --headless --dump-dom http://localhost:8000", False, False, True),
        ("firefox index.html", False, False, True),
        ("ls -la && cat package.json", False, False, False),
        ("cat tsconfig.json", False, False, False),
        ("npm install", False, False, False),
    ],
)
def test_self_testing_flags(
    tmp_path: Path, command: str, tests: bool, build: bool, browser: bool
) -> None:
    report = analyze_transcript(write(tmp_path, Claude().bash(command).end().lines))
    assert (report.ran_tests, report.ran_build, report.opened_browser) == (tests, build, browser)
    assert report.self_tested is (tests or build or browser)


def test_self_testing_from_codex_commands_and_browser_mcp_tools(tmp_path: Path) -> None:
    claude = Claude().call("mcp__playwright__browser_navigate", "ok", url="http://localhost:8000")
    report = analyze_transcript(write(tmp_path, claude.end().lines))
    assert report.opened_browser is True and report.tool_breakdown == {"mcp:browser_navigate": 1}
    codex = (
        Codex()
        .command("npm run build")
        .command("npm test", exit_code=1)
        .item(
            type="mcp_tool_call",
            server="playwright",
            tool="browser_take_screenshot",
            arguments={},
            status="completed",
        )
        .end()
    )
    report = analyze_transcript(write(tmp_path, codex.lines, "codex.jsonl"))
    assert (report.ran_tests, report.ran_build, report.opened_browser) == (True, True, True)


def test_commands_are_judged_whole_not_by_their_summary(tmp_path: Path) -> None:
    """A heredoc pushes the last command of a call far past the event's one-line summary:
    it is still seen, and a newline still separates commands."""
    heredoc = "cat > game.js <<'EOF'\n" + "const speed = 1;\n" * 30 + "EOF\n"
    for lines in (
        Claude().bash(heredoc + "npm test").bash(heredoc + "npm run dev").end().lines,
        Codex().command(heredoc + "npm test").command(heredoc + "npm run dev").end().lines,
    ):
        path = write(tmp_path, lines)
        report = analyze_transcript(path)
        assert report.ran_tests is True
        assert report.wasted_breakdown["blocking_dev_server"] == 1
        assert call_labels(tmp_path, lines) == [None, "blocking_dev_server"]


def test_codex_items_map_to_tool_names(tmp_path: Path) -> None:
    lines = (
        Codex()
        .command("ls")
        .item(type="file_change", changes=[{"path": "a.js", "kind": "add"}], status="completed")
        .item(
            type="file_change",
            changes=[{"path": "a.js", "kind": "update"}, {"path": "b.js", "kind": "add"}],
            status="completed",
        )
        .item(type="web_search", query="canvas api")
        .item(type="mcp_tool_call", server="fs", tool="read_file", arguments={}, status="completed")
        .item(type="todo_list", items=[])  # not a tool
        .end()
        .lines
    )
    report = analyze_transcript(write(tmp_path, lines))
    assert report.format == "codex_jsonl"
    assert report.tool_breakdown == {
        "Bash": 1,
        "Edit": 1,
        "WebSearch": 1,
        "Write": 1,
        "mcp:read_file": 1,
    }


def test_record_is_flat_and_json(tmp_path: Path) -> None:
    record = analyze_transcript(write(tmp_path, Claude().bash("npm test").end().lines)).to_record()
    assert all(not isinstance(v, dict | list) for v in record.values())
    assert json.loads(json.dumps(record)) == record
    assert set(json.loads(record["wasted_breakdown"])) == set(CLASSIFIERS)
    assert set(record) == {
        "format",
        "events",
        "garbage_lines",
        "turns",
        "tool_calls",
        "tool_breakdown",
        "wasted_turns",
        "wasted_breakdown",
        "productivity_ratio",
        "ran_tests",
        "ran_build",
        "opened_browser",
        "self_tested",
        "errors",
        "unavailable",
    }


def test_events_table_rows(tmp_path: Path) -> None:
    lines = Claude().call("WebSearch", "r", query="q").bash("npm test").end().lines
    rows = events_table(write(tmp_path, lines))
    assert [r["position"] for r in rows] == list(range(len(rows)))
    assert [r["kind"] for r in rows] == [
        "init",
        "tool_call",
        "tool_result",
        "tool_call",
        "tool_result",
        "result",
    ]
    assert [r["wasted"] for r in rows] == [None, "reading_docs", None, None, None, None]
    assert rows[2]["tool"] == "WebSearch" and rows[1]["ref"] == rows[2]["ref"]
    # The whole command stays in the analysis: the rows keep only the summary `tool_input`.
    assert all(r.keys().isdisjoint({"command", "background"}) for r in rows)
    json.dumps(rows)


# ---------------------------------------------------------------------------------------------
# Recorded and synthetic transcripts


def test_fake_cli_recorded_transcripts() -> None:
    claude = analyze_transcript(FAKE_TRANSCRIPTS / "claude_success.jsonl")
    assert claude.format == "claude_stream_json" and claude.unavailable is None
    assert claude.tool_calls == 3 and claude.tool_breakdown == {"Bash": 1, "Write": 2}
    assert claude.wasted_turns == 0 and claude.productivity_ratio == 1.0
    assert claude.ran_build is True and claude.ran_tests is False  # `node --check game.js`
    assert claude.turns == 5 and claude.errors == 0

    codex = analyze_transcript(FAKE_TRANSCRIPTS / "codex_success.jsonl")
    assert codex.format == "codex_jsonl" and codex.unavailable is None
    assert codex.tool_breakdown == {"Bash": 3, "Write": 1}
    assert codex.errors == 1  # `npx eslint` exited 1
    assert codex.productivity_ratio == 0.75
    assert codex.ran_build is True and codex.opened_browser is False

    for name, calls in (("claude_budget.jsonl", 24), ("codex_budget.jsonl", 30)):
        report = analyze_transcript(FAKE_TRANSCRIPTS / name)
        assert report.tool_calls == calls and report.wasted_turns == 0
        assert report.self_tested is False


def synthetic_transcript(tmp_path: Path, **axes: Any) -> Path:
    run_dir = tmp_path / "run"
    workspace = run_dir / "workspace"
    workspace.mkdir(parents=True)
    config = {**default_config(), "agent": "synthetic", **axes}
    task = AgentTask(
        run_id="t.c0a1b2c3d4e5.r0",
        cell_id="c0a1b2c3d4e5",
        repeat=0,
        seed=7,
        agent="synthetic",
        model=str(config["model"]),
        config=config,
        prompt="Build a Tetris game in the browser.",
        workspace=workspace,
        transcript_path=run_dir / "transcript.jsonl",
        budget_usd=50.0,
        max_turns=200,
        time_limit_s=3600.0,
        input_usd_per_mtok=3.0,
        output_usd_per_mtok=15.0,
    )
    outcome = SyntheticAdapter().run(task, None)  # type: ignore[arg-type]  # sandbox unused
    assert outcome.status == "completed"
    return task.transcript_path


@pytest.mark.parametrize("language", ["javascript", "typescript"])
def test_synthetic_agent_self_test(tmp_path: Path, language: str) -> None:
    path = synthetic_transcript(tmp_path, self_test=True, tool_web_search=True, language=language)
    report = analyze_transcript(path)
    assert report.format == "claude_stream_json" and report.unavailable is None
    assert report.ran_build is True and report.opened_browser is True
    assert report.self_tested is True and report.ran_tests is False
    assert report.wasted_breakdown["reading_docs"] == 1  # its web search
    assert report.tool_calls is not None and report.tool_calls >= 4
    assert report.errors == 0 and report.garbage_lines == 0


def test_synthetic_agent_without_self_test(tmp_path: Path) -> None:
    report = analyze_transcript(synthetic_transcript(tmp_path, self_test=False))
    assert report.self_tested is False and report.wasted_turns == 0
    assert report.productivity_ratio == 1.0


# ---------------------------------------------------------------------------------------------
# Broken files


def test_transcript_cut_mid_line(tmp_path: Path) -> None:
    data = (FAKE_TRANSCRIPTS / "claude_success.jsonl").read_bytes()
    lines = data.splitlines(keepends=True)
    # Keep everything before the Bash result, then half of that line (a killed run).
    bash_call = next(i for i, line in enumerate(lines) if b'"name": "Bash"' in line)
    bash_result = bash_call + 1
    assert b"tool_result" in lines[bash_result]
    cut = b"".join(lines[:bash_result]) + lines[bash_result][: len(lines[bash_result]) // 2]
    path = tmp_path / "cut.jsonl"
    path.write_bytes(cut)
    report = analyze_transcript(path)
    assert report.unavailable is None and report.garbage_lines == 1
    assert report.tool_calls == 3  # the Bash call happened; its result was cut off
    assert report.productivity_ratio == 1.0  # no result is not a failure

    # Cut inside a multi-byte character too.
    init = '{"type": "system", "session_id": "s", "subtype": "init"}\n'
    path.write_bytes((init + '{"text": "é').encode()[:-1])
    assert analyze_transcript(path).garbage_lines == 1


def test_garbage_lines_are_counted_and_skipped(tmp_path: Path) -> None:
    claude = Claude().bash("npm test", "ok")
    lines = [
        "Welcome to the agent CLI v9!",
        *claude.lines[:2],
        "Traceback (most recent call last):",
        '  File "x.py", line 1',
        "[1, 2, 3]",
        *claude.lines[2:],
    ]
    report = analyze_transcript(write(tmp_path, lines))
    assert report.format == "claude_stream_json" and report.unavailable is None
    assert report.garbage_lines == 4 and report.ran_tests is True


@pytest.mark.parametrize("content", ["", "\n\n  \n"])
def test_empty_file(tmp_path: Path, content: str) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text(content)
    report = analyze_transcript(path)
    assert report.unavailable is not None and "empty" in report.unavailable
    assert report.tool_calls is None and report.wasted_turns is None
    assert report.productivity_ratio is None and report.self_tested is None
    assert events_table(path) == []


def test_missing_file(tmp_path: Path) -> None:
    report = analyze_transcript(tmp_path / "nope.jsonl")
    assert report.unavailable is not None and "not found" in report.unavailable
    record = report.to_record()
    assert record["tool_calls"] is None and record["errors"] is None and record["turns"] is None
    assert events_table(tmp_path / "nope.jsonl") == []
    assert "directory" in (analyze_transcript(tmp_path).unavailable or "")


def test_unknown_format(tmp_path: Path) -> None:
    path = write(tmp_path, ["npm WARN deprecated", "Error: no API key", '{"foo": 1}'])
    report = analyze_transcript(path)
    assert report.format == "unknown"
    assert report.unavailable is not None and "unknown transcript format" in report.unavailable
    assert report.garbage_lines == 2 and report.tool_calls is None

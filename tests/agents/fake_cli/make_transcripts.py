"""Writes the recorded sessions the fake CLIs replay (`transcripts/*.jsonl`).

No model API is reachable from the test machines, so these sessions are built by hand in
the exact event shapes of Claude Code stream-json and `codex exec --json` (see
docs/agents.md, Transcript formats), including their pitfalls: usage repeated on every
event of one Claude message, cache tokens outside `input_tokens`, background models in
`modelUsage`, Codex running totals in `turn.completed`. Rerun after changing it:

    python tests/agents/fake_cli/make_transcripts.py

Each `<name>.jsonl` may have a `<name>.fake.json` beside it with what a transcript does not
carry but the fake must do: file contents of Codex file changes and the token counts Codex
writes to its session log while it works (keyed by the stdout line they precede).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent / "transcripts"
RECORDED_CWD = "/home/bench/runs/demo.c0a1b2c3d4e5.r0/workspace"
SESSION = "7f3c2a91-5b0e-4c1d-9a8e-2f6b1d0c4e77"
MODEL = "claude-sonnet-4-6"
THREAD = "0199a213-81c0-7800-8aa1-bbab2a035a53"

INDEX_HTML = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Tetris</title>
  <style>
    body { background: #111; color: #eee; font-family: sans-serif; text-align: center; }
    canvas { border: 2px solid #555; background: #000; }
  </style>
</head>
<body>
  <h1>Tetris</h1>
  <div>Score: <span id="score">0</span></div>
  <canvas id="board" width="240" height="480"></canvas>
  <script src="game.js"></script>
</body>
</html>
"""

GAME_JS = """const COLS = 10, ROWS = 20, SIZE = 24;
const SHAPES = {
  I: [[1, 1, 1, 1]], O: [[1, 1], [1, 1]], T: [[0, 1, 0], [1, 1, 1]],
  S: [[0, 1, 1], [1, 1, 0]], Z: [[1, 1, 0], [0, 1, 1]], J: [[1, 0, 0], [1, 1, 1]],
  L: [[0, 0, 1], [1, 1, 1]],
};
const ctx = document.getElementById('board').getContext('2d');
const board = Array.from({ length: ROWS }, () => Array(COLS).fill(0));
let piece = spawn(), score = 0, over = false;

function spawn() {
  const keys = Object.keys(SHAPES);
  const shape = SHAPES[keys[Math.floor(Math.random() * keys.length)]];
  return { shape, x: 3, y: 0 };
}
function fits(shape, x, y) {
  return shape.every((row, r) => row.every((v, c) =>
    !v || (y + r < ROWS && x + c >= 0 && x + c < COLS && !board[y + r][x + c])));
}
function rotate(shape) { return shape[0].map((_, c) => shape.map(row => row[c]).reverse()); }
function lock() {
  piece.shape.forEach((row, r) => row.forEach((v, c) => { if (v) board[piece.y + r][piece.x + c] = 1; }));
  for (let r = ROWS - 1; r >= 0; r--) {
    if (board[r].every(Boolean)) { board.splice(r, 1); board.unshift(Array(COLS).fill(0)); score += 100; r++; }
  }
  document.getElementById('score').textContent = score;
  piece = spawn();
  if (!fits(piece.shape, piece.x, piece.y)) over = true;
}
function drop() { if (fits(piece.shape, piece.x, piece.y + 1)) piece.y++; else lock(); }
function draw() {
  ctx.fillStyle = '#000'; ctx.fillRect(0, 0, COLS * SIZE, ROWS * SIZE);
  ctx.fillStyle = '#0bf';
  board.forEach((row, r) => row.forEach((v, c) => v && ctx.fillRect(c * SIZE, r * SIZE, SIZE - 1, SIZE - 1)));
  piece.shape.forEach((row, r) => row.forEach((v, c) =>
    v && ctx.fillRect((piece.x + c) * SIZE, (piece.y + r) * SIZE, SIZE - 1, SIZE - 1)));
  if (over) { ctx.fillStyle = '#fff'; ctx.fillText('GAME OVER', 90, 240); }
}
document.addEventListener('keydown', (e) => {
  if (over) return;
  if (e.key === 'ArrowLeft' && fits(piece.shape, piece.x - 1, piece.y)) piece.x--;
  if (e.key === 'ArrowRight' && fits(piece.shape, piece.x + 1, piece.y)) piece.x++;
  if (e.key === 'ArrowDown') drop();
  if (e.key === 'ArrowUp' && fits(rotate(piece.shape), piece.x, piece.y)) piece.shape = rotate(piece.shape);
  if (e.key === ' ') { while (fits(piece.shape, piece.x, piece.y + 1)) piece.y++; lock(); }
  draw();
});
setInterval(() => { if (!over) { drop(); draw(); } }, 500);
draw();
"""


def _usage(inp: int, write: int, read: int, out: int) -> dict[str, Any]:
    return {
        "input_tokens": inp,
        "cache_creation_input_tokens": write,
        "cache_read_input_tokens": read,
        "cache_creation": {"ephemeral_5m_input_tokens": write, "ephemeral_1h_input_tokens": 0},
        "output_tokens": out,
        "service_tier": "standard",
    }


def _assistant(msg_id: str, block: dict[str, Any], usage: dict[str, Any], n: int) -> dict:
    return {
        "type": "assistant",
        "message": {
            "id": msg_id,
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": [block],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": usage,
        },
        "parent_tool_use_id": None,
        "session_id": SESSION,
        "uuid": f"00000000-0000-4000-8000-{n:012d}",
    }


def _tool_result(tool_id: str, text: str, n: int, is_error: bool = False) -> dict:
    return {
        "type": "user",
        "message": {
            "role": "user",
            "content": [
                {
                    "tool_use_id": tool_id,
                    "type": "tool_result",
                    "content": text,
                    "is_error": is_error,
                }
            ],
        },
        "parent_tool_use_id": None,
        "session_id": SESSION,
        "uuid": f"00000000-0000-4000-9000-{n:012d}",
    }


def _init() -> dict:
    return {
        "type": "system",
        "subtype": "init",
        "cwd": RECORDED_CWD,
        "session_id": SESSION,
        "tools": ["Task", "Bash", "Glob", "Grep", "Read", "Edit", "Write", "TodoWrite"],
        "mcp_servers": [],
        "model": MODEL,
        "permissionMode": "bypassPermissions",
        "slash_commands": ["compact", "review"],
        "apiKeySource": "ANTHROPIC_API_KEY",
        "claude_code_version": "2.1.30",
        "output_style": "default",
        "uuid": "00000000-0000-4000-8000-000000000000",
    }


def claude_success() -> list[dict]:
    a, b, c, d = (f"msg_01{x}QmZ8rT3vYwK2pLx9sNfHc" for x in "ABCD")
    usage_a = _usage(4, 5120, 11210, 412)
    return [
        _init(),
        # One response (msg A) arrives as three events; the first two carry a provisional
        # output count, the last the final one: only the last may be counted.
        _assistant(
            a,
            {"type": "thinking", "thinking": "A canvas Tetris in two files.", "signature": "E"},
            _usage(4, 5120, 11210, 9),
            1,
        ),
        _assistant(
            a,
            {"type": "text", "text": "I'll build the game as index.html + game.js."},
            _usage(4, 5120, 11210, 9),
            2,
        ),
        _assistant(
            a,
            {
                "type": "tool_use",
                "id": "toolu_01Write1",
                "name": "Write",
                "input": {"file_path": f"{RECORDED_CWD}/index.html", "content": INDEX_HTML},
            },
            usage_a,
            3,
        ),
        _tool_result(
            "toolu_01Write1", f"File created successfully at: {RECORDED_CWD}/index.html", 4
        ),
        _assistant(
            b,
            {
                "type": "tool_use",
                "id": "toolu_01Write2",
                "name": "Write",
                "input": {"file_path": f"{RECORDED_CWD}/game.js", "content": GAME_JS},
            },
            _usage(6, 520, 16330, 1893),
            5,
        ),
        _tool_result("toolu_01Write2", f"File created successfully at: {RECORDED_CWD}/game.js", 6),
        _assistant(
            c,
            {
                "type": "tool_use",
                "id": "toolu_01Bash3",
                "name": "Bash",
                "input": {"command": "node --check game.js && ls", "description": "Check syntax"},
            },
            _usage(5, 2101, 16850, 61),
            7,
        ),
        _tool_result("toolu_01Bash3", "game.js\nindex.html", 8),
        {
            "type": "rate_limit_event",
            "rate_limit_info": {"status": "allowed", "resetsAt": 1767225600},
            "session_id": SESSION,
            "uuid": "00000000-0000-4000-a000-000000000009",
        },
        _assistant(
            d,
            {"type": "text", "text": "Done: open index.html. Arrows move/rotate, space drops."},
            _usage(3, 190, 18951, 143),
            10,
        ),
        {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "duration_ms": 48211,
            "duration_api_ms": 51020,
            "num_turns": 5,
            "result": "Done: open index.html. Arrows move/rotate, space drops.",
            "session_id": SESSION,
            "total_cost_usd": 0.08807955,
            "usage": {
                "input_tokens": 18,
                "cache_creation_input_tokens": 7931,
                "cache_read_input_tokens": 63341,
                "output_tokens": 2509,
                "server_tool_use": {"web_search_requests": 0},
                "service_tier": "standard",
            },
            "modelUsage": {
                MODEL: {
                    "inputTokens": 18,
                    "outputTokens": 2509,
                    "cacheReadInputTokens": 63341,
                    "cacheCreationInputTokens": 7931,
                    "webSearchRequests": 0,
                    "costUSD": 0.08643255,
                },
                # Claude Code's background calls (titles, command checks) never stream.
                "claude-haiku-4-5": {
                    "inputTokens": 1342,
                    "outputTokens": 61,
                    "cacheReadInputTokens": 0,
                    "cacheCreationInputTokens": 0,
                    "webSearchRequests": 0,
                    "costUSD": 0.001647,
                },
            },
            "permission_denials": [],
            "uuid": "00000000-0000-4000-b000-000000000011",
        },
    ]


BUDGET_MESSAGES = 24


def claude_budget() -> list[dict]:
    """A long session whose spend grows by about $0.04 a message (at $3/$15 per MTok)."""
    events: list[dict] = [_init()]
    n = 1
    for i in range(BUDGET_MESSAGES):
        msg_id = f"msg_02{i:02d}BudgetRunKx7Wq"
        usage = _usage(5, 3000, 10000 + 3000 * i, 1500)
        events.append(_assistant(msg_id, {"type": "text", "text": f"Writing part {i}."}, usage, n))
        events.append(
            _assistant(
                msg_id,
                {
                    "type": "tool_use",
                    "id": f"toolu_02part{i:02d}",
                    "name": "Write",
                    "input": {
                        "file_path": f"{RECORDED_CWD}/src/part_{i:02d}.js",
                        "content": f"export const part{i} = {i};\n",
                    },
                },
                usage,
                n + 1,
            )
        )
        events.append(_tool_result(f"toolu_02part{i:02d}", "File created successfully", n + 2))
        n += 3
    reads = sum(10000 + 3000 * i for i in range(BUDGET_MESSAGES))
    writes, fresh, out = 3000 * BUDGET_MESSAGES, 5 * BUDGET_MESSAGES, 1500 * BUDGET_MESSAGES
    cost = (fresh * 3 + writes * 3.75 + reads * 0.3 + out * 15) / 1e6
    events.append(
        {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "num_turns": BUDGET_MESSAGES + 1,
            "result": "All parts written.",
            "session_id": SESSION,
            "total_cost_usd": round(cost, 8),
            "usage": _usage(fresh, writes, reads, out),
        }
    )
    return events


def _item(kind: str, item: dict[str, Any]) -> dict[str, Any]:
    return {"type": kind, "item": item}


def _command(item_id: str, command: str, output: str | None, exit_code: int | None) -> dict:
    status = "in_progress" if exit_code is None else ("completed" if exit_code == 0 else "failed")
    return {
        "id": item_id,
        "type": "command_execution",
        "command": command,
        "aggregated_output": output or "",
        "exit_code": exit_code,
        "status": status,
    }


def codex_success() -> tuple[list[dict], dict]:
    lines = [
        {"type": "thread.started", "thread_id": THREAD},
        {"type": "turn.started"},
        _item(
            "item.completed",
            {"id": "item_0", "type": "reasoning", "text": "**Exploring the workspace**"},
        ),
        _item("item.started", _command("item_1", "bash -lc ls", None, None)),
        _item("item.completed", _command("item_1", "bash -lc ls", "AGENTS.md\n", 0)),
        _item(
            "item.completed",
            {"id": "item_2", "type": "reasoning", "text": "**Writing the game files**"},
        ),
        _item(
            "item.completed",
            {
                "id": "item_3",
                "type": "file_change",
                "changes": [
                    {"path": f"{RECORDED_CWD}/index.html", "kind": "add"},
                    {"path": f"{RECORDED_CWD}/game.js", "kind": "add"},
                ],
                "status": "completed",
            },
        ),
        _item(
            "item.started",
            {
                "id": "item_4",
                "type": "todo_list",
                "items": [
                    {"text": "write the game", "completed": True},
                    {"text": "check it", "completed": False},
                ],
            },
        ),
        _item("item.started", _command("item_5", "bash -lc 'node --check game.js'", None, None)),
        _item("item.completed", _command("item_5", "bash -lc 'node --check game.js'", "", 0)),
        # Only a completed event for this one (no started): still one tool call.
        _item(
            "item.completed",
            _command(
                "item_6", "bash -lc 'npx eslint game.js'", "npm ERR! network unreachable\n", 1
            ),
        ),
        _item(
            "item.completed",
            {
                "id": "item_4",
                "type": "todo_list",
                "items": [
                    {"text": "write the game", "completed": True},
                    {"text": "check it", "completed": True},
                ],
            },
        ),
        _item(
            "item.completed",
            {
                "id": "item_7",
                "type": "agent_message",
                "text": "I built a playable Tetris: open index.html.",
            },
        ),
        {
            "type": "turn.completed",
            "usage": {"input_tokens": 48210, "cached_input_tokens": 36864, "output_tokens": 5120},
        },
    ]
    fake = {
        "recorded_cwd": RECORDED_CWD,
        "files": {"index.html": INDEX_HTML, "game.js": GAME_JS},
        "session_log": {
            "4": {"input_tokens": 12000, "cached_input_tokens": 8000, "output_tokens": 400},
            "9": {"input_tokens": 30000, "cached_input_tokens": 24000, "output_tokens": 4000},
            "13": {"input_tokens": 48210, "cached_input_tokens": 36864, "output_tokens": 5120},
        },
    }
    return lines, fake


CODEX_BUDGET_STEPS = 30


def codex_budget() -> tuple[list[dict], dict]:
    """One long turn: about $0.02 a step at $1.25/$10 per MTok, usage only at the very end."""
    lines: list[dict] = [{"type": "thread.started", "thread_id": THREAD}, {"type": "turn.started"}]
    session_log: dict[str, dict[str, int]] = {}
    for i in range(1, CODEX_BUDGET_STEPS + 1):
        command = f"bash -lc 'echo step {i} > step_{i:02d}.txt'"
        lines.append(
            _item("item.completed", {"id": f"r{i}", "type": "reasoning", "text": f"**Step {i}**"})
        )
        lines.append(_item("item.started", _command(f"c{i}", command, None, None)))
        session_log[str(len(lines))] = {
            "input_tokens": 15000 * i,
            "cached_input_tokens": 12000 * i,
            "output_tokens": 1500 * i,
        }
        lines.append(_item("item.completed", _command(f"c{i}", command, "", 0)))
    lines.append(
        _item("item.completed", {"id": "m", "type": "agent_message", "text": "All steps done."})
    )
    lines.append({"type": "turn.completed", "usage": session_log[max(session_log, key=int)]})
    return lines, {"recorded_cwd": RECORDED_CWD, "files": {}, "session_log": session_log}


def _write(name: str, events: list[dict], fake: dict | None = None) -> None:
    path = HERE / f"{name}.jsonl"
    path.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events))
    if fake is not None:
        (HERE / f"{name}.fake.json").write_text(json.dumps(fake, indent=1) + "\n")


def main() -> None:
    HERE.mkdir(exist_ok=True)
    _write("claude_success", claude_success())
    _write("claude_budget", claude_budget())
    _write("codex_success", *codex_success())
    _write("codex_budget", *codex_budget())


if __name__ == "__main__":
    main()

"""A scripted model API: the real Claude Code and Codex CLIs run whole sessions against it.

The server speaks just enough of two vendor APIs for each CLI to work unchanged:

- **Anthropic Messages** (`POST /v1/messages`, Claude Code): streaming server-sent events
  (`message_start`, `content_block_*` with `text` and `tool_use` blocks, `message_delta`,
  `message_stop`) or one JSON message when the request does not stream; usage with cache
  tokens (`cache_read_input_tokens`, `cache_creation_input_tokens`).
- **OpenAI Responses** (`POST /v1/responses`, Codex): streaming events
  (`response.created`, `response.output_item.added` / `.done` with `message` and
  `function_call` items, `response.completed` with `usage` and `input_tokens_details`).

Instead of a model it plays a **script** (`Script`): a list of replies, each either a turn of
tool calls that the CLI itself executes in its workspace (write a file, run a shell command,
read a file) or the final answer, each with the usage it reports. Which reply a request gets
is read from the request itself (how many assistant replies its history holds), so a retried
request gets the same reply and the same script always plays the same session. Faults are
scripted per reply and attempt: an HTTP 429 or 529 answer (which the CLIs retry), a stream
cut in the middle of an event, a reply that is not JSON, or a stall (no byte until the
client gives up or the harness kills it).

The tool calls are written in each CLI's own tools: Claude Code's `Write`, `Bash` and
`Read`; Codex's `exec_command` (a shell command: files are written with a here-document).

`SCENARIOS` names the scripts the project uses (`scenario(name)`); `python -m
bench_pipeline.agents.scripted_server --scenario success` serves one on a local port for a
manual session (docs/agents.md, *Scripted model API*).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

# A fault answers one attempt of a reply instead of the reply itself.
Fault = Literal["429", "529", "cut", "garbage", "stall"]
FAULTS: tuple[str, ...] = ("429", "529", "cut", "garbage", "stall")
# How long a stalled reply holds its connection at most (the harness's time limit ends the
# run long before; this only bounds a server left running by a crashed test).
STALL_S = 3600.0
# The key the harness gives a CLI for the scripted API (the CLIs refuse to start without
# one). Not a secret; the server notes whether each request carried it, any other key, or none.
SCRIPTED_API_KEY = "scripted-api-key-not-a-secret"
# The delimiter of the here-documents that write files through Codex's shell tool.
HEREDOC = "BENCH_SCRIPTED_EOF"


@dataclass(frozen=True)
class TurnUsage:
    """What one reply reports. `input` excludes cached tokens (Anthropic's convention); the
    Responses API folds all three into its `input_tokens`."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0

    @property
    def gross_input(self) -> int:
        return self.input + self.cache_read + self.cache_write


@dataclass(frozen=True)
class ToolCall:
    """One action the CLI must carry out: `write` (path, content), `run` (command) or
    `read` (path). Paths are relative to the CLI's working directory (the workspace)."""

    action: Literal["write", "run", "read"]
    path: str = ""
    content: str = ""
    command: str = ""


@dataclass(frozen=True)
class Reply:
    """One model reply: tool calls (a turn the CLI acts on) or, without any, the final
    answer `text`. `faults[i]` answers the i-th attempt at this reply instead of it."""

    calls: tuple[ToolCall, ...] = ()
    text: str = ""
    usage: TurnUsage = TurnUsage()
    faults: tuple[Fault, ...] = ()

    @property
    def final(self) -> bool:
        return not self.calls


@dataclass(frozen=True)
class Script:
    """A deterministic session: the replies in order. Past the last reply the server answers
    with the last one's text (a CLI that keeps asking gets told it is done)."""

    name: str
    replies: tuple[Reply, ...]
    description: str = ""

    @property
    def turns(self) -> int:
        """Turns as both CLIs count them once the session ends: one per tool call plus the
        final answer (Claude Code's `num_turns`; the Codex meter's completed items)."""
        return self.tool_calls + 1

    @property
    def tool_calls(self) -> int:
        return sum(len(reply.calls) for reply in self.replies)

    def calls_of(self, action: str) -> int:
        return sum(call.action == action for reply in self.replies for call in reply.calls)

    def usage_until(self, replies: int) -> TurnUsage:
        """The usage summed over the first `replies` replies."""
        played = self.replies[:replies]
        return TurnUsage(
            input=sum(r.usage.input for r in played),
            output=sum(r.usage.output for r in played),
            cache_read=sum(r.usage.cache_read for r in played),
            cache_write=sum(r.usage.cache_write for r in played),
        )

    @property
    def usage(self) -> TurnUsage:
        return self.usage_until(len(self.replies))


# ---------------------------------------------------------------------------- scenarios

CHECK_COMMAND = (
    "test -s index.html && for f in src/*.js; do "
    'node --experimental-default-type=module --check "$f" || exit 1; done && echo check ok'
)


def tetris_files(seed: int = 0) -> dict[str, str]:
    """The project's own small browser Tetris (the synthetic agent's clean game), which the
    build stage serves and the bot plays."""
    from bench_pipeline.agents.synthetic.game import GameSpec, render_project

    return render_project(GameSpec(seed=seed))


def _writes(files: Mapping[str, str]) -> tuple[ToolCall, ...]:
    return tuple(ToolCall("write", path=path, content=text) for path, text in files.items())


def _success_replies(faults_first: tuple[Fault, ...] = ()) -> tuple[Reply, ...]:
    files = tetris_files()
    pages = {k: v for k, v in files.items() if not k.startswith("src/")}
    sources = {k: v for k, v in files.items() if k.startswith("src/")}
    return (
        Reply(
            calls=_writes(pages),
            text="I'll write the page first.",
            usage=TurnUsage(input=2400, output=900, cache_write=12000),
            faults=faults_first,
        ),
        Reply(
            calls=_writes(sources),
            text="Now the game modules.",
            usage=TurnUsage(input=800, output=6200, cache_read=14000, cache_write=1500),
        ),
        Reply(
            calls=(ToolCall("run", command=CHECK_COMMAND),),
            text="Checking that every module parses.",
            usage=TurnUsage(input=300, output=120, cache_read=21000, cache_write=900),
        ),
        Reply(
            calls=(ToolCall("read", path="index.html"),),
            text="A last look at the page.",
            usage=TurnUsage(input=200, output=80, cache_read=21500, cache_write=400),
        ),
        Reply(
            text="The Tetris game is in index.html and src/; every module parses.",
            usage=TurnUsage(input=150, output=60, cache_read=22000, cache_write=300),
        ),
    )


def _steps(count: int, usage: TurnUsage) -> tuple[Reply, ...]:
    """`count` turns that each write one small file, then a final answer."""
    replies = [
        Reply(
            calls=(ToolCall("write", path=f"step-{i:02d}.txt", content=f"step {i}\n"),),
            text=f"Step {i}.",
            usage=usage,
        )
        for i in range(1, count + 1)
    ]
    replies.append(Reply(text="All steps written.", usage=TurnUsage(input=100, output=20)))
    return tuple(replies)


def _first_write_then(fault: Fault, times: int) -> tuple[Reply, ...]:
    """One turn that writes a file, then a reply whose first `times` attempts fail with
    `fault`, then the final answer."""
    return (
        Reply(
            calls=(ToolCall("write", path="kept.txt", content="written before the fault\n"),),
            text="Writing a file first.",
            usage=TurnUsage(input=1000, output=100),
        ),
        Reply(
            calls=(ToolCall("run", command="ls"),),
            text="Listing the workspace.",
            usage=TurnUsage(input=1100, output=50),
            faults=(fault,) * times,
        ),
        Reply(text="Done.", usage=TurnUsage(input=1200, output=30)),
    )


# Enough attempts at one faulty reply that both CLIs give up (Codex retries a stream 5 times,
# Claude Code a request 10 times).
PERSISTENT = 12

SCENARIOS: Mapping[str, str] = {
    "success": "writes the project's Tetris (index.html, style, src/*.js), runs a check "
    "command, reads the page, answers",
    "budget": "fifteen turns of $0.20 each (at $3/$15 per Mtok): passes a $0.50 budget",
    "turns": "twelve tool turns: past a max_turns of 5",
    "stall": "writes a file, then never answers (past the time limit)",
    "retry": "the success session, its first reply answered 429 and then 529 before it comes",
    "cut": "writes a file, then the next reply's stream is cut in the middle of an event, "
    "every attempt",
    "cut-once": "as cut, but only the first attempt is cut: the retry gets the reply",
    "garbage": "writes a file, then the next reply is an HTML page, not JSON, every attempt",
}


def scenario(name: str) -> Script:
    """The script called `name` (one of SCENARIOS); ValueError names the known ones."""
    if name == "success":
        replies = _success_replies()
    elif name == "retry":
        replies = _success_replies(faults_first=("429", "529"))
    elif name == "budget":
        replies = _steps(15, TurnUsage(input=50_000, output=3_334))
    elif name == "turns":
        replies = _steps(12, TurnUsage(input=500, output=40))
    elif name == "stall":
        replies = _first_write_then("stall", PERSISTENT)
    elif name == "cut":
        replies = _first_write_then("cut", PERSISTENT)
    elif name == "cut-once":
        replies = _first_write_then("cut", 1)
    elif name == "garbage":
        replies = _first_write_then("garbage", PERSISTENT)
    else:
        raise ValueError(f"unknown scripted scenario {name!r}; known: {', '.join(SCENARIOS)}")
    return Script(name=name, replies=replies, description=SCENARIOS[name])


# ---------------------------------------------------------------------------- dialects


def _sse(event: str, data: Mapping[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


class Anthropic:
    """Claude Code's side: `POST /v1/messages` (Messages API)."""

    @staticmethod
    def reply_index(body: Mapping[str, Any]) -> int:
        messages = body.get("messages")
        if not isinstance(messages, list):
            return 0
        return sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")

    @staticmethod
    def tool_use(call: ToolCall, index: int, number: int) -> dict[str, Any]:
        ident = f"toolu_scripted_{index:02d}_{number:02d}"
        if call.action == "write":
            args: dict[str, Any] = {"file_path": call.path, "content": call.content}
            return {"type": "tool_use", "id": ident, "name": "Write", "input": args}
        if call.action == "read":
            return {
                "type": "tool_use",
                "id": ident,
                "name": "Read",
                "input": {"file_path": call.path},
            }
        args = {"command": call.command, "description": "run a command"}
        return {"type": "tool_use", "id": ident, "name": "Bash", "input": args}

    @classmethod
    def blocks(cls, reply: Reply, index: int, cwd: str) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        if reply.text:
            blocks.append({"type": "text", "text": reply.text})
        for number, call in enumerate(reply.calls):
            block = cls.tool_use(call, index, number)
            # Claude Code's file tools want absolute paths: the workspace is the CLI's cwd,
            # which its environment block in the request names.
            if "file_path" in block["input"] and cwd:
                block["input"]["file_path"] = f"{cwd.rstrip('/')}/{call.path}"
            blocks.append(block)
        return blocks

    @staticmethod
    def usage(usage: TurnUsage) -> dict[str, int]:
        return {
            "input_tokens": usage.input,
            "cache_creation_input_tokens": usage.cache_write,
            "cache_read_input_tokens": usage.cache_read,
            "output_tokens": usage.output,
        }

    @classmethod
    def message(cls, reply: Reply, index: int, model: str, cwd: str) -> dict[str, Any]:
        return {
            "id": f"msg_scripted_{index:02d}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": cls.blocks(reply, index, cwd),
            "stop_reason": "end_turn" if reply.final else "tool_use",
            "stop_sequence": None,
            "usage": cls.usage(reply.usage),
        }

    @classmethod
    def events(cls, reply: Reply, index: int, model: str, cwd: str) -> Iterator[bytes]:
        message = cls.message(reply, index, model, cwd)
        start = {**message, "content": [], "stop_reason": None}
        start["usage"] = {**message["usage"], "output_tokens": 1}
        yield _sse("message_start", {"type": "message_start", "message": start})
        for i, block in enumerate(message["content"]):
            if block["type"] == "text":
                opened = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": block["text"]}
            else:
                opened = {**block, "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            yield _sse(
                "content_block_start",
                {"type": "content_block_start", "index": i, "content_block": opened},
            )
            yield _sse(
                "content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}
            )
            yield _sse("content_block_stop", {"type": "content_block_stop", "index": i})
        yield _sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": message["usage"],
            },
        )
        yield _sse("message_stop", {"type": "message_stop"})

    @staticmethod
    def error(status: int) -> tuple[dict[str, Any], dict[str, str]]:
        kind = "rate_limit_error" if status == 429 else "overloaded_error"
        text = "scripted rate limit" if status == 429 else "Overloaded (scripted)"
        # retry-after-ms keeps the CLI's back-off short: the retry is what is being shown.
        headers = {"retry-after-ms": "200", "retry-after": "1"}
        return {"type": "error", "error": {"type": kind, "message": text}}, headers


class Responses:
    """Codex's side: `POST /v1/responses` (Responses API)."""

    @staticmethod
    def reply_index(body: Mapping[str, Any]) -> int:
        # Every call id we hand out names its reply; the history carries them back.
        done = -1
        items = body.get("input")
        for item in items if isinstance(items, list) else ():
            call_id = item.get("call_id") if isinstance(item, dict) else None
            if isinstance(call_id, str) and call_id.startswith("call_scripted_"):
                with contextlib.suppress(ValueError, IndexError):
                    done = max(done, int(call_id.split("_")[2]))
        return done + 1

    @staticmethod
    def command(call: ToolCall) -> str:
        if call.action == "run":
            return call.command
        if call.action == "read":
            return f"cat {call.path}"
        folder = call.path.rpartition("/")[0]
        mkdir = f"mkdir -p {folder} && " if folder else ""
        body = call.content if call.content.endswith("\n") else call.content + "\n"
        return f"{mkdir}cat > {call.path} <<'{HEREDOC}'\n{body}{HEREDOC}"

    @classmethod
    def items(cls, reply: Reply, index: int) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        if reply.text and reply.final:
            items.append(
                {
                    "type": "message",
                    "id": f"msg_scripted_{index:02d}",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
                }
            )
        for number, call in enumerate(reply.calls):
            items.append(
                {
                    "type": "function_call",
                    "id": f"fc_scripted_{index:02d}_{number:02d}",
                    "call_id": f"call_scripted_{index:02d}_{number:02d}",
                    "name": "exec_command",
                    "arguments": json.dumps({"cmd": cls.command(call)}),
                    "status": "completed",
                }
            )
        return items

    @staticmethod
    def usage(usage: TurnUsage) -> dict[str, Any]:
        return {
            "input_tokens": usage.gross_input,
            "input_tokens_details": {"cached_tokens": usage.cache_read},
            "output_tokens": usage.output,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": usage.gross_input + usage.output,
        }

    @classmethod
    def response(cls, reply: Reply, index: int, model: str) -> dict[str, Any]:
        return {
            "id": f"resp_scripted_{index:02d}",
            "object": "response",
            "created_at": 0,
            "status": "completed",
            "model": model,
            "output": cls.items(reply, index),
            "usage": cls.usage(reply.usage),
        }

    @classmethod
    def events(cls, reply: Reply, index: int, model: str, cwd: str) -> Iterator[bytes]:
        del cwd  # Codex runs commands in its working directory already
        response = cls.response(reply, index, model)
        pending = {**response, "status": "in_progress", "output": [], "usage": None}
        yield _sse("response.created", {"type": "response.created", "response": pending})
        for i, item in enumerate(response["output"]):
            added = {"type": "response.output_item.added", "output_index": i, "item": item}
            yield _sse("response.output_item.added", added)
            if item["type"] == "message":
                text = item["content"][0]["text"]
                delta = {
                    "type": "response.output_text.delta",
                    "item_id": item["id"],
                    "output_index": i,
                    "content_index": 0,
                    "delta": text,
                }
                yield _sse("response.output_text.delta", delta)
            done = {"type": "response.output_item.done", "output_index": i, "item": item}
            yield _sse("response.output_item.done", done)
        yield _sse("response.completed", {"type": "response.completed", "response": response})

    @staticmethod
    def error(status: int) -> tuple[dict[str, Any], dict[str, str]]:
        kind = "rate_limit_exceeded" if status == 429 else "server_is_overloaded"
        body = {"error": {"type": kind, "code": kind, "message": f"scripted {status}"}}
        return body, {"retry-after-ms": "200", "retry-after": "1"}


DIALECTS: Mapping[str, type[Anthropic] | type[Responses]] = {
    "/v1/messages": Anthropic,
    "/v1/responses": Responses,
}
GARBAGE = b"<html><head><title>502 Bad Gateway</title></head><body>upstream error</body></html>\n"


# ---------------------------------------------------------------------------- the server


@dataclass
class ServedRequest:
    """One request, as the server saw and answered it (for tests and the run's record)."""

    method: str
    path: str
    api: str  # "anthropic", "responses" or "other"
    reply: int | None  # the script's reply index, None for requests outside the script
    attempt: int
    answer: str  # "reply", "final", a fault, "not found", "side"
    stream: bool = False
    credential: str = "none"  # "placeholder" (SCRIPTED_API_KEY), "other" or "none"
    at: float = field(default_factory=time.time)

    def to_json(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "path": self.path,
            "api": self.api,
            "reply": self.reply,
            "attempt": self.attempt,
            "answer": self.answer,
            "stream": self.stream,
            "credential": self.credential,
        }


class ScriptedModelServer:
    """Serves `script` on 127.0.0.1 (an ephemeral port unless given) in a daemon thread.

    `url` is the base URL for a CLI (`ANTHROPIC_BASE_URL`, or Codex's provider `base_url`
    plus `/v1`). Use as a context manager, or `start()` / `close()`.
    """

    def __init__(self, script: Script, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.script = script
        self.requests: list[ServedRequest] = []
        self._attempts: Counter[tuple[str, int]] = Counter()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd = _HTTPServer((host, port), _handler_for(self))
        self._thread: threading.Thread | None = None
        self.first_request_at: float | None = None

    @property
    def address(self) -> tuple[str, int]:
        host, port = self._httpd.server_address[:2]
        return str(host), int(port)

    @property
    def url(self) -> str:
        host, port = self.address
        return f"http://{host}:{port}"

    def start(self) -> ScriptedModelServer:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True
        )
        self._thread.name = f"scripted-model-{self.script.name}"
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()  # ends stalled replies
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> ScriptedModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ what was played

    def replies_served(self, api: str | None = None) -> int:
        """How many distinct script replies were answered in full (faults not counted)."""
        served = {
            r.reply
            for r in self.requests
            if r.answer in ("reply", "final") and (api is None or r.api == api)
        }
        return len(served)

    def report(self) -> dict[str, Any]:
        with self._lock:
            requests = [r.to_json() for r in self.requests]
        answers = Counter(r["answer"] for r in requests)
        return {
            "scenario": self.script.name,
            "requests": len(requests),
            "answers": dict(sorted(answers.items())),
            "replies_served": self.replies_served(),
            # Epoch seconds: how long a CLI takes before it first asks (benchmarks/agents.py).
            "first_request_at": self.first_request_at,
            "log": requests[:200],
        }

    # ------------------------------------------------------------ one request

    def _note(self, entry: ServedRequest) -> None:
        with self._lock:
            if self.first_request_at is None:
                self.first_request_at = entry.at
            self.requests.append(entry)

    def answer(self, handler: BaseHTTPRequestHandler, body: bytes) -> None:
        path = handler.path.split("?", 1)[0]
        dialect = DIALECTS.get(path)
        if handler.command != "POST" or dialect is None:
            self._note(ServedRequest(handler.command, handler.path, "other", None, 0, "not found"))
            _send_json(handler, 404, {"error": {"type": "not_found", "message": path}})
            return
        api = "anthropic" if dialect is Anthropic else "responses"
        try:
            request = json.loads(body or b"{}")
        except ValueError:
            request = None
        if not isinstance(request, dict):
            self._note(ServedRequest("POST", handler.path, api, None, 0, "bad request"))
            _send_json(handler, 400, {"error": {"type": "invalid_request_error"}})
            return
        if api == "anthropic" and not _is_main_loop(request):
            # Claude Code's side requests (a title, a quick check with a small model) are not
            # turns of the session: an empty answer, no tokens, outside the script.
            self._note(ServedRequest("POST", handler.path, api, None, 0, "side"))
            self._send_reply(handler, dialect, request, Reply(text="ok"), 99, side=True)
            return
        index = dialect.reply_index(request)
        with self._lock:
            attempt = self._attempts[(api, index)]
            self._attempts[(api, index)] += 1
        replies = self.script.replies
        reply = replies[min(index, len(replies) - 1)]
        fault = reply.faults[attempt] if attempt < len(reply.faults) else None
        answer = fault or ("final" if reply.final else "reply")
        stream = bool(request.get("stream"))
        entry = ServedRequest("POST", handler.path, api, index, attempt, answer, stream)
        entry.credential = _credential(handler)
        self._note(entry)
        if fault in ("429", "529"):
            status = int(fault)
            payload, headers = dialect.error(status)
            _send_json(handler, status, payload, headers)
        elif fault == "garbage":
            _send_raw(handler, 200, "application/json", GARBAGE)
        elif fault == "stall":
            self._stop.wait(STALL_S)
            handler.close_connection = True
        else:
            self._send_reply(handler, dialect, request, reply, index, cut=fault == "cut")

    def _send_reply(
        self,
        handler: BaseHTTPRequestHandler,
        dialect: type[Anthropic] | type[Responses],
        request: Mapping[str, Any],
        reply: Reply,
        index: int,
        *,
        cut: bool = False,
        side: bool = False,
    ) -> None:
        model = str(request.get("model") or "scripted")
        cwd = _claude_cwd(request) if dialect is Anthropic else ""
        if side:
            reply = Reply(text=reply.text)
        if not request.get("stream"):
            if dialect is Anthropic:
                payload = Anthropic.message(reply, index, model, cwd)
            else:
                payload = Responses.response(reply, index, model)
            if not cut:
                _send_json(handler, 200, payload)
                return
            # A whole-body reply cut as well (Claude Code falls back to one after failed
            # streams): half of the promised bytes, then the connection drops.
            data = json.dumps(payload).encode()
            handler.send_response(200)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(data)))
            handler.end_headers()
            with contextlib.suppress(OSError):
                handler.wfile.write(data[: len(data) // 2])
                handler.wfile.flush()
                handler.connection.shutdown(socket.SHUT_RDWR)
            handler.close_connection = True
            return
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Cache-Control", "no-cache")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        events = list(dialect.events(reply, index, model, cwd))
        try:
            if cut:
                # Half of the first event, then the connection drops without the chunked
                # body's end: the client sees a broken stream. Cut inside the first event so
                # that no usage ever reaches the client (how much of a longer prefix a CLI
                # reads before it notices the drop is a race, and would make its cost vary).
                partial = events[0][: len(events[0]) // 2]
                _write_chunk(handler, partial)
                handler.close_connection = True
                with contextlib.suppress(OSError):
                    handler.connection.shutdown(socket.SHUT_RDWR)
                return
            for event in events:
                _write_chunk(handler, event)
            handler.wfile.write(b"0\r\n\r\n")
            handler.wfile.flush()
        except OSError:
            handler.close_connection = True


def _credential(handler: BaseHTTPRequestHandler) -> str:
    """Which key a request carried (never the key itself): Anthropic's x-api-key header or
    an OpenAI-style bearer token."""
    key = handler.headers.get("x-api-key") or ""
    bearer = handler.headers.get("Authorization") or ""
    if bearer.lower().startswith("bearer "):
        key = key or bearer[7:].strip()
    if not key:
        return "none"
    return "placeholder" if key == SCRIPTED_API_KEY else "other"


def _is_main_loop(request: Mapping[str, Any]) -> bool:
    """A Claude Code request of the agent's own loop offers its tools (Bash among them)."""
    tools = request.get("tools")
    names = {t.get("name") for t in tools if isinstance(t, dict)} if isinstance(tools, list) else ()
    return "Bash" in names


def _claude_cwd(request: Mapping[str, Any]) -> str:
    """The working directory Claude Code tells the model about ("Primary working directory:
    /path" in the environment block of the first user message or the system prompt)."""
    text = json.dumps(request.get("messages", [])[:1]) + json.dumps(request.get("system", ""))
    marker = "Primary working directory: "
    start = text.find(marker)
    if start < 0:
        return ""
    rest = text[start + len(marker) :]
    return rest.split("\\n", 1)[0].strip()


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def _handler_for(server: ScriptedModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            server.answer(self, body)

        do_GET = do_POST

        def log_message(self, format: str, *args: Any) -> None:
            return  # the request log is `server.requests`

    return Handler


def _write_chunk(handler: BaseHTTPRequestHandler, data: bytes) -> None:
    handler.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
    handler.wfile.flush()


def _send_json(
    handler: BaseHTTPRequestHandler,
    status: int,
    payload: Mapping[str, Any],
    headers: Mapping[str, str] | None = None,
) -> None:
    _send_raw(handler, status, "application/json", json.dumps(payload).encode(), headers)


def _send_raw(
    handler: BaseHTTPRequestHandler,
    status: int,
    content_type: str,
    data: bytes,
    headers: Mapping[str, str] | None = None,
) -> None:
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(data)))
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    handler.end_headers()
    with contextlib.suppress(OSError):
        handler.wfile.write(data)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--scenario", default="success", choices=sorted(SCENARIOS))
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args(argv)
    with ScriptedModelServer(scenario(args.scenario), port=args.port) as server:
        print(f"scripted model API ({args.scenario}) on {server.url}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            while True:
                time.sleep(3600)


if __name__ == "__main__":
    main()

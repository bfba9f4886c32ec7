"""The scripted model API on its own, spoken to over HTTP as the CLIs speak to it."""

from __future__ import annotations

import http.client
import json
from typing import Any

import pytest

from bench_pipeline.agents.scripted_server import (
    SCENARIOS,
    SCRIPTED_API_KEY,
    Reply,
    Script,
    ScriptedModelServer,
    ToolCall,
    TurnUsage,
    scenario,
)

TOOLS = [{"name": "Bash"}, {"name": "Write"}]


def post(
    server: ScriptedModelServer, path: str, body: Any, key: str = SCRIPTED_API_KEY
) -> tuple[int, bytes]:
    host, port = server.address
    conn = http.client.HTTPConnection(host, port, timeout=10)
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    conn.request("POST", path, data, {"Content-Type": "application/json", "x-api-key": key})
    response = conn.getresponse()
    try:
        payload = response.read()
    except http.client.IncompleteRead as cut:
        payload = b"<cut>" + cut.partial
    conn.close()
    return response.status, payload


def sse(payload: bytes) -> list[dict[str, Any]]:
    return [
        json.loads(line[6:]) for line in payload.decode().splitlines() if line.startswith("data: ")
    ]


def anthropic(history: int, stream: bool = True) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Primary working directory: /w\n - Platform: linux"}
    ]
    for _ in range(history):
        messages += [{"role": "assistant", "content": []}, {"role": "user", "content": []}]
    return {"model": "claude-sonnet-4-6", "stream": stream, "messages": messages, "tools": TOOLS}


def test_every_scenario_is_a_script_with_a_final_answer() -> None:
    for name in SCENARIOS:
        script = scenario(name)
        assert script.replies[-1].final and script.turns == script.tool_calls + 1
    with pytest.raises(ValueError, match="unknown scripted scenario 'nope'; known: success"):
        scenario("nope")


def test_anthropic_stream_carries_tool_use_and_cache_usage() -> None:
    with ScriptedModelServer(scenario("success")) as server:
        status, payload = post(server, "/v1/messages?beta=true", anthropic(0))
    assert status == 200
    events = sse(payload)
    assert [e["type"] for e in events][:2] == ["message_start", "content_block_start"]
    assert events[-1]["type"] == "message_stop"
    usage = events[0]["message"]["usage"]
    assert usage["cache_creation_input_tokens"] == 12000 and usage["input_tokens"] == 2400
    uses = [e["content_block"] for e in events if e["type"] == "content_block_start"]
    writes = [u for u in uses if u["type"] == "tool_use"]
    assert {u["name"] for u in writes} == {"Write"} and len(writes) == 3
    deltas = [e["delta"] for e in events if e["type"] == "content_block_delta"]
    paths = [json.loads(d["partial_json"])["file_path"] for d in deltas if "partial_json" in d]
    assert paths == ["/w/README.md", "/w/index.html", "/w/style.css"]  # absolute, in the cwd
    delta = next(e for e in events if e["type"] == "message_delta")
    assert delta["delta"]["stop_reason"] == "tool_use"


def test_the_reply_follows_the_history_so_a_retry_gets_the_same_one() -> None:
    with ScriptedModelServer(scenario("success")) as server:
        first = post(server, "/v1/messages", anthropic(4, stream=False))
        again = post(server, "/v1/messages", anthropic(4, stream=False))
        log = [(r.reply, r.attempt, r.answer) for r in server.requests]
    assert first == again
    message = json.loads(first[1])
    assert message["stop_reason"] == "end_turn" and message["content"][0]["type"] == "text"
    assert log == [(4, 0, "final"), (4, 1, "final")]


def test_responses_stream_carries_function_calls_and_usage() -> None:
    with ScriptedModelServer(scenario("success")) as server:
        body = {"model": "gpt-5.5", "stream": True, "input": [{"type": "message", "role": "user"}]}
        status, payload = post(server, "/v1/responses", body)
        # The history hands back the call ids: the next request gets the next reply.
        body["input"].append({"type": "function_call_output", "call_id": "call_scripted_00_02"})
        _, second = post(server, "/v1/responses", body)
    assert status == 200
    events = sse(payload)
    calls = [e["item"] for e in events if e["type"] == "response.output_item.done"]
    assert [c["name"] for c in calls] == ["exec_command"] * 3
    command = json.loads(calls[1]["arguments"])["cmd"]
    assert command.startswith("cat > index.html <<'BENCH_SCRIPTED_EOF'\n<!DOCTYPE html>")
    usage = events[-1]["response"]["usage"]
    assert (
        usage["input_tokens"] == 2400 + 12000
        and usage["input_tokens_details"]["cached_tokens"] == 0
    )
    second_calls = [e["item"] for e in sse(second) if e["type"] == "response.output_item.done"]
    assert second_calls[0]["call_id"] == "call_scripted_01_00"


def test_faults_answer_the_attempts_in_order() -> None:
    script = Script(
        "faults",
        (
            Reply(calls=(ToolCall("run", command="ls"),), faults=("429", "529", "garbage", "cut")),
            Reply(text="done", usage=TurnUsage(input=1, output=1)),
        ),
    )
    with ScriptedModelServer(script) as server:
        answers = [post(server, "/v1/messages", anthropic(0)) for _ in range(5)]
        credentials = {r.credential for r in server.requests}
        _, _ = post(server, "/v1/messages", anthropic(0), key="sk-other")
        other = server.requests[-1].credential
    assert [status for status, _ in answers] == [429, 529, 200, 200, 200]
    assert json.loads(answers[0][1])["error"]["type"] == "rate_limit_error"
    assert json.loads(answers[1][1])["error"]["type"] == "overloaded_error"
    with pytest.raises(ValueError):
        json.loads(answers[2][1])  # not JSON
    assert answers[3][1].startswith(b"<cut>")  # the chunked body never ended
    assert sse(answers[4][1])[-1]["type"] == "message_stop"
    assert credentials == {"placeholder"} and other == "other"


def test_requests_outside_the_script() -> None:
    with ScriptedModelServer(scenario("success")) as server:
        side = post(server, "/v1/messages", {**anthropic(0, stream=False), "tools": []})
        missing = post(server, "/v1/models", {})
        bad = post(server, "/v1/messages", b"{not json")
        report = server.report()
    assert json.loads(side[1])["usage"]["input_tokens"] == 0  # no tokens, outside the script
    assert missing[0] == 404 and bad[0] == 400
    assert report["answers"] == {"bad request": 1, "not found": 1, "side": 1}
    assert report["replies_served"] == 0

"""The shared process runner and output rules, on plain (unsandboxed) processes."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import pytest

from bench_pipeline.sandbox import SandboxPolicy, SandboxResult
from bench_pipeline.sandbox.process import (
    MAX_LINE_BYTES,
    OutputCollector,
    run_process,
    signal_exit_code,
)
from tests.sandbox.helpers import processes_with

ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}


def run(argv: list[str], **policy: Any) -> SandboxResult:
    return run_process(argv, backend="local", policy=SandboxPolicy(**policy), env=ENV)


def test_collector_keeps_head_and_tail_within_the_cap() -> None:
    collector = OutputCollector(SandboxPolicy(output_cap_bytes=1000, output_kill_bytes=10**9))
    for i in range(1000):
        collector.feed("stdout", f"line {i:04d}\n".encode())
    collector.finish()
    result = collector.fill(run_process_result())
    assert result.stdout_bytes == 10_000
    assert len(result.stdout.encode()) <= 1000
    assert result.stdout.startswith("line 0000\n")  # the start: which command ran
    assert result.stdout.rstrip().endswith("line 0999")  # the end: why it failed
    assert "bytes dropped" in result.stdout
    assert result.limit_hit is None


def test_collector_calls_the_hook_for_every_line_and_the_last_unterminated_one() -> None:
    seen: list[str] = []
    collector = OutputCollector(SandboxPolicy(), on_stdout_line=lambda line: seen.append(line))
    for chunk in (b"al", b"pha\nbe", b"ta\n\ngam", b"ma"):
        assert collector.feed("stdout", chunk) is None
    collector.feed("stderr", b"not a stdout line\n")
    collector.finish()
    assert seen == ["alpha", "beta", "", "gamma"]


def test_collector_truncates_a_giant_line_for_the_hook() -> None:
    lengths: list[int] = []
    collector = OutputCollector(
        SandboxPolicy(output_cap_bytes=10**6, output_kill_bytes=10**9),
        on_stdout_line=lambda line: lengths.append(len(line)),
    )
    block = b"x" * 65536
    for _ in range(3 * MAX_LINE_BYTES // len(block)):
        collector.feed("stdout", block)
    collector.feed("stdout", b"\nshort\n")
    collector.finish()
    assert lengths == [MAX_LINE_BYTES, 5]


def test_transcript_is_capped(tmp_path: Path) -> None:
    transcript = tmp_path / "t" / "stdout.log"
    policy = SandboxPolicy(output_cap_bytes=100, output_kill_bytes=10**9)
    collector = OutputCollector(policy, stdout_file=transcript)
    for i in range(1000):
        collector.feed("stdout", f"{i}\n".encode())
    collector.finish()
    text = transcript.read_text()
    assert text.startswith("0\n1\n")
    assert len(text) <= 20 * 100 + 100
    assert text.endswith("[transcript truncated: output cap reached]\n")


def run_process_result() -> SandboxResult:
    return SandboxResult("test", [], 0, 0.0)


def test_exit_codes_and_signals() -> None:
    assert run(["sh", "-c", "exit 3"]).exit_code == 3
    assert run(["sh", "-c", "kill -KILL $$"]).exit_code == 137
    assert signal_exit_code(-9) == 137 and signal_exit_code(2) == 2


def test_missing_program_is_an_error_not_an_exception() -> None:
    result = run(["/nonexistent/program"])
    assert result.error and result.exit_code is None
    assert not result.ok


def test_timeout_kills_the_whole_group() -> None:
    marker = "4242.5"  # an unusual sleep length names our processes on the host
    start = time.monotonic()
    result = run(["sh", "-c", f"sleep {marker} & sleep {marker} & wait"], timeout_s=1)
    assert time.monotonic() - start < 5
    assert result.timed_out and result.exit_code is None
    time.sleep(0.2)
    assert processes_with(f"sleep {marker}") == []


def test_leftover_children_are_killed_when_the_leader_exits() -> None:
    marker = "4243.5"
    result = run(["sh", "-c", f"sleep {marker} > /dev/null 2>&1 & echo started"])
    assert result.exit_code == 0 and result.stdout == "started\n"
    time.sleep(0.2)
    assert processes_with(f"sleep {marker}") == []


def test_hook_stop_kills_and_reports() -> None:
    code = "import itertools,time\nfor i in itertools.count():\n print(i, flush=True); time.sleep(0.01)"
    result = run_process(
        [sys.executable, "-c", code],
        backend="local",
        policy=SandboxPolicy(timeout_s=20),
        env=ENV,
        on_stdout_line=lambda line: "budget spent" if line == "5" else None,
    )
    assert result.stopped == "budget spent"
    assert result.exit_code is None and not result.ok
    assert result.duration_s < 5


@pytest.mark.parametrize("argv", [["yes"], ["head", "-c", "5G", "/dev/zero"]])
def test_flood_is_stopped_quickly(argv: list[str]) -> None:
    start = time.monotonic()
    result = run(argv, output_cap_bytes=100_000)
    assert time.monotonic() - start < 5
    assert result.limit_hit == "output" and result.exit_code is None
    assert len(result.stdout) <= 100_000
    assert 400_000 < result.stdout_bytes < 10_000_000

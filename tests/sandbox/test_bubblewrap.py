"""The bubblewrap back end on ordinary programs: what they see, get back and may do."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bench_pipeline.sandbox import SandboxPolicy, SandboxUnavailable, get_sandbox
from bench_pipeline.sandbox.bubblewrap import BubblewrapSandbox, _probe
from tests.sandbox.helpers import quick


def test_get_sandbox_knows_its_back_ends() -> None:
    assert get_sandbox("bubblewrap").name == "bubblewrap"
    assert get_sandbox("docker", image="node:20-bookworm-slim").name == "docker"
    with pytest.raises(ValueError, match="bubblewrap, docker"):
        get_sandbox("chroot")


def test_missing_bwrap_says_how_to_install_it(workspace: Path) -> None:
    sandbox = BubblewrapSandbox(bwrap="/nonexistent/bwrap")
    assert sandbox.unavailable_reason() == "bubblewrap not found: apt-get install bubblewrap"
    with pytest.raises(SandboxUnavailable, match="apt-get install bubblewrap"):
        sandbox.run(["true"], workspace, SandboxPolicy())


def test_availability_probe_is_cached(bwrap: BubblewrapSandbox) -> None:
    assert bwrap.unavailable_reason() is None
    assert _probe.cache_info().currsize >= 1


def test_runs_and_reports(bwrap: BubblewrapSandbox, workspace: Path) -> None:
    result = bwrap.run(["sh", "-c", "echo out; echo err >&2; exit 3"], workspace, quick())
    assert (result.exit_code, result.stdout, result.stderr) == (3, "out\n", "err\n")
    assert result.backend == "bubblewrap" and result.argv[0] == "sh"
    assert not result.ok and not result.timed_out and result.error is None
    assert result.stdout_bytes == 4 and result.stderr_bytes == 4
    assert "exit 3" in result.summary()
    assert bwrap.run(["true"], workspace, quick()).ok


def test_environment_is_clean(
    bwrap: BubblewrapSandbox, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-host-secret")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "host-secret")
    result = bwrap.run(["env"], workspace, quick())
    env = dict(line.split("=", 1) for line in result.stdout.splitlines())
    assert "host-secret" not in result.stdout and "ANTHROPIC_API_KEY" not in env
    assert env["HOME"] != "/root" and env["LANG"] == "C.UTF-8"
    assert "/usr/bin" in env["PATH"].split(":")
    passed = bwrap.run(
        ["sh", "-c", 'echo "$ANTHROPIC_API_KEY"'],
        workspace,
        quick(env={"ANTHROPIC_API_KEY": "sk-ant-given"}),
    )
    assert passed.stdout == "sk-ant-given\n"


def test_home_is_private_and_writable(bwrap: BubblewrapSandbox, workspace: Path) -> None:
    result = bwrap.run(
        ["sh", "-c", 'cd && pwd && echo x > "$HOME/.npmrc" && cat .npmrc && id -un'],
        workspace,
        quick(),
    )
    assert result.ok, result.stderr
    home, content, user = result.stdout.split()
    assert home != "/root" and content == "x"
    assert user == "sandbox" if os.geteuid() == 0 else True


def test_cwd_defaults_to_the_workspace_and_may_be_a_subfolder(
    bwrap: BubblewrapSandbox, workspace: Path
) -> None:
    sub = workspace / "src"
    sub.mkdir()
    assert bwrap.run(["pwd"], workspace, quick()).stdout.strip() == str(workspace)
    assert bwrap.run(["pwd"], workspace, quick(), cwd=sub).stdout.strip() == str(sub)
    with pytest.raises(ValueError, match="not inside the workspace"):
        bwrap.run(["pwd"], workspace, quick(), cwd=workspace.parent)


def test_files_written_belong_to_the_caller(bwrap: BubblewrapSandbox, workspace: Path) -> None:
    (workspace / "given.txt").write_text("from the host\n")
    script = "mkdir -p dist/js && echo built > dist/js/app.js && cat given.txt >> dist/js/app.js"
    result = bwrap.run(["sh", "-c", script], workspace, quick())
    assert result.ok, result.stderr
    built = workspace / "dist" / "js" / "app.js"
    assert built.read_text() == "built\nfrom the host\n"
    for path in (workspace, workspace / "dist", built, workspace / "given.txt"):
        assert (path.stat().st_uid, path.stat().st_gid) == (os.getuid(), os.getgid())


def test_extra_writable_and_read_only_folders(
    bwrap: BubblewrapSandbox, workspace: Path, tmp_path: Path
) -> None:
    agent_home = tmp_path / "agent-home"
    agent_home.mkdir()
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "tool.sh").write_text("echo tool ran\n")
    policy = quick(writable=[agent_home], read_only=[tools], env={"HOME": str(agent_home)})
    script = f'echo cfg > "$HOME/config" && sh {tools}/tool.sh && touch {tools}/x'
    result = bwrap.run(["sh", "-c", script], workspace, policy)
    assert "tool ran" in result.stdout
    assert (agent_home / "config").read_text() == "cfg\n"
    assert (agent_home / "config").stat().st_uid == os.getuid()
    assert result.exit_code != 0 and not (tools / "x").exists()  # read-only stays read-only


def test_stdout_file_is_a_live_transcript(
    bwrap: BubblewrapSandbox, workspace: Path, tmp_path: Path
) -> None:
    transcript = tmp_path / "logs" / "transcript.jsonl"
    transcript.parent.mkdir()
    transcript.write_text('{"earlier": true}\n')
    script = 'for i in 1 2 3; do echo "{\\"n\\": $i}"; done; echo noise >&2'
    result = bwrap.run(["sh", "-c", script], workspace, quick(), stdout_file=transcript)
    assert result.ok
    assert transcript.read_text().splitlines() == [
        '{"earlier": true}',
        '{"n": 1}',
        '{"n": 2}',
        '{"n": 3}',
    ]


def test_line_hook_stops_the_program(bwrap: BubblewrapSandbox, workspace: Path) -> None:
    seen: list[str] = []

    def budget(line: str) -> str | None:
        seen.append(line)
        return "token budget exceeded" if line == "cost 3" else None

    script = "i=0; while true; do i=$((i+1)); echo cost $i; sleep 0.05; done"
    result = bwrap.run(["sh", "-c", script], workspace, quick(), on_stdout_line=budget)
    assert result.stopped == "token budget exceeded"
    assert result.exit_code is None and not result.ok and not result.timed_out
    assert seen[:3] == ["cost 1", "cost 2", "cost 3"] and len(seen) <= 4
    assert result.duration_s < 5
    assert "stopped: token budget exceeded" in result.summary()


def test_output_is_capped_and_counted(bwrap: BubblewrapSandbox, workspace: Path) -> None:
    script = "i=0; while [ $i -lt 2000 ]; do echo line $i; i=$((i+1)); done"
    policy = quick(output_cap_bytes=2000, output_kill_bytes=1_000_000)
    result = bwrap.run(["sh", "-c", script], workspace, policy)
    assert result.ok  # over the cap but under the kill threshold: finishes, trimmed
    assert len(result.stdout.encode()) <= 2000
    assert result.stdout_bytes == sum(len(f"line {i}\n") for i in range(2000))
    assert result.stdout.startswith("line 0\n") and result.stdout.endswith("line 1999\n")


def test_python_and_node_run_under_the_limits(bwrap: BubblewrapSandbox, workspace: Path) -> None:
    """V8 reserves lots of address space: the memory limit must not break node or npm."""
    policy = quick(memory_mb=1024)
    node = bwrap.run(
        ["node", "-e", "console.log(require('os').userInfo().username)"], workspace, policy
    )
    assert node.ok, node.stderr
    npm = bwrap.run(["npm", "--version"], workspace, policy)
    assert npm.ok and npm.stdout.strip()[0].isdigit(), npm.stderr
    py = bwrap.run(["python3", "-c", "print(6*7)"], workspace, policy)
    assert py.stdout == "42\n", py.stderr


def test_read_only_folder_inside_the_workspace_stays_read_only(
    bwrap: BubblewrapSandbox, workspace: Path
) -> None:
    frozen = workspace / "vendor"
    frozen.mkdir()
    (frozen / "lib.js").write_text("original\n")
    script = "echo changed > vendor/lib.js; echo new > vendor/new.js; echo ok > mine.txt"
    result = bwrap.run(["sh", "-c", script], workspace, quick(read_only=[frozen]))
    assert (frozen / "lib.js").read_text() == "original\n" and not (frozen / "new.js").exists()
    assert (workspace / "mine.txt").read_text() == "ok\n"
    assert "Read-only file system" in result.stderr

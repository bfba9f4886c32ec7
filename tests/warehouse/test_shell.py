"""`bench shell` opens the warehouse read-only, so it never locks anyone out; a reader locked
out by someone's read-write connection is told who holds it and what to do."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

pytestmark = pytest.mark.slow  # each test runs `bench` two or three times

BENCH = str(Path(sys.executable).with_name("bench"))


def _bench(*args: str, **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [BENCH, *args], capture_output=True, text=True, timeout=120, check=False, **kwargs
    )


@pytest.fixture
def warehouse(tmp_path: Path) -> Path:
    path = tmp_path / "warehouse.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute(
            "create table fct_runs as select * from (values ('r1', 71.5), ('r2', 64.0)) "
            "as t(run_id, score)"
        )
    return path


@pytest.fixture
def read_write_holder(warehouse: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process with a plain (read-write) duckdb.connect, like an analyst's notebook."""
    code = (
        "import duckdb, sys\n"
        f"con = duckdb.connect({str(warehouse)!r})  # notebook-style\n"
        "print('holding', flush=True)\n"
        "sys.stdin.read()\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline() == "holding\n"
    yield holder
    holder.communicate(timeout=30)


def test_python_prompt_reads_the_warehouse_and_cannot_write(warehouse: Path) -> None:
    statements = (
        'con.sql("select run_id, score from fct_runs order by run_id").show()\n'
        'print("total", con.execute("select sum(score) from fct_runs").fetchone()[0])\n'
        'con.execute("drop table fct_runs")\n'
    )
    result = _bench("shell", "--db", str(warehouse), "--python", input=statements)
    assert result.returncode == 0, result.stderr
    assert "r1" in result.stdout and "71.5" in result.stdout and "r2" in result.stdout
    assert "total 135.5" in result.stdout
    # The banner names the file and how to query it; the DROP is refused, not done.
    assert f"Warehouse {warehouse}, opened read-only" in result.stderr
    assert 'con.sql("select' in result.stderr
    assert "read-only mode" in result.stderr
    with duckdb.connect(str(warehouse), read_only=True) as con:
        assert con.execute("select count(*) from fct_runs").fetchone() == (2,)


def test_bench_sql_works_while_bench_shell_holds_the_file(warehouse: Path) -> None:
    shell = subprocess.Popen(
        [BENCH, "shell", "--db", str(warehouse), "--python"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert shell.stdin is not None and shell.stdout is not None
    try:
        shell.stdin.write(
            'print("open", con.execute("select count(*) from fct_runs").fetchone())\n'
        )
        shell.stdin.flush()
        # The prompt's ">>> " comes first on the same line when stdin is not a terminal.
        assert shell.stdout.readline().endswith("open (2,)\n")

        result = _bench(
            "sql", "--db", str(warehouse), "--json", "select max(score) as top from fct_runs"
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == '[{"top": 71.5}]'
        assert shell.poll() is None  # the shell still has the file open
    finally:
        _, errors = shell.communicate("", timeout=60)
    assert shell.returncode == 0, errors


def test_missing_warehouse_gives_the_message_of_bench_sql(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.duckdb"
    shell = _bench("shell", "--db", str(missing), "--python", input="")
    sql = _bench("sql", "--db", str(missing), "select 1")
    assert shell.returncode == sql.returncode == 1
    assert f"no warehouse at {missing}" in shell.stderr
    assert shell.stderr == sql.stderr


def test_a_locked_reader_is_told_who_holds_the_file_and_what_to_do(
    warehouse: Path, read_write_holder: subprocess.Popen[str]
) -> None:
    result = _bench("sql", "--db", str(warehouse), "select count(*) from fct_runs")
    assert result.returncode != 0
    message = " ".join(result.stderr.split())
    assert f"process {read_write_holder.pid} (" in message
    assert "# notebook-style" in message  # its command line, from /proc
    assert "open read-write" in message
    assert f'duckdb.connect("{warehouse}", read_only=True)' in message
    assert "`bench shell`" in message and "`bench sql`" in message
    assert "never hold the live file" in message

    shell = _bench("shell", "--db", str(warehouse), "--python", input="")
    assert shell.returncode != 0
    assert f"process {read_write_holder.pid} (" in shell.stderr
    assert "Warehouse" not in shell.stderr  # refused before any prompt


def test_the_duckdb_tool_is_opened_read_only_when_on_path(warehouse: Path, tmp_path: Path) -> None:
    # The duckdb command-line tool is not installed here: a stand-in on PATH shows the
    # arguments `bench shell` hands it.
    tools = tmp_path / "bin"
    tools.mkdir()
    stand_in = tools / "duckdb"
    stand_in.write_text('#!/bin/sh\necho "duckdb tool: $*"\n')
    stand_in.chmod(0o755)
    env = {**os.environ, "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}"}

    result = _bench("shell", "--db", str(warehouse), env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"duckdb tool: -readonly {warehouse}\n"

    forced = _bench("shell", "--db", str(warehouse), "--python", env=env, input="print(1 + 1)\n")
    assert forced.returncode == 0, forced.stderr
    assert "duckdb tool" not in forced.stdout and "2" in forced.stdout

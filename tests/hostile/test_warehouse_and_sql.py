"""Hostile SQL given to `bench sql`: every way out to the host is refused with a one-line
error and the host is left as it was. The attacks run the command in process (Typer's
runner: the same code, without a slow interpreter start per case); a few run it as a real
subprocess of the installed entry point."""

from __future__ import annotations

import importlib
import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import dagster as dg
import duckdb
import pytest
from typer.testing import CliRunner

from bench_pipeline import definitions, settings
from bench_pipeline.cli import app
from bench_pipeline.orchestration import project
from bench_pipeline.runner import run_main
from bench_pipeline.warehouse.artifacts import ArtifactStore
from bench_pipeline.warehouse.build import query
from resources import AgentResource

BENCH = Path(sys.executable).with_name("bench")
SECRET = "s3cr3t-value-9b41"
SMOKE = settings.experiments_dir() / "smoke.yaml"
PER_RUN = ("run_spec", "agent_generation", "sandboxed_build", "bot_evaluation", "quality_metrics")


def in_process(db: Path, query: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["sql", query, "--db", str(db)], env={"COLUMNS": "200"})
    return result.exit_code, result.stdout, result.stderr


def bench_sql(db: Path, query: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BENCH), "sql", query, "--db", str(db), *extra],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
        timeout=120,
        check=False,
    )


@pytest.fixture
def host(tmp_path: Path) -> dict[str, Path]:
    """A small warehouse, a secret file, and a file that must not change."""
    db = tmp_path / "w.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("create table fct_runs as select 'r1' as run_id, 50.0 as score")
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET + "\n")
    secret.chmod(0o600)
    keep = tmp_path / "keep.txt"
    keep.write_text("original\n")
    return {"db": db, "secret": secret, "keep": keep, "dir": tmp_path}


class _Listener:
    """A throw-away local TCP listener that counts connections."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        self.sock.close()


ATTACKS = {
    "copy_to_overwrite": "copy (select 'pwned') to '{keep}' (header false)",
    "copy_to_new_file": "copy (select 'pwned') to '{dir}/dropped.csv'",
    "select_then_copy": "select 1; copy (select 'pwned') to '{dir}/dropped.csv'",
    "export_database": "export database '{dir}/exported'",
    "attach_new_file": "attach '{dir}/dropped.duckdb' as evil",
    "install_httpfs": "install httpfs",
    "install_from_listener": "install httpfs from 'http://127.0.0.1:{port}'",
    "load_httpfs": "load httpfs",
    "read_text_secret": "select * from read_text('{secret}')",
    "read_csv_secret": "select * from read_csv('{secret}', header = false)",
    "read_blob_secret": "select * from read_blob('{secret}')",
    "glob_listing": "select * from glob('{dir}/*')",
    "replacement_scan": "select * from '{secret}'",
    "http_read": "select * from read_text('http://127.0.0.1:{port}/x')",
    "set_external_access": "set enable_external_access = true",
    "reset_lock": "set lock_configuration = false",
    "pragma_profiling_output": "pragma profiling_output = '{dir}/dropped.prof'",
    "pragma_enable_profiling": "pragma enable_profiling = 'json'",
    "create_secret": "create persistent secret evil (type s3, key_id 'x', secret 'y')",
}


# These also run as a real `bench` process (each costs an interpreter start).
SUBPROCESS = {"copy_to_overwrite", "read_text_secret", "install_from_listener"}


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_bench_sql_cannot_touch_the_host(name: str, host: dict[str, Path]) -> None:
    listener = _Listener()
    before = host["db"].read_bytes()
    try:
        query = ATTACKS[name].format(**host, port=listener.port)
        if name in SUBPROCESS:
            run = bench_sql(host["db"], query)
            code, stdout, stderr = run.returncode, run.stdout, run.stderr
        else:
            code, stdout, stderr = in_process(host["db"], query)
    finally:
        listener.close()
    assert code == 2, (stdout, stderr)
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    assert "Traceback" not in stderr and SECRET not in stdout + stderr
    # The host is as it was: nothing written, nothing read, no connection made.
    assert host["keep"].read_text() == "original\n"
    assert sorted(p.name for p in host["dir"].iterdir()) == ["keep.txt", "secret.txt", "w.duckdb"]
    assert host["db"].read_bytes() == before
    assert listener.connections == 0
    assert not (Path.home() / ".duckdb" / "stored_secrets" / "evil.duckdb_secret").exists()


@pytest.mark.parametrize("query", ["", "   ", "\n\t", "/* only a comment */", ";"])
def test_an_empty_query_is_a_one_line_error(query: str, host: dict[str, Path]) -> None:
    code, stdout, stderr = in_process(host["db"], query)
    assert code == 2
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    assert stdout == ""


def test_an_empty_query_from_the_shell_is_a_one_line_error(host: dict[str, Path]) -> None:
    result = bench_sql(host["db"], "")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.strip().splitlines() == [
        'error: empty query: give the SQL to run, e.g. "select * from fct_runs"'
    ]


def test_reading_the_warehouse_still_works(host: dict[str, Path]) -> None:
    result = bench_sql(host["db"], "select run_id, score from fct_runs", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [{"run_id": "r1", "score": 50.0}]
    # Harmless introspection is not refused.
    shown = bench_sql(host["db"], "select current_setting('enable_external_access') as x", "--json")
    assert json.loads(shown.stdout) == [{"x": False}]


def test_a_warehouse_locked_by_a_writer_is_a_readable_error(host: dict[str, Path]) -> None:
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(host["db"])],
        stdout=subprocess.PIPE,
        stdin=subprocess.PIPE,
        text=True,
    )
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "open"
        code, _, stderr = in_process(host["db"], "select 1")
    finally:
        writer.kill()
        writer.wait()
    assert code == 1
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert "is locked" in lines[0] and f"process {writer.pid}" in lines[0]
    assert str(host["db"]) in lines[0]


WRITER = """
import sys, duckdb
con = duckdb.connect(sys.argv[1])
print("open", flush=True)
sys.stdin.read()
"""


class _NoAgents(AgentResource):
    def adapter(self, harness: str, run_id: str):  # type: ignore[override]
        raise AssertionError(f"an agent was invoked for {run_id}")


def _materialized(instance: dg.DagsterInstance) -> dict[tuple[str, str], int]:
    """(asset, run) -> how many times it was materialized."""
    counts: dict[tuple[str, str], int] = {}
    for stage in PER_RUN:
        records = instance.fetch_materializations(dg.AssetKey(stage), limit=1000).records
        for record in records:
            key = (stage, str(record.partition_key))
            counts[key] = counts.get(key, 0) + 1
    return counts


@pytest.mark.slow
@pytest.mark.usefixtures("chromium")
def test_a_resumed_run_recomputes_only_the_quarantined_stage(
    instance: dg.DagsterInstance, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sweep, then one run's bot record is corrupted: the next `bench run` names it,
    moves it aside, evaluates that run again (that stage only, no agent) and loads it."""
    monkeypatch.setenv("BENCH_BOT_ENDURANCE_S", "4")
    first = run_main(SMOKE, instance, progress=lambda _: None, endurance_s=4.0)
    assert first.failed == [] and first.quarantined == []
    store = ArtifactStore(data_dir / "artifacts")
    victim = sorted(p.stem for p in (store.root / "records" / "bot_evaluation").glob("*.json"))[1]
    record = store.record_path("bot_evaluation", victim)
    record.write_text(record.read_text()[:40])  # cut short: not JSON any more
    before = _materialized(instance)
    agent_files = {
        p.name: p.read_bytes() for p in (store.root / "records" / "agent_generation").iterdir()
    }

    # Any agent invoked now fails the test: the agent stage must not run again. `bench run`
    # loads the definitions by module name (orchestration/project.py): patched there.
    real = definitions.defs
    monkeypatch.setattr(
        importlib.import_module(project.DEFINITIONS_MODULE),
        "defs",
        dg.Definitions(
            assets=definitions.ALL_ASSETS,
            resources={**real.resources, "agent": _NoAgents()},
        ),
    )
    lines: list[str] = []
    second = run_main(SMOKE, instance, progress=lines.append, endurance_s=4.0)
    assert second.failed == []
    # Named, with its stage and why, in the progress output and the summary.
    named = [line for line in lines if "quarantined a bad record" in line]
    assert len(named) == 1 and victim in named[0] and "bot_evaluation" in named[0]
    assert "bad JSON" in named[0]
    assert second.repaired == [f"bot_evaluation of {victim}"]
    # Only that stage of that run was computed again.
    after = _materialized(instance)
    grew = {key: n - before.get(key, 0) for key, n in after.items() if n != before.get(key, 0)}
    assert grew == {("bot_evaluation", victim): 1}
    assert {
        p.name: p.read_bytes() for p in (store.root / "records" / "agent_generation").iterdir()
    } == agent_files
    # The record is back, and the warehouse has the run's gameplay score again.
    assert store.read_record("bot_evaluation", victim) is not None
    _, rows = query(
        data_dir / "warehouse.duckdb",
        "select gameplay_score from fct_runs where run_id = ?",
        [victim],
    )
    assert rows[0][0] is not None
    folder = store.root / "quarantine" / "bot_evaluation"
    moved = [p for p in folder.glob(f"{victim}.*") if not p.name.endswith(".reason.json")]
    assert len(moved) == 1 and Path(str(moved[0]) + ".reason.json").is_file()
    # Settled: a third run has nothing to repair.
    third = run_main(SMOKE, instance, progress=lambda _: None, endurance_s=4.0)
    assert third.repaired == [] and third.quarantined == []

    # The agent's own record corrupted: the run is held back and named, never re-run (an
    # agent run costs money; _NoAgents fails the test if one starts), nothing recomputed.
    held = sorted(agent_files)[2].removesuffix(".json")
    store.record_path("agent_generation", held).write_text('{"run_id": "' + held + '", "cost')
    before = _materialized(instance)
    lines.clear()
    fourth = run_main(SMOKE, instance, progress=lines.append, endurance_s=4.0)
    assert fourth.failed == [] and fourth.repaired == []
    assert _materialized(instance) == before
    assert any(held in line and "agent is not run again" in line for line in lines), lines
    _, rows = query(
        data_dir / "warehouse.duckdb",
        "select status, cost_usd, gameplay_score is not null from fct_runs where run_id = ?",
        [held],
    )
    assert rows == [("pending", None, True)]

"""No row lost without a named error (issue 32, items 7 and 8), through `bench warehouse
rebuild` and `bench sql` as a user runs them: a lost or damaged Parquet part of the columnar
mirror, hand-edited numbers outside the stages' bounds, journal entries no writer makes,
and the copies a killed rebuild leaves beside the warehouse."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from bench_pipeline import settings
from bench_pipeline.warehouse import columnar
from bench_pipeline.warehouse.artifacts import ArtifactStore

BENCH = Path(sys.executable).with_name("bench")
RUNS = 10


def _generate(store: ArtifactStore, n: int) -> None:
    sys.path.insert(0, str(settings.project_root() / "benchmarks"))
    try:
        from warehouse import generate  # benchmarks/warehouse.py
    finally:
        sys.path.pop(0)
    generate(store, n)


def bench(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BENCH), *args],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200", **env},
        timeout=600,
        check=False,
    )


@pytest.fixture
def built(tmp_path: Path) -> tuple[ArtifactStore, Path, dict[str, str]]:
    """A store of RUNS runs, rebuilt once (so the mirror exists), and its environment."""
    store = ArtifactStore(tmp_path / "artifacts")
    _generate(store, RUNS)
    db = tmp_path / "w.duckdb"
    env = {"BENCH_ARTIFACTS_DIR": str(store.root), "BENCH_WAREHOUSE": str(db)}
    first = bench("warehouse", "rebuild", env=env)
    assert first.returncode == 0, first.stderr
    assert f"{RUNS} runs, {RUNS * 16} verdicts" in first.stdout
    return store, db, env


def _count(db: Path, sql: str) -> int:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql).fetchone()[0]


def _rewrite_some(store: ArtifactStore, runs: list[str], score: float) -> None:
    for run_id in runs:
        record = json.loads(store.record_path("bot_evaluation", run_id).read_text())
        store.write_record("bot_evaluation", run_id, {**record, "gameplay_score": score})


def test_a_lost_part_is_named_and_its_runs_rebuilt_from_json(
    built: tuple[ArtifactStore, Path, dict[str, str]],
) -> None:
    store, db, env = built
    runs = sorted(p.stem for p in (store.root / "records" / "bot_evaluation").glob("*.json"))
    # A second part: some runs rewritten since (their newest rows are in it, older ones in
    # the first part).
    _rewrite_some(store, runs[:3], 12.5)
    assert bench("warehouse", "rebuild", env=env).returncode == 0
    items = columnar.parts(store.root, "bot_evaluation")
    assert len(items) == 2
    for lost in items:  # the big old part, then the small new one
        lost.path.unlink()
        done = bench("warehouse", "rebuild", env=env)
        assert done.returncode == 0, done.stderr
        assert "columnar/bot_evaluation" in done.stderr, done.stderr
        assert _count(db, "select count(*) from fct_test_results") == RUNS * 16
        assert _count(db, "select count(gameplay_score) from fct_runs") == RUNS
        # The rewritten runs have their newest score, not the older part's.
        assert _count(db, "select count(*) from fct_runs where gameplay_score = 12.5") == 3
        settled = bench("warehouse", "rebuild", env=env)
        assert settled.returncode == 0 and "columnar/" not in settled.stderr, settled.stderr
    # A table's only part lost: every run of it read again, and named.
    (only,) = columnar.parts(store.root, "quality_metrics")
    only.path.unlink()
    done = bench("warehouse", "rebuild", env=env)
    assert done.returncode == 0, done.stderr
    message = " ".join(done.stderr.split())
    assert f"columnar/quality_metrics: every part is gone; {RUNS} runs" in message, message
    assert _count(db, "select count(quality_score) from fct_runs") == RUNS
    # A record file gone without a note (a builder of a shared bucket holds only its own
    # runs' files): named, its rows kept; only --scan treats it as deleted.
    gone = sorted(p.stem for p in (store.root / "records" / "bot_evaluation").glob("*.json"))[-1]
    store.record_path("bot_evaluation", gone).unlink()
    done = bench("warehouse", "rebuild", env=env)
    assert done.returncode == 0, done.stderr
    message = " ".join(done.stderr.split())
    assert "1 runs have rows but no file in this store" in message and gone in message
    assert _count(db, "select count(gameplay_score) from fct_runs") == RUNS


def test_a_damaged_part_is_set_aside_and_named(
    built: tuple[ArtifactStore, Path, dict[str, str]],
) -> None:
    store, db, env = built
    (part,) = columnar.parts(store.root, "quality_metrics")
    data = part.path.read_bytes()
    part.path.write_bytes(data[: len(data) // 2])  # cut short, as a full disk leaves it
    done = bench("warehouse", "rebuild", env=env)
    assert done.returncode == 0, done.stderr
    message = " ".join(done.stderr.split())
    assert f"{part.path} cannot be read" in message, done.stderr
    assert not part.path.exists()
    assert list((store.root / "quarantine" / "columnar" / "quality_metrics").glob("part-*"))
    assert _count(db, "select count(quality_score) from fct_runs") == RUNS


@pytest.mark.parametrize(
    ("stage", "field", "value", "why"),
    [
        ("agent_generation", "output_tokens", -1, "output_tokens is -1, below 0"),
        ("agent_generation", "cost_usd", -0.5, "cost_usd is -0.5, below 0"),
        ("agent_generation", "cost_usd", 1e300, "cost_usd is 1e+300, above 1e+15"),
        ("bot_evaluation", "gameplay_score", 1e300, "gameplay_score is 1e+300, above 100"),
        ("bot_evaluation", "gameplay_score", -3.0, "gameplay_score is -3.0, below 0"),
        ("quality_metrics", "quality_score", 100.5, "quality_score is 100.5, above 100"),
    ],
)
def test_numbers_outside_the_stages_bounds_are_quarantined_and_named(
    stage: str,
    field: str,
    value: float,
    why: str,
    built: tuple[ArtifactStore, Path, dict[str, str]],
) -> None:
    store, db, env = built
    run_id = sorted(p.stem for p in (store.root / "records" / stage).glob("*.json"))[0]
    path = store.record_path(stage, run_id)
    path.write_text(json.dumps({**json.loads(path.read_text()), field: value}))
    done = bench("warehouse", "rebuild", "--scan", env=env)
    assert done.returncode == 0, done.stderr
    message = " ".join(done.stderr.split())
    assert "1 records quarantined" in done.stdout
    assert run_id in message and stage in message and why in message, message
    # Nothing infinite reaches the marts, and the JSON output is strict JSON.
    shown = bench("sql", "select * from mart_leaderboard_models", "--json", env=env)
    assert shown.returncode == 0, shown.stderr
    assert "Infinity" not in shown.stdout and "NaN" not in shown.stdout
    json.loads(shown.stdout)
    column = {"agent_generation": "cost_usd", "bot_evaluation": "gameplay_score"}.get(
        stage, "quality_score"
    )
    assert _count(db, f"select count({column}) from fct_runs where run_id = '{run_id}'") == 0


def test_sql_json_never_prints_bare_infinity_or_nan(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute(
            "create table t as select 'inf'::double as a, '-inf'::double as b, "
            "'nan'::double as c, 1.5 as d"
        )
    done = bench("sql", "select * from t", "--json", "--db", str(db), env={})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [{"a": None, "b": None, "c": None, "d": 1.5}]
    assert "3 NaN or infinite values printed as null" in done.stderr


def test_a_query_past_its_time_limit_is_stopped_with_one_line(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    duckdb.connect(str(db)).close()
    done = bench(
        "sql",
        "select sum(range) from range(1000000000000000)",
        "--timeout",
        "1",
        "--db",
        str(db),
        env={},
    )
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "ran longer than 1 s and was stopped" in lines[0], done.stderr


def test_journal_entries_of_the_wrong_type_are_skipped_and_named(
    built: tuple[ArtifactStore, Path, dict[str, str]],
) -> None:
    store, db, env = built
    run_id = sorted(p.stem for p in (store.root / "records" / "bot_evaluation").glob("*.json"))[0]
    note_dir = store.root / "journal" / "bot_evaluation" / f"{run_id}~123-4-abcd"
    note_dir.mkdir(parents=True)
    (note_dir / "x").write_text("a folder where an empty note belongs")
    (store.root / "journal" / "not-a-folder").write_text("")
    (store.root / "journal" / 'bad"name').mkdir()
    _rewrite_some(store, [run_id], 25.0)  # a real note beside them: still read
    for args in (("warehouse", "rebuild"),):
        done = bench(*args, env=env)
        assert done.returncode == 0, done.stderr
        message = " ".join(done.stderr.split())
        assert f"skipped the journal entry {note_dir}: a folder" in message, message
        assert "not-a-folder: not a folder of notes" in message
        assert "'bad\"name'" in message and "not a table name" in message
    assert note_dir.is_dir()  # named, left as it is
    assert _count(db, f"select gameplay_score from fct_runs where run_id = '{run_id}'") == 25


def test_a_killed_rebuilds_copy_is_reaped_at_the_next_start(tmp_path: Path) -> None:
    store = ArtifactStore(tmp_path / "artifacts")
    _generate(store, 2000)
    db = tmp_path / "w.duckdb"
    env = {"BENCH_ARTIFACTS_DIR": str(store.root), "BENCH_WAREHOUSE": str(db)}
    assert bench("warehouse", "rebuild", env=env).returncode == 0
    leftovers: list[Path] = []
    for _attempt in range(5):  # kill it while its copy exists (it usually does at once)
        proc = subprocess.Popen(
            [str(BENCH), "warehouse", "rebuild"],
            env={**os.environ, **env},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        copy = tmp_path / f".w.duckdb.building-{proc.pid}"
        while proc.poll() is None and not copy.exists():
            time.sleep(0.005)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            leftovers = [copy]
            break
        proc.wait()
    assert leftovers and leftovers[0].exists(), "the rebuild was never caught mid-copy"
    assert leftovers[0].stat().st_size > 0
    # A live process's copy of the same name is left alone.
    live = tmp_path / f".w.duckdb.building-{os.getpid()}"
    live.write_bytes(b"in use")
    done = bench("warehouse", "rebuild", env=env)
    assert done.returncode == 0, done.stderr
    assert not leftovers[0].exists()
    assert live.exists()
    live.unlink()


def test_a_record_bigger_than_the_loader_takes_is_split_not_quarantined(
    built: tuple[ArtifactStore, Path, dict[str, str]],
) -> None:
    """A stage writes a 30 MB record (a tool's output kept in full): the store keeps the
    bulky field in a file of its own, the record loads, nothing is quarantined."""
    store, db, env = built
    run_id = sorted(p.stem for p in (store.root / "records" / "sandboxed_build").glob("*.json"))[0]
    record = json.loads(store.record_path("sandboxed_build", run_id).read_text())
    log = "npm ERR! something went wrong\n" * 1_000_000  # 30 MB
    store.write_record("sandboxed_build", run_id, {**record, "message": log, "build_ok": False})
    done = bench("warehouse", "rebuild", env=env)
    assert done.returncode == 0, done.stderr
    assert "0 records quarantined" in done.stdout, done.stderr
    written = json.loads(store.record_path("sandboxed_build", run_id).read_text())
    assert json.loads(Path(written["overflow_path"]).read_text())["message"] == log
    assert written["message"].startswith("npm ERR!") and len(written["message"]) < 3000
    with duckdb.connect(str(db), read_only=True) as con:
        row = con.execute(
            "select build_ok, overflow_fields from raw_sandboxed_build where run_id = ?", [run_id]
        ).fetchone()
    assert row == (False, "message")


def _long_session(path: Path, steps: int) -> None:
    """A Claude Code stream-json transcript of `steps` tool calls (three events each)."""
    with path.open("w") as out:
        out.write(json.dumps({"type": "system", "subtype": "init", "model": "m"}) + "\n")
        for i in range(steps):
            text = "Checking the build output once more before the next step. " * 3
            call = {"command": f"npm run build -- --step {i} && ls -la dist/assets/js"}
            message = {
                "id": f"m{i}",
                "role": "assistant",
                "content": [
                    {"type": "text", "text": text},
                    {"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": call},
                ],
                "usage": {"input_tokens": 10, "output_tokens": 5},
            }
            out.write(json.dumps({"type": "assistant", "message": message}) + "\n")
            result = {
                "type": "tool_result",
                "tool_use_id": f"t{i}",
                "content": "build ok: dist/index.html 1.2 kB, dist/assets/index.js 24 kB " * 4,
                "is_error": False,
            }
            out.write(json.dumps({"type": "user", "message": {"content": [result]}}) + "\n")


@pytest.mark.slow
@pytest.mark.usefixtures("chromium")
def test_a_big_transcript_keeps_its_quality_result(
    instance: object, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`bench run` of the synthetic agent; one run's transcript is then a long session and
    its quality record is cut short, so the next `bench run` computes the quality stage
    again: its events file is over 16 MB, and it loads (before: quarantined, quality_score
    NULL, and recomputed and quarantined again on every later run)."""
    from bench_pipeline.runner import run_main
    from bench_pipeline.warehouse.build import query

    smoke = settings.experiments_dir() / "smoke.yaml"
    monkeypatch.setenv("BENCH_BOT_ENDURANCE_S", "4")
    first = run_main(smoke, instance, progress=lambda _: None, endurance_s=4.0)  # type: ignore[arg-type]
    assert first.failed == [] and first.quarantined == []
    store = ArtifactStore(data_dir / "artifacts")
    run_id = sorted(p.stem for p in (store.root / "records" / "quality_metrics").glob("*.json"))[0]
    generation = store.read_record("agent_generation", run_id)
    assert generation is not None
    _long_session(Path(generation["transcript_path"]), 25_000)
    quality = store.record_path("quality_metrics", run_id)
    quality.write_text(quality.read_text()[:30])  # cut short: recomputed by the next run

    second = run_main(smoke, instance, progress=lambda _: None, endurance_s=4.0)  # type: ignore[arg-type]
    assert second.repaired == [f"quality_metrics of {run_id}"]
    assert [q for q in second.quarantined if "transcript_events" in q] == []
    events = store.run_dir(run_id, "quality_metrics") / "transcript_events.json"
    assert events.stat().st_size > 16 * 1024 * 1024
    db = data_dir / "warehouse.duckdb"
    _, rows = query(db, "select quality_score from fct_runs where run_id = ?", [run_id])
    assert rows[0][0] is not None
    _, rows = query(db, "select count(*) from raw_transcript_events where run_id = ?", [run_id])
    assert rows[0][0] == 75_001
    # Settled: nothing to recompute, nothing quarantined.
    third = run_main(smoke, instance, progress=lambda _: None, endurance_s=4.0)  # type: ignore[arg-type]
    assert third.repaired == [] and third.quarantined == []


def test_a_part_duckdb_opens_but_cannot_use_is_one_line_and_the_old_warehouse_stays(
    built: tuple[ArtifactStore, Path, dict[str, str]],
) -> None:
    """A Parquet file with a whole footer but nonsense in it (its tombstone flag is a list):
    the rebuild stops with one line and the live warehouse is kept."""
    store, db, env = built
    before = db.read_bytes()
    bad = store.root / "columnar" / "bot_evaluation" / "part-000000000900-000000000900.parquet"
    with duckdb.connect() as con:
        con.execute(
            "copy (select 'x.c1.r0' as run_id, 900 as _seq, [1, 2] as _deleted, "
            f"1 as _mtime_ns, 1 as _size) to '{bad}' (format parquet)"
        )
    done = bench("warehouse", "rebuild", env=env)
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: the rebuild failed: "), done.stderr
    assert db.read_bytes() == before

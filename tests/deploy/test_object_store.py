"""The artifact store on object storage, against a real S3-compatible server (moto's server
mode, a separate process on a free port) and the real Postgres on 127.0.0.1:5432.

- the sync layer (bench_pipeline/sharing/remote.py): push and pull round trips, what is
  never pushed, the bucket's journal consumed into Parquet parts, a crash's leftovers;
- the claims (claims.py): atomic, disjoint, taken over only once expired;
- the slow one: two independent `bench worker` processes, each with its own scratch and
  DAGSTER_HOME, sharing only the bucket and a Postgres database, run one sweep; every run
  is executed once and is in the warehouse once, and the warehouse built from the bucket's
  Parquet equals one built from its JSON records alone.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
import yaml

from bench_pipeline import settings
from bench_pipeline.sharing.claims import Claims, advisory_lock
from bench_pipeline.sharing.remote import URL_ENV, RemoteStore, RemoteStoreError
from bench_pipeline.warehouse import columnar
from bench_pipeline.warehouse.artifacts import ArtifactStore
from bench_pipeline.warehouse.build import SOURCE_SCHEMAS, build_warehouse
from bench_pipeline.warehouse.marts import MART_SCHEMAS
from tests.deploy.pg import PG, pg_query

REPO = settings.project_root()
MOTO_SERVER = Path(sys.executable).with_name("moto_server")
BENCH = Path(sys.executable).with_name("bench")
AWS = {
    "AWS_ACCESS_KEY_ID": "bench-test",
    "AWS_SECRET_ACCESS_KEY": "bench-test-secret",
    "AWS_DEFAULT_REGION": "us-east-1",
}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def s3_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """moto's S3-compatible server as its own process, on a free port of 127.0.0.1."""
    if not MOTO_SERVER.is_file():
        pytest.skip(f"no {MOTO_SERVER}: run `uv sync` (moto is a dev dependency)")
    port = _free_port()
    log = tmp_path_factory.mktemp("moto") / "moto.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(MOTO_SERVER), "-H", "127.0.0.1", "-p", str(port)], stdout=out, stderr=out
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"moto_server did not start: {log.read_text()[-2000:]}")
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture
def bucket_url(s3_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """s3://<a new bucket>/artifacts, with the AWS variables pointing at the server."""
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_endpoint)
    for key, value in AWS.items():
        monkeypatch.setenv(key, value)
    bucket = f"bench-{uuid.uuid4().hex[:12]}"
    RemoteStore(f"s3://{bucket}").fs.mkdir(bucket)
    return f"s3://{bucket}/artifacts"


def _record(store: ArtifactStore, stage: str, run_id: str, **fields: object) -> None:
    store.write_record(stage, run_id, {"experiment": "t", **fields})


# -- the sync layer ---------------------------------------------------------------------------


def test_push_then_pull_round_trips_a_run_and_moves_its_markers(
    bucket_url: str, tmp_path: Path
) -> None:
    worker = ArtifactStore(tmp_path / "worker")
    _record(worker, "run_spec", "t.c1.r1", seed=1)
    _record(worker, "agent_generation", "t.c1.r1", status="ok", cost_usd=0.5)
    run = worker.run_dir("t.c1.r1", "agent_generation")
    (run / "workspace" / "src").mkdir(parents=True)
    (run / "workspace" / "src" / "game.js").write_text("let x = 1;\n")
    (run / "workspace.tar.gz").write_bytes(b"\x1f\x8b archive")
    # Never sent: a link (an agent's workspace may point anywhere), node_modules, temp files.
    (run / "workspace" / "secret").symlink_to("/etc/hostname")
    (run / "workspace" / "node_modules" / "dep").mkdir(parents=True)
    (run / "workspace" / "node_modules" / "dep" / "index.js").write_text("x")
    (run / ".transcript.jsonl.1234.tmp").write_text("half")
    _record(worker, "run_spec", "t.c2.r1", seed=2)  # another run: not pushed with this one

    remote = RemoteStore(bucket_url)
    remote.check()
    sent = remote.push_run(worker, "t.c1.r1")
    objects = remote.find("")
    assert set(objects) >= {
        "records/run_spec/t.c1.r1.json",
        "records/agent_generation/t.c1.r1.json",
        "runs/t.c1.r1/agent_generation/workspace/src/game.js",
        "runs/t.c1.r1/agent_generation/workspace.tar.gz",
    }
    assert not [o for o in objects if "node_modules" in o or o.endswith((".tmp", "secret"))]
    assert not [o for o in objects if "t.c2.r1" in o]
    markers = sorted(o.split("/")[1] for o in objects if o.startswith("journal/"))
    assert markers == ["agent_generation", "run_spec"]
    # The markers moved: the worker's journal keeps only the run it did not push.
    left = sorted(p.name.split("~")[0] for p in (worker.root / "journal").glob("*/*"))
    assert left == ["t.c2.r1"]
    assert sent == 6  # 4 files + 2 markers
    assert remote.push_run(worker, "t.c1.r1") == 0  # nothing changed: nothing sent again

    other = ArtifactStore(tmp_path / "other")
    fetched = RemoteStore(bucket_url).pull_run(other, "t.c1.r1")
    assert fetched == 4
    for rel in (
        "records/agent_generation/t.c1.r1.json",
        "runs/t.c1.r1/agent_generation/workspace/src/game.js",
        "runs/t.c1.r1/agent_generation/workspace.tar.gz",
    ):
        assert (other.root / rel).read_bytes() == (worker.root / rel).read_bytes()
    assert not (other.root / "journal").exists()  # a pull is no change to note


def test_bad_urls_and_missing_buckets_are_named(bucket_url: str) -> None:
    with pytest.raises(RemoteStoreError, match="not an object store URL"):
        RemoteStore("/data/artifacts")
    missing = RemoteStore("s3://no-such-bucket-here/artifacts")
    with pytest.raises(RemoteStoreError, match="bucket 'no-such-bucket-here' does not exist"):
        missing.check()
    unreachable = RemoteStore(
        "s3://bench/artifacts",
        endpoint_url=f"http://127.0.0.1:{_free_port()}",
        config_kwargs={"retries": {"max_attempts": 1}},
    )
    with pytest.raises(RemoteStoreError, match=r"cannot use the object store .*EndpointConnection"):
        unreachable.check()


def _raw(db: Path, table: str) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(
            f"SELECT run_id, status, cost_usd FROM {table} ORDER BY run_id"
        ).fetchall()


def test_sync_compacts_the_buckets_journal_into_parts_any_builder_can_load(
    bucket_url: str, tmp_path: Path
) -> None:
    models = settings.sql_models_dir()
    worker = ArtifactStore(tmp_path / "worker")
    for n in (1, 2, 3):
        _record(worker, "agent_generation", f"t.c1.r{n}", status="ok", cost_usd=float(n))
    remote = RemoteStore(bucket_url)
    for n in (1, 2, 3):
        remote.push_run(worker, f"t.c1.r{n}")

    builder = ArtifactStore(tmp_path / "builder")
    sync = RemoteStore(bucket_url).sync_mirror(builder, SOURCE_SCHEMAS)
    assert (sync.markers_read, sync.records_pulled) == (3, 3)
    assert sync.parts_uploaded == [
        "columnar/agent_generation/part-000000000001-000000000001.parquet"
    ]
    assert not remote.find("journal")  # every marker read was consumed
    assert set(remote.find("columnar")) == {*sync.parts_uploaded, "columnar/_id"}
    build_warehouse(builder, tmp_path / "b.duckdb", models)
    assert _raw(tmp_path / "b.duckdb", "raw_agent_generation") == [
        ("t.c1.r1", "ok", 1.0),
        ("t.c1.r2", "ok", 2.0),
        ("t.c1.r3", "ok", 3.0),
    ]

    # One run changes, one is moved away (a quarantine elsewhere): a second builder on
    # another machine starts from the bucket's parts, reads only the two new markers.
    _record(worker, "agent_generation", "t.c1.r2", status="error", cost_usd=9.0)
    remote.push_run(worker, "t.c1.r2")
    worker.record_path("agent_generation", "t.c1.r3").unlink()
    worker.note_change("agent_generation", "t.c1.r3")
    remote.push_run(worker, "t.c1.r3")
    assert "records/agent_generation/t.c1.r3.json" not in remote.find("records")

    second = ArtifactStore(tmp_path / "second")
    # This machine wrote a record whose push failed: the sync sends it first.
    _record(second, "agent_generation", "t.c1.r4", status="ok", cost_usd=4.0)
    sync = RemoteStore(bucket_url).sync_mirror(second, SOURCE_SCHEMAS)
    assert (sync.parts_downloaded, sync.markers_read, sync.records_gone) == (1, 3, 1)
    assert "records/agent_generation/t.c1.r4.json" in remote.find("records")
    assert columnar.mirror_id(second.root) == columnar.mirror_id(builder.root)
    build_warehouse(second, tmp_path / "s.duckdb", models)
    assert _raw(tmp_path / "s.duckdb", "raw_agent_generation") == [
        ("t.c1.r1", "ok", 1.0),
        ("t.c1.r2", "error", 9.0),
        ("t.c1.r4", "ok", 4.0),
    ]
    # The first builder catches up by loading just the new part.
    RemoteStore(bucket_url).sync_mirror(builder, SOURCE_SCHEMAS)
    update = build_warehouse(builder, tmp_path / "b.duckdb", models)
    assert update.changed_runs == 3
    assert _raw(tmp_path / "b.duckdb", "raw_agent_generation") == _raw(
        tmp_path / "s.duckdb", "raw_agent_generation"
    )


def test_a_merged_part_left_beside_the_parts_it_replaced_is_deleted(
    bucket_url: str, tmp_path: Path
) -> None:
    """A builder that died between uploading a merged part and deleting the parts it
    replaced: the next sync deletes the replaced ones, so no row is read twice."""
    worker = ArtifactStore(tmp_path / "worker")
    remote = RemoteStore(bucket_url)
    builder = ArtifactStore(tmp_path / "builder")
    for n in (1, 2):
        _record(worker, "agent_generation", f"t.c1.r{n}", status="ok", cost_usd=float(n))
        remote.push_run(worker, f"t.c1.r{n}")
        remote.sync_mirror(builder, SOURCE_SCHEMAS)
    parts = sorted(remote.find("columnar/agent_generation"))
    assert len(parts) == 2
    with duckdb.connect() as con:
        merged = builder.root / "merged.parquet"
        items = columnar.parts(builder.root, "agent_generation")
        con.execute(f"COPY ({columnar.current_rows_sql(items)}) TO '{merged}' (FORMAT parquet)")
    remote.upload(merged, "columnar/agent_generation/part-000000000001-000000000002.parquet")

    fresh = ArtifactStore(tmp_path / "fresh")
    sync = RemoteStore(bucket_url).sync_mirror(fresh, SOURCE_SCHEMAS)
    assert sorted(sync.parts_deleted) == parts
    assert list(remote.find("columnar/agent_generation")) == [
        "columnar/agent_generation/part-000000000001-000000000002.parquet"
    ]
    build_warehouse(fresh, tmp_path / "f.duckdb", settings.sql_models_dir())
    assert _raw(tmp_path / "f.duckdb", "raw_agent_generation") == [
        ("t.c1.r1", "ok", 1.0),
        ("t.c1.r2", "ok", 2.0),
    ]


# -- the claims -----------------------------------------------------------------------------


@pytest.mark.postgres
def test_claims_are_disjoint_and_only_an_expired_claim_is_taken_over(pg_database: str) -> None:
    dsn = f"postgresql://{PG['user']}@{PG['host']}:{PG['port']}/{pg_database}"
    claims = Claims(dsn)
    claims.setup()
    runs = [f"t.c{n}.r1" for n in range(12)]
    assert claims.register("t", runs, complete={"t.c0.r1"}) == 12
    assert claims.register("t", runs) == 0  # known runs are not added twice

    # Four threads claim at once, each on its own connection: every run once, no overlap.
    got: dict[str, list[str]] = {}

    def take(worker: str) -> None:
        mine = Claims(dsn)
        got[worker] = []
        while batch := mine.claim("t", worker, 2, lease_s=600):
            got[worker] += [c.run_id for c in batch]
        mine.close()

    threads = [threading.Thread(target=take, args=(f"w{i}",)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    taken = [run for runs_of in got.values() for run in runs_of]
    assert sorted(taken) == sorted(runs[1:])  # the complete run is never claimed
    assert claims.counts("t") == {"done": 1, "claimed": 11}

    # One worker dies (one that got runs: under load a thread may get none): its claims
    # expire after the lease, and only then go to w9.
    dead, held = next((w, r) for w, r in sorted(got.items()) if r)
    assert not claims.claim("t", "w9", 20, lease_s=600)
    expired = pg_query(
        pg_database,
        "UPDATE bench_run_claims SET heartbeat_at = now() - interval '1 hour' "
        "WHERE worker = %s RETURNING run_id",
        (dead,),
    )
    assert len(expired) == len(held)
    for worker in set(got) - {dead}:
        claims.heartbeat(worker)  # the live ones beat: their claims are kept
    over = claims.claim("t", "w9", 20, lease_s=600)
    assert sorted(c.run_id for c in over) == sorted(held)
    assert {c.taken_from for c in over} == {dead} and {c.attempts for c in over} == {2}
    # The dead worker comes back: it holds nothing, so it marks nothing.
    assert claims.mine(dead, held) == set()
    assert claims.finish(dead, held, "done") == set()
    assert claims.finish("w9", held, "done") == set(held)
    claims.close()


@pytest.mark.postgres
def test_the_advisory_lock_holds_across_connections(pg_database: str) -> None:
    dsn = f"postgresql://{PG['user']}@{PG['host']}:{PG['port']}/{pg_database}"
    waited: list[str] = []
    order: list[str] = []
    with advisory_lock(dsn, "bench:test"):
        thread = threading.Thread(target=lambda: _locked(dsn, waited, order), name="second-builder")
        thread.start()
        deadline = time.monotonic() + 30
        while not waited and time.monotonic() < deadline:
            time.sleep(0.05)
        order.append("first done")
    thread.join()
    assert waited and "another worker holds it" in waited[0]
    assert order == ["first done", "second in"]


def _locked(dsn: str, waited: list[str], order: list[str]) -> None:
    with advisory_lock(dsn, "bench:test", on_wait=waited.append):
        order.append("second in")


# -- two workers, one sweep ---------------------------------------------------------------------

PER_RUN = ("run_spec", "agent_generation", "sandboxed_build", "bot_evaluation", "quality_metrics")
# Tables that differ by design between two builds of the same records: where the build
# keeps its own bookkeeping, and the marts only the effects analysis fills.
NOT_COMPARED = {"meta_loaded_parts", *MART_SCHEMAS}


def _worker_env(base: Path, url: str, endpoint: str, database: str) -> dict[str, str]:
    """A worker's own scratch and DAGSTER_HOME; shared: the bucket and the database."""
    home = base / "dagster_home"
    home.mkdir(parents=True)
    shutil.copy(REPO / "deploy" / "dagster.postgres.yaml", home / "dagster.yaml")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BENCH_", "DAGSTER_"))}
    return (
        env
        | AWS
        | {
            "AWS_ENDPOINT_URL": endpoint,
            "BENCH_ARTIFACTS_URL": url,
            "BENCH_DATA_DIR": str(base / "data"),
            "BENCH_ARTIFACTS_DIR": str(base / "scratch"),
            "BENCH_WAREHOUSE": str(base / "warehouse.duckdb"),
            "DAGSTER_HOME": str(home),
            "DAGSTER_PG_HOST": PG["host"],
            "DAGSTER_PG_PORT": str(PG["port"]),
            "DAGSTER_PG_USER": PG["user"],
            "DAGSTER_PG_PASSWORD": "",
            "DAGSTER_PG_DB": database,
        }
    )


def _compare(a: Path, b: Path) -> list[str]:
    """Tables and views whose rows differ between two warehouses (as multisets), ignoring
    `filename`, the path of the record file in the store that built it."""
    differ = []
    with duckdb.connect() as con:
        con.execute(f"ATTACH '{a}' AS a (READ_ONLY)")
        con.execute(f"ATTACH '{b}' AS b (READ_ONLY)")
        names = {
            db: {
                r[0]
                for r in con.execute(
                    "SELECT table_name FROM information_schema.tables "
                    "WHERE table_catalog = ? AND table_schema = 'main'",
                    [db],
                ).fetchall()
            }
            for db in ("a", "b")
        }
        assert names["a"] == names["b"], names["a"] ^ names["b"]
        for name in sorted(names["a"] - NOT_COMPARED):
            cols = {
                db: [r[0] for r in con.execute(f'DESCRIBE {db}."{name}"').fetchall()]
                for db in ("a", "b")
            }
            assert sorted(cols["a"]) == sorted(cols["b"]), name
            select = ", ".join(f'"{c}"' for c in sorted(cols["a"]) if c != "filename")
            missing = con.execute(
                f'SELECT count(*) FROM (SELECT {select} FROM a."{name}" EXCEPT ALL '
                f'SELECT {select} FROM b."{name}")'
            ).fetchone()[0]
            extra = con.execute(
                f'SELECT count(*) FROM (SELECT {select} FROM b."{name}" EXCEPT ALL '
                f'SELECT {select} FROM a."{name}")'
            ).fetchone()[0]
            if missing or extra:
                differ.append(f"{name}: {missing} rows only in {a.name}, {extra} only in {b.name}")
    return differ


@pytest.mark.slow
@pytest.mark.postgres
@pytest.mark.timeout(1800)
def test_two_workers_share_one_sweep_through_the_bucket_and_postgres(
    s3_endpoint: str, bucket_url: str, pg_database: str, tmp_path: Path
) -> None:
    smoke = settings.experiments_dir() / "smoke.yaml"
    procs = {}
    for name in ("worker-a", "worker-b"):
        base = tmp_path / name
        env = _worker_env(base, bucket_url, s3_endpoint, pg_database)
        log = (tmp_path / f"{name}.log").open("wb")
        procs[name] = subprocess.Popen(
            [
                str(BENCH),
                "worker",
                str(smoke),
                "--name",
                name,
                "--batch",
                "1",
                "--endurance-seconds",
                "4",
            ],
            env=env,
            cwd=base.parent,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    for name, proc in procs.items():
        code = proc.wait(timeout=1700)
        assert code == 0, (
            f"{name} exited {code}:\n" + (tmp_path / f"{name}.log").read_text()[-6000:]
        )

    remote = RemoteStore(bucket_url)
    design = json.loads(remote.read_bytes("designs/smoke.json"))
    expected = {r["run_id"] for r in design["runs"] if r["current"]}
    assert len(expected) == 4

    # Every run claimed once, finished, by one of the two; both did some.
    claims = pg_query(pg_database, "SELECT run_id, status, worker, attempts FROM bench_run_claims")
    assert {r[0] for r in claims} == expected and len(claims) == 4
    assert {(r[1], r[3]) for r in claims} == {("done", 1)}
    by_worker = {r[0]: r[2] for r in claims}
    assert set(by_worker.values()) == {"worker-a", "worker-b"}

    # Each per-run stage of each run was materialized exactly once, by the run's worker.
    events = pg_query(
        pg_database,
        "SELECT e.asset_key, e.partition, t.value FROM event_logs e "
        "JOIN run_tags t ON t.run_id = e.run_id AND t.key = 'bench/worker' "
        "WHERE e.dagster_event_type = 'ASSET_MATERIALIZATION' AND e.partition IS NOT NULL",
    )
    done = sorted((json.loads(key)[0], part) for key, part, _ in events)
    assert done == sorted((stage, run) for stage in PER_RUN for run in expected)
    assert all(by_worker[part] == worker for _, part, worker in events)

    # The bucket: one agent record per run, no agent run redone (set aside as an attempt).
    objects = remote.find("")
    agent = {
        o.split("/")[-1][: -len(".json")]
        for o in objects
        if o.startswith("records/agent_generation/")
    }
    assert agent == expected
    assert not [o for o in objects if "/attempts/" in o]
    assert not remote.find("journal")  # the last build consumed every marker
    # Each worker's scratch holds the run folders of its own runs only.
    for run_id, worker in by_worker.items():
        for name in procs:
            folder = tmp_path / name / "scratch" / "runs" / run_id / "agent_generation"
            assert folder.is_dir() == (name == worker), (run_id, name)

    # The worker that finished last built a warehouse with every run's results.
    scored = []
    for name in procs:
        db = tmp_path / name / "warehouse.duckdb"
        with duckdb.connect(str(db), read_only=True) as con:
            scored.append(con.execute("SELECT count(score) FROM fct_runs").fetchone()[0])
    assert max(scored) == 4, scored

    # A third machine builds from the bucket's Parquet...
    models = settings.sql_models_dir()
    from_parts = ArtifactStore(tmp_path / "from_parts")
    dsn = f"postgresql://{PG['user']}@{PG['host']}:{PG['port']}/{pg_database}"
    with advisory_lock(dsn, "bench:warehouse"):
        sync = RemoteStore(bucket_url).sync_mirror(from_parts, SOURCE_SCHEMAS)
    assert sync.markers_read == 0 and sync.parts_downloaded >= len(PER_RUN)
    build_warehouse(from_parts, tmp_path / "from_parts.duckdb", models)
    with duckdb.connect(str(tmp_path / "from_parts.duckdb"), read_only=True) as con:
        rows = con.execute(
            "SELECT run_id, count(*), count(score) FROM fct_runs GROUP BY run_id"
        ).fetchall()
    assert {run_id: (n, with_score) for run_id, n, with_score in rows} == dict.fromkeys(
        expected, (1, 1)
    )

    # ... and it equals a warehouse built from the bucket's JSON records alone.
    from_json = ArtifactStore(tmp_path / "from_json")
    for rel in objects:
        if rel.startswith(("records/", "designs/", "bot_accuracy/")) or rel.endswith(
            "/quality_metrics/transcript_events.json"
        ):
            remote.download(rel, from_json.root / rel)
    assert not (from_json.root / columnar.MIRROR).exists()
    build_warehouse(from_json, tmp_path / "from_json.duckdb", models, full=True)
    assert _compare(tmp_path / "from_parts.duckdb", tmp_path / "from_json.duckdb") == []


def test_structure_k8s_worker_job_sets_what_the_worker_reads() -> None:
    """deploy/k8s/worker-job.yaml (paper only: no cluster here) agrees with the code and with
    the Helm values: the variables the worker reads, the scratch on the pod's own volume."""
    k8s = REPO / "deploy" / "k8s"
    job = yaml.safe_load((k8s / "worker-job.yaml").read_text())
    values = yaml.safe_load((k8s / "values.yaml").read_text())
    assert job["kind"] == "Job" and "completions" not in job["spec"]  # a work queue
    pod = job["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["command"] == ["bench", "worker"]
    env = {e["name"]: e for e in container["env"]}
    assert env[URL_ENV]["value"].startswith("s3://")
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    scratch = env["BENCH_DATA_DIR"]["value"]
    assert "emptyDir" in volumes[mounts[scratch]]
    for name in ("BENCH_ARTIFACTS_DIR", "BENCH_WAREHOUSE"):
        assert env[name]["value"].startswith(scratch + "/")
    assert "persistentVolumeClaim" not in str(pod)  # no shared volume
    # The instance file of the image, whose variables are all set.
    assert env["DAGSTER_HOME"]["value"] == "/app/deploy"
    instance = (REPO / "deploy" / "dagster.yaml").read_text()
    for name in ("DAGSTER_PG_HOST", "DAGSTER_PG_PORT", "DAGSTER_PG_USER", "DAGSTER_PG_DB"):
        assert name in instance and env[name]["value"]
    password = env["DAGSTER_PG_PASSWORD"]["valueFrom"]["secretKeyRef"]["name"]
    assert password == values["global"]["postgresqlSecretName"]
    secrets = {s["secretRef"]["name"] for s in container["envFrom"]}
    deployment = values["dagster-user-deployments"]["deployments"][0]
    assert {s["name"] for s in deployment["envSecrets"]} <= secrets
    assert container["securityContext"]["privileged"] is True  # bubblewrap
    assert mounts["/dev/shm"] in volumes

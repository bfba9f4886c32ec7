"""Which worker executes which run: a claims table in the Dagster instance's Postgres.

Why Postgres: it is the one thing every worker already shares with the others (the Dagster
instance), and it gives what an object store cannot: an atomic "take the next runs nobody
has" (`FOR UPDATE SKIP LOCKED`: two workers asking at once get different runs) and locks
that hold across machines (advisory locks, released by the server when the session that
took them ends, also when its worker is killed).

A claim is kept alive by its worker's heartbeat. A claim whose heartbeat is older than the
lease (its worker died, or lost its network) may be taken over by another worker, which
pulls what the dead one had pushed (a finished agent run is reused) and goes on. A worker
that finds its claim taken over stops working on that run and does not mark it.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import dagster as dg
import psycopg2

TABLE = "bench_run_claims"
PENDING, CLAIMED, DONE, FAILED = "pending", "claimed", "done", "failed"

_DDL = f"""
CREATE TABLE IF NOT EXISTS {TABLE} (
    run_id       text PRIMARY KEY,
    experiment   text NOT NULL,
    position     integer NOT NULL,
    status       text NOT NULL DEFAULT '{PENDING}'
                 CHECK (status IN ('{PENDING}', '{CLAIMED}', '{DONE}', '{FAILED}')),
    worker       text,
    claimed_at   timestamptz,
    heartbeat_at timestamptz,
    finished_at  timestamptz,
    attempts     integer NOT NULL DEFAULT 0,
    message      text
);
CREATE INDEX IF NOT EXISTS {TABLE}_next ON {TABLE} (experiment, status, position);
"""


class WorkerSetupError(RuntimeError):
    """The worker cannot share work: no Postgres instance, or it cannot be reached."""


def postgres_dsn(instance: dg.DagsterInstance) -> str:
    """The libpq URL of the instance's Postgres database (where the claims live)."""
    url = getattr(instance.run_storage, "postgres_url", None)
    if not url:
        raise WorkerSetupError(
            "`bench worker` shares its runs through the Dagster instance's Postgres database, "
            f"but the instance in DAGSTER_HOME keeps its runs in "
            f"{type(instance.run_storage).__name__}: copy deploy/dagster.postgres.yaml (or "
            "deploy/dagster.yaml) to $DAGSTER_HOME/dagster.yaml and set DAGSTER_PG_HOST, "
            "DAGSTER_PG_PORT, DAGSTER_PG_USER, DAGSTER_PG_PASSWORD and DAGSTER_PG_DB"
        )
    scheme, sep, rest = str(url).partition("://")
    return f"{scheme.split('+', 1)[0]}{sep}{rest}"  # postgresql+psycopg2:// -> postgresql://


def _connect(dsn: str):
    try:
        conn = psycopg2.connect(dsn, connect_timeout=10)
    except psycopg2.OperationalError as error:
        raise WorkerSetupError(f"cannot connect to the shared Postgres: {error}") from None
    conn.autocommit = True
    return conn


def lock_key(name: str) -> int:
    """A stable 64-bit advisory lock key for a name (the same on every machine)."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)


@contextlib.contextmanager
def advisory_lock(
    dsn: str, name: str, on_wait: Callable[[str], None] | None = None
) -> Iterator[None]:
    """Hold Postgres's session advisory lock `name` for the block: one holder across every
    machine. The server drops it when the session ends, so a killed holder blocks no one."""
    conn = _connect(dsn)
    key = lock_key(name)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT pg_try_advisory_lock(%s)", (key,))
            if not cur.fetchone()[0]:
                if on_wait is not None:
                    on_wait(f"waiting for the lock {name!r}: another worker holds it")
                cur.execute("SELECT pg_advisory_lock(%s)", (key,))
        yield
    finally:
        with contextlib.suppress(psycopg2.Error), conn.cursor() as cur:
            cur.execute("SELECT pg_advisory_unlock(%s)", (key,))
        conn.close()


@dataclass(frozen=True)
class Claim:
    run_id: str
    attempts: int
    taken_from: str | None  # the worker whose expired claim this one took over


class Claims:
    """The claims of one shared Postgres database."""

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self.conn = _connect(dsn)

    def close(self) -> None:
        self.conn.close()

    def setup(self) -> None:
        # Two workers creating the table at once would collide in the catalogue: one at a time.
        with self.conn, self.conn.cursor() as cur:
            cur.execute("SELECT pg_advisory_xact_lock(%s)", (lock_key(f"{TABLE}:ddl"),))
            cur.execute(_DDL)

    def register(
        self, experiment: str, ordered: Sequence[str], complete: set[str] = frozenset()
    ) -> int:
        """Add a row per run not known yet (`complete` ones as done); returns rows added."""
        rows = [
            (run_id, experiment, i, DONE if run_id in complete else PENDING)
            for i, run_id in enumerate(ordered)
        ]
        if not rows:
            return 0
        with self.conn.cursor() as cur:
            cur.execute(
                f"INSERT INTO {TABLE} (run_id, experiment, position, status, message) "
                "SELECT r, e, p, s, CASE WHEN s = %s THEN 'complete before any worker' END "
                "FROM unnest(%s::text[], %s::text[], %s::int[], %s::text[]) AS t(r, e, p, s) "
                "ON CONFLICT (run_id) DO NOTHING",
                (DONE, *map(list, zip(*rows, strict=True))),
            )
            return cur.rowcount

    def claim(self, experiment: str, worker: str, count: int, lease_s: float) -> list[Claim]:
        """Take up to `count` runs, first in design order: pending ones, or claimed ones
        whose worker has not been heard of for `lease_s` seconds. Atomic: two workers
        asking at once never get the same run."""
        with self.conn.cursor() as cur:
            cur.execute(
                f"""
                WITH next AS (
                    SELECT run_id, status AS was, worker AS held_by FROM {TABLE}
                    WHERE experiment = %(experiment)s AND (
                        status = '{PENDING}' OR (status = '{CLAIMED}'
                        AND heartbeat_at < now() - make_interval(secs => %(lease)s)))
                    ORDER BY position LIMIT %(count)s
                    FOR UPDATE SKIP LOCKED
                )
                UPDATE {TABLE} AS c SET
                    status = '{CLAIMED}', worker = %(worker)s, claimed_at = now(),
                    heartbeat_at = now(), attempts = c.attempts + 1,
                    message = CASE WHEN next.was = '{CLAIMED}'
                        THEN 'taken over from ' || next.held_by END
                FROM next WHERE c.run_id = next.run_id
                RETURNING c.run_id, c.attempts, CASE WHEN next.was = '{CLAIMED}'
                    THEN next.held_by END, c.position
                """,
                {"experiment": experiment, "worker": worker, "count": count, "lease": lease_s},
            )
            rows = sorted(cur.fetchall(), key=lambda r: r[3])
        return [Claim(run_id, attempts, taken) for run_id, attempts, taken, _ in rows]

    def heartbeat(self, worker: str) -> int:
        with self.conn.cursor() as cur:
            cur.execute(
                f"UPDATE {TABLE} SET heartbeat_at = now() "
                f"WHERE worker = %s AND status = '{CLAIMED}'",
                (worker,),
            )
            return cur.rowcount

    def mine(self, worker: str, run_ids: Sequence[str]) -> set[str]:
        """Which of `run_ids` this worker still holds (not taken over)."""
        with self.conn.cursor() as cur:
            cur.execute(
                f"SELECT run_id FROM {TABLE} WHERE worker = %s AND status = '{CLAIMED}' "
                "AND run_id = ANY(%s)",
                (worker, list(run_ids)),
            )
            return {r[0] for r in cur.fetchall()}

    def finish(
        self, worker: str, run_ids: Sequence[str], status: str, message: str | None = None
    ) -> set[str]:
        """Mark this worker's claims done or failed; returns the runs it still held."""
        assert status in (DONE, FAILED)
        with self.conn.cursor() as cur:
            cur.execute(
                f"UPDATE {TABLE} SET status = %s, finished_at = now(), message = %s "
                f"WHERE worker = %s AND status = '{CLAIMED}' AND run_id = ANY(%s) "
                "RETURNING run_id",
                (status, message, worker, list(run_ids)),
            )
            return {r[0] for r in cur.fetchall()}

    def retry_failed(self, experiment: str) -> int:
        with self.conn.cursor() as cur:
            cur.execute(
                f"UPDATE {TABLE} SET status = '{PENDING}', worker = NULL "
                f"WHERE experiment = %s AND status = '{FAILED}'",
                (experiment,),
            )
            return cur.rowcount

    def counts(self, experiment: str) -> dict[str, int]:
        with self.conn.cursor() as cur:
            cur.execute(
                f"SELECT status, count(*) FROM {TABLE} WHERE experiment = %s GROUP BY status",
                (experiment,),
            )
            return dict(cur.fetchall())


class Heartbeat:
    """Renews a worker's claims every `interval_s` from a thread of its own (own connection),
    so a long stage never lets them expire."""

    def __init__(self, dsn: str, worker: str, interval_s: float) -> None:
        self.dsn, self.worker, self.interval_s = dsn, worker, interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="bench-heartbeat", daemon=True)
        self.errors: list[str] = []

    def _run(self) -> None:
        claims = None
        while not self._stop.wait(self.interval_s):
            try:
                claims = claims or Claims(self.dsn)
                claims.heartbeat(self.worker)
            except (psycopg2.Error, WorkerSetupError) as error:
                # Keep trying: a claim expires only after the whole lease without a beat.
                self.errors.append(str(error).strip())
                if claims is not None:
                    with contextlib.suppress(psycopg2.Error):
                        claims.close()
                claims = None
        if claims is not None:
            claims.close()

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join()

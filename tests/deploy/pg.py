"""The local Postgres server (127.0.0.1:5432, trust auth), for tests that need a real one."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg2
import pytest

PG = {"host": "127.0.0.1", "port": 5432, "user": "postgres"}


def admin_connection():
    conn = psycopg2.connect(dbname="postgres", connect_timeout=3, **PG)
    conn.autocommit = True
    return conn


def pg_query(database: str, sql: str, params: tuple = ()) -> list[tuple]:
    """Rows of `sql` read straight from the server, not through Dagster."""
    conn = psycopg2.connect(dbname=database, connect_timeout=3, **PG)
    try:
        with conn, conn.cursor() as cur:
            cur.execute(sql, params)
            return cur.fetchall()
    finally:
        conn.close()


@contextmanager
def fresh_database(prefix: str) -> Iterator[str]:
    """A new, empty database named `<prefix>_<random>`, dropped afterwards (with any
    connection still open to it). Skips the test when no server answers."""
    try:
        admin = admin_connection()
    except psycopg2.OperationalError as error:
        pytest.skip(f"no Postgres server answers on 127.0.0.1:5432: {error}")
    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    with admin.cursor() as cur:
        cur.execute(f'CREATE DATABASE "{name}"')
    try:
        yield name
    finally:
        with admin.cursor() as cur:
            cur.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()

"""The local Postgres server (127.0.0.1:5432, trust auth), for tests that need a real one."""

from __future__ import annotations

import psycopg2

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

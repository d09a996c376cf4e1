"""Where the app keeps its saved ``RunState`` (standard library only, plus psycopg for Postgres).

The SDK hands the application ``result.to_state().to_json()`` and stores nothing itself: the
store is the team's. Three stores a team really has, each holding one document per run (the state
blob in an envelope of what the app knows: awaiting an approval, ended), replaced whole:

* ``file``: a JSON file, written to a temporary name, fsynced and renamed over the old one;
* ``sqlite``: a row of a SQLite table in the trial's folder, upserted in one transaction;
* ``postgres``: a row of a table in the run's schema on its Postgres, upserted in one transaction.

A team's own store (``workload_params.store``) is ``chaos.targets.openai_agents.team_store``.

Every save passes ``save_state(<what>):before`` (nothing of it durable) and ``:after`` (committed).
A load marks ``read`` (the race window opens at a resume's first read). Nothing here claims a
document: the SDK does not, and whether the app does is what chaos measures (a team's own claim is
its workload's ``claim``, ``chaos.workloads.openai_agents``).
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any, Protocol

from chaos.racer.barrier import BarrierClient, write_atomic
from chaos.racer.protocol import RacerSpec
from chaos.targets.common import store_file


class BlobStore(Protocol):
    """One saved document per run, replaced whole by ``save``."""

    where: str

    def load(self) -> dict | None: ...
    def save(self, what: str, doc: dict) -> None: ...
    def close(self) -> None: ...


def _fsync_dir(path: Path) -> None:
    fd = os.open(str(path), os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class FileStore:
    """The run's document as a JSON file, replaced by an atomic rename."""

    def __init__(self, path: Path, barrier: BarrierClient):
        self.path = Path(path)
        self.barrier = barrier
        self.where = self.path.name

    def load(self) -> dict | None:
        try:
            return json.loads(self.path.read_bytes())
        except FileNotFoundError:
            return None
        finally:
            self.barrier.mark("read")

    def save(self, what: str, doc: dict) -> None:
        name = f"save_state({what})"
        self.barrier.hit(name + ":before")
        write_atomic(str(self.path), json.dumps(doc).encode())
        _fsync_dir(self.path.parent)
        self.barrier.hit(name + ":after")

    def close(self) -> None:
        pass


_SQL_TABLE = "CREATE TABLE IF NOT EXISTS run_state (thread_id TEXT PRIMARY KEY, doc TEXT NOT NULL)"


class SqliteRowStore:
    """The run's document as a row of a SQLite table (``run_state``), upserted in one transaction."""

    def __init__(self, path: Path, thread_id: str, barrier: BarrierClient):
        self.path = Path(path)
        self.thread_id = thread_id
        self.barrier = barrier
        self.where = f"{self.path.name}:run_state"
        self.conn = sqlite3.connect(str(self.path), isolation_level=None, timeout=30)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=FULL")
        self.conn.execute(_SQL_TABLE)

    def load(self) -> dict | None:
        try:
            row = self.conn.execute("SELECT doc FROM run_state WHERE thread_id = ?", (self.thread_id,)).fetchone()
            return None if row is None else json.loads(row[0])
        finally:
            self.barrier.mark("read")

    def save(self, what: str, doc: dict) -> None:
        name = f"save_state({what})"
        self.barrier.hit(name + ":before")
        self.conn.execute(
            "INSERT INTO run_state (thread_id, doc) VALUES (?, ?) ON CONFLICT(thread_id) DO UPDATE SET doc = excluded.doc",
            (self.thread_id, json.dumps(doc)),
        )
        self.barrier.hit(name + ":after")

    def close(self) -> None:
        self.conn.close()


class PostgresRowStore:
    """The run's document as a row of ``<schema>.openai_agents_state`` on the run's Postgres."""

    def __init__(self, dsn: str, schema: str, thread_id: str, barrier: BarrierClient):
        import psycopg

        self.thread_id = thread_id
        self.barrier = barrier
        self.table = f'"{schema}".openai_agents_state'
        self.where = f"postgres {self.table}"
        self.conn = psycopg.connect(dsn, autocommit=True)
        self.conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
        self.conn.execute(f"CREATE TABLE IF NOT EXISTS {self.table} (thread_id TEXT PRIMARY KEY, doc TEXT NOT NULL)")

    def load(self) -> dict | None:
        try:
            row = self.conn.execute(f"SELECT doc FROM {self.table} WHERE thread_id = %s", (self.thread_id,)).fetchone()
            return None if row is None else json.loads(row[0])
        finally:
            self.barrier.mark("read")

    def save(self, what: str, doc: dict) -> None:
        name = f"save_state({what})"
        self.barrier.hit(name + ":before")
        self.conn.execute(
            f"INSERT INTO {self.table} (thread_id, doc) VALUES (%s, %s) ON CONFLICT (thread_id) DO UPDATE SET doc = excluded.doc",
            (self.thread_id, json.dumps(doc)),
        )
        self.barrier.hit(name + ":after")

    def close(self) -> None:
        self.conn.close()


def open_store(spec: RacerSpec, barrier: BarrierClient) -> BlobStore:
    """The trial's blob store: the team's own when ``workload_params.store`` names it, else the
    backend's (``sqlite_session`` keeps its blob in a file)."""
    from chaos.targets.openai_agents.team_store import open_team_store, store_ref

    ref = store_ref(spec)
    if ref is not None:
        return open_team_store(spec, ref, barrier)
    backend = spec["target"].get("backend") or "file"
    if backend == "sqlite":
        return SqliteRowStore(store_file(spec, ".state.sqlite"), spec["thread_id"], barrier)
    if backend == "postgres":
        store = dict(spec.get("store") or {})
        dsn = store.get("dsn")
        if not dsn:
            raise ConnectionError("backend postgres needs the run's Postgres (CHAOS_PG_DSN)")
        return PostgresRowStore(str(dsn), str(store.get("schema") or "chaos_run"), spec["thread_id"], barrier)
    return FileStore(store_file(spec, ".state.json"), barrier)


def describe(doc: Any) -> str:
    """What a saved document holds, for a boundary's name: ``interruptions=1`` or ``final_output``."""
    if doc.get("awaiting"):
        return f"interruptions={len(doc.get('interruptions') or [])}"
    return "final_output" if doc.get("ended") else "run"

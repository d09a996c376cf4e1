"""How many bytes a LangGraph thread's checkpoints take (racer side, stdlib + the framework).

Why: a thread whose state grows with every step (a message list appended each turn) makes every
checkpoint bigger than the last; one user's SQLite checkpoint database reached 135 GB, 82 MB per
checkpoint. ``measure`` reports, for one thread, what a sweep's checker turns into numbers and a
bound's verdict (``chaos.kinds.growth``):

* ``checkpoint_bytes``: each root checkpoint of the thread, oldest first, as the saver hands it
  back (its checkpoint with the channel values it loads, its metadata and its pending writes),
  serialized with the saver's own serializer: what loading that checkpoint costs, and its growth
  over the run.
* ``thread_bytes``: what the thread occupies in the store itself where the saver exposes it
  (SQLite: the bytes of its rows; Postgres: ``pg_column_size`` of its rows in the checkpoint
  tables), else the sum of the serialized sizes of all its checkpoints and writes (``source``
  says which).
* ``store_bytes`` / ``tables``: the whole store's own size (SQLite: ``page_count * page_size`` of
  the file; Postgres: ``pg_total_relation_size`` of each table of the run's schema, which every
  trial of the run shares), or None where the saver exposes none (in memory, a team's own saver).

It never raises: a measurement that fails is ``{"error": ...}``, and the checker says so.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

SQLITE_TABLES = {"checkpoints": "length(checkpoint) + length(metadata)", "writes": "length(value)"}
PG_TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")


def _serialized(saver: Any, obj: Any) -> int:
    """Bytes of ``obj`` as the saver's serializer writes it (JSON as a last resort)."""
    serde = getattr(saver, "serde", None)
    if serde is not None:
        try:
            return len(serde.dumps_typed(obj)[1])
        except Exception:  # a serializer that refuses a value: fall back to JSON's idea of it
            pass
    return len(json.dumps(obj, default=str).encode())


def _checkpoint_sizes(saver: Any, thread_id: str) -> tuple[list[int], int]:
    """Serialized bytes of each root checkpoint (oldest first), and of every checkpoint of the thread."""
    root: list[int] = []
    total = 0
    for tup in saver.list({"configurable": {"thread_id": thread_id}}):
        n = _serialized(saver, tup.checkpoint) + _serialized(saver, dict(tup.metadata or {}))
        n += sum(_serialized(saver, w[2]) for w in tup.pending_writes or [])
        total += n
        if not tup.config["configurable"].get("checkpoint_ns"):
            root.append(n)
    root.reverse()  # list() is newest first
    return root, total


def _sqlite(path: str, thread_id: str) -> dict[str, Any]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=60)
    try:
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        size = conn.execute("PRAGMA page_size").fetchone()[0]
        tables: dict[str, int] = {}
        thread = 0
        for table, expr in SQLITE_TABLES.items():
            row = conn.execute(f"SELECT coalesce(sum({expr}), 0) FROM {table} WHERE thread_id = ?", (thread_id,)).fetchone()
            thread += int(row[0])
            tables[table] = int(conn.execute(f"SELECT coalesce(sum({expr}), 0) FROM {table}").fetchone()[0])
        return {"source": "sqlite", "store_bytes": int(pages) * int(size), "tables": tables, "thread_bytes": thread}
    finally:
        conn.close()


def _postgres(dsn: str, schema: str, thread_id: str) -> dict[str, Any]:
    import psycopg
    from psycopg import sql

    with psycopg.connect(dsn, autocommit=True, connect_timeout=10) as conn:
        rows = conn.execute(
            "SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = %s AND c.relkind = 'r' AND c.relname = ANY(%s)",
            (schema, list(PG_TABLES)),
        ).fetchall()
        tables = {str(name): int(n) for name, n in rows}
        thread = 0
        for table in tables:
            q = sql.SQL("SELECT coalesce(sum(pg_column_size(t.*)), 0) FROM {}.{} t WHERE thread_id = %s").format(
                sql.Identifier(schema), sql.Identifier(table)
            )
            row = conn.execute(q, (thread_id,)).fetchone()
            thread += int(row[0]) if row else 0
    return {"source": "postgres", "store_bytes": sum(tables.values()), "tables": tables, "thread_bytes": thread, "schema": schema}


def measure(saver: Any, backend: str, store: dict[str, Any], thread_id: str) -> dict[str, Any]:
    """The thread's checkpoint sizes and the store's (module docstring); ``{"error": ...}`` if unreadable."""
    try:
        root, total = _checkpoint_sizes(saver, thread_id)
        out: dict[str, Any] = {"checkpoint_bytes": root, "checkpoints": len(root)}
        if backend in ("sqlite", "sqlite_async") and store.get("path"):
            out.update(_sqlite(str(store["path"]), thread_id))
        elif backend in ("postgres", "postgres_async", "postgres_pool") and store.get("dsn"):
            out.update(_postgres(str(store["dsn"]), str(store.get("schema") or "public"), thread_id))
        else:
            out.update({"source": "serialized", "store_bytes": None, "tables": {}, "thread_bytes": total})
        return out
    except Exception as exc:  # the measure is a report, never the trial's failure
        return {"error": f"{type(exc).__name__}: {str(exc)[:200]}"}

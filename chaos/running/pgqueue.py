"""The shard queue in Postgres, for shards on hosts that share no folder (``--shard-queue postgresql://...``).

Why: CI matrix jobs and hosts of a lab share no file system, but they can all reach one database.
``chaos.running.cellqueue`` keeps every rule of the queue; this is only where it lives.

What it promises, the same as the folder queue's:

* The queue of a night is one row of ``chaos_shard_queue`` (key: ``<suite>/<date>``, so nights and
  suites never share one), read and rewritten in a transaction that holds a transaction-level
  advisory lock on the key: claims are atomic.
* Liveness: each shard holds a session-level advisory lock on its worker id, on a connection of its
  own, for its whole life. Postgres drops a session's locks when the session ends: at once when the
  shard's process dies (its socket closes); for a host that vanishes, when the server's TCP
  keepalive gives up on the connection (the session asks for ``tcp_keepalives_idle=30``, ``interval
  10``, ``count 3``: about a minute). That is the lease; no clock in chaos decides. A network
  partition longer than that counts as death: the partitioned shard's cell may then run twice; both
  runs are whole with the same seeds, and ``chaos merge`` keeps one.
* A shard checks another's liveness by trying that lock (and releasing it at once), and waits for
  one by blocking on it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from chaos.racer.errors import ChaosError
from chaos.racer.redact import redact_dsn
from chaos.running.pgstore import connect

if TYPE_CHECKING:
    import psycopg

TABLE = "chaos_shard_queue"
_WORKER_KEY = "hashtextextended('chaos shard worker ' || %s, 0)"


class PgStore:
    def __init__(self, dsn: str, key: str):
        self.dsn, self.key = dsn, key
        self.where = f"{redact_dsn(dsn)} (queue {key!r})"
        self._alive: psycopg.Connection[Any] | None = None
        self._ops: psycopg.Connection[Any] | None = None

    def _connect(self) -> psycopg.Connection[Any]:
        try:
            return connect(self.dsn)
        except ConnectionError as exc:
            raise ChaosError(f"--shard-queue: {exc}", hint="check the host, port, user, password and database of the DSN") from None

    def enter(self, worker: str, info: dict) -> None:
        self._alive = self._connect()
        self._alive.execute("SET tcp_keepalives_idle = 30; SET tcp_keepalives_interval = 10; SET tcp_keepalives_count = 3")
        self._alive.execute(f"SELECT pg_advisory_lock({_WORKER_KEY})", (worker,))
        self._ops = self._connect()
        self._ops.execute(f"CREATE TABLE IF NOT EXISTS {TABLE} (night text PRIMARY KEY, body text NOT NULL)")

    def leave(self) -> None:
        for conn in (self._ops, self._alive):
            if conn is not None:
                with contextlib.suppress(Exception):
                    conn.close()  # the session ends: its advisory locks go with it
        self._ops = self._alive = None

    @contextlib.contextmanager
    def locked(self) -> Iterator[str | None]:
        assert self._ops is not None
        with self._ops.transaction():
            self._ops.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", ("chaos shard queue " + self.key,))
            row = self._ops.execute(f"SELECT body FROM {TABLE} WHERE night = %s", (self.key,)).fetchone()
            yield row[0] if row else None

    def write(self, text: str) -> None:
        assert self._ops is not None
        self._ops.execute(
            f"INSERT INTO {TABLE} (night, body) VALUES (%s, %s) ON CONFLICT (night) DO UPDATE SET body = EXCLUDED.body",
            (self.key, text),
        )

    def alive(self, worker: str) -> bool:
        assert self._ops is not None
        row = self._ops.execute(f"SELECT pg_try_advisory_lock({_WORKER_KEY})", (worker,)).fetchone()
        if row and row[0]:
            self._ops.execute(f"SELECT pg_advisory_unlock({_WORKER_KEY})", (worker,))
            return False
        return True

    def wait(self, worker: str) -> None:
        assert self._ops is not None
        self._ops.execute(f"SELECT pg_advisory_lock({_WORKER_KEY})", (worker,))
        self._ops.execute(f"SELECT pg_advisory_unlock({_WORKER_KEY})", (worker,))

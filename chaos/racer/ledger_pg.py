"""The Postgres effect ledger: one table shared by racers on several hosts.

Same interface and columns as ``SqliteLedger`` (``append`` -> seq, ``rows``, ``close``): a
racer's effect is inserted and committed (autocommit) before its node returns. The table
(default ``chaos_effects``) is created if missing; ``seq`` is a server-side identity, so it is
monotonic across hosts. Racer side: needs only psycopg 3.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable
from typing import TypeVar

import psycopg
from psycopg import sql

from chaos.racer.ledger_rows import ATTRIBUTION, COLUMNS, Where, row_values
from chaos.racer.redact import redact_dsn, redact_text

T = TypeVar("T")
_TABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}(\.[A-Za-z_][A-Za-z0-9_]{0,62})?$")


def _ident(table: str) -> sql.Composable:
    if not _TABLE.match(table):
        raise ValueError(f"ledger table name {table!r} is not a plain identifier (letters, digits, _; optional schema.)")
    return sql.Identifier(*table.split("."))


class PostgresLedger:
    """Effects as rows of a Postgres table, committed per append."""

    def __init__(self, dsn: str, context: dict | None = None, table: str = "chaos_effects"):
        self.dsn = dsn
        self.table = table
        self.context = dict(context or {})
        self._t = _ident(table)
        try:
            self._conn = psycopg.connect(dsn, autocommit=True, connect_timeout=10)
        except psycopg.OperationalError as exc:
            why = redact_text(" ".join(str(exc).split()))
            raise ConnectionError(
                f"ledger: cannot connect to Postgres at {redact_dsn(dsn)}: {why} (is it running? scripts/postgres.sh starts one)"
            ) from None
        index = sql.Identifier(f"{table.split('.')[-1]}_trial")
        with self._conn.transaction():
            # serialise concurrent first-time creation by racers on several hosts
            self._conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"chaos-ledger:{table}",))
            self._conn.execute(
                sql.SQL(
                    "CREATE TABLE IF NOT EXISTS {} ("
                    " seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
                    " run_id TEXT NOT NULL, cell_id TEXT NOT NULL, trial_id TEXT NOT NULL,"
                    " thread_id TEXT NOT NULL, effect_key TEXT NOT NULL, task TEXT NOT NULL, value TEXT,"
                    " racer_id TEXT NOT NULL, host TEXT NOT NULL, pid INTEGER NOT NULL,"
                    " t_wall DOUBLE PRECISION NOT NULL, t_mono_ns BIGINT NOT NULL,"
                    " node TEXT, namespace TEXT, task_id TEXT, outside_task INTEGER)"
                ).format(self._t)
            )
            self._conn.execute(sql.SQL("CREATE INDEX IF NOT EXISTS {} ON {} (run_id, trial_id)").format(index, self._t))
            # a table made before attribution gets its columns; ALTER only when one is missing (it
            # takes a lock that would stall the other racers' inserts)
            have = {c.name for c in self._conn.execute(sql.SQL("SELECT * FROM {} LIMIT 0").format(self._t)).description or ()}
            for name, sql_type in ATTRIBUTION.items():
                if name not in have:
                    self._conn.execute(
                        sql.SQL("ALTER TABLE {} ADD COLUMN IF NOT EXISTS {} {}").format(self._t, sql.Identifier(name), sql.SQL(sql_type))
                    )

    def append(self, *, task: str, value: str | None, thread_id: str, where: Where | None = None, key: str | None = None) -> int:
        row = self._conn.execute(
            sql.SQL("INSERT INTO {} ({}) VALUES ({}) RETURNING seq").format(
                self._t,
                sql.SQL(", ").join(sql.Identifier(c) for c in COLUMNS[1:]),
                sql.SQL(", ").join(sql.Placeholder() for _ in COLUMNS[1:]),
            ),
            row_values(self.context, task, value, thread_id, where, key),
        ).fetchone()
        assert row is not None  # INSERT ... RETURNING yields the new row
        return int(row[0])

    def _reconnect_once(self, call: Callable[[], T]) -> T:
        """``call()``, and once more on a fresh connection if the server cut this one (its backend
        terminated, the server restarted): for reads only. A write is never repeated (``append``,
        ``copy_rows``): a cut after its commit would write the effect twice, a false duplicate."""
        try:
            return call()
        except (psycopg.OperationalError, psycopg.InterfaceError):
            if not self._conn.closed and not self._conn.broken:
                raise
            with contextlib.suppress(Exception):
                self._conn.close()
            self._conn = psycopg.connect(self.dsn, autocommit=True, connect_timeout=10)
            return call()

    def copy_rows(self, rows: list[dict], trial_id: str) -> None:
        """``rows`` (as ``rows`` returns them) inserted again under ``trial_id``, in one transaction."""
        cols = COLUMNS[1:]
        q = sql.SQL("INSERT INTO {} ({}) VALUES ({})").format(
            self._t, sql.SQL(", ").join(sql.Identifier(c) for c in cols), sql.SQL(", ").join(sql.Placeholder() for _ in cols)
        )
        with self._conn.transaction(), self._conn.cursor() as cur:
            cur.executemany(q, [tuple(trial_id if c == "trial_id" else r.get(c) for c in cols) for r in rows])

    def rows(self, *, run_id: str, trial_id: str | None = None) -> list[dict]:
        q = sql.SQL("SELECT {} FROM {} WHERE run_id = %s").format(sql.SQL(", ").join(sql.Identifier(c) for c in COLUMNS), self._t)
        args: list = [run_id]
        if trial_id is not None:
            q += sql.SQL(" AND trial_id = %s")
            args.append(trial_id)
        q += sql.SQL(" ORDER BY seq")
        return self._reconnect_once(lambda: [dict(zip(COLUMNS, r, strict=True)) for r in self._conn.execute(q, args).fetchall()])

    def close(self) -> None:
        self._conn.close()

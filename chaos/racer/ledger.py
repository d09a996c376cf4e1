"""The effect ledger: a store, separate from the framework's, where effects are counted.

An effect is one row, inserted **and committed** by the workload's node before the node returns.
The append is the irreversible effect itself, so the ledger under-counts nothing that returned and
over-counts nothing that did not happen: a kill between the append and the next checkpoint shows
up as a duplicate, never as a loss.

Durability of the SQLite ledger: ``synchronous=NORMAL`` in WAL mode, on purpose. The faults chaos
injects are process deaths (SIGKILL of a racer, of a container's processes, of the orchestrator),
never the loss of the machine. A commit in WAL mode has ``write()``-n its frames to the WAL file
and updated the WAL index (a shared memory map) before ``execute`` returns; both live in the
kernel, not in the process, so the next connection on this machine reads the row however its
writer died a moment later. What ``synchronous=FULL`` adds is an ``fsync`` per commit, which only
matters if the kernel itself goes away (power loss, a host crash): something chaos never does
and that would lose the trial's folders with it. A kill at a barrier never catches a commit
half-way (a racer stops at a barrier, after ``append`` returned). Even a reboot counts nothing
twice or never: a journaled trial carries its ledger rows in its journal record, and ``chaos run
--resume`` sets aside the rows of trials that are not journaled. Measured: 0.8 ms per effect
with FULL on a fast disk, ~4 ms on a busy one; 0.03 ms with NORMAL. ``tests/test_ledger.py``
SIGKILLs a process right after its commit returns and reads the row back.

Racer side: standard library (SQLite) or psycopg (Postgres) only. A ledger is opened from a plain
dict (``{"kind": "sqlite", "path": ...}`` or ``{"kind": "postgres", "dsn": ..., "table": ...}``).
"""

from __future__ import annotations

import sqlite3
import threading
import time

from chaos.racer.ledger_rows import (  # noqa: F401  (the row format, re-exported: callers import it from here)
    ATTRIBUTION,
    COLUMNS,
    AppendsOnce,
    Ledger,
    Where,
    declared,
    effect_key,
    row_values,
    stored_key,
    stored_task,
    stored_value,
)
from chaos.racer.protocol import LedgerSpec

_SQLITE_SCHEMA = """
CREATE TABLE IF NOT EXISTS effects (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL,
    cell_id TEXT NOT NULL,
    trial_id TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    effect_key TEXT NOT NULL,
    task TEXT NOT NULL,
    value TEXT,
    racer_id TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    t_wall REAL NOT NULL,
    t_mono_ns INTEGER NOT NULL,
    node TEXT,
    namespace TEXT,
    task_id TEXT,
    outside_task INTEGER
);
CREATE INDEX IF NOT EXISTS effects_trial ON effects(run_id, trial_id);
"""


def ensure_columns(conn: sqlite3.Connection, table: str = "effects") -> None:
    """Add the attribution columns to a ledger table written before they existed (old rows: NULL)."""
    have = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
    if not have:
        return
    for name, sql_type in ATTRIBUTION.items():
        if name not in have:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {name} {sql_type}")


def _into_wal(conn: sqlite3.Connection, patience_s: float = 60.0) -> None:
    """Put a (possibly brand-new) ledger file in WAL mode. Racers started at once (a sweep's victim
    and its resume racer, k race racers, pooled children) open a fresh file together, and SQLite
    answers a second connection's switch to WAL with "database is locked" at once, without its busy
    handler: retry that until ``patience_s``. A file already in WAL needs no switch."""
    deadline = time.monotonic() + patience_s
    while True:
        try:
            if str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
                conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.002)  # a lock retry, not synchronisation: the other opener finishes in microseconds


class SqliteLedger:
    """The one-machine ledger: a SQLite file in WAL mode shared by every racer of a run."""

    def __init__(self, path: str, context: dict | None = None):
        self.path = path
        self.context = dict(context or {})
        # frameworks run nodes on worker threads (LangGraph's functional API and parallel branches
        # do): one connection, shared across threads, one statement (or append_once's transaction)
        # at a time; reentrant, as append_once appends inside its own transaction
        self._conn = sqlite3.connect(path, timeout=60, isolation_level=None, check_same_thread=False)
        self._lock = threading.RLock()
        self._conn.execute("PRAGMA busy_timeout=60000")
        _into_wal(self._conn)
        self._conn.execute("PRAGMA synchronous=NORMAL")  # see the module docstring: a process kill loses nothing
        self._conn.executescript(_SQLITE_SCHEMA)
        ensure_columns(self._conn)

    def append(self, *, task: str, value: str | None, thread_id: str, where: Where | None = None, key: str | None = None) -> int:
        with self._lock:
            cur = self._conn.execute(
                f"INSERT INTO effects ({', '.join(COLUMNS[1:])}) VALUES ({','.join('?' * (len(COLUMNS) - 1))})",
                row_values(self.context, task, value, thread_id, where, key),
            )
            assert cur.lastrowid is not None  # set by every successful INSERT
            return cur.lastrowid

    def append_once(
        self, *, task: str, value: str | None, thread_id: str, where: Where | None = None, key: str | None = None
    ) -> tuple[int, bool]:
        """Append unless a row with the same idempotency key (trial, thread, effect identity) exists.

        Returns (seq, inserted). ``BEGIN IMMEDIATE`` takes SQLite's write lock before the check,
        so two racers cannot both find the key absent: check and insert are one transaction.
        """
        c = self.context
        identity = stored_key(c, task, value, key)
        # the connection is shared by the racer's threads: a second thread's BEGIN inside this
        # transaction would fail ("cannot start a transaction within a transaction"), so parallel
        # branches firing idempotent effects at once take turns for the whole transaction
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                row = self._conn.execute(
                    "SELECT seq FROM effects WHERE run_id = ? AND trial_id = ? AND thread_id = ? AND effect_key = ?",
                    (c.get("run_id", ""), c.get("trial_id", ""), thread_id, identity),
                ).fetchone()
                if row is not None:
                    self._conn.execute("COMMIT")
                    return int(row[0]), False
                seq = self.append(task=task, value=value, thread_id=thread_id, where=where, key=key)
                self._conn.execute("COMMIT")
                return seq, True
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    def copy_rows(self, rows: list[dict], trial_id: str) -> None:
        """``rows`` (as ``rows`` returns them) inserted again under ``trial_id``, in one transaction."""
        cols = COLUMNS[1:]
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._conn.executemany(
                    f"INSERT INTO effects ({', '.join(cols)}) VALUES ({','.join('?' * len(cols))})",
                    [tuple(trial_id if c == "trial_id" else r.get(c) for c in cols) for r in rows],
                )
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    def rows(self, *, run_id: str, trial_id: str | None = None) -> list[dict]:
        sql = f"SELECT {', '.join(COLUMNS)} FROM effects WHERE run_id = ?"
        args: list = [run_id]
        if trial_id is not None:
            sql += " AND trial_id = ?"
            args.append(trial_id)
        sql += " ORDER BY seq"
        return [dict(zip(COLUMNS, r, strict=True)) for r in self._conn.execute(sql, args)]

    def close(self) -> None:
        self._conn.close()


def open_ledger(config: LedgerSpec, context: dict | None = None) -> Ledger:
    """Open the ledger a racer spec or a run names."""
    kind = config.get("kind", "sqlite")
    if kind == "sqlite":
        return SqliteLedger(config["path"], context)
    if kind == "postgres":
        from chaos.racer.ledger_pg import PostgresLedger  # psycopg only where Postgres is used

        return PostgresLedger(config["dsn"], context, table=config.get("table", "chaos_effects"))
    raise ValueError(f"unknown ledger kind {kind!r} (expected sqlite or postgres)")

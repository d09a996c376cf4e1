"""Per-run isolation of the postgres backends (orchestrator side).

Each run gets its own Postgres schema (``chaos_run_<run id, cut>_<digest of the whole run id>``:
distinct runs never share one, whatever the scenario's name), created once before the first
trial, with the framework's tables set up there exactly once by its package
(``chaos.targets.hooks.PreparesStore``; LangGraph's ``PostgresSaver.setup()`` run concurrently by k
racers races on its migrations table). Racers then receive a store
``{"dsn", "schema", "setup": False}``: they share the run's schema, and the thread id (unique per
trial) keeps trials apart. The schema is dropped at the end of the run unless kept: by its
recorded name, with the per-trial schemas made under it (``<run schema>_<10 hex>``: the name is at
most ``SCHEMA_MAX`` bytes, so a trial schema holds it whole and never matches another run's).
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chaos.racer.ledger_rows import CopiesRows
from chaos.racer.protocol import LedgerSpec, StoreSpec
from chaos.racer.redact import redact_dsn, redact_text
from chaos.targets import DEFAULT_FRAMEWORK, PreparesStore, hooks_of

if TYPE_CHECKING:
    import psycopg

    from chaos.racer.ledger import Ledger
    from chaos.scenario.model import Cell

# the backends whose store is the run's Postgres schema
PG_BACKENDS = ("postgres", "postgres_async", "postgres_pool")
_UNSAFE = re.compile(r"[^a-z0-9_]")


SCHEMA_MAX = 50  # bytes: a trial schema ``<run schema>_<10 hex>`` (61) still fits Postgres' 63


def schema_name(run_id: str) -> str:
    """A valid Postgres identifier for the run (lower case, <= ``SCHEMA_MAX`` bytes), distinct for
    distinct run ids: the readable part is cut, the digest of the whole run id never is."""
    digest = hashlib.sha256(run_id.encode()).hexdigest()[:12]
    readable = _UNSAFE.sub("_", run_id.lower())[: SCHEMA_MAX - len("chaos_run_") - 1 - len(digest)]
    return f"chaos_run_{readable}_{digest}"


def connect(dsn: str) -> psycopg.Connection[Any]:
    """An autocommit connection to ``dsn``; one that cannot be made is a ``ConnectionError``
    whose message names the server (its password masked)."""
    import psycopg

    try:
        return psycopg.connect(dsn, autocommit=True, connect_timeout=10)
    except psycopg.Error as exc:  # OperationalError (host, port, password, database), ProgrammingError (not a DSN)
        msg = redact_text(" ".join(str(exc).split()))
        raise ConnectionError(f"postgres backend: cannot connect to {redact_dsn(dsn)}: {msg}") from None


def check_dsn(dsn: str, source: str = "CHAOS_PG_DSN") -> None:
    """Connect once to ``dsn`` (before any trial, before any run folder): a one-line
    ``EnvironmentProblem`` naming ``source`` if it is not a DSN or the database refuses it."""
    from chaos.racer.errors import EnvironmentProblem

    try:
        connect(dsn).close()
    except ConnectionError as exc:
        raise EnvironmentProblem(
            f"{source}: {exc}", hint="check the host, port, user, password and database (scripts/postgres.sh starts one and prints its DSN)"
        ) from None


def create_run_schema(dsn: str, run_id: str, *, frameworks: Iterable[str] = (DEFAULT_FRAMEWORK,)) -> str:
    """Create the run's schema (idempotent), and in it the tables of each of ``frameworks`` that
    sets its store up (``chaos.targets.hooks.PreparesStore``: LangGraph's checkpoint tables); returns its name."""
    from psycopg import sql

    name = schema_name(run_id)
    with connect(dsn) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(name)))
    for framework in dict.fromkeys(frameworks):
        hooks = hooks_of(framework)
        if isinstance(hooks, PreparesStore):
            hooks.prepare_store(dsn, name)
    return name


def drop_run_schema(dsn: str, run_id: str) -> None:
    """Drop the run's schema (``schema_name(run_id)``) and its trial schemas: ``drop_schema``."""
    drop_schema(dsn, schema_name(run_id))


def drop_schema(dsn: str, name: str) -> list[str]:
    """Drop the run schema ``name`` (as recorded by the run that made it) and everything in it
    (idempotent), and the per-trial schemas made under that whole name (``<name>_<10 hex>``: the
    DBOS adapter's system databases, one per trial); returns the names dropped. A name longer than
    ``SCHEMA_MAX`` (made by an older chaos, cut) drops no trial schema: its prefix may be another
    run's."""
    from psycopg import sql

    with connect(dsn) as conn:
        dropped = [name] if conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (name,)).fetchone() else []
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(name)))
        if len(name.encode()) > SCHEMA_MAX:
            return dropped
        rows = conn.execute(
            "SELECT nspname FROM pg_namespace WHERE left(nspname, %s) = %s AND length(nspname) = %s AND right(nspname, 10) ~ '^[0-9a-f]{10}$'",
            (len(name) + 1, name + "_", len(name) + 11),
        )
        for (trial_schema,) in rows.fetchall():
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(trial_schema)))
            dropped.append(trial_schema)
    return dropped


def store_for(dsn: str, run_id: str) -> Callable[[Cell, str, Path], StoreSpec]:
    """A ``RunContext.store_for`` callable: every trial of the run uses the run's schema."""

    def store(cell: Cell, trial_id: str, trial_dir: Path) -> StoreSpec:
        return {"dsn": dsn, "schema": schema_name(run_id), "setup": False}

    return store


def list_run_schemas(dsn: str) -> list[str]:
    """Schemas left by runs (for ``chaos clean``)."""
    with connect(dsn) as conn:
        rows = conn.execute("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'chaos\\_run\\_%' ORDER BY 1").fetchall()
    return [r[0] for r in rows]


OUTAGE_WAIT_S = 120  # seconds a run waits for its own Postgres before it stops (resumable); CHAOS_OUTAGE_WAIT_S sets another


class DatabaseOutage(ConnectionError):
    """The run's own database stayed down: the run stops, exit 3, resumable (not a cell's failure)."""


def _answers(dsn: str) -> bool:
    """The server at ``dsn`` accepts a connection now (within 3 s)."""
    import psycopg

    try:
        psycopg.connect(dsn, autocommit=True, connect_timeout=3).close()
    except psycopg.Error:
        return False
    return True


class RunStorage:
    """Where a run's effects and checkpoints live, chosen from its cells (orchestrator side).

    - The ledger is the run's SQLite file, unless racers run on other hosts: then the Postgres
      table ``chaos_effects`` at ``CHAOS_PG_DSN`` (the only store every host can reach).
    - Cells on the postgres backend share the run's schema (created and set up here, once);
      other backends get a per-trial SQLite file as before.
    ``describe()`` is what run.json records: DSNs redacted.
    """

    @staticmethod
    def needs(cells: list) -> tuple[bool, bool]:
        """(some cell uses the postgres backend, some cell runs racers on other hosts)."""
        pg_backend = any(c.scenario.target.backend in PG_BACKENDS for c in cells)
        remote = any(not isinstance(c.scenario.racers.placement, str) for c in cells)
        return pg_backend, remote

    @classmethod
    def preflight(cls, cells: list, dsn: str | None = None, *, connect: bool = False) -> str | None:
        """The DSN the cells need (None if they need none); a one-line error if it is missing
        (or, with ``connect``, if it is not a DSN or the database refuses it: ``check_dsn``)."""
        import os

        from chaos.racer.errors import EnvironmentProblem

        pg_backend, remote = cls.needs(cells)
        for c in cells:
            if not isinstance(c.scenario.racers.placement, str) and c.scenario.target.backend in ("sqlite", "sqlite_async"):
                raise EnvironmentProblem(
                    f"cell {c.id}: racers on other hosts cannot share a SQLite checkpoint file: use target.backend postgres"
                )
        dsn = dsn or os.environ.get("CHAOS_PG_DSN")
        if (pg_backend or remote) and not dsn:
            why = "the postgres backend" if pg_backend else "racers on other hosts (a shared ledger)"
            raise EnvironmentProblem(
                f"this scenario needs Postgres for {why}: set CHAOS_PG_DSN (scripts/postgres.sh starts one and prints it)"
            )
        if not (pg_backend or remote):
            return None
        assert dsn is not None  # refused above
        if connect:
            check_dsn(dsn)
        return dsn

    def __init__(self, cells: list, run_id: str, run_dir: Path, dsn: str | None = None):
        from chaos.racer.ledger import open_ledger

        self.run_id = run_id
        self.lock = threading.Lock()
        pg_backend, remote = self.needs(cells)
        self.dsn = self.preflight(cells, dsn)
        self.ledger_config: LedgerSpec
        if remote:
            assert self.dsn is not None  # preflight raised: remote racers need the shared Postgres ledger
            self.ledger_config = {"kind": "postgres", "dsn": self.dsn, "table": "chaos_effects"}
        else:
            self.ledger_config = {"kind": "sqlite", "path": str((Path(run_dir) / "ledger.sqlite").resolve())}
        self.ledger: Ledger | None = None
        # preflight raised unless a DSN is there for the postgres backend
        pg_frameworks = [c.scenario.target.framework for c in cells if c.scenario.target.backend in PG_BACKENDS]
        self.schema = create_run_schema(self.dsn, run_id, frameworks=pg_frameworks) if pg_backend and self.dsn else None
        try:
            self.ledger = open_ledger(self.ledger_config)
        except Exception:
            self.close()
            raise

    def store_for(self, cell: Cell, trial_id: str, trial_dir: Path) -> StoreSpec:
        if cell.scenario.target.backend in PG_BACKENDS:
            assert self.dsn is not None and self.schema is not None  # a postgres cell: __init__ made the run's schema
            return {"dsn": self.dsn, "schema": self.schema, "setup": False}
        return {"path": str((Path(trial_dir) / "checkpoints.sqlite").resolve())}

    def read_ledger(self, trial_id: str) -> list[dict]:
        with self.lock:  # one connection, read and written by a run's parallel trials (``--jobs``) one at a time
            if self.ledger is None:
                raise RuntimeError("the run's ledger was read after RunStorage.close()")
            return self.ledger.rows(run_id=self.run_id, trial_id=trial_id)

    def copy_ledger(self, rows: list[dict], trial_id: str) -> None:
        """``rows`` of the run's ledger inserted again as ``trial_id``'s (``RunContext.copy_ledger``)."""
        with self.lock:
            if not isinstance(self.ledger, CopiesRows):
                raise RuntimeError("the run's ledger was written to after RunStorage.close(), or cannot copy rows")
            self.ledger.copy_rows(rows, trial_id)

    def await_database(self, trial_id: str) -> None:
        """Before ``trial_id``, a repeat an environment fault forces: the run's own Postgres answers,
        or the run waits for it (at most ``OUTAGE_WAIT_S``, said on the terminal), so an outage does
        not spend the repeats while the server is down. Still down: ``DatabaseOutage`` stops the run
        (exit 3), and ``chaos run --resume`` runs again what the outage spoiled."""
        if self.dsn is None or _answers(self.dsn):
            return
        import os
        import sys
        import time

        try:
            wait_s = max(0.0, float(os.environ.get("CHAOS_OUTAGE_WAIT_S", OUTAGE_WAIT_S)))
        except ValueError:
            wait_s = OUTAGE_WAIT_S

        where = redact_dsn(self.dsn)
        sys.stderr.write(f"chaos: the run's Postgres ({where}) does not answer: waiting up to {wait_s:.0f} s before trial {trial_id}\n")
        sys.stderr.flush()
        t0 = time.monotonic()
        while time.monotonic() - t0 < wait_s:
            time.sleep(1)  # a server coming back sends nothing: look again
            if _answers(self.dsn):
                sys.stderr.write(f"chaos: the run's Postgres answers again after {time.monotonic() - t0:.0f} s: going on\n")
                sys.stderr.flush()
                return
        raise DatabaseOutage(
            f"the run's Postgres ({where}) did not answer for {wait_s:.0f} s; resume the run (`chaos run --resume`) once it is back"
        )

    def describe(self) -> dict:
        from chaos.racer.redact import redact_config

        return redact_config({"ledger": self.ledger_config, "postgres_schema": self.schema})

    def close(self, *, keep_schema: bool = False) -> None:
        if self.ledger is not None:
            self.ledger.close()
            self.ledger = None
        if self.schema and self.dsn and not keep_schema:
            drop_schema(self.dsn, self.schema)
            self.schema = None

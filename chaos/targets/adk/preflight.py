"""ADK's own checks before any trial, run in the racers' Python (``python -m chaos.targets.adk.preflight SPEC``).

Why: bad input on the ADK target would otherwise surface inside the trials, as a run of errored
trials. The orchestrator's preflight runs this once per interpreter and cell configuration
(``TargetInfo.preflight``); it exits 0 when the racers can start, else prints one line saying what
to change and exits 2 (the run then stops with exit 3, before any trial):

* the environment imports ADK's runner and session services (else: the command that builds it);
* ``workload_params`` are ones the adapter reads (``params_problem``);
* a Postgres session database opens with the driver ``DatabaseSessionService`` gets here
  (SQLAlchemy's asyncpg dialect), at the DSN the run gives the racers (``CHAOS_PG_DSN``);
* a MariaDB session database (``backend: mariadb``) is named (``CHAOS_MYSQL_DSN``), opens with
  ADK's driver for it (aiomysql), and its user may create and drop the run's own database.

A workload whose factory does not build, or whose ``App`` has resumability off, is refused by the
orchestrator's run of the workload (``chaos.running.preflight``): the session raises it when it opens.
``SPEC`` is JSON: ``{"target": {...}, "workload_params": {...}}``. Standard library only, until ADK
is imported.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from chaos.targets.preflight import database_problem, environment_problem, run, store_check

INVOCATION_ID = (None, "send", "omit")


def params_problem(params: dict[str, Any]) -> str | None:
    """What is wrong with the ADK ``workload_params``, as one sentence; None when nothing is."""
    how = params.get("invocation_id")
    if how not in INVOCATION_ID:
        return f"workload_params.invocation_id is {how!r}: use send (the default: the answer names the paused invocation) or omit"
    return None


def import_problem(target: dict[str, Any]) -> str | None:
    try:
        from google.adk.runners import Runner  # noqa: F401
        from google.adk.sessions.database_session_service import DatabaseSessionService  # noqa: F401
        from google.adk.sessions.sqlite_session_service import SqliteSessionService  # noqa: F401
    except Exception as exc:
        return environment_problem("adk", target, "google.adk", exc)
    return None


def _select_one(url: str, connect_args: dict[str, object]) -> None:
    """Open ``url`` with the async SQLAlchemy driver DatabaseSessionService uses and run ``SELECT 1``
    (raises what the driver raises)."""
    import asyncio

    import sqlalchemy as sa
    from sqlalchemy.ext.asyncio import create_async_engine

    async def probe() -> None:
        engine = create_async_engine(url, connect_args=connect_args)
        try:
            async with engine.connect() as conn:
                await conn.execute(sa.text("SELECT 1"))
        finally:
            await engine.dispose()

    asyncio.run(probe())


def postgres_problem(dsn: str) -> str | None:
    """The session database DSN opens with DatabaseSessionService's driver (a connection and ``SELECT 1``)."""
    try:
        _select_one("postgresql+asyncpg://" + dsn.split("://", 1)[-1], {"timeout": 10})
    except Exception as exc:
        return database_problem("ADK's DatabaseSessionService cannot open its Postgres session database", dsn, exc)
    return None


def mariadb_problem(dsn: str) -> str | None:
    """``backend: mariadb``: ``CHAOS_MYSQL_DSN`` is set and opens with aiomysql (a connection and ``SELECT 1``)."""
    from chaos.targets.adk.session import MYSQL_ENV, mysql_url

    if "://" not in dsn:
        return f"backend mariadb needs {MYSQL_ENV} (mysql://user:password@host:port/database): `bash scripts/mariadb.sh | tail -1` starts one and prints it"
    try:
        _select_one(mysql_url(dsn), {"connect_timeout": 10})
    except Exception as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return f"ADK's DatabaseSessionService cannot open its MariaDB session database at {dsn.split('@', 1)[-1]}: {first}: set {MYSQL_ENV} to a database that accepts it"
    return create_problem(dsn)


def create_problem(dsn: str) -> str | None:
    """The DSN's user may create and drop a database: each run's sessions go in one of its own
    (``chaos.targets.adk.mariadb``); probed with a throwaway database, dropped at once."""
    import uuid

    import pymysql

    from chaos.targets.adk.mariadb import MYSQL_ENV, PREFIX, server_params

    probe = f"{PREFIX}preflight_{uuid.uuid4().hex[:8]}"
    try:
        conn = pymysql.connect(**server_params(dsn), autocommit=True, connect_timeout=10)
        try:
            with conn.cursor() as cur:
                cur.execute(f"CREATE DATABASE IF NOT EXISTS `{probe}`")
                cur.execute(f"DROP DATABASE IF EXISTS `{probe}`")
        finally:
            conn.close()
    except pymysql.err.MySQLError as exc:
        return (
            f"the user of {MYSQL_ENV} at {dsn.split('@', 1)[-1]} cannot create and drop a database ({exc.args[-1]}): "
            f"each ADK run keeps its sessions in a database of its own ({PREFIX}...): grant it CREATE and DROP on `{PREFIX}%`.*"
        )
    return None


_STORES = store_check(import_problem, postgres_problem, params_problem)


def check(spec: dict[str, Any], target: dict[str, Any]) -> str | None:
    problem = _STORES(spec, target)
    if problem is None and target.get("backend") == "mariadb":
        problem = mariadb_problem(os.environ.get("CHAOS_MYSQL_DSN", ""))
    return problem


def main(argv: list[str]) -> int:
    return run(argv, check)


if __name__ == "__main__":
    sys.exit(main(sys.argv))

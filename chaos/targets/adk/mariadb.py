"""The run's own MariaDB database for ADK's sessions (``backend: mariadb``), made and reaped.

Why: ``DatabaseSessionService`` creates its tables (sessions, events, app_states, user_states,
adk_internal_metadata) in the database its URL names, and a trial's session stays there as rows.
On the shared server of ``CHAOS_MYSQL_DSN`` that would leave every run's tables and rows behind, as
the Postgres back end would without its schema per run (``chaos.running.pgstore``). So each run
gets a database of its own on that server, ``database_name(run_id)``: the racers create it if
missing (``CREATE DATABASE IF NOT EXISTS``: the k racers of a trial may race on it) and the trials
share it, each its own session; the orchestrator's ``reap`` drops it at the run's cleanup (also
of an interrupted run: ``chaos.targets.hooks.ReapsStore``), through the racers' Python, whose
PyMySQL (aiomysql's own) talks to the server; the orchestrator's Python has no MySQL client.

``fault: db_disconnect`` kills one racer's connections to that database: MariaDB has no
``application_name``, so the racer writes the id of each connection it opens
(``report_connections``) and ``cut`` kills those ids still connected there, and no other.
Standard library only until a connection is made.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

MYSQL_ENV = "CHAOS_MYSQL_DSN"  # mysql://user:password@host:port/database (scripts/mariadb.sh prints one)
PREFIX = "chaos_adk_"  # every run database's name starts so (``chaos_adk_`` + 20 hex of the run id: 30 bytes, MariaDB allows 64)


def database_name(run_id: str) -> str:
    """The run's database: distinct for distinct run ids, a valid unquoted MariaDB name."""
    return PREFIX + hashlib.sha256(run_id.encode()).hexdigest()[:20]


def server_params(dsn: str) -> dict[str, Any]:
    """PyMySQL's connect arguments for the server of ``dsn`` (no database: the run's is made there)."""
    u = urlsplit(dsn)
    return {
        "host": u.hostname or "127.0.0.1",
        "port": u.port or 3306,
        "user": unquote(u.username or ""),
        "password": unquote(u.password or ""),
    }


def run_dsn(dsn: str, run_id: str) -> str:
    """``dsn`` naming the run's database instead of its own."""
    base, _, _ = dsn.rpartition("/")
    return f"{base}/{database_name(run_id)}"


def ensure(dsn: str, run_id: str) -> str:
    """Create the run's database on the server of ``dsn`` if missing (racer side); returns its DSN."""
    import pymysql

    conn = pymysql.connect(**server_params(dsn), autocommit=True, connect_timeout=10)
    try:
        with conn.cursor() as cur:
            cur.execute(f"CREATE DATABASE IF NOT EXISTS `{database_name(run_id)}`")
    finally:
        conn.close()
    return run_dsn(dsn, run_id)


def connections_file(trial_dir: Path, name: str) -> Path:
    """Where the racer named ``name`` (``fault: db_disconnect``) writes the server's id of each
    connection its session service opens, one a line: MariaDB has no ``application_name`` (a
    connection's attributes are visible only with performance_schema, off by default), so the racer
    says which connections are its own and the orchestrator's ``cut`` kills exactly those."""
    return trial_dir / f"connections-{name}.txt"


def report_connections(engine: Any, path: Path) -> None:
    """Append the server's id of each new connection of ``engine`` (SQLAlchemy's ``AsyncEngine``
    of ``DatabaseSessionService``) to ``path`` as it opens (racer side)."""
    from sqlalchemy import event

    def opened(dbapi_connection: Any, _record: Any) -> None:
        cur = dbapi_connection.cursor()
        cur.execute("SELECT CONNECTION_ID()")
        (cid,) = cur.fetchone()
        cur.close()
        with path.open("a") as f:
            f.write(f"{int(cid)}\n")

    event.listen(engine.sync_engine, "connect", opened)


# run in the racers' Python: argv = run database, connection ids (the racer's, from its file); the
# server's DSN in CHAOS_MYSQL_DSN. Kills those still connected to the run's database as the DSN's
# user (an id the server gave since to another client is not the racer's: never touched), then
# waits until the server has ended them (KILL marks a thread; it ends at its next check)
_CUT = """
import json, os, sys, time
from urllib.parse import unquote, urlsplit
import pymysql
u = urlsplit(os.environ["CHAOS_MYSQL_DSN"])
user = unquote(u.username or "")
conn = pymysql.connect(host=u.hostname or "127.0.0.1", port=u.port or 3306, user=user,
                       password=unquote(u.password or ""), autocommit=True, connect_timeout=10)
cur = conn.cursor()
ids = [int(x) for x in sys.argv[2:]]
def alive():
    if not ids:
        return []
    marks = ",".join(["%s"] * len(ids))
    cur.execute(f"SELECT id FROM information_schema.processlist WHERE id IN ({marks}) AND user = %s AND db = %s AND id <> CONNECTION_ID()",
                (*ids, user, sys.argv[1]))
    return sorted(int(r[0]) for r in cur.fetchall())
found = alive()
for cid in found:
    try:
        cur.execute(f"KILL CONNECTION {cid}")
    except pymysql.err.OperationalError as exc:  # 1094: ended meanwhile
        if exc.args[0] != 1094:
            raise
deadline = time.monotonic() + 10
left = alive()
while left and time.monotonic() < deadline:
    time.sleep(0.02)  # the server ends a killed thread at its next check: look again
    left = alive()
print(json.dumps({"found": found, "terminated": [c for c in found if c not in left]}))
"""


def cut(run_id: str, name: str, trial_dir: Path, python: str) -> tuple[list[int], list[int]]:
    """Kill the connections of the racer named ``name`` of run ``run_id`` to the run's database (the
    ids in its ``connections_file``) with ``python`` (the racers'); returns (found there, ended)."""
    import json

    path = connections_file(trial_dir, name)
    ids = path.read_text().split() if path.exists() else []
    if "://" not in os.environ.get(MYSQL_ENV, ""):
        raise RuntimeError(f"the MariaDB connections of racer {name} were not killed: {MYSQL_ENV} is not set")
    proc = subprocess.run([python, "-c", _CUT, database_name(run_id), *ids], capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"the MariaDB connections of racer {name} were not killed: {last}")
    out = json.loads(proc.stdout)
    return list(out["found"]), list(out["terminated"])


# run in the racers' Python: argv = database name; the server's DSN in CHAOS_MYSQL_DSN (not on the command line)
_DROP = """
import os, sys
from urllib.parse import unquote, urlsplit
import pymysql
u = urlsplit(os.environ["CHAOS_MYSQL_DSN"])
conn = pymysql.connect(host=u.hostname or "127.0.0.1", port=u.port or 3306, user=unquote(u.username or ""),
                       password=unquote(u.password or ""), autocommit=True, connect_timeout=10)
cur = conn.cursor()
cur.execute("SELECT 1 FROM information_schema.schemata WHERE schema_name = %s", (sys.argv[1],))
found = cur.fetchone() is not None
cur.execute(f"DROP DATABASE IF EXISTS `{sys.argv[1]}`")
print("dropped" if found else "absent")
"""


def reap(run_id: str, python: str) -> list[str]:
    """Drop the run's database (idempotent) with ``python`` (the racers'); returns ``MariaDB database <name>`` if it was there.
    A server that refuses is a ``RuntimeError`` naming the database, so the run reports it."""
    dsn = os.environ.get(MYSQL_ENV, "")
    name = database_name(run_id)
    if "://" not in dsn:  # a reaper without the server's address: said, so the dead run's entry keeps it
        raise RuntimeError(f"the ADK run database {name} was not dropped: {MYSQL_ENV} is not set (export it and run `chaos clean`)")
    proc = subprocess.run([python, "-c", _DROP, name], capture_output=True, text=True, timeout=60, env={**os.environ, MYSQL_ENV: dsn})
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"the ADK run database {name} on the MariaDB of {MYSQL_ENV} was not dropped: {last}")
    return [f"MariaDB database {name}"] if proc.stdout.strip() == "dropped" else []

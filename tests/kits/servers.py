"""Fixtures for the server-backed savers (MySQL on MariaDB, plain Redis): a real server, each test on
its own database or key prefix, removed afterwards.

The server comes from CHAOS_MYSQL_DSN / CHAOS_REDIS_URL (CI: .ci/infra.sh starts both through
scripts/mariadb.sh and scripts/redis.sh, .ci/run exports them). Unset: the test skips and says how to
start one. Set but not answering: the test fails (the environment promised a server). The main
interpreter has no MySQL or Redis client: the fixtures talk to the server through the savers' venv
(the one scenarios/server_savers.yaml runs its racers in).
"""

from __future__ import annotations

import os
import subprocess
import uuid

import pytest

# the requirements of scenarios/server_savers.yaml: the same list gives the same venv
REQUIREMENTS = ["langgraph-checkpoint-mysql[pymysql]==3.0.0", "langgraph-checkpoint-plainredis==0.1.0"]


def savers_python() -> str:
    """The racers' Python holding both savers (built once by pip, like any target.requirements)."""
    from chaos.envs import python_for
    from chaos.racer.errors import EnvironmentProblem

    try:
        return python_for("langgraph", None, REQUIREMENTS)
    except EnvironmentProblem as exc:
        pytest.skip(f"{' '.join(REQUIREMENTS)} cannot be installed here: {exc}")


def _server(variable: str, script: str) -> str:
    value = os.environ.get(variable, "").strip()
    if not value:
        pytest.skip(f'{variable} is not set: start the server with {script} and export {variable}="$({script} | tail -1)"')
    return value


def _client(python: str, code: str, *args: str) -> str:
    proc = subprocess.run([python, "-c", code, *args], capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        pytest.fail(f"server client failed: {proc.stderr.strip().splitlines()[-1:]}", pytrace=False)
    return proc.stdout


MYSQL = """
import sys, pymysql
from langgraph.checkpoint.mysql.pymysql import PyMySQLSaver
p = PyMySQLSaver.parse_conn_string(sys.argv[1]); p.pop("database")
conn = pymysql.connect(**p, autocommit=True, connect_timeout=5)
cur = conn.cursor()
if sys.argv[2] == "drop":
    cur.execute(f"DROP DATABASE IF EXISTS `{sys.argv[3]}`")
else:  # count the rows of the run's threads
    cur.execute(f"SELECT COUNT(*) FROM `{sys.argv[3]}`.checkpoints WHERE thread_id LIKE %s", (sys.argv[4] + "%",))
    print(cur.fetchone()[0])
"""

REDIS = """
import sys, redis
r = redis.Redis.from_url(sys.argv[1], socket_timeout=5)
keys = list(r.scan_iter(match=sys.argv[3] + ":*", count=1000))
if sys.argv[2] == "drop" and keys:
    r.delete(*keys)
print(len(keys))
"""


class MySQLDatabase:
    """A database of its own on the test server (``dsn`` names it), dropped by the fixture."""

    def __init__(self, server_dsn: str, python: str) -> None:
        self.name = f"chaos_t_{uuid.uuid4().hex[:12]}"
        base, _, _ = server_dsn.rpartition("/")
        self.dsn, self.server_dsn, self.python = f"{base}/{self.name}", server_dsn, python

    def checkpoints_of(self, thread_prefix: str) -> int:
        return int(_client(self.python, MYSQL, self.server_dsn, "count", self.name, thread_prefix))

    def drop(self) -> None:
        _client(self.python, MYSQL, self.server_dsn, "drop", self.name)


class RedisPrefix:
    """A key prefix of its own on the test server, its keys deleted by the fixture."""

    def __init__(self, url: str, python: str) -> None:
        self.url, self.python, self.prefix = url, python, f"chaos_t_{uuid.uuid4().hex[:12]}"

    def keys(self) -> int:
        return int(_client(self.python, REDIS, self.url, "count", self.prefix))

    def drop(self) -> None:
        _client(self.python, REDIS, self.url, "drop", self.prefix)


@pytest.fixture
def mysql_database(monkeypatch):
    db = MySQLDatabase(_server("CHAOS_MYSQL_DSN", "scripts/mariadb.sh"), savers_python())
    monkeypatch.setenv("CHAOS_MYSQL_DSN", db.dsn)
    yield db
    db.drop()


@pytest.fixture
def redis_prefix(monkeypatch):
    space = RedisPrefix(_server("CHAOS_REDIS_URL", "scripts/redis.sh"), savers_python())
    monkeypatch.setenv("CHAOS_REDIS_PREFIX", space.prefix)
    yield space
    space.drop()

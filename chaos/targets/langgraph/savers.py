"""Saver factories for third-party LangGraph checkpointers chaos has been run on (``target.saver``).

Why: ``scenarios/any_saver.yaml`` and the README's "Third-party savers" table need a factory per
saver, and a checkpointer author needs an example of one. They run in racers, so they live on the
racer side (``chaos/targets/``, shipped to SSH hosts); scenarios name them ``chaos.savers:<name>``,
which ``chaos.targets.langgraph.custom_saver`` reads as this module (``chaos/savers.py`` re-exports them). Each factory takes a
``chaos.targets.langgraph.custom_saver.SaverContext`` and returns the saver opened in ``ctx.folder`` (the
trial's folder, shared by its racers). The saver's package is imported only when the factory is
called, in the racers' Python (the scenario's ``target.requirements`` installs it there).
"""

from __future__ import annotations

from typing import Any

__all__ = ["lmdb", "mysql", "objectstorage", "plainredis"]


def lmdb(ctx: Any) -> Any:
    """``langgraph-checkpoint-lmdb``: an LMDB environment in the trial's folder."""
    import lmdb as lmdb_lib
    from langgraph_checkpoint_lmdb import LMDBSaver

    env = lmdb_lib.open(str(ctx.folder / "lmdb"), map_size=1 << 28, max_dbs=4)
    return LMDBSaver(env)


def objectstorage(ctx: Any) -> Any:
    """``langgraph-checkpoint-objectstorage``: one object per checkpoint and write, on the local
    filesystem through fsspec (``file://``), under the trial's folder."""
    from langgraph_checkpoint_objectstorage import ObjectStorageSaver

    return ObjectStorageSaver.from_conn_string(f"file://{ctx.folder / 'objects'}")


# Server-backed savers: the server comes from the environment (never from the scenario, so a
# password stays out of run.json); scripts/mariadb.sh and scripts/redis.sh start one on loopback
# and print the value. Trials share the server and are kept apart by their thread ids
# (``<run id>-<trial>``, unique per run).


def _server(variable: str, script: str) -> str:
    import os

    value = os.environ.get(variable, "").strip()
    if not value:
        raise ConnectionError(f'{variable} is not set: start a server with {script} and export {variable}="$({script} | tail -1)"')
    return value


def mysql(ctx: Any) -> Any:
    """``langgraph-checkpoint-mysql`` (``PyMySQLSaver``, requirement ``langgraph-checkpoint-mysql[pymysql]``)
    on the MySQL or MariaDB database of ``CHAOS_MYSQL_DSN`` (``mysql://user:password@host:port/db``),
    created if missing; the saver's migrations run once per database (a named lock keeps two
    racers from running them at the same time)."""
    import pymysql
    from langgraph.checkpoint.mysql.pymysql import PyMySQLSaver

    params = PyMySQLSaver.parse_conn_string(_server("CHAOS_MYSQL_DSN", "scripts/mariadb.sh"))
    database = params.pop("database") or "chaos"
    where = f"MySQL at {params['host']}:{params['port']} (CHAOS_MYSQL_DSN)"
    try:
        conn = pymysql.connect(**params, autocommit=True, connect_timeout=5)
    except pymysql.err.MySQLError as exc:
        # 2003: nothing answers there; else the server answered and refused (user, password, grants)
        todo = "start it with scripts/mariadb.sh" if exc.args[0] == 2003 else "check the user and password in CHAOS_MYSQL_DSN"
        raise ConnectionError(f"cannot connect to {where}: {exc.args[-1]}; {todo}") from None
    with conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE IF NOT EXISTS `{database}`")
    conn.select_db(database)
    saver = PyMySQLSaver(conn)
    with conn.cursor() as cur:
        cur.execute("SELECT GET_LOCK('chaos_saver_setup', 60)")
        try:
            saver.setup()
        finally:
            cur.execute("SELECT RELEASE_LOCK('chaos_saver_setup')")
    return saver


def plainredis(ctx: Any) -> Any:
    """``langgraph-checkpoint-plainredis`` (``RedisSaver``: strings, hashes and sorted sets only, no
    RedisJSON or RediSearch) on the Redis of ``CHAOS_REDIS_URL`` (``redis://host:port/db``), its
    keys under ``CHAOS_REDIS_PREFIX`` (default ``chaos``)."""
    import os

    import redis
    from langgraph_checkpoint_plainredis import RedisSaver

    url = _server("CHAOS_REDIS_URL", "scripts/redis.sh")
    saver = RedisSaver(url=url, prefix=os.environ.get("CHAOS_REDIS_PREFIX", "").strip() or "chaos")
    try:
        saver.client.ping()
    except redis.exceptions.RedisError as exc:
        kw = saver.client.connection_pool.connection_kwargs
        raise ConnectionError(
            f"cannot connect to Redis at {kw.get('host')}:{kw.get('port')} (CHAOS_REDIS_URL): {exc}; start it with scripts/redis.sh"
        ) from None
    return saver

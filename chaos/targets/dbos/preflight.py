"""DBOS's own checks before any trial, run in the racers' Python (``python -m chaos.targets.dbos.preflight SPEC``).

Why: bad input on the DBOS target used to surface inside the trials (every racer raising the same
``ValueError``, a run of errored trials) or not at all. The orchestrator's preflight runs this
module once per interpreter and cell configuration (``TargetInfo.preflight``); it promises to exit
0 when the racers can start, else to print one line saying what to change and exit 2:

* the environment imports ``dbos`` (an environment whose ``dbos`` is gone or broken names the
  command that builds it again: ``bash .ci/envs.sh dbos``);
* ``workload_params`` do not clash (``params_problem``: an ``executor_id`` beside
  ``recover_by: resume_workflow``, whose resumer must run as an executor of its own);
* a Postgres system database opens with DBOS's own driver (SQLAlchemy over psycopg, as DBOS opens it),
  at the DSN the run gives the racers (``CHAOS_PG_DSN``); the SQLite system database lives in the
  trial's folder, which the run folder's own check covers (``--out`` must be writable).

``SPEC`` is JSON: ``{"target": {...}, "workload_params": {...}}``. Standard library only, until
``dbos`` is imported.
"""

from __future__ import annotations

import sys
from typing import Any

from chaos.targets.preflight import database_problem, environment_problem, run, store_check

RECOVER_BY = ("launch", "resume_workflow")


def params_problem(params: dict[str, Any]) -> str | None:
    """What is wrong with the DBOS ``workload_params``, as one sentence; None when nothing is."""
    by = params.get("recover_by", "launch")
    if by not in RECOVER_BY:
        return f"workload_params.recover_by is {by!r}: use one of {', '.join(RECOVER_BY)}"
    if by == "resume_workflow" and params.get("executor_id"):
        return (
            f"workload_params: executor_id {params['executor_id']!r} clashes with recover_by: resume_workflow (the resuming "
            "process runs as an executor of its own, so that its launch recovers nothing and DBOS.resume_workflow is what "
            "resumes): drop one"
        )
    retry = params.get("retry_connection_errors", True)
    if not isinstance(retry, bool):
        return f"workload_params.retry_connection_errors is {retry!r}: use true (DBOS's default: retry a lost connection) or false"
    return None


def import_problem(target: dict[str, Any]) -> str | None:
    try:
        import dbos  # noqa: F401
        from dbos._sys_db import SystemDatabase  # noqa: F401  (the seam chaos instruments)
    except Exception as exc:
        return environment_problem("dbos", target, "dbos", exc)
    return None


def postgres_problem(dsn: str) -> str | None:
    """The system database DSN opens with DBOS's driver (a connection and ``SELECT 1``)."""
    import sqlalchemy as sa

    try:
        url = sa.make_url(dsn).set(drivername="postgresql+psycopg")  # as dbos/_sys_db_postgres.py opens it
        engine = sa.create_engine(url, connect_args={"connect_timeout": 10})
        try:
            with engine.connect() as conn:
                conn.execute(sa.text("SELECT 1"))
        finally:
            engine.dispose()
    except Exception as exc:
        return database_problem("DBOS cannot open its Postgres system database", dsn, exc)
    return None


check = store_check(import_problem, postgres_problem, params_problem)


def main(argv: list[str]) -> int:
    return run(argv, check)


if __name__ == "__main__":
    sys.exit(main(sys.argv))

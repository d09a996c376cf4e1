"""A team's DBOS app whose database goes away, unplanned, under the process recovering it.

``three_step``: a workflow of steps ``outage_a``, ``outage_b``, ``outage_c`` (one effect each). When
``outage_c`` runs in the resume racer (the recovery of a killed run; never in the uninterrupted
run), it points DBOS's system database engine at a port where nothing listens, as if the database
had gone for good: nothing chaos planned. DBOS raises nothing: its ``db_retry`` logs each failed
connection and tries again, and the workflow never ends. What chaos must make of it: an
environment fault (the trial unknown), never LIVENESS violated (test_target_dbos.py).
"""

from __future__ import annotations

from typing import Any

from dbos import DBOS

from chaos.workloads.dbos import DBOSWorkload

_CTX: list[Any] = [None]
GONE = "postgresql+psycopg://chaos:chaos@127.0.0.1:9/gone"  # the discard port: nothing listens, the connection is refused


def _lose_the_database() -> None:
    import sqlalchemy as sa
    from dbos._dbos import _get_dbos_instance

    sys_db = _get_dbos_instance()._sys_db
    sys_db.engine.dispose()
    sys_db.engine = sa.create_engine(GONE, connect_args={"connect_timeout": 2})


@DBOS.step(name="outage_a")
def step_a() -> str:
    _CTX[0].effect("a")
    return "a"


@DBOS.step(name="outage_b")
def step_b() -> str:
    _CTX[0].effect("b")
    return "b"


@DBOS.step(name="outage_c")
def step_c() -> str:
    _CTX[0].effect("c")
    if _CTX[0].racer_id == "resume":
        _lose_the_database()
    return "c"


@DBOS.workflow(name="outage_three_step")
def outage_wf() -> list[str]:
    return [step_a(), step_b(), step_c()]


def three_step(ctx: Any) -> DBOSWorkload:
    _CTX[0] = ctx
    return DBOSWorkload(workflow=outage_wf, steps={"outage_a": "a", "outage_b": "b", "outage_c": "c"})

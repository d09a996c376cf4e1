"""A background run (``runs.create``, nobody waiting) in flight when ``langgraph dev`` is SIGKILLed: re-executed, resumed, or left pending?

The run is the deployed ``slow_reply`` graph: ``draft`` fires its effect, ``hold`` waits for a
release file, ``send`` fires. The server is killed while the run waits in ``hold``, restarted on
the same folder and port, the hold released, and the run read back through the API. Measured on
langgraph-api 0.16.7 with the in-memory runtime:

* killed before the runtime's first flush: the thread and the run are gone (``NotFoundError``);
* killed after a flush that recorded the run in flight: the restarted server finds it ``pending``
  and runs it from its last checkpoint: ``draft`` does not fire again, ``send`` fires once, the run
  ends ``success``: resumed, not re-executed, not left pending.
"""

from __future__ import annotations

import sqlite3
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from chaos.envs import python_for
from chaos.racer.ledger import open_ledger
from chaos.racer.protocol import LedgerSpec
from chaos.targets.langgraph_server.host import AgentServer, builtin_config


@pytest.fixture
def server(tmp_path):
    ledger: LedgerSpec = {"kind": "sqlite", "path": str(tmp_path / "ledger.sqlite")}
    open_ledger(ledger).close()  # the table exists before the first effect, so the test can count rows
    s = AgentServer(python_for("langgraph_server"), tmp_path / "srv", builtin_config(("slow_reply",)), ledger=ledger)
    s.start()
    yield s
    s.stop()


def _count(s: AgentServer, task: str) -> int:
    assert s.ledger is not None
    with sqlite3.connect(s.ledger["path"]) as db:
        return int(db.execute("select count(*) from effects where trial_id = 'bg' and task = ?", (task,)).fetchone()[0])


def _until(pred, timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)  # observing the server's files and the ledger: nothing to wait on but them
    return True


def _start_in_flight(s: AgentServer, release: Path) -> tuple[str, str]:
    from langgraph_sdk import get_sync_client

    c: Any = get_sync_client(url=s.url)
    tid = str(uuid.uuid4())
    c.threads.create(thread_id=tid)
    conf = {"configurable": {"chaos_trial_id": "bg", "chaos_racer_id": "client", "chaos_thread_id": "bg", "chaos_release": str(release)}}
    run = c.runs.create(tid, "slow_reply", input={"msg": "m1", "log": []}, config=conf)
    assert _until(lambda: _count(s, "draft") == 1)
    assert c.runs.get(tid, run["run_id"])["status"] == "running"
    return tid, run["run_id"]


def _status(s: AgentServer, tid: str, run_id: str) -> str:
    from langgraph_sdk import get_sync_client
    from langgraph_sdk.errors import NotFoundError

    try:
        return str(get_sync_client(url=s.url).runs.get(tid, run_id)["status"])
    except NotFoundError:
        return "gone"


def test_killed_before_a_flush_the_background_run_and_its_thread_are_gone(server, tmp_path):
    tid, run_id = _start_in_flight(server, tmp_path / "release")
    server.kill()
    server.restart()
    (tmp_path / "release").touch()
    assert _status(server, tid, run_id) == "gone"


def test_killed_after_a_flush_the_background_run_is_resumed_not_re_executed(server, tmp_path):
    tid, run_id = _start_in_flight(server, tmp_path / "release")
    t_running = time.time()
    folder = server.folder / ".langgraph_api"
    names = (".langgraph_ops.pckl", *(f".langgraph_checkpoint.{i}.pckl" for i in (1, 2, 3)))
    assert _until(lambda: all((folder / n).exists() and (folder / n).stat().st_mtime > t_running for n in names), 40)
    server.kill()
    server.restart()
    assert _status(server, tid, run_id) in ("pending", "running")
    (tmp_path / "release").touch()
    assert _until(lambda: _status(server, tid, run_id) == "success")
    assert (_count(server, "draft"), _count(server, "send")) == (1, 1)

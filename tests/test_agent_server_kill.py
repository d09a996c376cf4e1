"""What survives a SIGKILL of ``langgraph dev``: a team's paused approval, read back through the API after a restart.

The in-memory runtime keeps threads, runs and checkpoints in dicts that a background loop writes
to ``.langgraph_api/`` every 10 seconds, and on a clean shutdown (langgraph-runtime-inmem 0.36.7,
``_persistence.py``). Measured here on the real server, through langgraph-sdk only, each on its
own thread of one server:

* paused, then SIGKILLed before the next flush: after the restart on the same folder and port the
  thread is gone (``NotFoundError``): the approval a human was asked for no longer exists;
* paused, flushed (observed: every file of ``.langgraph_api/`` rewritten after the pause), then SIGKILLed: the thread is
  back, still waiting, and answering it pays once;
* paused, then shut down cleanly (SIGTERM): the thread is back, still waiting.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from chaos.envs import python_for
from chaos.racer.protocol import LedgerSpec
from chaos.targets.langgraph_server.host import AgentServer, builtin_config

OPS = Path(".langgraph_api") / ".langgraph_ops.pckl"


@pytest.fixture
def server(tmp_path):
    ledger: LedgerSpec = {"kind": "sqlite", "path": str(tmp_path / "ledger.sqlite")}
    s = AgentServer(python_for("langgraph_server"), tmp_path / "srv", builtin_config(("gate_after_interrupt",)), ledger=ledger)
    s.start()
    yield s
    s.stop()


def _client(s: AgentServer):
    from langgraph_sdk import get_sync_client

    return get_sync_client(url=s.url)


def _park(s: AgentServer, name: str) -> str:
    """A thread run to its interrupt, through the runs API, with no read of its state afterwards."""
    import uuid

    c = _client(s)
    tid = str(uuid.uuid4())
    c.threads.create(thread_id=tid)
    conf = {"configurable": {"chaos_trial_id": name, "chaos_racer_id": "park", "chaos_thread_id": name}}
    out = c.runs.wait(tid, "gate_after_interrupt", input={"log": []}, config=conf)
    assert isinstance(out, dict) and out.get("__interrupt__"), out
    return tid


def _found(s: AgentServer, tid: str) -> bool:
    from langgraph_sdk.errors import NotFoundError

    try:
        _client(s).threads.get(tid)
    except NotFoundError:
        return False
    return True


def _flushed_after(s: AgentServer, t_wall: float, files: tuple[str, ...], timeout: float = 40.0) -> bool:
    """Observe a flush of the runtime after ``t_wall``: each of ``files`` in ``.langgraph_api/``
    rewritten since (the loop runs every 10 s and rewrites every file it knows)."""
    folder = s.folder / OPS.parent
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all((folder / f).exists() and (folder / f).stat().st_mtime > t_wall for f in files):
            return True
        time.sleep(0.2)  # the flush is a timer inside the server: there is nothing to wait on but its files
    return False


CHECKPOINT_FILES = tuple(f".langgraph_checkpoint.{i}.pckl" for i in (1, 2, 3))


def test_a_paused_thread_killed_before_the_first_flush_is_gone(server):
    tid = _park(server, "before-flush")
    server.kill()  # a second or two after start: the first flush is due 10 s after it
    server.restart()
    assert not _found(server, tid), "the in-memory runtime kept a thread it had not flushed: its persistence changed"


def test_a_paused_thread_killed_after_a_flush_is_back_and_pays_once(server):
    tid = _park(server, "after-flush")
    t_park = time.time()
    assert _flushed_after(server, t_park, (OPS.name, *CHECKPOINT_FILES)), "no flush of .langgraph_api/ within 40 s"
    server.kill()
    server.restart()
    c = _client(server)
    assert _found(server, tid) and c.threads.get_state(tid)["next"] == ["gate"]
    conf = {"configurable": {"chaos_trial_id": "after-flush", "chaos_racer_id": "r0", "chaos_thread_id": "after-flush"}}
    c.runs.wait(tid, "gate_after_interrupt", command={"resume": "yes"}, config=conf)
    import sqlite3

    assert server.ledger is not None
    rows = sqlite3.connect(server.ledger["path"]).execute("select task, racer_id from effects where trial_id = 'after-flush' order by seq")
    assert [tuple(r) for r in rows] == [("pre", "park"), ("gate", "r0"), ("end", "r0")]


def test_a_state_read_stops_the_checkpoints_flush_and_a_kill_then_loses_the_pause(server):
    tid = _park(server, "read-then-kill")
    c = _client(server)
    assert c.threads.get_state(tid)["next"] == ["gate"]  # a client looks at the pending approval
    t_read = time.time()
    assert _flushed_after(server, t_read, (OPS.name,)), "no flush of the ops file within 40 s"
    assert not any((server.folder / OPS.parent / f).exists() for f in CHECKPOINT_FILES)  # never written
    server.kill()
    server.restart()
    c = _client(server)
    thread = c.threads.get(tid)
    state = c.threads.get_state(tid)
    # the thread record survived and still says interrupted; its checkpoints did not
    assert thread["status"] == "interrupted"
    assert state["next"] == [] and not state["values"] and not (state.get("checkpoint") or {}).get("checkpoint_id"), state


def test_a_paused_thread_survives_a_clean_shutdown(server):
    tid = _park(server, "clean")
    _client(server).threads.get_state(tid)  # even after a state read: the shutdown writes everything
    server.shutdown()
    server.start()
    assert _found(server, tid)
    assert _client(server).threads.get_state(tid)["next"] == ["gate"]

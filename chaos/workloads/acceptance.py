"""The acceptance-ledger recovery: a team's own procedure for a run killed before its first checkpoint.

Why: an API accepts a job (the client holds its id), starts the graph, and the process dies before
LangGraph's first checkpoint is durable. A fresh process finds no checkpoint: ``invoke(None)``
raises ``EmptyInputError`` and the accepted job is known nowhere (LangGraph issue 8764). The fix a
team writes is an acceptance ledger: the job and its payload are recorded, durably, when accepted;
the recovery replays an accepted job whose thread has no checkpoint, and continues one that has.

A workload pair to measure it with the ``first_checkpoint`` kind (FCL judges the procedure):

* ``stock``: the graph alone (``a -> b -> c``, one effect per node); resume with ``none``: a run
  killed before its first checkpoint is lost (FCL violated).
* ``fixed``: the same graph; its factory records the acceptance (thread id, payload) in an SQLite
  file in the trial's scratch folder before the run starts, as the API would when it accepts the
  job (idempotent: every racer of the trial builds the workload). Resume with
  ``app:chaos.workloads.acceptance:recover``: the run is replayed from the ledger (FCL holds).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from chaos.workloads import WorkloadContext
from chaos.workloads.langgraph import LangGraphWorkload, Thread, three_step

LEDGER = "acceptance.sqlite"


def _ledger(scratch: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(scratch / LEDGER, timeout=60, isolation_level=None)
    conn.execute("CREATE TABLE IF NOT EXISTS accepted (thread_id TEXT PRIMARY KEY, payload TEXT NOT NULL, status TEXT NOT NULL)")
    return conn


def stock(ctx: WorkloadContext) -> LangGraphWorkload:
    """The graph without an acceptance ledger."""
    return three_step(ctx)


def fixed(ctx: WorkloadContext) -> LangGraphWorkload:
    """The graph whose job is recorded as accepted before it runs."""
    workload = three_step(ctx)
    if ctx.scratch is not None and ctx.thread_id:  # None while prewarming: nothing is accepted then
        conn = _ledger(ctx.scratch)
        try:
            conn.execute(
                "INSERT OR IGNORE INTO accepted (thread_id, payload, status) VALUES (?, ?, 'accepted')",
                (ctx.thread_id, json.dumps(workload.input)),
            )
        finally:
            conn.close()
    return workload


def recover(ctx: WorkloadContext, thread: Thread) -> object:
    """Replay an accepted job whose thread has no checkpoint; continue one that has; mark it done."""
    if ctx.scratch is None:
        raise RuntimeError("the acceptance ledger needs the trial's scratch folder")
    conn = _ledger(ctx.scratch)
    try:
        row = conn.execute("SELECT payload, status FROM accepted WHERE thread_id = ?", (thread.thread_id,)).fetchone()
        if row is None:
            raise LookupError(f"job {thread.thread_id} was never accepted: nothing to recover")
        payload, status = json.loads(row[0]), row[1]
        if status == "done":
            return None
        out = thread.invoke(payload if thread.checkpoints == 0 else None)
        conn.execute("UPDATE accepted SET status = 'done' WHERE thread_id = ?", (thread.thread_id,))
        return out
    finally:
        conn.close()

"""Saver factories for tests of ``target.saver``: a real SqliteSaver named by a factory (as a team
names its own checkpointer), and factories that get it wrong (not a saver, raising)."""

from __future__ import annotations

import sqlite3
from typing import Any


def sqlite(ctx: Any) -> Any:
    """LangGraph's own SqliteSaver, opened in the trial's folder: the built-in backend's store,
    reached through the factory path (so the two can be compared boundary for boundary)."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(str(ctx.folder / "checkpoints.sqlite"), check_same_thread=False, timeout=60)
    conn.execute("PRAGMA busy_timeout=60000")
    saver = SqliteSaver(conn)
    saver.setup()
    return saver


def not_a_saver(ctx: Any) -> Any:
    """A common mistake: returning the connection instead of the saver."""
    return sqlite3.connect(":memory:")


def raises(ctx: Any) -> Any:
    raise RuntimeError("no credentials for the store")


def remit_gate_sqlite(ctx: Any) -> Any:
    """A team's own REMIT-wrapped SqliteSaver with its cross-process gate (the issue's scenario):
    the saver is the team's; chaos learns REMIT's inspection key from the guard (tests.kits.guards:remit_keys)."""
    import remit
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(str(ctx.folder / "checkpoints.sqlite"), check_same_thread=False, timeout=60)
    conn.execute("PRAGMA busy_timeout=60000")
    saver = remit.wrap(SqliteSaver, conn, cross_process_gate=True)
    saver.setup()
    return saver

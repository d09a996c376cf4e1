"""Guard factories for tests of ``target.guard``: REMIT's gate declared without its inspection key
(what chaos did before issue 25: its own read of the parked thread took the claim), and factories
that get it wrong."""

from __future__ import annotations

from typing import Any

from chaos.targets.langgraph.guards import Guard, load_guard


def remit_gate_blind(ctx: Any) -> Guard:
    """REMIT's cross-process gate, but chaos is not told its inspection key: every read chaos makes
    of the parked thread goes down REMIT's claiming path."""
    gate = load_guard("remit_gate", ctx)
    return Guard(name="remit_gate_blind", wrap=gate.wrap, inspect={}, refuses=gate.refuses)


def not_a_guard(ctx: Any) -> Any:
    return object()


def exits_quietly(ctx: Any) -> Any:
    """A factory that ends its process with status 0 (a library's ``os._exit`` on a missing setting)."""
    import os

    os._exit(0)


def remit_keys(ctx: Any) -> Guard:
    """REMIT applied by the team's own saver factory (target.saver): the guard wraps nothing, it
    tells chaos the inspection key its reads carry and the errors that are REMIT's refusals."""
    import remit

    return Guard(name="remit_keys", wrap=None, inspect={"remit_inspect": True}, refuses=(remit.RemitError,))


class TooLate(RuntimeError):
    """A claim that came after the effect it should have guarded."""


def late_claim(ctx: Any) -> Guard:
    """An app-level guard put in the wrong place: its claim row comes after the gated effect."""
    return Guard(name="late_claim", refuses=(TooLate,))


def gate_then_claim(ctx: Any) -> Any:
    """The gate fires its effect, then claims the thread (a unique row in the trial's scratch
    folder): every racer fires, and every racer but one is refused only after."""
    import sqlite3

    from langgraph.types import interrupt

    from tests.workloads.user_workloads import _gate_graph

    def gate(state):
        value = interrupt({"question": "approve?"})
        ctx.effect("gate", value)
        conn = sqlite3.connect(str(ctx.scratch / "claims.sqlite"), timeout=60)
        try:
            conn.execute("CREATE TABLE IF NOT EXISTS claims (thread TEXT PRIMARY KEY)")
            with conn:
                conn.execute("INSERT INTO claims VALUES (?)", (ctx.thread_id,))
        except sqlite3.IntegrityError:
            raise TooLate(f"thread {ctx.thread_id} is already claimed") from None
        finally:
            conn.close()
        return {"log": ["gate"], "approved": value}

    return _gate_graph(ctx, gate)

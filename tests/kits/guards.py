"""Guard factories for tests of ``target.guard``: REMIT's gate declared without its inspection key
(what chaos did before issue 25: its own read of the parked thread took the claim), and factories
that get it wrong."""

from __future__ import annotations

from typing import Any

from chaos.targets.guards import Guard, load_guard


def remit_gate_blind(ctx: Any) -> Guard:
    """REMIT's cross-process gate, but chaos is not told its inspection key: every read chaos makes
    of the parked thread goes down REMIT's claiming path."""
    gate = load_guard("remit_gate", ctx)
    return Guard(name="remit_gate_blind", wrap=gate.wrap, inspect={}, refuses=gate.refuses)


def not_a_guard(ctx: Any) -> Any:
    return object()


def remit_keys(ctx: Any) -> Guard:
    """REMIT applied by the team's own saver factory (target.saver): the guard wraps nothing, it
    tells chaos the inspection key its reads carry and the errors that are REMIT's refusals."""
    import remit

    return Guard(name="remit_keys", wrap=None, inspect={"remit_inspect": True}, refuses=(remit.RemitError,))

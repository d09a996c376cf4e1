"""The contract every racer-side adapter implements (standard library only).

This is the single documented interface between chaos and a framework. An adapter is a module
``chaos.targets.<framework>`` with ``open_session(spec, barrier, ledger) -> Session``; its light
half is a ``TargetInfo`` in ``chaos.targets`` (backends, workloads, supported kinds and properties,
and the reason for every kind/property it does not support).

Session
-------
``perform(action: dict) -> outcome dict``, ``inspect() -> dict``, ``close()``, and attributes:

* ``fired``: list of ``{"seq": ledger seq, "effect_key": "task" | "task:value"}`` this racer fired.
* ``gated_task``: the task whose effect an interrupt gates (``None`` if the workload has none).
* ``meta``: plain dict of workload facts the kinds need, e.g. ``{"invalid": {"field": "count",
  "value": "oops"}}`` for a workload that writes a schema-breaking value.

Every effect goes through the workload's ``ctx.effect(task, value)`` (ledger append, then the
barrier ``effect(task=X):after``); every persistence write passes ``barrier.hit(name + ":before")``
and ``barrier.hit(name + ":after")`` with content-named boundaries.

Actions (``op``)
----------------
=============  ==========================================================================================
``run``        ``{"op": "run"}``: start the workload with its input.
``resume``     ``{"op": "resume", "form": "none" | "input" | "command", "value": v}``: continue from the
               last checkpoint / run again with the input / answer the pending interrupt with ``v``.
               Optional ``"interrupt": "first" | "<id>"``: address the answer to one interrupt by its
               id (``first``: the thread's first interrupt), as a client replaying its request would;
               raise ``Unsupported`` if the framework has no interrupt ids.
``fork``       ``{"op": "fork", "checkpoint": "interrupt" | "<id>", "value": v, "via": "checkpoint" |
               "explicit"}``: resume from a *past* checkpoint of the same thread with ``v``.
               ``"interrupt"`` names the checkpoint at which the thread's first interrupt was pending
               (before any resume). ``via: checkpoint`` uses the framework's plain addressing (LangGraph:
               ``checkpoint_id`` in the config + ``Command(resume=v)``); ``via: explicit`` uses the
               framework's explicit fork operation (LangGraph: ``update_state`` at that checkpoint,
               then resume the new branch). Outcome adds ``"forked_from": id`` and ``"via"``.
``checkpoints`` ``{"op": "checkpoints"}``: outcome ``status: done`` with ``"checkpoints": [{"id", "step",
               "next": [...], "interrupts": int}]``, newest first.
``inspect``    ``{"op": "inspect"}``: handled by the racer itself (calls ``inspect()``); outcome ``status:
               done`` with ``"inspect": {...}``. Lets one process look at the thread between actions.
``intent``     ``{"op": "intent"}``: what the framework's API can say about retry vs fork, read from the
               API itself (signatures, parameters). Outcome ``status: done`` with ``"intent":
               {"discriminator": str | None, "surface": {name: signature/params, ...}, "note": str}``.
               ``discriminator`` names the parameter that tells a retry from a fork, or ``None``.
=============  ==========================================================================================

An action may carry ``"if": "<status>"``: the racer performs it only if the previous outcome had
that status; and ``"keep_going": true``: later actions run even if this one ends in ``error``
(by default the racer stops at the first ``error`` / ``unsupported``). An op the framework cannot express raises ``Unsupported(reason)``; the racer records
``status: unsupported`` and the kind turns the property into ``unknown`` with that reason.

Outcome of ``perform``::

    {"status": "done" | "interrupted" | "error" | "unsupported",
     "error": {"type", "module", "message", "where"} | None,
     "interrupts": [...],          # pending interrupts after the call, if any
     "interrupt_ids": [...],       # their ids, where the framework has ids
     "observed": {task: value},    # values the workload's nodes saw DURING THIS CALL (resume values)
     "values": {...} | None,       # the thread's state values after the call, if readable
     "checkpoint": id | None}      # the head checkpoint after the call, if the framework has ids
     (+ "checkpoints", "intent", "forked_from", "via", "inspect" for the ops above)

The racer adds ``"fired": [effect_key, ...]`` (the effects this action fired) and ``"action"``.

``inspect()`` returns the durable state of the thread as the framework reports it::

    {"checkpoints": int, "head_step": int | None, "next": [...],
     "completed_tasks": [...],     # tasks recorded complete (the durable frontier)
     "pending_interrupts": int,
     "values": {...} | None,       # durable state values (JSON-safe)
     "checkpoint": id | None,      # head checkpoint id
     "error": {...} | None}        # the thread could not be read: how it failed

When the framework cannot read its own thread (``error`` set), an adapter should still report what
the store holds, read below the framework: ``values`` (with ``"values_source": "saver"``) and
``pending_writes: [[channel, value], ...]``, so a checker can tell persisted from refused.

What each kind needs from an adapter is in its module's docstring (``chaos.kinds.<kind>``, names
in ``chaos.kinds.KINDS``); declare the kind in ``TargetInfo.kinds`` only if it works.

Racers also report ``versions``: ``importlib.metadata`` versions of ``spec["distributions"]``.

Declare in ``TargetInfo``: ``kinds``, ``properties`` (a verdict on a property not listed there is
turned into ``unknown``: list every property you can judge, including the CO/EO/PC/LIVENESS of the
kinds you declare), ``unsupported`` (kind / property / feature such as ``"fork:explicit"`` -> reason), and
``in_process_backends`` (backends whose state dies with the process: contract kinds then run all
their phases in one racer).
"""

from __future__ import annotations

import traceback
from typing import Any, Protocol

OPS = ("run", "resume", "fork", "checkpoints", "inspect", "intent")


class Unsupported(Exception):
    """The framework cannot express this action; the message says why (becomes an ``unknown``)."""


class Session(Protocol):
    fired: list[dict]
    gated_task: str | None
    meta: dict

    def perform(self, action: dict) -> dict: ...
    def inspect(self) -> dict: ...
    def close(self) -> None: ...


def outcome(status: str, *, error: dict | None = None, interrupts: list | None = None, observed: dict | None = None,
            values: Any = None, checkpoint: Any = None, **extra: Any) -> dict:
    """An outcome dict of the documented shape."""
    out = {"status": status, "error": error, "interrupts": interrupts or [], "observed": dict(observed or {}),
           "values": values, "checkpoint": checkpoint}
    out.update(extra)
    return out


def outcome_of_inspect(state: dict) -> dict:
    return outcome("done", values=state.get("values"), checkpoint=state.get("checkpoint"), inspect=state)


def unsupported_outcome(reason: str) -> dict:
    return outcome("unsupported", error={"type": "Unsupported", "module": "chaos", "message": reason, "where": ""})


def error_of(exc: BaseException) -> dict:
    """A JSON-safe description of an exception."""
    tb = traceback.extract_tb(exc.__traceback__)
    where = f"{tb[-1].filename}:{tb[-1].lineno}" if tb else ""
    return {"type": type(exc).__name__, "module": type(exc).__module__, "message": str(exc)[:2000], "where": where}


def jsonable(value: Any) -> Any:
    """Best-effort plain JSON form of a framework value."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:
            return jsonable(dump())
        except Exception:
            pass
    return repr(value)[:500]


_VERSIONS: dict[str, str | None] = {}


def distribution_versions(distributions: list[str] | tuple[str, ...]) -> dict[str, str | None]:
    """The installed version of each distribution in this interpreter (None if absent).

    Read once per process and remembered: a lookup scans the interpreter's metadata folders (about
    3 ms for LangGraph's three distributions, on every racer's path). A warm racer inherits what its
    fork server read when it imported the framework (``prewarm_versions``), which is the version
    of the code it runs even if the package were replaced on disk meanwhile.
    """
    from importlib import metadata

    for dist in distributions:
        if dist not in _VERSIONS:
            try:
                _VERSIONS[dist] = metadata.version(dist)
            except metadata.PackageNotFoundError:
                _VERSIONS[dist] = None
    return {dist: _VERSIONS[dist] for dist in distributions}


def prewarm_versions(framework: str) -> None:
    """For a fork server's ``prewarm``: read the target's distribution versions once, before any fork."""
    from chaos.targets import get_target

    distribution_versions(get_target(framework).distributions)

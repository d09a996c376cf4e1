"""The contract every racer-side adapter implements (standard library only).

This is the single documented interface between chaos and a framework. An adapter is a package
``chaos.targets.<framework>``: its racer half, the module ``session`` (``RacerHalf``, below), has
``open_session(spec, barrier, ledger) -> Session``; its light half is the package's ``INFO``, a
``TargetInfo`` (backends, workloads, supported kinds and properties, and the reason for every
kind/property it does not support).

Session
-------
``perform(action: Action) -> ActionOutcome``, ``inspect() -> InspectResult``, ``close()``, and attributes:

* ``fired``: the effects this racer fired (``Fired``: ledger seq and ``"task"`` / ``"task:value"``).
* ``gated_task``: the task whose effect an interrupt gates (``None`` if the workload has none).
* ``meta``: plain dict of workload facts the kinds need, e.g. ``{"invalid": {"field": "count",
  "value": "oops"}}`` for a workload that writes a schema-breaking value.

Every effect goes through the workload's ``ctx.effect(task, value)`` (ledger append, then the
barrier ``effect(task=X):after``); every persistence write passes ``barrier.hit(name + ":before")``
and ``barrier.hit(name + ":after")`` with content-named boundaries.

Task identity (what PC compares)
--------------------------------
PC asks whether a task the durable state recorded complete at the kill ran again on resume. It
compares tasks by the identity the framework persists for one run of a node (node plus step or
pass), never by effect label, so a loop's next pass is progress, not a rerun. An adapter reports:

* on every effect row, where it fired: the ledger's ``Where`` (``node``, ``namespace`` ``""`` for
  the root, ``task_id``: the framework's identity of that run of the node; ``outside_task``).
  LangGraph passes it to the ledger itself; a session built on ``chaos.targets.common`` sets
  ``EffectRecorder.where`` to a ``() -> Where | None`` that names the task running now;
* in ``inspect``: ``completed_task_ids`` (the identities of every task the durable state records
  complete, in the same form as the rows' ``task_id``) and ``completed_by_namespace`` (node names
  per namespace, for rows without a ``task_id``).

A row whose ``task_id`` is among ``completed_task_ids`` is the violation; a row without one is
compared by node, then by label, as before. Identities by framework: LangGraph, the Pregel task
id; pydantic-graph, the snapshot id (``<node>:<uuid>``, one per pass); CrewAI, ``method#k``
(the k-th completed run of the method, counted as CrewAI counts it: ``from_checkpoint`` restores
the counts, a kickoff by id runs the flow again from its start, ``from_pending`` continues the
durable passes).

Finished: ``inspect`` reports ``ended`` from the framework's own end mark (pydantic-graph's End
snapshot; CrewAI, one of the workload's ``ends`` completed). A sweep whose kill found the run
ended judges LIVENESS "nothing to resume", whatever resuming a finished run then says.

The protocol's shapes are the types of ``chaos.racer.protocol``: ``Action`` (with each op's
meaning: run, resume, fork, checkpoints, inspect, intent), ``ActionOutcome`` (what ``perform``
returns, plus ``fired`` and ``action`` the racer adds), ``InspectResult`` (what ``inspect``
returns, including what to report when the framework cannot read its own thread), ``ErrorInfo``,
``RacerSpec`` and ``RacerResult``. An op the framework cannot express raises
``Unsupported(reason)``; the racer records ``status: unsupported`` and the kind turns the
property into ``unknown`` with that reason.

What each kind needs from an adapter is in its module's docstring (``chaos.kinds.<kind>``, names
in ``chaos.kinds.KINDS``); declare the kind in ``TargetInfo.kinds`` only if it works.

Racers also report ``versions``: ``importlib.metadata`` versions of ``RacerSpec.distributions``.

Declare in ``TargetInfo``: ``kinds``, ``properties`` (a verdict on a property not listed there is
turned into ``unknown``: list every property you can judge, including the CO/EO/PC/LIVENESS of the
kinds you declare), ``unsupported`` (kind / property / feature such as ``"fork:explicit"`` -> reason), and
``in_process_backends`` (backends whose state dies with the process: contract kinds then run all
their phases in one racer).
"""

from __future__ import annotations

import importlib
import traceback
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from chaos.racer.protocol import OPS, Action, ActionOutcome, ErrorInfo, Fired, FrameInfo, InspectResult, OutcomeStatus, RacerSpec
from chaos.racer.redact import redact

if TYPE_CHECKING:
    from chaos.racer.barrier import BarrierClient
    from chaos.racer.ledger import Ledger

__all__ = [
    "OPS",
    "RacerHalf",
    "Session",
    "Unsupported",
    "distribution_versions",
    "error_of",
    "jsonable",
    "load_racer_half",
    "outcome",
    "outcome_of_inspect",
    "prewarm_versions",
    "unsupported_outcome",
]


class Unsupported(Exception):
    """The framework cannot express this action; the message says why (becomes an ``unknown``)."""


class NothingSaved(LookupError):
    """A resume found nothing saved for this run, in a framework that persists nothing itself (the
    application saves its state after a step, and the kill came before the first save). There is no
    run to continue: not the framework's failure (it promised nothing) nor chaos's, so the outcome is
    ``nothing_saved``, never an error to blame."""


@runtime_checkable
class Session(Protocol):
    fired: list[Fired]
    gated_task: str | None
    meta: dict[str, object]

    def perform(self, action: Action) -> ActionOutcome: ...
    def inspect(self) -> InspectResult: ...
    def close(self) -> None: ...


@runtime_checkable
class RacerHalf(Protocol):
    """A framework's racer module (``TargetInfo.module``, its package's ``session``): what a racer and
    the fork server use of it.

    * ``open_session(spec, barrier, ledger)``: the workload over an instrumented persistence layer;
    * ``PRELOAD``: modules its racers import (the fork server imports them once; a held racer before its turn);
    * ``PRELOAD_OPTIONAL``: the same, where one may be absent (a driver only some backends need); ``()`` for none;
    * ``prewarm(only=None)``: build the built-in workloads (or ``only`` that one) in memory, no store,
      no thread, no loop, to fill the caches a racer's first build fills; a no-op where there is nothing to fill.
    """

    PRELOAD: tuple[str, ...]
    PRELOAD_OPTIONAL: tuple[str, ...]

    def open_session(self, spec: RacerSpec, barrier: BarrierClient, ledger: Ledger) -> Session: ...
    def prewarm(self, only: str | None = None) -> None: ...


@runtime_checkable
class PreloadsForFork(Protocol):
    """A racer half whose racers' first call loads a library that starts a thread at import (CrewAI:
    every ``Flow()`` creates its memory, so its first one imports LanceDB and pyarrow, ~3 s of CPU,
    and LanceDB starts its event loop's thread at import). ``preload_for_fork()`` imports it in the
    fork server and stops what the import started there, arranging that each forked racer has it
    running again (the library's own at-fork hook, or one it registers), so a forked racer starts as
    a process that had imported it. The fork server's only (``chaos.racer.forkserver.preload``): a
    racer never calls it. Returns the modules it imported."""

    def preload_for_fork(self) -> list[str]: ...


def load_racer_half(module: str) -> RacerHalf:
    """Import the adapter module ``module``; a ``TypeError`` naming what it lacks if it is no ``RacerHalf``."""
    adapter = importlib.import_module(module)
    if not isinstance(adapter, RacerHalf):
        lacks = [name for name in ("open_session", "PRELOAD", "PRELOAD_OPTIONAL", "prewarm") if not hasattr(adapter, name)]
        raise TypeError(f"adapter module {module} lacks {', '.join(lacks)} (chaos.targets.base.RacerHalf)")
    return adapter


def outcome(
    status: OutcomeStatus,
    *,
    error: ErrorInfo | None = None,
    interrupts: list | None = None,
    observed: dict[str, object] | None = None,
    values: object = None,
    checkpoint: Any = None,
    **extra: object,
) -> ActionOutcome:
    """An ``ActionOutcome``: the six keys every outcome has, then the op's own (``extra``)."""
    out: ActionOutcome = {
        "status": status,
        "error": error,
        "interrupts": interrupts or [],
        "observed": dict(observed or {}),
        "values": values,
        "checkpoint": checkpoint,
    }
    out.update(extra)  # type: ignore[typeddict-item]  # the op's keys (checkpoints, intent, forked_from, ...)
    return out


def outcome_of_inspect(state: InspectResult) -> ActionOutcome:
    """The outcome of the racer's own ``inspect`` op: the state, and its values and head checkpoint."""
    return outcome("done", values=state.get("values"), checkpoint=state.get("checkpoint"), inspect=state)


def nothing_saved_outcome(reason: str) -> ActionOutcome:
    return outcome("nothing_saved", error={"type": "NothingSaved", "module": "chaos", "message": reason, "where": ""})


def unsupported_outcome(reason: str) -> ActionOutcome:
    return outcome("unsupported", error={"type": "Unsupported", "module": "chaos", "message": reason, "where": ""})


def error_of(exc: BaseException) -> ErrorInfo:
    """A JSON-safe description of an exception, with what the orchestrator needs to blame it.

    Besides type, module, message and the innermost ``file:line``: ``frames`` (module, file, line
    and function of each frame, innermost last, at most the last 40), ``chain`` (``module.Type`` of
    each exception it was raised from or during, innermost first), ``errno`` for an ``OSError`` in
    the chain, and ``traceback`` (the formatted traceback, at most 8000 characters).
    ``chaos.running.blame`` reads these to tell the framework's refusal from the user's error, an
    environment fault or chaos's own; nothing is classified here."""
    tb = traceback.extract_tb(exc.__traceback__)
    where = f"{tb[-1].filename}:{tb[-1].lineno}" if tb else ""
    info: ErrorInfo = {
        "type": type(exc).__name__,
        "module": type(exc).__module__,
        "message": _masked(str(exc)[:20000])[:2000],
        "where": where,
    }
    try:
        frames: list[FrameInfo] = [
            {
                "module": str(f.f_globals.get("__name__") or ""),
                "file": f.f_code.co_filename,
                "line": int(line or 0),
                "func": f.f_code.co_name,
            }
            for f, line in traceback.walk_tb(exc.__traceback__)
        ]
        info["frames"] = frames[-40:]
        chain: list[str] = []
        code = None
        seen: set[int] = set()
        e: BaseException | None = exc
        while e is not None and id(e) not in seen and len(chain) < 8:
            seen.add(id(e))
            chain.append(f"{type(e).__module__}.{type(e).__qualname__}")
            if code is None and isinstance(e, OSError) and e.errno is not None:
                code = e.errno
            e = e.__cause__ or e.__context__
        info["chain"] = chain
        if code is not None:
            info["errno"] = code
        info["traceback"] = _masked("".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-40000:])[-8000:]
    except Exception:  # describing an error must never raise
        pass
    return info


def _masked(text: str) -> str:
    """``text`` with its secrets masked before anything cuts it (a cut secret leaks its first half)."""
    try:
        return redact(text)
    except Exception:  # describing an error must never raise
        return "(message not shown: masking it failed)"


def jsonable(value: object) -> object:
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

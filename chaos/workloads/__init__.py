"""Workloads: the small programs a racer runs on the framework under test.

A workload is built by a factory that takes a ``WorkloadContext`` and returns what the target's
adapter expects (for LangGraph: a ``LangGraphWorkload`` or a compiled graph). Built-in workloads
live in ``chaos.workloads.<framework>``; a scenario may instead name a user's factory as
``package.module:factory``, so a team tests its own graph under the same harness.

Every effect a workload performs goes through ``ctx.effect(task, value)``: it appends a row to the
effect ledger, committed before the node returns, and then passes the ``effect(task=...):after``
barrier so a sweep can crash a racer right after the effect and before the framework records it.
A trial may inject a fault on an effect (``effect_fault``): the effect is performed and committed,
its barrier passed, and then ``ctx.effect`` raises ``EffectFault``, as a provider that charged the
card and then timed out would. Which firings fail is counted per trial, across its racers, in the
trial's scratch folder, so a retry or a resume in a fresh process sees the fault as spent.

The public types a team's own app needs live here, one place for every framework (``__all__``)::

    from chaos.workloads import WorkloadContext, LangGraphWorkload, Breakpoint, Edit  # LangGraph
    from chaos.workloads import PGWorkload, PGRun, Deps          # pydantic-graph
    from chaos.workloads import CrewWorkload, CrewRun            # CrewAI Flows
    from chaos.workloads import LlamaWorkload, LlamaThread       # LlamaIndex Workflows
    from chaos.workloads import AutoGenWorkload, AutoGenThread   # AutoGen AgentChat
    from chaos.workloads import DBOSWorkload, DBOSThread         # DBOS Transact
    from chaos.workloads import AFWorkload                       # Microsoft Agent Framework
    from chaos.workloads import Guard                            # a LangGraph guard (target.guard)
    from chaos.workloads import effect, effect_once              # a graph served by the Agent Server
    from chaos.workloads import OpenAIAgentsWorkload, Call, scripted_model  # OpenAI Agents SDK
    from chaos.workloads import StateStore, StoreContext         # its blob store (workload_params.store)
    from chaos.workloads import ADKWorkload, ScriptedLlm         # Google ADK

Each framework's names are imported on first use (PEP 562 ``__getattr__``) from
``chaos.workloads.<framework>``, which imports that framework: importing this package stays
standard-library only, and an app names only its own framework's types.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from chaos.racer.lazy import lazy_attribute

if TYPE_CHECKING:
    from chaos.racer.protocol import RacerSpec
    from chaos.workloads.adk import ADKWorkload, ScriptedLlm
    from chaos.workloads.agent_framework import AFWorkload
    from chaos.workloads.autogen import AutoGenThread, AutoGenWorkload
    from chaos.workloads.crewai import CrewRun, CrewWorkload
    from chaos.workloads.dbos import DBOSThread, DBOSWorkload
    from chaos.workloads.langgraph import Breakpoint, Edit, LangGraphWorkload
    from chaos.workloads.llamaindex import LlamaThread, LlamaWorkload
    from chaos.workloads.openai_agents import Call, OpenAIAgentsWorkload, StateStore, StoreContext, scripted_model
    from chaos.workloads.pydantic_graph import Deps, PGRun, PGWorkload

W = TypeVar("W")  # the adapter's workload type (``build_workload``'s ``expected``)

__all__ = [
    "AFWorkload",
    "ADKWorkload",
    "AutoGenThread",
    "AutoGenWorkload",
    "Breakpoint",
    "Call",
    "CrewRun",
    "CrewWorkload",
    "DBOSThread",
    "DBOSWorkload",
    "Deps",
    "Edit",
    "EffectFault",
    "Guard",
    "LangGraphWorkload",
    "LlamaThread",
    "LlamaWorkload",
    "OpenAIAgentsWorkload",
    "PGRun",
    "PGWorkload",
    "ScriptedLlm",
    "StateStore",
    "StoreContext",
    "WorkloadContext",
    "effect",
    "effect_once",
    "scripted_model",
]

# a team's public type -> the module that defines it (imported, with its framework, on first use)
_PUBLIC = {
    "LangGraphWorkload": "chaos.workloads.langgraph",
    "Breakpoint": "chaos.workloads.langgraph",
    "Edit": "chaos.workloads.langgraph",
    "PGWorkload": "chaos.workloads.pydantic_graph",
    "PGRun": "chaos.workloads.pydantic_graph",
    "Deps": "chaos.workloads.pydantic_graph",
    "CrewWorkload": "chaos.workloads.crewai",
    "CrewRun": "chaos.workloads.crewai",
    "LlamaWorkload": "chaos.workloads.llamaindex",
    "LlamaThread": "chaos.workloads.llamaindex",
    "AutoGenWorkload": "chaos.workloads.autogen",
    "AutoGenThread": "chaos.workloads.autogen",
    "DBOSWorkload": "chaos.workloads.dbos",
    "DBOSThread": "chaos.workloads.dbos",
    "AFWorkload": "chaos.workloads.agent_framework",
    # a team's guard factory returns a Guard (LangGraph's target.guard). These three are not typed
    # under TYPE_CHECKING above: their modules import this package's core (WorkloadContext), and a
    # typed import back to them would close an import loop (tests/test_import_loops.py)
    "Guard": "chaos.targets.langgraph.guards",
    # a team's graph served by the Agent Server counts its effects with these (no WorkloadContext there)
    "effect": "chaos.targets.langgraph_server.app",
    "effect_once": "chaos.targets.langgraph_server.app",
    "OpenAIAgentsWorkload": "chaos.workloads.openai_agents",
    "Call": "chaos.workloads.openai_agents",
    "scripted_model": "chaos.workloads.openai_agents",
    "StateStore": "chaos.workloads.openai_agents",
    "StoreContext": "chaos.workloads.openai_agents",
    "ADKWorkload": "chaos.workloads.adk",
    "ScriptedLlm": "chaos.workloads.adk",
}


def __getattr__(name: str) -> Any:
    return lazy_attribute(__name__, _PUBLIC, globals(), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


class EffectFault(Exception):
    """Raised by ``ctx.effect`` after the effect was performed and committed: the work is done, the
    caller was told it failed. Not an ``OSError``, so LangGraph's default ``RetryPolicy`` retries it
    as it would a provider's timeout surfaced by a client library."""


@dataclass
class FaultCounter:
    """How often each faulted effect has fired in the trial: one byte appended per firing to a file
    of the trial's scratch folder (``O_APPEND``: racers of one trial never lose a count), or in
    memory when there is no scratch folder."""

    folder: Path | None
    counts: dict[str, int] = field(default_factory=dict)

    def bump(self, task: str) -> int:
        """Count one firing of ``task``; returns how many there have been in the trial, this one included."""
        if self.folder is None:
            self.counts[task] = self.counts.get(task, 0) + 1
            return self.counts[task]
        path = self.folder / f"effect-fault-{task.replace('/', '_')}.count"
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, b".")
        finally:
            os.close(fd)
        return path.stat().st_size


@dataclass
class WorkloadContext:
    """What a workload factory gets: the saver to compile with, the effect hook, and where it runs.

    ``trial_id`` / ``thread_id``: the trial and the framework thread this racer works on;
    ``scratch``: a folder of this trial shared by all its racers (created by the racer, empty at
    the trial's start), where a workload keeps its own stores (a dedupe table, an outbox, an
    acceptance ledger) so they survive a kill like the framework's store does. ``None`` where a
    workload is built outside a trial (prewarming)."""

    checkpointer: Any
    effect_hook: Callable[..., None]
    seed: int = 0
    racer_id: str = ""
    params: dict = field(default_factory=dict)
    trial_id: str = ""
    thread_id: str = ""
    scratch: Path | None = None
    observe_hook: Callable[[str, object], None] | None = None
    version: str = "v1"  # which version of the workload to build ("v2": the deploy a resume runs under)
    effect_fault: dict | None = None  # ``EffectFaultSpec``: which effect fails after doing its work
    _faults: FaultCounter | None = field(default=None, repr=False)

    def effect(self, task: str, value: object = None, *, key: str | None = None) -> None:
        """Perform the irreversible effect of ``task`` (for a gated effect, with the resume value).

        ``key``: the effect's identity, when the value is a payload that may differ between runs
        (the post a model wrote, an amount, a timestamp): the idempotency key the team sends its
        provider, or the approved call (an order id, the invoice paid, "the post of topic X"). It
        must be the same in every run that performs this effect, the uninterrupted one and a
        recovery, and differ between two different effects of one label: then chaos counts the
        effect by ``task@key`` and compares its value as a payload (a changed payload is a
        finding). Without it the identity is ``task:value`` (``task`` without a value)."""
        if key is None:
            self.effect_hook(task, value)
        else:
            self.effect_hook(task, value, key=str(key))
        self._inject(task)

    def effect_once(self, task: str, value: object = None, *, key: str | None = None) -> None:
        """The idempotent form: the effect carries an idempotency key (thread, and ``key``, else
        task and value), and a second attempt with the same key is a no-op, as an ``INSERT ... ON
        CONFLICT DO NOTHING`` on a unique key would be. The ``effect(task=...):after`` barrier is
        passed either way."""
        if key is None:
            self.effect_hook(task, value, once=True)
        else:
            self.effect_hook(task, value, once=True, key=str(key))
        self._inject(task)

    def _inject(self, task: str) -> None:
        """The trial's effect fault: raise once the effect is done, for its first ``times`` firings."""
        fault = self.effect_fault
        if not fault or fault.get("task") != task:
            return
        if self._faults is None:
            self._faults = FaultCounter(self.scratch)
        n = self._faults.bump(task)
        if n <= int(fault.get("times", 1)):
            if self.observe_hook is not None:
                self.observe_hook("effect_fault", {"task": task, "firing": n})
            raise EffectFault(f"effect {task!r} was performed, then failed (injected fault, firing {n} of the trial)")

    def observe(self, name: str, value: object = None) -> None:
        """Record a fact (e.g. "the task body ran") without counting it as an effect: it goes into
        the action's outcome (``facts``), never into the effect ledger, and passes no barrier."""
        if self.observe_hook is not None:
            self.observe_hook(name, value)


def scratch_dir(spec: RacerSpec) -> Path | None:
    """The trial's scratch folder (next to its racers' result files), created if missing; None for
    a spec without a result path (written by hand)."""
    if not spec.get("result_path"):
        return None
    path = Path(spec["result_path"]).parent / "scratch"
    path.mkdir(parents=True, exist_ok=True)
    return path


def import_factory(ref: str) -> Callable:
    """Import ``package.module:factory``. Raises ImportError/AttributeError with the reference.

    Only a racer calls this (the orchestrator's checks never execute a user's code)."""
    import importlib

    module_name, _, attr = ref.partition(":")
    if not module_name or not attr:
        raise ValueError(f"workload {ref!r} is not of the form package.module:factory")
    module = importlib.import_module(module_name)
    obj = module
    for part in attr.split("."):
        obj = getattr(obj, part)
    if not callable(obj):
        raise TypeError(f"workload {ref!r} is not callable")
    return obj


def call_factory(ref: str, ctx: object, field: str, made: str, error: type[Exception], *, as_written: str = "") -> object:
    """Import ``package.module:factory`` and call it with ``ctx``: a failure of either is one
    ``error`` naming the scenario ``field``, the reference (``as_written`` in the scenario, when
    ``ref`` resolves an alias of it) and the exception (``made``: what the factory builds, e.g.
    "guard"). Checking what it returned is the caller's."""
    named = as_written or ref
    try:
        factory = import_factory(ref)
    except Exception as exc:
        raise error(f"{field} {named!r} does not import: {type(exc).__name__}: {exc}") from None
    try:
        return factory(ctx)
    except Exception as exc:
        raise error(f"{field} {named!r} raised while building the {made}: {type(exc).__name__}: {exc}") from None


def build_workload(
    spec: RacerSpec, effect_hook: Callable[[str, object], None], builtin: dict, expected: type[W], checkpointer: Any = None
) -> W:
    """Build the racer spec's workload (a built-in name or ``package.module:factory``) and check it
    returned the adapter's workload type."""
    ctx = workload_context(spec, effect_hook, checkpointer)
    name = spec["workload"]
    built = (builtin.get(name) or import_factory(name))(ctx)
    if not isinstance(built, expected):
        raise TypeError(f"workload {name!r} must return {expected.__module__}.{expected.__qualname__}")
    return built


def workload_context(spec: RacerSpec, effect_hook: Callable[..., None], checkpointer: Any = None) -> WorkloadContext:
    """The ``WorkloadContext`` of a racer spec (what its workload factory, and a team's ``resume:
    app:`` recovery, get)."""
    return WorkloadContext(
        checkpointer=checkpointer,
        effect_hook=effect_hook,
        seed=int(spec.get("seed", 0)),
        racer_id=spec["racer_id"],
        params=dict(spec.get("workload_params") or {}),
        trial_id=spec.get("trial_id", ""),
        thread_id=spec["thread_id"],
        scratch=scratch_dir(spec),
        version=spec.get("workload_version") or "v1",
        effect_fault=dict(spec["effect_fault"]) if spec.get("effect_fault") else None,
    )

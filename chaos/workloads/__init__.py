"""Workloads: the small programs a racer runs on the framework under test.

A workload is built by a factory that takes a ``WorkloadContext`` and returns what the target's
adapter expects (for LangGraph: a ``LangGraphWorkload`` or a compiled graph). Built-in workloads
live in ``chaos.workloads.<framework>``; a scenario may instead name a user's factory as
``package.module:factory``, so a team tests its own graph under the same harness.

Every effect a workload performs goes through ``ctx.effect(task, value)``: it appends a row to the
effect ledger, committed before the node returns, and then passes the ``effect(task=...):after``
barrier so a sweep can crash a racer right after the effect and before the framework records it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chaos.racer.protocol import RacerSpec


@dataclass
class WorkloadContext:
    """What a workload factory gets: the saver to compile with and the effect hook."""

    checkpointer: Any
    effect_hook: Callable[..., None]
    seed: int = 0
    racer_id: str = ""
    params: dict = field(default_factory=dict)

    def effect(self, task: str, value: Any = None) -> None:
        """Perform the irreversible effect of ``task`` (for a gated effect, with the resume value)."""
        self.effect_hook(task, value)

    def effect_once(self, task: str, value: Any = None) -> None:
        """The idempotent form: the effect carries an idempotency key (thread, task, value), and a
        second attempt with the same key is a no-op, as an ``INSERT ... ON CONFLICT DO NOTHING``
        on a unique key would be. The ``effect(task=...):after`` barrier is passed either way."""
        self.effect_hook(task, value, once=True)


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


def build_workload(
    spec: RacerSpec, effect_hook: Callable[[str, Any], None], builtin: dict, expected: type, checkpointer: Any = None
) -> Any:
    """Build the racer spec's workload (a built-in name or ``package.module:factory``) and check it
    returned the adapter's workload type."""
    ctx = WorkloadContext(
        checkpointer=checkpointer,
        effect_hook=effect_hook,
        seed=int(spec.get("seed", 0)),
        racer_id=spec["racer_id"],
        params=dict(spec.get("workload_params") or {}),
    )
    name = spec["workload"]
    built = (builtin.get(name) or import_factory(name))(ctx)
    if not isinstance(built, expected):
        raise TypeError(f"workload {name!r} must return {expected.__module__}.{expected.__qualname__}")
    return built

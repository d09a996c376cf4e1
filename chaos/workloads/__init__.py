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
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chaos.racer.protocol import RacerSpec


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
    observe_hook: Callable[[str, Any], None] | None = None
    version: str = "v1"  # which version of the workload to build ("v2": the deploy a resume runs under)

    def effect(self, task: str, value: Any = None) -> None:
        """Perform the irreversible effect of ``task`` (for a gated effect, with the resume value)."""
        self.effect_hook(task, value)

    def effect_once(self, task: str, value: Any = None) -> None:
        """The idempotent form: the effect carries an idempotency key (thread, task, value), and a
        second attempt with the same key is a no-op, as an ``INSERT ... ON CONFLICT DO NOTHING``
        on a unique key would be. The ``effect(task=...):after`` barrier is passed either way."""
        self.effect_hook(task, value, once=True)

    def observe(self, name: str, value: Any = None) -> None:
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
        trial_id=spec.get("trial_id", ""),
        thread_id=spec["thread_id"],
        scratch=scratch_dir(spec),
        version=spec.get("workload_version") or "v1",
    )
    name = spec["workload"]
    built = (builtin.get(name) or import_factory(name))(ctx)
    if not isinstance(built, expected):
        raise TypeError(f"workload {name!r} must return {expected.__module__}.{expected.__qualname__}")
    return built

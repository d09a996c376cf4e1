"""Scenario kinds: the registry, the one list of kind names.

Each kind is one module in this package that holds its runner, its checker and its explanation
(``chaos.kinds.base.Kind``); ``KINDS`` maps its name to that module. Scenario validation, the
orchestrator, analysis, the reports and the explanations all ask here (``get_kind``,
``kind_names``) and never name a kind themselves. Modules are imported on first use, so importing
the registry costs nothing and the scenario model can ask it without an import cycle.

Shared machinery that is not a kind lives beside them and names no kind: ``checking`` (verdicts,
tallies, exit codes, check-safe dispatch), ``sweep`` (crash at each persistence boundary, then
resume), ``faults`` (a sweep's power loss or torn write after the kill, and DU and CV), ``phases``
(a trial as labelled phases in fresh processes or one), ``base`` (the interface). docs/adding-a-kind.md shows how to add one.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from chaos.kinds.base import Kind
    from chaos.records import TrialRecord
    from chaos.running.trial import RunContext
    from chaos.scenario.model import Cell

# name -> module holding ``KIND``. The order is the order users see (error messages, the schema).
KINDS: dict[str, str] = {
    "race": "chaos.kinds.race",
    "kill_sweep": "chaos.kinds.kill_sweep",
    "first_checkpoint": "chaos.kinds.first_checkpoint",
    "fork": "chaos.kinds.fork",
    "invalid_state": "chaos.kinds.invalid_state",
    "stray_resume": "chaos.kinds.stray_resume",
    "recovery_determinism": "chaos.kinds.recovery_determinism",
    "shared_state": "chaos.kinds.shared_state",
    "upgrade": "chaos.kinds.upgrade",
    "failing_effect": "chaos.kinds.failing_effect",
    "double_texting": "chaos.kinds.double_texting",
}


def kind_names() -> tuple[str, ...]:
    return tuple(KINDS)


def get_kind(name: str) -> Kind:
    """The kind called ``name``; ``KeyError`` naming the known kinds if there is none."""
    try:
        module = KINDS[name]
    except KeyError:
        raise KeyError(f"unknown kind {name!r}; known: {', '.join(KINDS)}") from None
    kind: Kind = importlib.import_module(module).KIND
    return kind


def all_kinds() -> list[Kind]:
    return [get_kind(n) for n in KINDS]


def runner_for(kind: str, framework: str | None = None) -> Callable[[RunContext, Cell, set[str]], Iterator[TrialRecord]]:
    """``run_cell`` of ``kind``, or a runner of no trial when ``framework``'s adapter does not
    support the kind (its cell's analysis then reports every property ``unknown`` with the reason)."""
    from chaos.targets import get_target

    if framework is not None and get_target(framework).supports(kind) is not None:
        return _nothing
    host = get_target(framework).cell_host if framework is not None else ""
    if host:  # the cell's racers are clients of a server chaos starts for the cell
        from chaos.workloads import import_factory

        return import_factory(host)(get_kind(kind).run_cell)
    return get_kind(kind).run_cell


def _nothing(ctx: RunContext, cell: Cell, skip: set[str]) -> Iterator[TrialRecord]:
    return iter(())

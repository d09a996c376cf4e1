"""Scenario kinds: the registry, the one list of kind names.

Each kind is one module in this package that holds its runner, its checker and its explanation
(``chaos.kinds.base.Kind``); ``KINDS`` maps its name to that module. Scenario validation, the
orchestrator, analysis, the reports and the explanations all ask here (``get_kind``,
``kind_names``, ``option_owner`` for a kind's own scenario fields, ``property_names`` for what the
reports call each property, gathered from the kinds' checkers) and never name a kind themselves.
Modules are imported on first use, so importing the registry costs nothing and the scenario model
can ask it without an import cycle.

Shared machinery that is not a kind lives beside them and names no kind: ``checking`` (verdicts,
tallies, exit codes, check-safe dispatch), ``sweep`` (crash at each persistence boundary, then
resume), ``faults`` (a sweep's power loss or torn write after the kill, and DU and CV), ``phases``
(a trial as labelled phases in fresh processes or one), ``sweep_options`` (the sweeps' options
model), ``base`` (the interface). docs/adding-a-kind.md shows how to add one.
"""

from __future__ import annotations

import functools
import importlib
from typing import TYPE_CHECKING

from chaos.kinds.base import runner_for  # noqa: F401  (re-exported: the orchestrator asks here)

if TYPE_CHECKING:
    from chaos.kinds.base import Kind, KindOptions, Property

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


def option_models() -> list[type[KindOptions]]:
    """Every kind's options model, once each (the sweeps share theirs), in the registry's order."""
    return list(_option_models(tuple(KINDS.values())))


@functools.cache
def _option_models(modules: tuple[str, ...]) -> tuple[type[KindOptions], ...]:
    # asked for every option of every validated cell: computed once per registry (its modules are the key)
    return tuple(dict.fromkeys(importlib.import_module(m).KIND.Options for m in modules))


def option_owner(key: str) -> type[KindOptions]:
    """The options model that declares the scenario field ``key``; ``KeyError`` when none does."""
    for model in option_models():
        if key in model.model_fields:
            return model
    raise KeyError(f"no kind declares the option {key!r}")


def option_readers(key: str) -> list[str]:
    """The kinds that read the option ``key`` (whose options model declares it)."""
    return [k.name for k in all_kinds() if key in k.Options.model_fields]


def properties() -> dict[str, Property]:
    """Every property a kind's checkers judge, by code, in the registry's order (a code shared by
    several kinds is one property: they must agree on its name)."""
    return dict(_properties(tuple(KINDS.values())))


@functools.cache
def _properties(modules: tuple[str, ...]) -> tuple[tuple[str, Property], ...]:
    # asked for every verdict a report names: computed once per registry (its modules are the key)
    out: dict[str, Property] = {}
    for kind in (importlib.import_module(m).KIND for m in modules):
        for p in (c.property for c in kind.checks):
            known = out.setdefault(p.code, p)
            if known.name != p.name:
                raise ValueError(f"property {p.code} is named {known.name!r} and {p.name!r} by two kinds")
    return tuple(out.items())


def property_names() -> dict[str, str]:
    """Code -> name of every property (shown beside the code in every report)."""
    return {code: p.name for code, p in properties().items()}

"""LangGraph's own scenario options: ``durability``, ``saver`` and ``guard`` of ``target:``.

Why: they are LangGraph's alone, so they are declared here and not on the shared ``TargetSpec``,
the way a kind declares its options (``chaos.kinds.base.TargetOptions``). The scenario file does
not change (``target: {durability: exit, saver: ..., guard: ...}``); every reader reads them typed,
``Options.of(scenario)``. A framework that does not read one refuses it at load (its ``unread_fields``).

Orchestrator side: never imported by a racer (racers read the target as JSON).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from chaos.kinds.base import TargetOptions

if TYPE_CHECKING:
    from chaos.scenario.model import Scenario

MAX_REF = 300  # a package.module:factory reference


class Options(TargetOptions):
    """LangGraph's own options: how durable each step is, a team's own saver, a guard around the saver."""

    durability: Literal["sync", "async", "exit", "default"] = Field(
        "sync",
        description="LangGraph's durability mode; 'default': chaos passes none, so the graph runs as in production "
        "(LangGraph's default, or what the user's graph was built with). Left out: 'default' for a user's workload "
        "(package.module:factory), so a team measures its graph as it ships; 'sync' for a built-in workload, the "
        "measurement instruments, whose kill points rely on every step being durable before the next one starts",
    )
    saver: str | None = Field(
        None,
        max_length=MAX_REF,
        description="LangGraph: package.module:factory returning a BaseCheckpointSaver given a SaverContext "
        "(chaos.targets.langgraph.custom_saver); chaos wraps it with its barriers. Sets backend to 'saver'",
    )
    guard: str | None = Field(
        None,
        max_length=MAX_REF,
        description="LangGraph: a guard measured beside stock (chaos.targets.langgraph.guards): a built-in (remit, remit_gate, "
        "remit_validator, remit_fork_flag: REMIT, with remit-contract in requirements) or package.module:factory returning a Guard; "
        "'none' (or left out) is stock. A matrix axis 'guard' runs stock and guarded in one scenario",
    )

    @classmethod
    def before(cls, target: dict[str, Any]) -> dict[str, Any]:
        """A saver factory replaces the backend: ``backend`` left out is ``saver``."""
        if target.get("saver") and "backend" not in target:
            return {**target, "backend": "saver"}
        return target

    @classmethod
    def implied(cls, scenario: Scenario, left_out: set[str]) -> dict[str, Any]:
        """``durability`` left out: ``default`` for a team's own workload (its graph as it ships),
        ``sync`` for a built-in (see ``durability``)."""
        from chaos.scenario.model import is_user_workload

        return {"durability": "default"} if "durability" in left_out and is_user_workload(scenario.workload) else {}

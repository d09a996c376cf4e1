"""Built-in LangGraph workloads.

* ``gate_after_interrupt``: pre -> gate -> end. ``gate`` calls ``interrupt()`` and, once resumed,
  fires its effect keyed by the resume value (``gate:True``): the effect a human approval guards.
* ``three_step``: a -> b -> c, each firing one effect: the simplest workflow whose completed steps
  must not run again after a crash.

Each node fires its effect before it returns, through ``ctx.effect``.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Annotated, Any, TypedDict

from chaos.workloads import WorkloadContext


@dataclass
class LangGraphWorkload:
    """A compiled graph, the input that starts it, and which task's effect an interrupt gates."""

    graph: Any
    input: Any = field(default_factory=dict)
    gated_task: str | None = None
    meta: dict = field(default_factory=dict)


class GateState(TypedDict, total=False):
    log: Annotated[list, operator.add]
    approved: Any


class StepState(TypedDict, total=False):
    log: Annotated[list, operator.add]


def gate_after_interrupt(ctx: WorkloadContext) -> LangGraphWorkload:
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    def pre(state: GateState) -> dict:
        ctx.effect("pre")
        return {"log": ["pre"]}

    def gate(state: GateState) -> dict:
        value = interrupt({"question": "approve?"})
        ctx.effect("gate", value)
        return {"log": ["gate"], "approved": value}

    def end(state: GateState) -> dict:
        ctx.effect("end")
        return {"log": ["end"]}

    g = StateGraph(GateState)
    g.add_node("pre", pre)
    g.add_node("gate", gate)
    g.add_node("end", end)
    g.add_edge(START, "pre")
    g.add_edge("pre", "gate")
    g.add_edge("gate", "end")
    g.add_edge("end", END)
    return LangGraphWorkload(graph=g.compile(checkpointer=ctx.checkpointer), input={"log": []}, gated_task="gate")


def three_step(ctx: WorkloadContext) -> LangGraphWorkload:
    from langgraph.graph import END, START, StateGraph

    def make(name: str):
        def node(state: StepState) -> dict:
            ctx.effect(name)
            return {"log": [name]}

        return node

    g = StateGraph(StepState)
    for name in ("a", "b", "c"):
        g.add_node(name, make(name))
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    g.add_edge("c", END)
    return LangGraphWorkload(graph=g.compile(checkpointer=ctx.checkpointer), input={"log": []})


BUILTIN = {
    "gate_after_interrupt": gate_after_interrupt,
    "three_step": three_step,
}

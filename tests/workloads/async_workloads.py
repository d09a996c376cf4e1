"""A gate workload that reports which saver class the racer handed it (``ctx.observe``), so a test
of the async backends sees the racers really ran AsyncSqliteSaver / AsyncPostgresSaver.

``observed_gate``: pre -> gate (interrupt(), then its effect) -> end, like the built-in
``gate_after_interrupt``; ``gate`` also observes the saver's class.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict


class S(TypedDict, total=False):
    log: Annotated[list, operator.add]
    approved: Any


def observed_gate(ctx):
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    from chaos.workloads.langgraph import LangGraphWorkload

    saver_class = type(ctx.checkpointer).__mro__[1].__name__  # [0] is chaos's instrumented subclass

    def pre(state):
        ctx.effect("pre")
        return {"log": ["pre"]}

    def gate(state):
        value = interrupt({"question": "approve?"})
        ctx.observe("saver", saver_class)
        ctx.effect("gate", value)
        return {"log": ["gate"], "approved": value}

    def end(state):
        ctx.effect("end")
        return {"log": ["end"]}

    g = StateGraph(S)
    g.add_node("pre", pre)
    g.add_node("gate", gate)
    g.add_node("end", end)
    g.add_edge(START, "pre")
    g.add_edge("pre", "gate")
    g.add_edge("gate", "end")
    g.add_edge("end", END)
    return LangGraphWorkload(graph=g.compile(checkpointer=ctx.checkpointer), input={"log": []}, gated_task="gate", max_concurrency=1)

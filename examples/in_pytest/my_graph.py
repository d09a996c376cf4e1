"""A team's graph, as a chaos workload factory: charge a card, then e-mail a receipt.

Compiled with ``ctx.checkpointer``; each irreversible effect goes through ``ctx.effect`` so chaos
counts it. A crash between ``charge`` firing and its checkpoint being written fires it again on
resume: the EO violation the example's baseline accepts.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict


class State(TypedDict, total=False):
    log: Annotated[list, operator.add]


def checkout(ctx: Any) -> Any:
    from langgraph.graph import END, START, StateGraph

    def charge(state: State) -> State:
        ctx.effect("charge")
        return {"log": ["charge"]}

    def receipt(state: State) -> State:
        ctx.effect("receipt")
        return {"log": ["receipt"]}

    g = StateGraph(State)
    g.add_node("charge", charge)
    g.add_node("receipt", receipt)
    g.add_edge(START, "charge")
    g.add_edge("charge", "receipt")
    g.add_edge("receipt", END)
    return g.compile(checkpointer=ctx.checkpointer)

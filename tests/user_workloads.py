"""Workloads a user would write: imported by racers as ``user_workloads:factory``."""

from __future__ import annotations

import operator
from typing import Annotated, TypedDict


class S(TypedDict, total=False):
    log: Annotated[list, operator.add]


def two_step(ctx):
    """A user's own graph: compiled with ctx.checkpointer, one effect per node."""
    from langgraph.graph import END, START, StateGraph

    def charge(state):
        ctx.effect("charge")
        return {"log": ["charge"]}

    def email(state):
        ctx.effect("email")
        return {"log": ["email"]}

    g = StateGraph(S)
    g.add_node("charge", charge)
    g.add_node("email", email)
    g.add_edge(START, "charge")
    g.add_edge("charge", "email")
    g.add_edge("email", END)
    return g.compile(checkpointer=ctx.checkpointer)


def broken_at_build(ctx):
    raise RuntimeError("this workload cannot be built")

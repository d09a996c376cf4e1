"""A LangGraph app whose one approval notifies the requester twice, and the team's own resume
driver, which answers by itself (``resume: app:`` with no ``answers:`` plan).

``notify_twice``: ``review`` asks for approval (``interrupt``), then notifies the requester;
``close`` notifies the requester again (the same message: one effect identity, twice), as an app
that sends "approved" from the review and again from the closing step. An uninterrupted run that
answers fires ``notify:approved`` twice by itself.

``approve``: the team's driver: starts the run when nothing is saved, approves the pause it finds,
or carries the thread on. It needs no answer from chaos; so the uninterrupted run chaos makes
without a plan stops at the pause (nobody answers it), and says nothing of what one answer fires.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict


class State(TypedDict, total=False):
    log: Annotated[list, operator.add]


def notify_twice(ctx: Any) -> Any:
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    from chaos.workloads.langgraph import LangGraphWorkload

    def review(state: State) -> dict:
        answer = interrupt("approve the request?")
        ctx.effect("notify", answer)
        return {"log": [f"review:{answer}"]}

    def close(state: State) -> dict:
        ctx.effect("notify", "approve")
        return {"log": ["closed"]}

    g = StateGraph(State)
    g.add_node("review", review)
    g.add_node("close", close)
    g.add_edge(START, "review")
    g.add_edge("review", "close")
    g.add_edge("close", END)
    return LangGraphWorkload(graph=g.compile(checkpointer=ctx.checkpointer), input={"log": []}, gated_task="notify")


def approve(ctx: Any, thread: Any) -> Any:
    """The team's driver: start, approve the pause, or carry on, by what the thread has saved."""
    from langgraph.types import Command

    if not thread.checkpoints:
        return thread.invoke(thread.input)
    snap = thread.graph.get_state(thread.config)
    if snap.interrupts:
        return thread.invoke(Command(resume="approve"))
    return thread.invoke(None) if snap.next else None

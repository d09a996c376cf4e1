"""Graphs shaped like a team's own (an approval subgraph, routing by ``Command(goto=...)``): the
workloads of the LangGraph adapter's tests (``tests/test_graph_adapter.py``).

``approvals``: ``triage`` routes with ``Command(goto="response_agent")`` into a subgraph whose
``interrupt_handler`` asks for approval of a payment (an ``interrupt()``), fires ``send_payment``
with the answer, and whose ``confirm`` asks a second approval and fires ``send_email`` with it.
``triage`` also notes a fact (``ctx.observe``), writes a file into ``ctx.scratch``, and fires
``audit`` from a thread it starts: an effect outside any running task. Its ``answer`` callable
approves a payment with ``"pay"`` and an e-mail with ``"mail"``.

``payment_approvals``: the same graph with every effect fired inside its node (no ``audit`` from a
thread): a graph wired as chaos asks, which a preflight accepts and a sweep can judge.
"""

from __future__ import annotations

import operator
import threading
from typing import Annotated, TypedDict


class S(TypedDict, total=False):
    log: Annotated[list, operator.add]


def approvals(ctx):
    return _approvals(ctx, audit_from_thread=True)


def payment_approvals(ctx):
    return _approvals(ctx, audit_from_thread=False)


def _approvals(ctx, audit_from_thread: bool):
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Command, interrupt

    from chaos.workloads.langgraph import LangGraphWorkload

    def interrupt_handler(state):
        value = interrupt({"action": "send_payment", "question": "approve the payment?"})
        ctx.effect("send_payment", value)
        return {"log": [f"paid:{value}"]}

    def confirm(state):
        value = interrupt({"action": "send_email", "question": "send the e-mail?"})
        ctx.effect("send_email", value)
        return {"log": [f"mailed:{value}"]}

    sg = StateGraph(S)
    sg.add_node("interrupt_handler", interrupt_handler)
    sg.add_node("confirm", confirm)
    sg.add_edge(START, "interrupt_handler")
    sg.add_edge("interrupt_handler", "confirm")
    sg.add_edge("confirm", END)
    response_agent = sg.compile()

    def triage(state) -> Command:
        ctx.observe("triage ran", ctx.thread_id)
        if ctx.scratch is not None:
            (ctx.scratch / "triage.txt").write_text(ctx.trial_id)
        if audit_from_thread:
            t = threading.Thread(target=ctx.effect, args=("audit",))
            t.start()
            t.join()  # the effect fired on a thread LangGraph knows nothing of
        return Command(goto="response_agent", update={"log": ["triage"]})

    g = StateGraph(S)
    g.add_node("triage", triage, destinations=("response_agent",))
    g.add_node("response_agent", response_agent)
    g.add_edge(START, "triage")
    g.add_edge("response_agent", END)

    def answer(intr):
        return {"send_payment": "pay", "send_email": "mail"}[intr.value["action"]]

    return LangGraphWorkload(graph=g.compile(checkpointer=ctx.checkpointer), input={"log": []}, gated_task="send_payment", answer=answer)

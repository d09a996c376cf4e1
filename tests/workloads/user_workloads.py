"""Workloads a team would write for its own graphs: the one user-workload module of the tests.

A scenario names a factory as ``package.module:factory``. The tests use this module two ways, as a
user would: copied beside a scenario and named ``user_workloads:two_step``, or from the repository
root as ``tests.workloads.user_workloads:hang_forever``.

``two_step``: charge -> email, one effect per node, compiled with ``ctx.checkpointer``.
``broken_at_build``: a factory that raises, so its cell fails once with the reason.
``hang_forever``: a -> b where ``a`` fires its effect and then blocks forever, so a racer never
exits on its own: the harness must kill it after ``timeout_s`` and record the trial as hung.
``approval_reads_amount``: a gate whose node reads ``value["amount"]`` from the resume value: a
plain string answer raises ``TypeError`` in the user's node (an app error, never the framework's).
``approval_dies_on_r1``: a gate whose node, resumed with a value ending in ``#r1``, is SIGKILLed
from inside before it fires, as the OOM killer would do it (a signal chaos did not send).
A module whose import fails lives apart (``tests.workloads.broken_import``): it cannot share a
module with factories that must import.
"""

from __future__ import annotations

import operator
import threading
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


def hang_forever(ctx):
    """A workload whose first node never returns (built with chaos's own LangGraph wrapper)."""
    from langgraph.graph import END, START, StateGraph

    from chaos.workloads.langgraph import LangGraphWorkload, StepState

    def a(state):
        ctx.effect("a")
        threading.Event().wait()  # blocks forever: the node never returns
        return {"log": ["a"]}

    def b(state):
        ctx.effect("b")
        return {"log": ["b"]}

    g = StateGraph(StepState)
    g.add_node("a", a)
    g.add_node("b", b)
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", END)
    return LangGraphWorkload(graph=g.compile(checkpointer=ctx.checkpointer), input={"log": []})


def _gate_graph(ctx, gate):
    from langgraph.graph import END, START, StateGraph

    from chaos.workloads.langgraph import GateState, LangGraphWorkload

    def pre(state):
        ctx.effect("pre")
        return {"log": ["pre"]}

    g = StateGraph(GateState)
    g.add_node("pre", pre)
    g.add_node("gate", gate)
    g.add_edge(START, "pre")
    g.add_edge("pre", "gate")
    g.add_edge("gate", END)
    return LangGraphWorkload(graph=g.compile(checkpointer=ctx.checkpointer), input={"log": []}, gated_task="gate")


def approval_reads_amount(ctx):
    """The user's node expects a mapping as the answer; a plain string makes it raise TypeError."""
    from langgraph.types import interrupt

    def gate(state):
        answer = interrupt({"question": "approve the payment?"})
        amount = answer["amount"]  # TypeError on a str answer: the user's bug, not the framework's
        ctx.effect("gate", amount)
        return {"log": ["gate"], "approved": amount}

    return _gate_graph(ctx, gate)


def approval_dies_on_r1(ctx):
    """The racer answering with a value ending in ``#r1`` is SIGKILLed while its node runs."""
    import os
    import signal

    from langgraph.types import interrupt

    def gate(state):
        answer = interrupt({"question": "approve?"})
        if str(answer).endswith("#r1"):
            os.kill(os.getpid(), signal.SIGKILL)  # what the OOM killer does: nothing chaos sent
        ctx.effect("gate", answer)
        return {"log": ["gate"], "approved": answer}

    return _gate_graph(ctx, gate)

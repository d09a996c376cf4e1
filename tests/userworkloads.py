"""User workload factories (``tests.userworkloads:NAME``), as a team would write its own.

``hang_forever``: a -> b where ``a`` fires its effect and then blocks forever, so a racer never
exits on its own: the harness must kill it after ``timeout_s`` and record the trial as hung.
``broken_import`` lives in its own module (``tests.userworkloads_broken``), whose import fails.
"""

from __future__ import annotations

import threading


def hang_forever(ctx):
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

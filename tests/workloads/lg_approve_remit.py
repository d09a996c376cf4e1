"""LangGraph's "approve or reject" human-in-the-loop example, ported, checkpointed by the team's own
REMIT-guarded saver.

The graph is the docs' (LangGraph, "Human-in-the-loop: approve or reject",
https://langchain-ai.github.io/langgraph/how-tos/human_in_the_loop/add-human-in-the-loop/):
``generate_llm_output`` -> ``human_approval`` (``interrupt({"question": ..., "llm_output": ...})``,
then ``Command(goto=...)``) -> ``approved_path`` or ``rejected_path`` -> END. The LLM is faked (a
fixed output), and the approved path sends what was approved (effect ``send``).

``remit_saver`` is the saver as a team writes it when it adopts REMIT's cross-process gate
(``remit-contract``): ``remit.wrap(SqliteSaver, conn, cross_process_gate=True)`` in its own factory
(``target.saver``), with no ``target.guard``: chaos is told nothing about the guard.
"""

from __future__ import annotations

import sqlite3
from typing import Any, Literal, TypedDict


class State(TypedDict, total=False):
    llm_output: str
    decision: str


def approve_or_reject(ctx: Any) -> Any:
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Command, interrupt

    from chaos.workloads.langgraph import LangGraphWorkload

    def generate_llm_output(state: State) -> State:
        return {"llm_output": "This is the generated output."}  # the docs' fake LLM output

    def human_approval(state: State) -> Command[Literal["approved_path", "rejected_path"]]:
        decision = interrupt({"question": "Do you approve the following output?", "llm_output": state["llm_output"]})
        if decision == "approve":
            return Command(goto="approved_path", update={"decision": "approved"})
        return Command(goto="rejected_path", update={"decision": "rejected"})

    def approved_path(state: State) -> State:
        ctx.effect("send", state["llm_output"])
        return {}

    def rejected_path(state: State) -> State:
        return {}

    builder = StateGraph(State)
    builder.add_node("generate_llm_output", generate_llm_output)
    builder.add_node("human_approval", human_approval)
    builder.add_node("approved_path", approved_path)
    builder.add_node("rejected_path", rejected_path)
    builder.add_edge(START, "generate_llm_output")
    builder.add_edge("generate_llm_output", "human_approval")
    builder.add_edge("approved_path", END)
    builder.add_edge("rejected_path", END)
    graph = builder.compile(checkpointer=ctx.checkpointer)
    return LangGraphWorkload(graph=graph, input={}, gated_task="send")


def remit_saver(ctx: Any) -> Any:
    """The team's checkpointer: LangGraph's SqliteSaver under REMIT's cross-process gate."""
    import remit
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(str(ctx.folder / "checkpoints.sqlite"), check_same_thread=False, timeout=60)
    conn.execute("PRAGMA busy_timeout=60000")
    saver = remit.wrap(SqliteSaver, conn, cross_process_gate=True)
    saver.setup()
    return saver

"""Built-in LangGraph workloads with parallel branches, run as LangGraph runs them in production.

A crash in a step that runs several tasks at once lands wherever the scheduler happens to be: one
branch has fired its effect and saved its writes, another has fired but not saved, a third has not
started. These workloads leave LangGraph's default concurrency in place (``max_concurrency=None``:
every task of a step on the loop's thread pool), so a sweep over them measures that, and a sweep
with ``trials`` repeats per kill point reports how often each outcome came (``PointResult.distribution``).
Their effects are keyed by branch (``worker:1``, ``tool:lookup_fare``), so a duplicate says which
branch ran twice.

* ``parallel_send``: plan -> ``Send("worker", i)`` for i in 0..2 (a map step) -> join. Each worker
  fires ``worker:<i>``; plan and join fire their own.
* ``parallel_send_idempotent``: the same with idempotent effects (``ctx.effect_once``): the
  harness's control, where no kill point may show a duplicate whatever the interleaving.
* ``parallel_tools``: an agent whose fake chat model (langchain_core's ``FakeMessagesListChatModel``)
  plans three tool calls in one ``AIMessage``; LangGraph's ``ToolNode`` runs them at once (one task,
  its calls on the executor), each tool firing ``tool:<name>``; the agent then answers.
* ``parallel_gate``: four branches in one step, ``w0``, ``w1``, ``w2`` and ``gate`` (``interrupt()``,
  then ``gate:<answer>``), then join. The shape of LangGraph issue 8115: when the step stops at the
  interrupt, the finished branches' pending writes are what the resume must replay. Under
  ``durability: exit`` they are written only as the run exits, one ``put_writes`` per branch from
  ``PregelLoop.checkpoint_pending_writes`` (the list 8115's unguarded rebind can drop a branch
  from), so a kill between those writes decides which branch's write survives; under ``sync``
  each branch's writes are saved as it finishes.

``BRANCHES`` names them: a scenario that runs one on a framework without parallel branches is
refused when it loads (``chaos.targets``).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, TypedDict

from chaos.workloads import WorkloadContext

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

    from chaos.workloads.langgraph import LangGraphWorkload

WORKERS = 3
TOOLS = ("lookup_fare", "reserve_seat", "notify_crew")


class FanState(TypedDict, total=False):
    log: Annotated[list, operator.add]
    item: int


def parallel_send(ctx: WorkloadContext, *, idempotent: bool = False) -> LangGraphWorkload:
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Send

    from chaos.workloads.langgraph import LangGraphWorkload

    fire = ctx.effect_once if idempotent else ctx.effect

    def plan(state: FanState) -> dict:
        fire("plan")
        return {"log": ["plan"]}

    def fan_out(state: FanState) -> list:
        return [Send("worker", {"item": i}) for i in range(WORKERS)]

    def worker(state: FanState) -> dict:
        fire("worker", state["item"])
        return {"log": [f"worker:{state['item']}"]}

    def join(state: FanState) -> dict:
        fire("join")
        return {"log": ["join"]}

    g = StateGraph(FanState)
    g.add_node("plan", plan)
    g.add_node("worker", worker)
    g.add_node("join", join)
    g.add_edge(START, "plan")
    g.add_conditional_edges("plan", fan_out, ["worker"])
    g.add_edge("worker", "join")
    g.add_edge("join", END)
    return LangGraphWorkload(graph=g.compile(checkpointer=ctx.checkpointer), input={"log": []}, max_concurrency=None)


def parallel_send_idempotent(ctx: WorkloadContext) -> LangGraphWorkload:
    return parallel_send(ctx, idempotent=True)


def parallel_tools(ctx: WorkloadContext) -> LangGraphWorkload:
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage, ToolMessage
    from langchain_core.tools import tool
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    from chaos.workloads.langgraph import LangGraphWorkload

    plan = [{"name": name, "args": {"flight": "LX 38"}, "id": f"call-{i}"} for i, name in enumerate(TOOLS)]
    # two models, so the answer depends on the thread's state, not on how many calls this process made
    # (a fresh process after a crash starts a model's reply list again)
    planner = FakeMessagesListChatModel(responses=[AIMessage(content="", tool_calls=plan)])
    answerer = FakeMessagesListChatModel(responses=[AIMessage(content="booked: fare found, seat reserved, crew told")])

    def make(name: str) -> BaseTool:
        def run(flight: str) -> str:
            ctx.effect("tool", name)
            return f"{name} done for {flight}"

        run.__name__ = name
        run.__doc__ = f"{name.replace('_', ' ')} for a flight."
        return tool(run)

    def agent(state: MessagesState) -> dict:
        answered = any(isinstance(m, ToolMessage) for m in state["messages"])
        return {"messages": [(answerer if answered else planner).invoke(state["messages"])]}

    g = StateGraph(MessagesState)
    g.add_node("agent", agent)
    g.add_node("tools", ToolNode([make(n) for n in TOOLS]))
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", tools_condition, ["tools", END])
    g.add_edge("tools", "agent")
    return LangGraphWorkload(
        graph=g.compile(checkpointer=ctx.checkpointer), input={"messages": [("user", "book LX 38")]}, max_concurrency=None
    )


def parallel_gate(ctx: WorkloadContext) -> LangGraphWorkload:
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    from chaos.workloads.langgraph import LangGraphWorkload

    def make(name: str) -> Callable[..., dict]:
        def branch(state: FanState) -> dict:
            ctx.effect(name)
            return {"log": [name]}

        return branch

    def gate(state: FanState) -> dict:
        value = interrupt({"question": "approve?"})
        ctx.effect("gate", value)
        return {"log": ["gate"]}

    def join(state: FanState) -> dict:
        ctx.effect("join")
        return {"log": ["join"]}

    g = StateGraph(FanState)
    branches = [f"w{i}" for i in range(WORKERS)]
    for name in branches:
        g.add_node(name, make(name))
    g.add_node("gate", gate)
    g.add_node("join", join)
    for name in (*branches, "gate"):
        g.add_edge(START, name)
    g.add_edge([*branches, "gate"], "join")
    g.add_edge("join", END)
    return LangGraphWorkload(graph=g.compile(checkpointer=ctx.checkpointer), input={"log": []}, gated_task="gate", max_concurrency=None)


PARALLEL = {
    "parallel_send": parallel_send,
    "parallel_send_idempotent": parallel_send_idempotent,
    "parallel_tools": parallel_tools,
    "parallel_gate": parallel_gate,
}

"""Built-in LangGraph workloads of agents that share state: the ``shared_state`` kind runs them.

Why: multi-agent systems share a memory store, a shared record (a trip's dates) or a tool registry
across threads. An agent reads that state, spends seconds generating, then writes or acts. These
workloads are such agents on LangGraph, over a real shared ``BaseStore`` (LangGraph's
``SqliteStore`` on one file every agent of a trial opens; an ``InMemoryStore`` when no shared file
is given, which shares nothing across processes). Each agent is one racer (its own process, its
own graph thread); its role comes from ``workload_params["agent"]``.

What it promises: every operation on the shared state goes to the effect ledger as one row
(``ss.read``: key and version seen; ``ss.write``: key, the version it was computed from and the
version written; ``ss.effect``: an external effect and the versions it was computed from;
``ss.retry`` / ``ss.wait`` / ``ss.park``: what a guard cost), through ``ctx.effect``, so the rows are committed
in the order the operations happened and each row passes the barrier ``effect(task=ss.X):after``.
A read (and a wait) is where the agent "generates": the ``shared_state`` kind arms those
barriers, so the racer stops there until the orchestrator's schedule continues it. Nothing sleeps.

Workloads (``<anomaly>`` stock, ``<anomaly>_cas`` validated at commit, ``<anomaly>_lock``
pessimistic lock held from read to commit; guards use an ``fcntl`` lock on a file beside the store):

* ``shared_lost_update``: every agent reads the shared memory record, generates one fact with a
  fake chat model and writes the record back with its fact added (deer-flow's memory update).
* ``shared_stale_generation``: agent 0 (the user) moves the trip's date; the others (flight agents)
  read the trip, draft a booking with a fake chat model and book it (an external effect).
* ``shared_phantom_tool``: agent 0 (the admin) removes the ``refund`` tool from the shared tool
  registry; the others read the registry, a fake model plans a ``refund`` tool call if the tool is
  listed, and the agent calls it (an external effect).
* ``shared_causal_cascade``: agent 0 places a tentative hold on the trip, then (re-reading it)
  rolls the hold back; the others read the trip and book with what they read.
* ``shared_tool_reorder``: every agent reads the order, a fake chat model plans two tool calls in
  one message (``reserve_seat`` then ``charge_card``), and LangGraph's ``ToolNode`` runs them in
  parallel. Each tool waits for its external service's response, then fires its effect; the
  services answer in the order ``workload_params["responses"]`` gives (the orchestrator's choice,
  a permutation of the plan): the response due next arrives once the tool answered before it has
  settled (fired, or parked for its turn). ``shared_tool_reorder_seq`` is the guarded twin: a
  commit-order sequencer lets each tool fire only after the tools planned before it fired.

``steps`` and ``tool_calls`` (read by the orchestrator, no framework import) give how many times
each agent stops (its reads) plus one, the steps of a schedule, and how many tool calls a plan has.
"""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar

from chaos.workloads import WorkloadContext

T = TypeVar("T")  # what a plan computes from a read, and its act takes

if TYPE_CHECKING:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.tools import BaseTool
    from langgraph.store.base import BaseStore

    from chaos.workloads.langgraph import LangGraphWorkload

NS = ("chaos", "shared")
INITIAL: dict[str, dict[str, Any]] = {
    "order": {"id": "o-1", "seat": "12A"},
    "memory": {"facts": []},
    "trip": {"date": "June 14", "hold": None},
    "registry": {"tools": ["lookup", "refund"]},
}
GUARDS = ("none", "cas", "lock")
TOOLS = ("reserve_seat", "charge_card")  # the plan of shared_tool_reorder, in order
RESPONSE_WAIT_S = 60.0  # a failure detector, not synchronisation: the tools did not run concurrently
ANOMALY_WORKLOADS = ("lost_update", "stale_generation", "phantom_tool", "causal_cascade")


def steps(workload: str, agent: int) -> int:
    """How many releases agent ``agent`` needs without a guard: one per read, plus its start."""
    return 3 if workload.startswith("shared_causal_cascade") and agent == 0 else 2


def tool_calls(workload: str) -> int:
    """How many tool calls the workload's model plans in one message (0: it plans none)."""
    return len(TOOLS) if workload.startswith("shared_tool_reorder") else 0


class AgentState(TypedDict, total=False):
    log: list


@dataclass
class Shared:
    """The shared store of a trial and the history hooks around it."""

    ctx: WorkloadContext
    store: BaseStore
    lock_path: str | None
    agent: int
    guard: str
    _lock_fd: int | None = None
    writes: int = 0
    seen: dict[str, str] = field(default_factory=dict)

    def record(self, op: str, **row: object) -> None:
        self.ctx.effect(f"ss.{op}", json.dumps({"op": op, "agent": self.agent, **row}, sort_keys=True))

    def _item(self, key: str) -> tuple[str, dict]:
        item = self.store.get(NS, key)
        if item is None:
            return "v0", dict(INITIAL[key])
        value = dict(item.value)
        return str(value.pop("_version")), value

    def read(self, key: str) -> dict:
        """Read ``key`` (records it; the racer then stops at the read barrier: the generation)."""
        version, value = self._item(key)
        self.seen[key] = version
        self.record("read", key=key, version=version, value=value)
        return value

    def write(self, key: str, value: dict, **extra: object) -> str:
        self.writes += 1
        version = f"v{self.writes}@a{self.agent}"
        self.store.put(NS, key, {**value, "_version": version})
        self.record("write", key=key, version=version, value=value, **{"from": self.seen.get(key, "v0")}, **extra)
        self.seen[key] = version
        return version

    def effect(self, name: str, **extra: object) -> None:
        self.record("effect", name=name, based_on=dict(self.seen), **extra)

    # ---------------------------------------------------------------- guards

    def _flock(self, blocking: bool) -> bool:
        if self.lock_path is None:
            return True
        if self._lock_fd is None:
            self._lock_fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
            return True
        except BlockingIOError:
            return False

    def unlock(self) -> None:
        if self._lock_fd is not None:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)

    def begin(self) -> None:
        """Pessimistic lock: take the lock before the first read; while another agent holds it,
        record a wait (the racer stops there) and try again when continued."""
        if self.guard != "lock":
            return
        while not self._flock(blocking=False):
            self.record("wait", reason="the lock is held by another agent")

    def end(self) -> None:
        if self.guard == "lock":
            self.unlock()

    def commit(self, keys: tuple[str, ...], plan: Callable[[dict], T], act: Callable[[T], object], final: bool = False) -> None:
        """Commit ``act(plan(values))`` computed from a read of ``keys``.

        Stock: act on what was read. ``cas``: under the lock, check every key is still at the version
        read (and, with ``final``, that no tentative hold is on it); if not, record a retry, read
        again (generate again) and retry. ``lock``: the lock is held since ``begin``."""
        values = {k: self.read(k) for k in keys}
        while True:
            if self.guard != "cas":
                act(plan(values))
                return
            self._flock(blocking=True)
            try:
                moved = {k: (self.seen[k], self._item(k)[0]) for k in keys if self._item(k)[0] != self.seen[k]}
                tentative = [k for k in keys if final and self._item(k)[1].get("hold")]
                if not moved and not tentative:
                    act(plan(values))
                    return
            finally:
                self.unlock()
            why = "; ".join(f"{k} moved {a} -> {b}" for k, (a, b) in moved.items()) or f"{', '.join(tentative)} holds a tentative write"
            self.record("retry", reason=why)
            values = {k: self.read(k) for k in keys}


def open_shared(ctx: WorkloadContext, guard: str) -> Shared:
    """The trial's shared store: ``SqliteStore`` on ``params["shared_store"]``, else in memory."""
    path = ctx.params.get("shared_store")
    agent = int(ctx.params.get("agent", 0))
    if not path:
        from langgraph.store.memory import InMemoryStore

        return Shared(ctx, InMemoryStore(), None, agent, guard)
    from langgraph.store.sqlite import SqliteStore

    conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=60)
    conn.execute("PRAGMA busy_timeout=60000")
    store = SqliteStore(conn)
    shared = Shared(ctx, store, path + ".lock", agent, guard)
    shared._flock(blocking=True)  # agents set the store up one at a time (migrations are not concurrent-safe)
    try:
        store.setup()
    finally:
        shared.unlock()
    return shared


def fake_model(text: str) -> GenericFakeChatModel:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage

    return GenericFakeChatModel(messages=iter([AIMessage(content=text)]))


def _graph(ctx: WorkloadContext, shared: Shared, body: Callable[[], None]) -> LangGraphWorkload:
    from langgraph.graph import END, START, StateGraph

    from chaos.workloads.langgraph import PINNED, LangGraphWorkload

    def agent(state: AgentState) -> dict:
        shared.begin()
        try:
            body()
        finally:
            shared.end()
        return {"log": [f"agent{shared.agent}"]}

    g = StateGraph(AgentState)
    g.add_node("agent", agent)
    g.add_edge(START, "agent")
    g.add_edge("agent", END)
    return LangGraphWorkload(graph=g.compile(checkpointer=ctx.checkpointer, store=shared.store), input={"log": []}, max_concurrency=PINNED)


def lost_update(ctx: WorkloadContext, guard: str = "none") -> LangGraphWorkload:
    shared = open_shared(ctx, guard)

    def body() -> None:
        def plan(values: dict) -> dict:
            fact = fake_model(f"fact from agent {shared.agent}").invoke("remember one thing").content
            return {"facts": [*values["memory"]["facts"], fact]}

        shared.commit(("memory",), plan, lambda new: shared.write("memory", new))

    return _graph(ctx, shared, body)


def stale_generation(ctx: WorkloadContext, guard: str = "none") -> LangGraphWorkload:
    shared = open_shared(ctx, guard)

    def body() -> None:
        if shared.agent == 0:  # the user changes the trip's date
            shared.commit(("trip",), lambda v: {**v["trip"], "date": "June 21"}, lambda new: shared.write("trip", new))
            return

        def draft(values: dict) -> str:
            return str(fake_model(f"book flight on {values['trip']['date']}").invoke("draft the booking").content)

        shared.commit(("trip",), draft, lambda booking: shared.effect("book_flight", detail=booking), final=True)

    return _graph(ctx, shared, body)


def phantom_tool(ctx: WorkloadContext, guard: str = "none") -> LangGraphWorkload:
    shared = open_shared(ctx, guard)

    def body() -> None:
        if shared.agent == 0:  # the admin removes the refund tool from the registry

            def remove(v: dict) -> dict:
                return {"tools": [t for t in v["registry"]["tools"] if t != "refund"]}

            shared.commit(("registry",), remove, lambda new: shared.write("registry", new))
            return

        def plan(values: dict) -> str:
            tools = values["registry"]["tools"]
            return "refund" if "refund" in tools else "lookup"  # the model calls the best listed tool

        shared.commit(("registry",), plan, lambda tool: shared.effect(f"tool:{tool}", tool=tool))

    return _graph(ctx, shared, body)


def causal_cascade(ctx: WorkloadContext, guard: str = "none") -> LangGraphWorkload:
    shared = open_shared(ctx, guard)

    def body() -> None:
        if shared.agent == 0:  # place a tentative hold, then roll it back (a compensation)
            shared.commit(("trip",), lambda v: {**v["trip"], "date": "June 28", "hold": "tentative"}, lambda new: shared.write("trip", new))
            held = shared.seen["trip"]

            def rollback(v: dict) -> dict:
                return {**v["trip"], "date": "June 14", "hold": None}

            shared.commit(("trip",), rollback, lambda new: shared.write("trip", new, compensates=held))
            return

        def draft(values: dict) -> str:
            return str(fake_model(f"book flight on {values['trip']['date']}").invoke("draft the booking").content)

        shared.commit(("trip",), draft, lambda booking: shared.effect("book_flight", detail=booking), final=True)

    return _graph(ctx, shared, body)


class Responses:
    """The external services of one step's tool calls, answering in a chosen order.

    ``order`` is a permutation of plan indices: the response of ``order[j]`` arrives once the tool
    of ``order[j-1]`` has settled. A stock tool settles by firing its effect; with ``sequenced`` it
    settles by parking until every tool planned before it has fired (a commit-order sequencer)."""

    def __init__(self, order: list[int], sequenced: bool):
        self.order = list(order)
        self.sequenced = sequenced
        self.cond = threading.Condition()
        self.settled = 0
        self.committed = 0

    def _wait(self, pred: Callable[[], bool], what: str) -> None:
        if not self.cond.wait_for(pred, timeout=RESPONSE_WAIT_S):
            raise RuntimeError(f"{what} never came within {RESPONSE_WAIT_S}s: ToolNode did not run the tool calls concurrently")

    def call(self, index: int, fire: Callable[[], None], park: Callable[[], None]) -> None:
        with self.cond:
            self._wait(lambda: self.settled == self.order.index(index), f"the response to tool call {index}")
            if not self.sequenced:
                fire()
                self.settled += 1
                self.cond.notify_all()
                return
            if self.committed != index:
                park()
            self.settled += 1  # parked: the next response may arrive
            self.cond.notify_all()
            self._wait(lambda: self.committed == index, f"the turn of tool call {index}")
            fire()
            self.committed += 1
            self.cond.notify_all()


def tool_reorder(ctx: WorkloadContext, guard: str = "none") -> LangGraphWorkload:
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode

    from chaos.workloads.langgraph import LangGraphWorkload

    shared = open_shared(ctx, "none")
    responses = Responses([int(i) for i in ctx.params.get("responses", range(len(TOOLS)))], sequenced=guard == "seq")
    plan = [{"name": name, "args": {"order": "o-1"}, "id": f"call-{i}"} for i, name in enumerate(TOOLS)]
    model = FakeMessagesListChatModel(responses=[AIMessage(content="", tool_calls=plan)])

    def make(index: int, name: str) -> BaseTool:
        def run(order: str) -> str:
            responses.call(
                index,
                lambda: shared.effect(f"tool:{name}", tool=name, plan=index, step=1),
                lambda: shared.record("park", reason=f"{name} waits for the tool calls planned before it"),
            )
            return f"{name} done for {order}"

        run.__name__ = name
        run.__doc__ = f"{name.replace('_', ' ')} for an order."
        return tool(run)

    def agent(state: MessagesState) -> dict:
        shared.read("order")  # the racer stops here: the generation
        return {"messages": [model.invoke(state["messages"])]}

    g = StateGraph(MessagesState)
    g.add_node("agent", agent)
    g.add_node("tools", ToolNode([make(i, n) for i, n in enumerate(TOOLS)]))
    g.add_edge(START, "agent")
    g.add_edge("agent", "tools")
    g.add_edge("tools", END)
    graph = g.compile(checkpointer=ctx.checkpointer, store=shared.store)
    # ToolNode runs a message's tool calls on the graph's executor: no concurrency cap, as in an app
    return LangGraphWorkload(graph=graph, input={"messages": [("user", "book seat 12A and pay")]}, max_concurrency=None)


def _twin(fn: Callable[[WorkloadContext, str], LangGraphWorkload], guard: str) -> Callable[[WorkloadContext], LangGraphWorkload]:
    def factory(ctx: WorkloadContext) -> LangGraphWorkload:
        return fn(ctx, guard)

    factory.__name__ = f"{fn.__name__}_{guard}"
    return factory


SHARED = {
    f"shared_{fn.__name__}{'' if g == 'none' else '_' + g}": _twin(fn, g)
    for fn in (lost_update, stale_generation, phantom_tool, causal_cascade)
    for g in GUARDS
}
SHARED["shared_tool_reorder"] = _twin(tool_reorder, "none")
SHARED["shared_tool_reorder_seq"] = _twin(tool_reorder, "seq")

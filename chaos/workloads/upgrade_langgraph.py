"""Built-in LangGraph workload pairs: one approval workflow deployed as v1, then changed as v2.

Why: a real deploy happens while threads are paused at an interrupt (a human has not answered yet)
or were killed mid-run. The thread's checkpoint was written by v1's graph; the process that
resumes it runs v2's. The seed on state drift after restart names this (cause 5: checkpoint schema
mismatch after a deploy), and LangGraph's tracker has live reports of it (issues 8629 and 8618:
toggling ``defer``). Each factory here reads its version from ``ctx.version`` (``"v1"`` or
``"v2"``) and builds the graph of that version, so one factory is one change.

What it promises: v1 and v2 of a pair differ in exactly the change the name says; each fires its
effects through ``ctx.effect`` (the effect key carries the values a step acted on, so a value that
resumed as ``None`` or with the wrong type shows in the ledger); each parks at ``interrupt()`` in
node ``gate`` (the fan-in pair: in a step after a partly seen barrier), answered with ``true``.

Pairs (``upgrade_<change>``; the shape is ``pre -> gate (interrupt) -> end`` unless said):

* ``field_added``: v2 adds ``channel`` (set by ``pre``, read by ``end``'s effect).
* ``field_renamed``: ``amount`` (v1) is ``total`` in v2; ``end`` reads ``state["total"]``.
* ``field_removed``: v2 drops ``draft`` (v1: ``pre`` writes it, ``end`` reads it).
* ``field_type``: ``qty`` is a string in v1 (``"3"``) and an int in v2 (``3``); ``end`` doubles it.
* ``node_added``: v2 adds ``enrich`` between ``pre`` and ``gate`` (a step before the pause).
* ``node_renamed``: the paused node ``gate`` is ``approve`` in v2 (same body).
* ``node_removed``: v2 drops ``notify`` (v1: ``gate -> notify -> end``), a step after the pause.
* ``reducer_changed``: ``log`` appends (``operator.add``) in v1 and keeps the last write in v2.
* ``defer_single``: v2 marks the paused node ``gate`` ``defer=True`` (LangGraph issue 8629).
* ``defer_fanin``: ``pre -> (w1, mid)``, ``mid -> gate``, ``(w1, gate) -> join``; v2 marks
  ``join`` ``defer=True`` (LangGraph issue 8618); the thread pauses with ``join``'s barrier half seen.
* ``defer_single_dropped`` / ``defer_fanin_dropped``: the other direction (v1 deferred, v2 not).

One workload is the same graph at v1 and v2, for a deploy that is a library release only
(``upgrade_to: {target: {version: ...}}``; LangGraph 7498, 6970, 7066):

* ``messages``: ``pre`` writes langchain_core messages (human, an AI tool call, the tool's answer),
  a dataclass (``Order``) and a pydantic model (``Customer``) into state; after the pause ``end``
  fires an effect keyed by what it read back: each message's class, each custom value's class and
  fields. A value that came back as ``None`` or a raw dict, or a message coerced to another class,
  changes the key, so the ledger shows it.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from pydantic import BaseModel

from chaos.workloads import WorkloadContext
from chaos.workloads.langgraph import PINNED, LangGraphWorkload


def _v2(ctx: WorkloadContext) -> bool:
    if ctx.version not in ("v1", "v2"):
        raise ValueError(f"these workloads have versions v1 and v2, not {ctx.version!r}")
    return ctx.version == "v2"


def _chain(
    ctx: WorkloadContext, state: type, nodes: list[tuple[str, Callable[..., dict]]], *, defer: frozenset[str] = frozenset()
) -> LangGraphWorkload:
    from langgraph.graph import END, START, StateGraph

    g: Any = StateGraph(state)
    for name, fn in nodes:
        g.add_node(name, fn, defer=name in defer)
    names = [START, *(n for n, _ in nodes), END]
    for a, b in zip(names, names[1:], strict=False):
        g.add_edge(a, b)
    return LangGraphWorkload(graph=g.compile(checkpointer=ctx.checkpointer), input={"log": []}, gated_task="gate", max_concurrency=PINNED)


def _gate(ctx: WorkloadContext, name: str = "gate") -> Callable[..., dict]:
    from langgraph.types import interrupt

    def gate(state: Any) -> dict:
        value = interrupt({"question": "approve?"})
        ctx.effect("gate", value)
        return {"log": [name]}

    return gate


class LogState(TypedDict, total=False):
    log: Annotated[list, operator.add]


def field_added(ctx: WorkloadContext) -> LangGraphWorkload:
    v2 = _v2(ctx)

    class S(TypedDict, total=False):
        log: Annotated[list, operator.add]
        channel: str

    def pre(state: S) -> dict:
        ctx.effect("pre")
        return {"log": ["pre"], **({"channel": "email"} if v2 else {})}

    def end(state: S) -> dict:
        ctx.effect("end", state.get("channel") if v2 else "email")
        return {"log": ["end"]}

    return _chain(ctx, S if v2 else LogState, [("pre", pre), ("gate", _gate(ctx)), ("end", end)])


def field_renamed(ctx: WorkloadContext) -> LangGraphWorkload:
    v2 = _v2(ctx)
    key = "total" if v2 else "amount"

    class V1(TypedDict, total=False):
        log: Annotated[list, operator.add]
        amount: int

    class V2(TypedDict, total=False):
        log: Annotated[list, operator.add]
        total: int

    def pre(state: Any) -> dict:
        ctx.effect("pre")
        return {"log": ["pre"], key: 40}

    def end(state: Any) -> dict:
        ctx.effect("end", state[key])
        return {"log": ["end"]}

    return _chain(ctx, V2 if v2 else V1, [("pre", pre), ("gate", _gate(ctx)), ("end", end)])


def field_removed(ctx: WorkloadContext) -> LangGraphWorkload:
    v2 = _v2(ctx)

    class V1(TypedDict, total=False):
        log: Annotated[list, operator.add]
        draft: str

    def pre(state: Any) -> dict:
        ctx.effect("pre")
        return {"log": ["pre"], **({} if v2 else {"draft": "hello"})}

    def end(state: Any) -> dict:
        ctx.effect("end")
        return {"log": ["end"]}

    return _chain(ctx, LogState if v2 else V1, [("pre", pre), ("gate", _gate(ctx)), ("end", end)])


def field_type(ctx: WorkloadContext) -> LangGraphWorkload:
    v2 = _v2(ctx)

    class V1(TypedDict, total=False):
        log: Annotated[list, operator.add]
        qty: str

    class V2(TypedDict, total=False):
        log: Annotated[list, operator.add]
        qty: int

    def pre(state: Any) -> dict:
        ctx.effect("pre")
        return {"log": ["pre"], "qty": 3 if v2 else "3"}

    def end(state: Any) -> dict:
        ctx.effect("end", state["qty"] * 2 if v2 else int(state["qty"]) * 2)
        return {"log": ["end"]}

    return _chain(ctx, V2 if v2 else V1, [("pre", pre), ("gate", _gate(ctx)), ("end", end)])


def _step(ctx: WorkloadContext, name: str) -> Callable[..., dict]:
    def step(state: Any) -> dict:
        ctx.effect(name)
        return {"log": [name]}

    return step


def node_added(ctx: WorkloadContext) -> LangGraphWorkload:
    nodes = [("pre", _step(ctx, "pre")), *([("enrich", _step(ctx, "enrich"))] if _v2(ctx) else []), ("gate", _gate(ctx))]
    return _chain(ctx, LogState, [*nodes, ("end", _step(ctx, "end"))])


def node_renamed(ctx: WorkloadContext) -> LangGraphWorkload:
    name = "approve" if _v2(ctx) else "gate"
    return _chain(ctx, LogState, [("pre", _step(ctx, "pre")), (name, _gate(ctx, name)), ("end", _step(ctx, "end"))])


def node_removed(ctx: WorkloadContext) -> LangGraphWorkload:
    notify = [] if _v2(ctx) else [("notify", _step(ctx, "notify"))]
    return _chain(ctx, LogState, [("pre", _step(ctx, "pre")), ("gate", _gate(ctx)), *notify, ("end", _step(ctx, "end"))])


def reducer_changed(ctx: WorkloadContext) -> LangGraphWorkload:
    class V2(TypedDict, total=False):
        log: list

    return _chain(ctx, V2 if _v2(ctx) else LogState, [("pre", _step(ctx, "pre")), ("gate", _gate(ctx)), ("end", _step(ctx, "end"))])


def defer_single(ctx: WorkloadContext, *, added: bool = True) -> LangGraphWorkload:
    nodes = [("pre", _step(ctx, "pre")), ("gate", _gate(ctx)), ("end", _step(ctx, "end"))]
    return _chain(ctx, LogState, nodes, defer=frozenset({"gate"} if _v2(ctx) == added else ()))


def defer_single_dropped(ctx: WorkloadContext) -> LangGraphWorkload:
    return defer_single(ctx, added=False)


def defer_fanin_dropped(ctx: WorkloadContext) -> LangGraphWorkload:
    return defer_fanin(ctx, added=False)


def defer_fanin(ctx: WorkloadContext, *, added: bool = True) -> LangGraphWorkload:
    from langgraph.graph import END, START, StateGraph

    g: Any = StateGraph(LogState)
    for name in ("pre", "w1", "mid"):
        g.add_node(name, _step(ctx, name))
    g.add_node("gate", _gate(ctx))
    g.add_node("join", _step(ctx, "join"), defer=_v2(ctx) == added)
    g.add_edge(START, "pre")
    g.add_edge("pre", "w1")
    g.add_edge("pre", "mid")
    g.add_edge("mid", "gate")
    g.add_edge(["w1", "gate"], "join")
    g.add_edge("join", END)
    return LangGraphWorkload(graph=g.compile(checkpointer=ctx.checkpointer), input={"log": []}, gated_task="gate", max_concurrency=PINNED)


@dataclass
class Order:
    """A custom type in state (importable, as a team's own would be)."""

    sku: str
    qty: int


class Customer(BaseModel):
    """A pydantic model in state."""

    name: str
    tier: int


def _seen(v: object) -> str:
    """What a node read back, without failing on a wrong type: the class and the fields."""
    fields = getattr(v, "__dict__", None) if not isinstance(v, dict) else v
    inner = ",".join(f"{k}={fields[k]}" for k in sorted(fields)) if isinstance(fields, dict) else repr(v)
    return f"{type(v).__name__}({inner})"


class ChatState(TypedDict, total=False):
    log: Annotated[list, operator.add]
    messages: Annotated[list[AnyMessage], add_messages]
    order: Any
    customer: Any


def messages(ctx: WorkloadContext) -> LangGraphWorkload:
    _v2(ctx)  # the same graph at both versions: only the library changes
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    def pre(state: ChatState) -> dict:
        ctx.effect("pre")
        call = {"name": "lookup", "args": {"sku": "A-7"}, "id": "call-1"}
        said = [
            HumanMessage("ship two of A-7", id="m1"),
            AIMessage("", tool_calls=[call], id="m2"),
            ToolMessage("in stock", tool_call_id="call-1", id="m3"),
        ]
        return {"log": ["pre"], "messages": said, "order": Order("A-7", 2), "customer": Customer(name="Ada", tier=2)}

    def end(state: ChatState) -> dict:
        kinds = "+".join(type(m).__name__ for m in state.get("messages") or [])
        ctx.effect("end", f"{kinds}|{_seen(state.get('order'))}|{_seen(state.get('customer'))}")
        return {"log": ["end"]}

    return _chain(ctx, ChatState, [("pre", pre), ("gate", _gate(ctx)), ("end", end)])


UPGRADE_PAIRS: dict[str, Callable[[WorkloadContext], LangGraphWorkload]] = {
    f"upgrade_{f.__name__}": f
    for f in (
        field_added,
        field_renamed,
        field_removed,
        field_type,
        node_added,
        node_renamed,
        node_removed,
        reducer_changed,
        defer_single,
        defer_single_dropped,
        defer_fanin,
        defer_fanin_dropped,
        messages,
    )
}

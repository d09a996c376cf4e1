"""Built-in LangGraph workloads.

* ``gate_after_interrupt``: pre -> gate -> end. ``gate`` calls ``interrupt()`` and, once resumed,
  fires its effect keyed by the resume value (``gate:True``): the effect a human approval guards.
* ``approval_idempotent``: the same shape, fixed: ``pre`` fires nothing, the approved action and
  ``end`` fire idempotently (``ctx.effect_once``). A sweep over it must come out clean, the kill
  points before the human's answer vacuous (nothing has fired there).
* ``three_step``: a -> b -> c, each firing one effect: the simplest workflow whose completed steps
  must not run again after a crash.
* ``three_step_idempotent``: the same with idempotent effects (``ctx.effect_once``): the harness's
  self-test, where no kill point may show a duplicate.
* ``three_step_fsync`` / ``three_step_nosync``: three_step with the SQLite saver fsyncing every
  commit, or none: the power-loss self-test (``fault: power_loss``), clean and caught.

* ``two_gates``: pre -> gate -> gate2 -> end, two interrupts: after the first is answered the
  thread waits at the second, so a stray repeat of the first answer has a live interrupt to hit.
* ``two_asks``: pre -> gate -> end, ``gate`` asks twice in one node: after the first answer the
  thread waits at the second question of the same task (LangGraph issue 8837).
* ``invalid_type``: a -> bad -> c over a pydantic state; ``bad`` writes a string into ``count: int``.
* ``invalid_reducer``: the same, but ``bad`` writes an int into ``log`` whose reducer is list +.
* ``three_step_retry``: three_step with a ``RetryPolicy`` on ``b`` (3 attempts): an effect of ``b``
  that fails after doing its work (``effect_fault``) is performed again by the retry;
  ``three_step_retry_idempotent``: the same with idempotent effects, where the retry is harmless.
* ``charge_with_handler``: ``charge`` (its ``error_handler`` is ``refund``) runs beside ``approve``
  (``interrupt()``, then ``ship``). When the charge fails after charging, ``refund`` fires and
  commits its write while ``approve`` waits for the human; answering re-runs the handler that
  already ran (LangGraph issue 9002). ``charge_with_handler_idempotent``: refund is idempotent.
* ``functional_gate`` / ``functional_three_step``: the same shapes as ``gate_after_interrupt`` and
  ``three_step`` on the functional API (``@entrypoint`` calling ``@task``s); their boundaries are
  the same saver calls, so they are instrumented the same way.

Each node fires its effect before it returns, through ``ctx.effect``.
"""

from __future__ import annotations

import operator
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, TypedDict

from chaos.workloads import WorkloadContext


@dataclass
class LangGraphWorkload:
    """A compiled graph, the input that starts it, and which task's effect an interrupt gates.

    ``max_concurrency``: the graph's own limit, passed to ``invoke``; ``None`` (the default) is
    LangGraph's default, as in production: parallel branches and parallel tool calls run in
    parallel. ``answer``: ``answer(interrupt) -> value``, what a human answers to an interrupt
    (``interrupt.value`` is its payload, ``interrupt.id`` its id); used with ``answers: workload``.
    At a static breakpoint it gets a ``Breakpoint`` and returns ``None`` (approve: ``invoke(None)``)
    or an ``Edit`` (``update_state`` first, then ``invoke(None)``).
    ``interrupt_before`` / ``interrupt_after``: static breakpoints passed to every ``invoke`` (a
    graph compiled with its own is read from the graph); chaos treats a thread stopped at one as
    waiting for an approval, which ``invoke(None)`` gives."""

    graph: Any
    input: object = field(default_factory=dict)
    gated_task: str | None = None
    meta: dict = field(default_factory=dict)
    max_concurrency: int | None = None
    answer: Callable[[object], object] | None = None
    interrupt_before: list[str] | None = None
    interrupt_after: list[str] | None = None


@dataclass(frozen=True)
class Breakpoint:
    """A thread stopped at a static breakpoint: ``when`` is ``before`` or ``after``, ``nodes`` the
    nodes it stopped before (the next ones) or after (the ones that just ran)."""

    when: str
    nodes: tuple[str, ...]


@dataclass(frozen=True)
class Edit:
    """An answer to a static breakpoint that changes the state before approving, as LangGraph's
    customer-support tutorial does for a rejection: ``graph.update_state(config, values,
    as_node=as_node)``, then ``invoke(None)``. In a scenario's ``answers:`` plan the same is written
    ``{"update": {...}, "as_node": "node"}``."""

    values: object
    as_node: str | None = None


@dataclass
class Thread:
    """What a team's recovery gets (``resume: app:package.module:recover`` calls ``recover(ctx,
    thread)`` in the fresh process): the thread's id, its config, the compiled graph, the input
    that starts it, and how many durable checkpoints it has (0: nothing of the run survived).
    ``invoke(payload)`` runs the graph on the thread as chaos runs it (its durability, its config);
    ``recover`` returns what the last ``invoke`` returned."""

    thread_id: str
    config: dict
    graph: Any
    input: object
    checkpoints: int
    invoke: Callable[[object], object]


# The built-in StateGraph workloads pin one task at a time, as they always ran: with it LangGraph's
# background writes (put_writes through the loop's executor) are serialised too, so a sweep's
# persistence order, and the shipped scenarios' and tests' per-boundary results, stay exactly
# reproducible. A user's graph gets LangGraph's default (``max_concurrency=None``), as in production.
PINNED = 1


class GateState(TypedDict, total=False):
    log: Annotated[list, operator.add]
    approved: object


class StepState(TypedDict, total=False):
    log: Annotated[list, operator.add]


def _pre_gate_end(ctx: WorkloadContext, pre: Callable, gate: Callable, end: Callable) -> LangGraphWorkload:
    """The gated chain ``pre -> gate -> end`` over ``GateState``, gated at ``gate``, one task at a time."""
    from langgraph.graph import END, START, StateGraph

    g = StateGraph(GateState)
    g.add_node("pre", pre)
    g.add_node("gate", gate)
    g.add_node("end", end)
    g.add_edge(START, "pre")
    g.add_edge("pre", "gate")
    g.add_edge("gate", "end")
    g.add_edge("end", END)
    return LangGraphWorkload(graph=g.compile(checkpointer=ctx.checkpointer), input={"log": []}, gated_task="gate", max_concurrency=PINNED)


def gate_after_interrupt(ctx: WorkloadContext, *, idempotent: bool = False, pre_effect: bool = True) -> LangGraphWorkload:
    from langgraph.types import interrupt

    fire = ctx.effect_once if idempotent else ctx.effect

    def pre(state: GateState) -> dict:
        if pre_effect:
            fire("pre")
        return {"log": ["pre"]}

    def gate(state: GateState) -> dict:
        value = interrupt({"question": "approve?"})
        fire("gate", value)
        return {"log": ["gate"], "approved": value}

    def end(state: GateState) -> dict:
        fire("end")
        return {"log": ["end"]}

    return _pre_gate_end(ctx, pre, gate, end)


def approval_idempotent(ctx: WorkloadContext) -> LangGraphWorkload:
    """The fixed approval workflow: pre only prepares (no effect), gate's approved action and end's
    effect carry idempotency keys. A crash before the human answers leaves nothing fired."""
    return gate_after_interrupt(ctx, idempotent=True, pre_effect=False)


def three_step(ctx: WorkloadContext, *, idempotent: bool = False, retry_b: bool = False) -> LangGraphWorkload:
    """a -> b -> c, one effect each; ``retry_b``: ``b`` retries a failure (``RetryPolicy``, 3
    attempts, 10 ms apart)."""
    from langgraph.graph import END, START, StateGraph

    fire = ctx.effect_once if idempotent else ctx.effect

    def make(name: str):
        def node(state: StepState) -> dict:
            fire(name)
            return {"log": [name]}

        return node

    g = StateGraph(StepState)
    for name in ("a", "b", "c"):
        if retry_b and name == "b":  # only then: the plain workload runs on releases that name the option otherwise
            from langgraph.types import RetryPolicy

            g.add_node(name, make(name), retry_policy=RetryPolicy(max_attempts=3, initial_interval=0.01, jitter=False))
        else:
            g.add_node(name, make(name))
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    g.add_edge("c", END)
    return LangGraphWorkload(graph=g.compile(checkpointer=ctx.checkpointer), input={"log": []}, max_concurrency=PINNED)


def _sqlite_synchronous(ctx: WorkloadContext, mode: str) -> None:
    """Set the SQLite saver's ``PRAGMA synchronous`` (FULL: every commit fsynced; OFF: none)."""
    conn = getattr(ctx.checkpointer, "conn", None)
    if isinstance(conn, sqlite3.Connection):  # another saver (a fork server's prewarm) has no such setting
        conn.execute(f"PRAGMA synchronous={mode}")


def three_step_fsync(ctx: WorkloadContext) -> LangGraphWorkload:
    """three_step whose saver fsyncs every commit (SQLite synchronous=FULL), so every checkpoint is
    durable before the next step fires its effect. The power-loss self-test: DU must hold."""
    _sqlite_synchronous(ctx, "FULL")
    return three_step(ctx)


def three_step_nosync(ctx: WorkloadContext) -> LangGraphWorkload:
    """three_step whose saver never fsyncs (SQLite synchronous=OFF): its checkpoints sit in the page
    cache when the next step fires. The power-loss self-test: a power loss must violate DU."""
    _sqlite_synchronous(ctx, "OFF")
    return three_step(ctx)


def three_step_idempotent(ctx: WorkloadContext) -> LangGraphWorkload:
    """three_step whose effects carry an idempotency key: a re-run step fires nothing new. The
    harness's self-test: every kill point must come out clean (no false duplicates)."""
    return three_step(ctx, idempotent=True)


def three_step_retry(ctx: WorkloadContext, *, idempotent: bool = False) -> LangGraphWorkload:
    """three_step whose ``b`` retries a failure (``RetryPolicy``, 3 attempts, 10 ms apart)."""
    return three_step(ctx, idempotent=idempotent, retry_b=True)


def three_step_retry_idempotent(ctx: WorkloadContext) -> LangGraphWorkload:
    return three_step_retry(ctx, idempotent=True)


def charge_with_handler(ctx: WorkloadContext, *, idempotent_refund: bool = False) -> LangGraphWorkload:
    """START -> charge (error_handler: refund) and approve (interrupt, then ship), in one superstep.

    LangGraph issue 9002: a node's error handler that ran and committed its write runs again when
    the thread is resumed, because another task of its superstep was interrupted (or failed)."""
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    def charge(state: GateState) -> dict:
        ctx.effect("charge")
        return {"log": ["charge"]}

    def refund(state: GateState) -> dict:
        (ctx.effect_once if idempotent_refund else ctx.effect)("refund")
        return {"log": ["refund"]}

    def approve(state: GateState) -> dict:
        value = interrupt({"question": "ship the order?"})
        ctx.effect("ship", value)
        return {"log": ["ship"], "approved": value}

    g = StateGraph(GateState)
    g.add_node("charge", charge, error_handler=refund)
    g.add_node("approve", approve)
    g.add_edge(START, "charge")
    g.add_edge(START, "approve")
    g.add_edge("charge", END)
    g.add_edge("approve", END)
    return LangGraphWorkload(graph=g.compile(checkpointer=ctx.checkpointer), input={"log": []}, gated_task="ship", max_concurrency=PINNED)


def charge_with_handler_idempotent(ctx: WorkloadContext) -> LangGraphWorkload:
    return charge_with_handler(ctx, idempotent_refund=True)


def two_gates(ctx: WorkloadContext) -> LangGraphWorkload:
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    def pre(state: GateState) -> dict:
        ctx.effect("pre")
        return {"log": ["pre"]}

    def make_gate(name: str):
        def gate(state: GateState) -> dict:
            value = interrupt({"question": f"approve {name}?"})
            ctx.effect(name, value)
            return {"log": [name]}

        return gate

    def end(state: GateState) -> dict:
        ctx.effect("end")
        return {"log": ["end"]}

    g = StateGraph(GateState)
    g.add_node("pre", pre)
    g.add_node("gate", make_gate("gate"))
    g.add_node("gate2", make_gate("gate2"))
    g.add_node("end", end)
    g.add_edge(START, "pre")
    g.add_edge("pre", "gate")
    g.add_edge("gate", "gate2")
    g.add_edge("gate2", "end")
    g.add_edge("end", END)
    return LangGraphWorkload(graph=g.compile(checkpointer=ctx.checkpointer), input={"log": []}, gated_task="gate", max_concurrency=PINNED)


def two_asks(ctx: WorkloadContext) -> LangGraphWorkload:
    """pre -> gate -> end, where ``gate`` asks twice in one node (LangGraph issue 8837's shape): the
    first answer fires ``gate`` (keyed, so the node's re-runs from its top fire it once), the second
    fires ``gate2``. After the first answer the thread waits at the second question of the same
    task: a continue (``invoke(None)``) must re-ask it, never answer it with the consumed value."""
    from langgraph.types import interrupt

    def pre(state: GateState) -> dict:
        ctx.effect("pre")
        return {"log": ["pre"]}

    def gate(state: GateState) -> dict:
        first = interrupt({"question": "approve gate?"})
        ctx.effect_once("gate", first)  # the node re-runs from its top on every resume
        second = interrupt({"question": "approve gate2?"})
        ctx.effect("gate2", second)
        return {"log": ["gate"], "approved": second}

    def end(state: GateState) -> dict:
        ctx.effect("end")
        return {"log": ["end"]}

    return _pre_gate_end(ctx, pre, gate, end)


def _invalid(ctx: WorkloadContext, bad_update: dict, field_name: str) -> LangGraphWorkload:
    from langgraph.graph import END, START, StateGraph
    from pydantic import BaseModel

    class CountState(BaseModel):
        log: Annotated[list, operator.add] = []
        count: int = 0

    def a(state: CountState) -> dict:
        ctx.effect("a")
        return {"log": ["a"], "count": 1}

    def bad(state: CountState) -> dict:
        ctx.effect("bad")
        return dict(bad_update)

    def c(state: CountState) -> dict:
        ctx.effect("c")
        return {"log": ["c"]}

    g = StateGraph(CountState)
    for name, fn in (("a", a), ("bad", bad), ("c", c)):
        g.add_node(name, fn)
    g.add_edge(START, "a")
    g.add_edge("a", "bad")
    g.add_edge("bad", "c")
    g.add_edge("c", END)
    return LangGraphWorkload(
        graph=g.compile(checkpointer=ctx.checkpointer),
        input={"log": []},
        meta={"invalid": {"task": "bad", "field": field_name, "value": bad_update[field_name]}},
        max_concurrency=PINNED,
    )


def invalid_type(ctx: WorkloadContext) -> LangGraphWorkload:
    return _invalid(ctx, {"log": ["bad"], "count": "not-a-number"}, "count")


def invalid_reducer(ctx: WorkloadContext) -> LangGraphWorkload:
    return _invalid(ctx, {"log": 5}, "log")


def functional_gate(ctx: WorkloadContext) -> LangGraphWorkload:
    from langgraph.func import entrypoint, task
    from langgraph.types import interrupt

    @task
    def pre() -> str:
        ctx.effect("pre")
        return "pre"

    @task
    def gate(value: object) -> str:
        ctx.effect("gate", value)
        return "gate"

    @task
    def end() -> str:
        ctx.effect("end")
        return "end"

    @entrypoint(checkpointer=ctx.checkpointer)
    def approval(inp: dict) -> dict:
        log = [pre().result()]
        value = interrupt({"question": "approve?"})
        log.append(gate(value).result())
        log.append(end().result())
        return {"log": log, "approved": value}

    return LangGraphWorkload(graph=approval, input={"log": []}, gated_task="gate")


def functional_three_step(ctx: WorkloadContext) -> LangGraphWorkload:
    from langgraph.func import entrypoint, task

    def make(name: str):
        def step() -> str:
            ctx.effect(name)
            return name

        step.__name__ = step.__qualname__ = name
        return task(step)

    a, b, c = make("a"), make("b"), make("c")

    @entrypoint(checkpointer=ctx.checkpointer)
    def steps(inp: dict) -> dict:
        return {"log": [a().result(), b().result(), c().result()]}

    return LangGraphWorkload(graph=steps, input={"log": []})


# this module's graphs; every LangGraph built-in, its siblings' too: chaos.workloads.langgraph_builtins.BUILTIN
GRAPHS = {
    "gate_after_interrupt": gate_after_interrupt,
    "approval_idempotent": approval_idempotent,
    "three_step": three_step,
    "three_step_idempotent": three_step_idempotent,
    "three_step_fsync": three_step_fsync,
    "three_step_nosync": three_step_nosync,
    "two_gates": two_gates,
    "two_asks": two_asks,
    "three_step_retry": three_step_retry,
    "three_step_retry_idempotent": three_step_retry_idempotent,
    "charge_with_handler": charge_with_handler,
    "charge_with_handler_idempotent": charge_with_handler_idempotent,
    "invalid_type": invalid_type,
    "invalid_reducer": invalid_reducer,
    "functional_gate": functional_gate,
    "functional_three_step": functional_three_step,
}

"""Workloads a team would write for its own graphs: the one user-workload module of the tests.

A scenario names a factory as ``package.module:factory``. The tests use this module two ways, as a
user would: copied beside a scenario and named ``user_workloads:two_step``, or from the repository
root as ``tests.workloads.user_workloads:hang_forever``.

``two_step``: charge -> email, one effect per node, compiled with ``ctx.checkpointer``.
``commit_before_execute``: a -> pay -> c, where ``pay`` marks its step done in the team's own store
and then performs its effects (``reserve``, then ``charge``): killed between the two, the re-run
sees "done" and skips the charge, so the charge is lost.
``workflow_duplicate``: a -> b where ``b`` notifies twice in every run, crash or none.
``approval`` (and ``approval_rejectable``, which pays only when the answer is ``approve``) and its miswired variants (own saver, no checkpointer, ``gated_task`` naming the node,
an answer the node cannot parse, a payment made twice per answer): prepare -> approve
(``interrupt()``, then ``send_payment``).
``email_returns_text_in_the_dry_run``: charge -> email whose ``email`` returns a string in a
sweep's dry run (only there, so the preflight passes), which LangGraph refuses: the sweep has no
finished run to compare recoveries with.
``broken_at_build``: a factory that raises, so its cell fails once with the reason.
``hang_forever``: a -> b where ``a`` fires its effect and then blocks forever, so a racer never
exits on its own: the harness must kill it after ``timeout_s`` and record the trial as hung.
``approval_reads_amount``: a gate whose node reads a referenced answer (``approve#r1``) as a mapping:
``TypeError`` in the user's node (an app error, never the framework's); a plain answer passes.
``approval_dies``: the same for every racer's own value (``...#r<i>``), so every race trial loses one.
``approval_dies_on_r1``: a gate whose node, resumed with a value ending in ``#r1``, is SIGKILLed
from inside before it fires, as the OOM killer would do it (a signal chaos did not send).
``approval_panics``: a gate whose node, resumed with a referenced answer (``approve#r0``), raises
``NodePanic``, a ``BaseException`` that is not an ``Exception`` (as pydantic-core's ``PanicException``
is): the user's error all the same.
``approval_thread_dies``: a gate whose node, resumed with a referenced answer, starts a helper
thread that dies of an unhandled ``RuntimeError`` and waits for it; the racer answering ``#r1`` then
gives up and exits at once without a result (as a process whose saver thread died does).
``approval_audit_after_return``: ``prepare`` starts a thread that fires ``audit`` once ``prepare``
has returned (``approve`` lets it go and waits for it): an effect fired outside any running task.
A module whose import fails lives apart (``tests.workloads.broken_import``): it cannot share a
module with factories that must import.
"""

from __future__ import annotations

import operator
import threading
from typing import Annotated, TypedDict


class S(TypedDict, total=False):
    log: Annotated[list, operator.add]


def two_step(ctx, *, email_update=lambda: {"log": ["email"]}):
    """A user's own graph: compiled with ctx.checkpointer, one effect per node."""
    from langgraph.graph import END, START, StateGraph

    def charge(state):
        ctx.effect("charge")
        return {"log": ["charge"]}

    def email(state):
        ctx.effect("email")
        return email_update()

    g = StateGraph(S)
    g.add_node("charge", charge)
    g.add_node("email", email)
    g.add_edge(START, "charge")
    g.add_edge("charge", "email")
    g.add_edge("email", END)
    return g.compile(checkpointer=ctx.checkpointer)


def _steps_done(ctx):
    """The team's own "steps done" table, in a file beside the trial's checkpoint database (one per trial)."""
    import sqlite3
    from pathlib import Path

    (_, _, checkpoints), *_ = ctx.checkpointer.conn.execute("PRAGMA database_list").fetchall()
    conn = sqlite3.connect(str(Path(checkpoints).with_name("steps_done.sqlite")), check_same_thread=False, isolation_level=None)
    conn.execute("CREATE TABLE IF NOT EXISTS done (step TEXT PRIMARY KEY)")
    return conn


def commit_before_execute(ctx):
    """The commit-before-execute bug: ``pay`` records its step done, then performs the effects.
    Compiled with ctx.checkpointer (SQLite backend: the store lives beside its file)."""
    from langgraph.graph import END, START, StateGraph

    done = _steps_done(ctx)

    def a(state):
        ctx.effect("a")
        return {"log": ["a"]}

    def pay(state):
        if done.execute("SELECT 1 FROM done WHERE step = 'pay'").fetchone() is None:
            done.execute("INSERT INTO done VALUES ('pay')")  # committed first ...
            ctx.effect("reserve")
            ctx.effect("charge")  # ... executed after: a crash in between loses the charge
        return {"log": ["pay"]}

    def c(state):
        ctx.effect("c")
        return {"log": ["c"]}

    g = StateGraph(S)
    g.add_node("a", a)
    g.add_node("pay", pay)
    g.add_node("c", c)
    g.add_edge(START, "a")
    g.add_edge("a", "pay")
    g.add_edge("pay", "c")
    g.add_edge("c", END)
    from chaos.workloads.langgraph import LangGraphWorkload

    # One task at a time: LangGraph's background writes are then serialised too, so which kill
    # points duplicate a or c is fixed (with its default executor one more point could, or not).
    return LangGraphWorkload(graph=g.compile(checkpointer=ctx.checkpointer), input={}, max_concurrency=1)


def workflow_duplicate(ctx):
    """A graph that fires one effect twice in every run: a duplicate no crash is needed for."""
    from langgraph.graph import END, START, StateGraph

    def a(state):
        ctx.effect("a")
        return {"log": ["a"]}

    def b(state):
        ctx.effect("notify")
        ctx.effect("notify")  # e.g. a retry around a call that had succeeded
        return {"log": ["b"]}

    g = StateGraph(S)
    g.add_node("a", a)
    g.add_node("b", b)
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", END)
    return g.compile(checkpointer=ctx.checkpointer)


def quiet(ctx):
    """a -> b whose nodes never call ctx.effect: nothing an exactly-once check could count."""
    from langgraph.graph import END, START, StateGraph

    g = StateGraph(S)
    g.add_node("a", lambda state: {"log": ["a"]})
    g.add_node("b", lambda state: {"log": ["b"]})
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", END)
    return g.compile(checkpointer=ctx.checkpointer)


def email_returns_text_in_the_dry_run(ctx):
    """``two_step`` whose ``email``, in a sweep's dry run only, returns a string, not a state
    update: LangGraph refuses it (``InvalidUpdateError``) after the charge. A failure of the
    framework's that comes and goes, as CrewAI's checkpoint listener panicking in pydantic-core in
    about one dry run in ten does, and that the preflight's own run therefore missed."""
    return two_step(ctx, email_update=lambda: "sent" if ctx.trial_id.endswith("-dry") else {"log": ["email"]})


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
    """The user's node takes a plain approval, but reads a referenced one (``approve#r1``, as each
    racer of a race with ``distinct_values`` answers) as a mapping: TypeError. The plain answer of
    the preflight passes; the racers' answers raise in the user's code."""
    from langgraph.types import interrupt

    def gate(state):
        answer = interrupt({"question": "approve the payment?"})
        amount = answer["amount"] if "#" in answer else 10  # TypeError on a str: the user's bug, not the framework's
        ctx.effect("gate", amount)
        return {"log": ["gate"], "approved": amount}

    return _gate_graph(ctx, gate)


def approval_dies(ctx):
    """Every racer answering with its own value (``...#r<i>``) is SIGKILLed while its node runs:
    whichever racer reads the pending interrupt first runs the node, so every trial loses one."""
    import os
    import signal

    from langgraph.types import interrupt

    def gate(state):
        answer = interrupt({"question": "approve?"})
        if "#r" in str(answer):
            os.kill(os.getpid(), signal.SIGKILL)  # what the OOM killer does: nothing chaos sent
        ctx.effect("gate", answer)
        return {"log": ["gate"], "approved": answer}

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


class NodePanic(BaseException):
    """Not an ``Exception``: what ``except Exception`` lets through (pydantic-core's ``PanicException`` is one)."""


def approval_panics(ctx):
    """The racers' answers (``approve#r0``) make the user's node raise a ``BaseException``; the plain
    answer of the preflight passes."""
    from langgraph.types import interrupt

    def gate(state):
        answer = interrupt({"question": "approve?"})
        if "#" in str(answer):
            raise NodePanic(f"cannot handle {answer!r}")
        ctx.effect("gate", answer)
        return {"log": ["gate"], "approved": answer}

    return _gate_graph(ctx, gate)


def approval_thread_dies(ctx):
    """A racer's answer makes the node start a helper thread that dies of an exception; the racer
    answering ``#r1`` then exits without a result (``os._exit``: no result file, no cleanup)."""
    import os

    from langgraph.types import interrupt

    def helper(answer):
        raise RuntimeError(f"dictionary changed size during iteration (saving {answer!r})")

    def gate(state):
        answer = interrupt({"question": "approve?"})
        if "#" in str(answer):
            t = threading.Thread(target=helper, args=(answer,), name="user-saver")
            t.start()
            t.join()
            if str(answer).endswith("#r1"):
                os._exit(70)  # its saver died: the process gives up, as a racer that dies after its framework's thread did
        ctx.effect("gate", answer)
        return {"log": ["gate"], "approved": answer}

    return _gate_graph(ctx, gate)


# -- wiring mistakes a preflight must catch (each builds and would run, but cannot be measured) --


def _approval(ctx, *, checkpointer, gated_task="send_payment", parse=None, pays=1, pays_if=lambda answer: True):
    """prepare -> approve (interrupt(), then the payment) -> done, compiled with ``checkpointer``."""
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    from chaos.workloads.langgraph import LangGraphWorkload

    def prepare(state):
        return {"log": ["prepare"]}

    def approve(state):
        answer = interrupt({"action": "send_payment", "args": {"amount": 10}})
        if parse is not None:
            answer = parse(answer)
        for _ in range(pays if pays_if(answer) else 0):
            ctx.effect("send_payment", answer)
        return {"log": ["approve"]}

    g = StateGraph(S)
    g.add_node("prepare", prepare)
    g.add_node("approve", approve)
    g.add_edge(START, "prepare")
    g.add_edge("prepare", "approve")
    g.add_edge("approve", END)
    return LangGraphWorkload(graph=g.compile(checkpointer=checkpointer), input={"log": []}, gated_task=gated_task)


def approval(ctx):
    """Wired right: compiled with ctx.checkpointer, the gated effect named by its label."""
    return _approval(ctx, checkpointer=ctx.checkpointer)


def approval_rejectable(ctx):
    """Wired right, and the payment is behind the approval: only ``approve`` pays; any other answer
    (``reject``) takes the branch that fires nothing."""
    return _approval(ctx, checkpointer=ctx.checkpointer, pays_if=lambda answer: answer == "approve")


def approval_own_saver(ctx):
    """Compiled with its own InMemorySaver: chaos sees no checkpoint, crashes lose nothing it can see."""
    from langgraph.checkpoint.memory import InMemorySaver

    return _approval(ctx, checkpointer=InMemorySaver())


def approval_no_checkpointer(ctx):
    """Compiled without a checkpointer: nothing is durable, an interrupt cannot even be resumed."""
    return _approval(ctx, checkpointer=None)


def approval_gated_by_node(ctx):
    """``gated_task`` names the node (``approve``) instead of the effect label (``send_payment``)."""
    return _approval(ctx, checkpointer=ctx.checkpointer, gated_task="approve")


def approval_wants_a_dict(ctx):
    """The node reads the answer as a dict (Agent Inbox style): a plain value makes it raise."""
    return _approval(ctx, checkpointer=ctx.checkpointer, parse=lambda answer: answer["type"])


def approval_pays_twice(ctx):
    """The approved node pays twice per answer (a retry around a call that had succeeded): a
    duplicate in every uninterrupted run, no race needed."""
    return _approval(ctx, checkpointer=ctx.checkpointer, pays=2)


def approval_audit_after_return(ctx):
    """``prepare`` starts a thread that fires ``audit`` after ``prepare`` returned (``approve``
    releases it and waits for it, so the order is fixed): LangGraph runs no task on that thread."""
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    from chaos.workloads.langgraph import LangGraphWorkload

    go = threading.Event()
    started: list[threading.Thread] = []

    def audit():
        go.wait()
        ctx.effect("audit")

    def prepare(state):
        t = threading.Thread(target=audit, daemon=True)
        t.start()
        started.append(t)
        return {"log": ["prepare"]}

    def approve(state):
        for t in started:  # prepare has returned: let its thread fire, and wait for it
            go.set()
            t.join()
        started.clear()
        answer = interrupt({"action": "send_payment", "args": {"amount": 10}})
        ctx.effect("send_payment", answer)
        return {"log": ["approve"]}

    g = StateGraph(S)
    g.add_node("prepare", prepare)
    g.add_node("approve", approve)
    g.add_edge(START, "prepare")
    g.add_edge("prepare", "approve")
    g.add_edge("approve", END)
    return LangGraphWorkload(graph=g.compile(checkpointer=ctx.checkpointer), input={"log": []}, gated_task="send_payment")

"""The graphs chaos deploys behind a LangGraph Agent Server (loaded BY the server, from its langgraph.json).

Why: the ``langgraph_server`` target drives a real Agent Server, which runs the graph in its own
worker, not in a racer. Effects must still be counted in chaos's ledger, by the run that fired
them, so each built-in LangGraph workload is built here with no checkpointer of its own (the
server supplies its checkpointer) and a ``WorkloadContext`` whose effect hook reads, at the moment
the node fires, the run's config: the client that created the run passes ``chaos_trial_id``,
``chaos_racer_id``, ``chaos_cell_id`` and ``chaos_thread_id`` in ``config.configurable``; the
ledger (``LedgerSpec`` as JSON) and the run id come from the server's environment
(``CHAOS_SERVER_LEDGER``, ``CHAOS_RUN_ID``).

In a sweep the server runs inside the racer (``chaos.targets.langgraph_server.inproc``): an effect
then appends to that racer's ledger and passes ``effect(task=X):after`` on its barrier.

What it promises: every ``ctx.effect`` of a deployed built-in appends one committed ledger row,
tagged with the trial and the racer whose run executed the node, before the node returns; a node
run with no chaos ids in its config (a run started by hand) raises instead of counting an effect
nobody can attribute.
"""

from __future__ import annotations

import json
import operator
import os
from typing import Annotated, Any, TypedDict

from chaos.racer.ledger import Ledger, open_ledger
from chaos.targets.common import append_effect
from chaos.workloads import WorkloadContext

ENV_LEDGER = "CHAOS_SERVER_LEDGER"
ENV_RUN_ID = "CHAOS_RUN_ID"
# the built-ins a server deploys (graph id = workload name)
DEPLOYED = ("gate_after_interrupt", "approval_idempotent", "three_step", "three_step_idempotent", "two_gates", "slow_reply")


class Chat(TypedDict, total=False):
    """``slow_reply``'s state: the message, and what each node did with which message."""

    msg: str
    log: Annotated[list, operator.add]


_ledgers: dict[tuple[str, str, str], Ledger] = {}


def _ledger(conf: dict) -> Ledger:
    key = (str(conf.get("chaos_cell_id", "")), str(conf["chaos_trial_id"]), str(conf.get("chaos_racer_id", "")))
    if key not in _ledgers:
        spec = json.loads(os.environ[ENV_LEDGER])
        context = {"run_id": os.environ.get(ENV_RUN_ID, ""), "cell_id": key[0], "trial_id": key[1], "racer_id": key[2]}
        _ledgers[key] = open_ledger(spec, context)
    return _ledgers[key]


def _effect(task: str, value: Any = None, once: bool = False, key: str | None = None) -> None:
    from langgraph.config import get_config

    from chaos.targets.langgraph.session import where_fired
    from chaos.targets.langgraph_server import inproc

    conf = get_config().get("configurable") or {}
    if "chaos_trial_id" not in conf:
        raise RuntimeError(f"effect {task!r}: the run carries no chaos_trial_id in config.configurable; it was not started by chaos")
    v = None if value is None else str(value)
    if inproc.LEDGER is not None and inproc.BARRIER is not None:  # the server is this racer: its ledger and barriers
        append_effect(inproc.LEDGER, task, v, str(conf.get("chaos_thread_id", "")), where_fired(), once, key)
        inproc.BARRIER.hit(f"effect(task={task}):after")
        return
    append_effect(_ledger(conf), task, v, str(conf.get("chaos_thread_id", "")), where_fired(), once, key)


def effect(task: str, value: Any = None, *, key: str | None = None) -> None:
    """Count an irreversible effect of a team's own deployed graph (call it in the node, after the
    effect): ``from chaos.targets.langgraph_server.app import effect``. ``key``: the effect's stable
    identity (``WorkloadContext.effect``). Outside a run chaos started it raises."""
    _effect(task, value, key=key)


def effect_once(task: str, value: Any = None, *, key: str | None = None) -> None:
    """``effect`` with an idempotency key (thread, task, and ``key`` or else value): a second attempt records nothing."""
    _effect(task, value, once=True, key=key)


def slow_reply_graph() -> Any:
    """``draft`` (effect ``draft:<msg>``) -> ``hold`` (waits until the file the run's config names in
    ``chaos_release`` exists: a long model call whose end the trial controls) -> ``send`` (effect
    ``send:<msg>``). Each message's nodes append to ``log``: the thread's state says which messages'
    work it kept. For double texting: a second message arrives while the first run waits in ``hold``."""
    import time
    from pathlib import Path

    from langgraph.config import get_config
    from langgraph.graph import END, START, StateGraph

    def draft(state: Chat) -> dict:
        _effect("draft", state.get("msg"))
        return {"log": [f"draft:{state.get('msg')}"]}

    def hold(state: Chat) -> dict:
        release = (get_config().get("configurable") or {}).get("chaos_release")
        deadline = time.monotonic() + 120
        while release and not Path(release).exists() and time.monotonic() < deadline:
            time.sleep(0.005)  # the stand-in for a slow model call: it ends when the trial says so
        return {"log": [f"hold:{state.get('msg')}"]}

    def send(state: Chat) -> dict:
        _effect("send", state.get("msg"))
        return {"log": [f"send:{state.get('msg')}"]}

    g = StateGraph(Chat)
    for name, fn in (("draft", draft), ("hold", hold), ("send", send)):
        g.add_node(name, fn)
    g.add_edge(START, "draft")
    g.add_edge("draft", "hold")
    g.add_edge("hold", "send")
    g.add_edge("send", END)
    return g.compile()


def build(name: str) -> Any:
    """The compiled graph of built-in workload ``name``, with no checkpointer (the server's own applies)."""
    from chaos.workloads.langgraph_builtins import BUILTIN

    if name == "slow_reply":
        return slow_reply_graph()
    ctx = WorkloadContext(checkpointer=None, effect_hook=_effect)
    return BUILTIN[name](ctx).graph


gate_after_interrupt = build("gate_after_interrupt")
approval_idempotent = build("approval_idempotent")
three_step = build("three_step")
three_step_idempotent = build("three_step_idempotent")
two_gates = build("two_gates")
slow_reply = build("slow_reply")

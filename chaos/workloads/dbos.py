"""Built-in DBOS workloads: workflows of ``@DBOS.step`` steps, each step's effect through ``ctx.effect``.

Why module-level functions: DBOS registers a workflow or step by its name when it is decorated, and
a fresh process (the recovery) must find the same registration to run a workflow it recovers. So the
functions live here, decorated once per process; what differs per racer (the effect hook, the
recv timeout) reaches them through ``HOOK`` (one racer is one process) or the workflow's inputs
(recorded by DBOS, so a recovered run sees the same ones).

* ``three_step``: steps ``a``, ``b``, ``c`` in order, one effect each.
* ``gate_after_interrupt``: step ``pre``; ``DBOS.recv("approve")`` (the approval pause: the workflow
  waits for a message on that topic); step ``gate`` fires its effect keyed by the message
  (``gate:True``); step ``end``. The answer is ``DBOS.send(workflow_id, value, "approve")``.

A team's own app returns a ``DBOSWorkload`` from its factory (``package.module:factory``): its own
``@DBOS.workflow`` function, the arguments to start it with, and the step names that are effects.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dbos import DBOS

APPROVE = "approve"


class _Hook:
    """The racer's effect hook (``ctx.effect``): set by every factory call, read by the steps."""

    effect: Callable[..., None] | None = None

    def __call__(self, task: str, value: Any = None) -> None:
        if self.effect is None:
            raise RuntimeError("a DBOS step ran before its workload was built (no effect hook)")
        self.effect(task, value)


HOOK = _Hook()


@DBOS.step(name="a")
def step_a() -> str:
    HOOK("a")
    return "a"


@DBOS.step(name="b")
def step_b() -> str:
    HOOK("b")
    return "b"


@DBOS.step(name="c")
def step_c() -> str:
    HOOK("c")
    return "c"


@DBOS.workflow(name="three_step")
def three_step_wf() -> list[str]:
    return [step_a(), step_b(), step_c()]


@DBOS.step(name="pre")
def step_pre() -> str:
    HOOK("pre")
    return "pre"


@DBOS.step(name="gate")
def step_gate(answer: Any) -> str:
    HOOK("gate", answer)
    return str(answer)


@DBOS.step(name="end")
def step_end() -> str:
    HOOK("end")
    return "end"


@DBOS.workflow(name="gate_after_interrupt")
def gate_wf(timeout_s: float) -> str:
    step_pre()
    answer = DBOS.recv(APPROVE, timeout_seconds=timeout_s)
    if answer is None:  # the recorded deadline passed with no answer: the run ends unapproved
        return "timed_out"
    step_gate(answer)
    return step_end()


@dataclass
class DBOSWorkload:
    """What a factory (``package.module:factory``, given a ``WorkloadContext``) returns to have its
    own DBOS workflow tested.

    ``workflow``: the ``@DBOS.workflow`` function (registered at import, so a recovering process
    finds it); ``args`` / ``kwargs``: what ``DBOS.start_workflow`` starts it with; ``steps``: step
    name (as DBOS records it) -> the effect task it fires (for PC and the sweep's frontier; a step
    left out is not an effect); ``topic``: the ``DBOS.recv`` topic an answer is sent on (None: the
    workflow never waits for one); ``gated_task``: the effect an approval gates (a race counts its
    fires); ``meta``: facts a kind needs (built-ins only)."""

    workflow: Callable[..., Any]
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    steps: dict[str, str] = field(default_factory=dict)
    topic: str | None = None
    gated_task: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class DBOSThread:
    """What a team's recovery gets (``resume: app:package.module:recover`` calls ``recover(ctx,
    thread)`` in a fresh process, DBOS launched there, which recovers the workflow by itself).

    ``workflow_id``: the trial's workflow; ``status``: its status before the launch (``PENDING``,
    ``SUCCESS``...; None: never recorded); ``received``: the workflow recorded a ``DBOS.recv``
    before the launch (an answer was consumed already); ``answer``: the scenario's answer for the pause (None:
    none); ``topic``: where it is sent; ``send(value)``: ``DBOS.send`` to the workflow on the
    topic; ``resume()``: ``DBOS.resume_workflow``. Whatever ``recover`` does, chaos then waits for
    the workflow to finish or to wait at a recv, and reports that."""

    workflow_id: str
    status: str | None
    topic: str | None
    answer: Any
    send: Callable[[Any], None]
    resume: Callable[[], Any]
    received: bool = False


def _timeout(ctx: Any) -> float:
    return float(ctx.params.get("recv_timeout_s", 3600))


def three_step(ctx: Any) -> DBOSWorkload:
    HOOK.effect = ctx.effect_hook
    return DBOSWorkload(workflow=three_step_wf, steps={"a": "a", "b": "b", "c": "c"})


def gate_after_interrupt(ctx: Any) -> DBOSWorkload:
    HOOK.effect = ctx.effect_hook
    return DBOSWorkload(
        workflow=gate_wf,
        args=(_timeout(ctx),),
        steps={"pre": "pre", "gate": "gate", "end": "end"},
        topic=APPROVE,
        gated_task="gate",
    )


BUILTIN = {"three_step": three_step, "gate_after_interrupt": gate_after_interrupt}

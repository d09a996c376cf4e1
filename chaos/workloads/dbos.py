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
* ``two_gates``: step ``pre``; a recv; step ``gate`` (keyed by the first answer); a second recv on
  the same topic; step ``gate2`` (keyed by the second answer); step ``end``: two pauses, for an
  ``answers`` plan (the n-th message sent on the topic answers the n-th recv).
* ``upgrade_step_added`` / ``upgrade_step_inserted``: v1/v2 pairs for the ``upgrade`` kind (the
  factory reads ``ctx.version``): ``gate_after_interrupt`` as v1; v2 adds step ``audit`` after the
  approval (``step_added``), or step ``check`` before it (``step_inserted``: v1's recorded recv then
  sits where v2 calls ``check``). Each pair is one source whose body reads the version at run time,
  so DBOS's computed application version (a hash of the workflows' source) is the same on both
  sides: the scenario says which deploy it is with ``workload_params.application_version``, the same
  on both (a pinned version, DBOS's practice when patching) or different (a new version, which is
  what DBOS computes when the code changes).

A team's own app returns a ``DBOSWorkload`` from its factory (``package.module:factory``): its own
``@DBOS.workflow`` function, the arguments to start it with, and the step names that are effects.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dbos import DBOS

if TYPE_CHECKING:
    from chaos.workloads import WorkloadContext

APPROVE = "approve"


class _Hook:
    """The racer's effect hook (``ctx.effect``): set by every factory call, read by the steps."""

    effect: Callable[..., None] | None = None
    version: str = "v1"  # ctx.version of the factory: which side of an upgrade pair this process runs

    def __call__(self, task: str, value: object = None) -> None:
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
def step_gate(answer: object) -> str:
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


@DBOS.workflow(name="two_gates")
def two_gates_wf(timeout_s: float) -> str:
    step_pre()
    answer = DBOS.recv(APPROVE, timeout_seconds=timeout_s)
    if answer is None:
        return "timed_out"
    step_gate(answer)
    second = DBOS.recv(APPROVE, timeout_seconds=timeout_s)
    if second is None:
        return "timed_out"
    step_gate2(second)
    return step_end()


@DBOS.step(name="gate2")
def step_gate2(answer: object) -> str:
    HOOK("gate2", answer)
    return str(answer)


@DBOS.step(name="audit")
def step_audit() -> str:
    HOOK("audit")
    return "audit"


@DBOS.step(name="check")
def step_check() -> str:
    HOOK("check")
    return "check"


@DBOS.workflow(name="upgrade_step_added")
def step_added_wf(timeout_s: float) -> str:
    step_pre()
    answer = DBOS.recv(APPROVE, timeout_seconds=timeout_s)
    if answer is None:
        return "timed_out"
    step_gate(answer)
    if HOOK.version == "v2":  # v2's change: an audit step after the approval
        step_audit()
    return step_end()


@DBOS.workflow(name="upgrade_step_inserted")
def step_inserted_wf(timeout_s: float) -> str:
    step_pre()
    if HOOK.version == "v2":  # v2's change: a check step before the approval
        step_check()
    answer = DBOS.recv(APPROVE, timeout_seconds=timeout_s)
    if answer is None:
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

    workflow: Callable[..., object]
    args: tuple[object, ...] = ()
    kwargs: dict[str, object] = field(default_factory=dict)
    steps: dict[str, str] = field(default_factory=dict)
    topic: str | None = None
    gated_task: str | None = None
    meta: dict[str, object] = field(default_factory=dict)


@dataclass
class DBOSThread:
    """What a team's recovery gets (``resume: app:package.module:recover`` calls ``recover(ctx,
    thread)`` in a fresh process, DBOS launched there, which recovers the workflow by itself).

    ``workflow_id``: the trial's workflow; ``status``: its status before the launch (``PENDING``,
    ``SUCCESS``...; None: never recorded); ``received``: the workflow recorded a ``DBOS.recv``
    before the launch (an answer was consumed already); ``answer``: the scenario's answer for the pause
    the workflow waits at next (with an ``answers`` plan: its n-th, n the recvs recorded and the answers
    sent, not yet consumed; None: none); ``topic``: where it is sent; ``send(value)``: ``DBOS.send`` to the workflow on the
    topic; ``resume()``: ``DBOS.resume_workflow``. Whatever ``recover`` does, chaos then waits for
    the workflow to finish or to wait at a recv, and reports that."""

    workflow_id: str
    status: str | None
    topic: str | None
    answer: object
    send: Callable[[object], None]
    resume: Callable[[], object]
    received: bool = False


def _timeout(ctx: WorkloadContext) -> float:
    return float(ctx.params.get("recv_timeout_s", 3600))


def three_step(ctx: WorkloadContext) -> DBOSWorkload:
    HOOK.effect = ctx.effect_hook
    return DBOSWorkload(workflow=three_step_wf, steps={"a": "a", "b": "b", "c": "c"})


def gate_after_interrupt(ctx: WorkloadContext) -> DBOSWorkload:
    HOOK.effect = ctx.effect_hook
    return DBOSWorkload(
        workflow=gate_wf,
        args=(_timeout(ctx),),
        steps={"pre": "pre", "gate": "gate", "end": "end"},
        topic=APPROVE,
        gated_task="gate",
    )


def two_gates(ctx: WorkloadContext) -> DBOSWorkload:
    HOOK.effect = ctx.effect_hook
    return DBOSWorkload(
        workflow=two_gates_wf,
        args=(_timeout(ctx),),
        steps={"pre": "pre", "gate": "gate", "gate2": "gate2", "end": "end"},
        topic=APPROVE,
        gated_task="gate",
    )


def _upgrade_pair(ctx: WorkloadContext, workflow: Callable[..., object], change: str) -> DBOSWorkload:
    HOOK.effect, HOOK.version = ctx.effect_hook, str(ctx.version)
    steps = {"pre": "pre", "gate": "gate", "end": "end"}
    if HOOK.version == "v2":
        steps[change] = change
    return DBOSWorkload(workflow=workflow, args=(_timeout(ctx),), steps=steps, topic=APPROVE, gated_task="gate")


def upgrade_step_added(ctx: WorkloadContext) -> DBOSWorkload:
    return _upgrade_pair(ctx, step_added_wf, "audit")


def upgrade_step_inserted(ctx: WorkloadContext) -> DBOSWorkload:
    return _upgrade_pair(ctx, step_inserted_wf, "check")


BUILTIN = {
    "three_step": three_step,
    "gate_after_interrupt": gate_after_interrupt,
    "two_gates": two_gates,
    "upgrade_step_added": upgrade_step_added,
    "upgrade_step_inserted": upgrade_step_inserted,
}

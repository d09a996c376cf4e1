"""Built-in Microsoft Agent Framework workflows (executors only: no chat client, no network).

* ``three_step``: executors ``a`` -> ``b`` -> ``c`` on a chain of edges, one effect each; ``c``
  yields the workflow's output. One executor per superstep, so a superstep's checkpoint records
  exactly one executor's work.
* ``gate_after_interrupt``: ``pre`` (effect) -> ``gate``, whose handler pauses with
  ``await ctx.request_info(Approval(...), str)``; the run ends idle with a pending request.
  ``gate``'s ``@response_handler`` fires the gated effect keyed by the answer (``gate:yes``) and
  sends on to ``end`` (effect, output). This is the framework's documented human-in-the-loop shape:
  the answer arrives later, in any process, as ``workflow.run(checkpoint_id=...,
  responses={request_id: answer})``.
* ``two_gates``: ``pre`` -> ``gate`` (request, effect keyed by the answer) -> ``gate2`` (request,
  effect keyed by the second answer) -> ``end``: a run answered once is consumed but not complete.

A workload is an ``AFWorkload``: ``build()`` makes a fresh ``Workflow`` (one per call: a
``Workflow`` instance refuses a second concurrent run, and a fresh process builds its own), and
the adapter passes the checkpoint storage at run time (``workflow.run(..., checkpoint_storage=)``),
so a team's factory builds its workflow as it would without chaos, with or without its own storage.
Request payloads are pickled into the checkpoint, so their types must be on the storage's
allow-list (``allowed_types``: ``module:qualname``).
"""

# no ``from __future__ import annotations``: releases before 1.13 read a handler's annotations as
# objects and refuse string ones ("must be annotated as WorkflowContext ... got WorkflowContext[str]")
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from agent_framework import Executor, Workflow, WorkflowBuilder, WorkflowContext, handler, response_handler

ALLOWED = "chaos.workloads.agent_framework:Approval"


@dataclass
class Approval:
    """What ``gate`` asks the human (pickled into the checkpoint: on the storage's allow-list)."""

    prompt: str
    step: str = "gate"


@dataclass
class AFWorkload:
    """An Agent Framework app as chaos drives it (a team's factory ``f(ctx) -> AFWorkload``).

    ``build``: a fresh ``Workflow`` (built without checkpoint storage, or with the team's own: the
    adapter's storage is passed at run time); ``input``: the first message; ``allowed_types``: the
    ``module:qualname`` types its checkpoints pickle (request payloads, executor state) beyond the
    framework's; ``gated_task``: the task whose effect an answer gates; ``tasks``: executor id ->
    the effect label it fires (reports); ``answer``: ``answer(request_data) -> value`` for
    ``answers: workload``; ``name``: the workflow's name (its checkpoints are listed by it)."""

    build: Callable[[], Workflow]
    input: Any
    name: str
    allowed_types: list[str] = field(default_factory=list)
    gated_task: str | None = None
    tasks: dict[str, str] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    answer: Callable[[Any], Any] | None = None


Effect = Callable[..., None]


class Step(Executor):
    """Fires ``task``'s effect and passes the message on; the last one yields the output."""

    def __init__(self, id: str, effect: Effect, last: bool = False):
        super().__init__(id=id)
        self._effect = effect
        self._last = last

    @handler
    async def run(self, message: str, ctx: WorkflowContext[str, str]) -> None:
        self._effect(self.id, None)
        if self._last:
            await ctx.yield_output(f"{message}>{self.id}")
        else:
            await ctx.send_message(f"{message}>{self.id}")


class Gate(Executor):
    """Pauses with ``request_info``; its response handler fires the gated effect keyed by the answer."""

    def __init__(self, id: str, effect: Effect):
        super().__init__(id=id)
        self._effect = effect

    @handler
    async def ask(self, message: str, ctx: WorkflowContext[str]) -> None:
        # any answer (a scenario's resume value may be a bool or a string): the response type is object
        await ctx.request_info(Approval(prompt=f"approve {message}?", step=self.id), object)

    @response_handler
    async def on_answer(self, original: Approval, answer: object, ctx: WorkflowContext[str]) -> None:
        self._effect(self.id, answer)
        await ctx.send_message(f"{original.step}={answer}")


def _chain(name: str, executors: list[Executor]) -> Callable[[], Workflow]:
    def build() -> Workflow:
        b = WorkflowBuilder(start_executor=executors[0], name=name)
        for x, y in pairwise(executors):
            b = b.add_edge(x, y)
        return b.build()

    return build


def three_step(ctx: Any) -> AFWorkload:
    def build() -> Workflow:
        return _chain("three_step", [Step("a", ctx.effect), Step("b", ctx.effect), Step("c", ctx.effect, last=True)])()

    return AFWorkload(build=build, input="order-1", name="three_step", tasks={"a": "a", "b": "b", "c": "c"})


def gate_after_interrupt(ctx: Any) -> AFWorkload:
    def build() -> Workflow:
        return _chain("gate_after_interrupt", [Step("pre", ctx.effect), Gate("gate", ctx.effect), Step("end", ctx.effect, last=True)])()

    return AFWorkload(
        build=build,
        input="refund-42",
        name="gate_after_interrupt",
        allowed_types=[ALLOWED],
        gated_task="gate",
        tasks={"pre": "pre", "gate": "gate", "end": "end"},
    )


def two_gates(ctx: Any) -> AFWorkload:
    def build() -> Workflow:
        return _chain(
            "two_gates",
            [Step("pre", ctx.effect), Gate("gate", ctx.effect), Gate("gate2", ctx.effect), Step("end", ctx.effect, last=True)],
        )()

    return AFWorkload(
        build=build,
        input="refund-42",
        name="two_gates",
        allowed_types=[ALLOWED],
        gated_task="gate",
        tasks={"pre": "pre", "gate": "gate", "gate2": "gate2", "end": "end"},
    )


BUILTIN = {"three_step": three_step, "gate_after_interrupt": gate_after_interrupt, "two_gates": two_gates}

"""Built-in LlamaIndex Workflows workloads (classes at module level: steps are typed by events).

* ``three_step``: StartEvent -> a -> AEvent -> b -> BEvent -> c -> StopEvent, one effect per step.
* ``gate_after_interrupt``: pre fires its effect and returns ``InputRequiredEvent`` (the
  framework's human-in-the-loop pause); ``gate`` consumes the ``HumanResponseEvent`` and fires its
  effect keyed by the response (``gate:True``); ``end`` fires the last effect and stops.

* ``invalid_type``: a -> bad -> c over a typed state (``Context[CountState]``, a pydantic model
  with ``count: int``); ``bad`` assigns a string to ``count`` inside ``ctx.store.edit_state()``.
  The invalid-state kind reads what ``Context.to_dict`` then saves and whether ``from_dict`` takes it.

Steps reach the effect hook through the workflow instance (``self.effect``), so one racer's hook
never leaks into another's workflow.
"""

from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic import BaseModel
from workflows import Context, Workflow, step
from workflows.events import Event, HumanResponseEvent, InputRequiredEvent, StartEvent, StopEvent


class AEvent(Event):
    pass


class BEvent(Event):
    pass


class GatedEvent(Event):
    answer: str = ""


class _Effectful(Workflow):
    def __init__(self, effect: Callable[[str, object], None], **kw: object):
        super().__init__(**kw)
        self.effect = effect


class ThreeStep(_Effectful):
    @step
    async def a(self, ctx: Context, ev: StartEvent) -> AEvent:
        self.effect("a", None)
        return AEvent()

    @step
    async def b(self, ctx: Context, ev: AEvent) -> BEvent:
        self.effect("b", None)
        return BEvent()

    @step
    async def c(self, ctx: Context, ev: BEvent) -> StopEvent:
        self.effect("c", None)
        return StopEvent(result=["a", "b", "c"])


class GateAfterInterrupt(_Effectful):
    @step
    async def pre(self, ctx: Context, ev: StartEvent) -> InputRequiredEvent:
        self.effect("pre", None)
        return InputRequiredEvent(prefix="approve?")

    @step
    async def gate(self, ctx: Context, ev: HumanResponseEvent) -> GatedEvent:
        self.effect("gate", ev.response)
        return GatedEvent(answer=str(ev.response))

    @step
    async def end(self, ctx: Context, ev: GatedEvent) -> StopEvent:
        self.effect("end", None)
        return StopEvent(result=ev.answer)


class CountState(BaseModel):
    log: list[str] = []
    count: int = 0


INVALID_COUNT = "not-a-number"


class BadEvent(Event):
    pass


class InvalidType(_Effectful):
    @step
    async def a(self, ctx: Context[CountState], ev: StartEvent) -> AEvent:
        self.effect("a", None)
        async with ctx.store.edit_state() as state:
            state.log.append("a")
            state.count = 1
        return AEvent()

    @step
    async def bad(self, ctx: Context[CountState], ev: AEvent) -> BadEvent:
        self.effect("bad", None)
        async with ctx.store.edit_state() as state:
            state.log.append("bad")
            state.count = INVALID_COUNT  # the schema-breaking write under test
        return BadEvent()

    @step
    async def c(self, ctx: Context[CountState], ev: BadEvent) -> StopEvent:
        self.effect("c", None)
        async with ctx.store.edit_state() as state:
            state.log.append("c")
        return StopEvent(result="done")


@dataclass
class LlamaWorkload:
    """What a factory (``package.module:factory``, given a ``WorkloadContext``) returns to have its
    own workflow tested.

    ``workflow``: the ``Workflow`` instance (its steps fire effects through ``ctx.effect``);
    ``input``: the keyword arguments of ``workflow.run(**input)`` (the StartEvent's fields);
    ``gated_task``: the effect an approval gates (a race counts its fires); ``answer``: for
    ``answers: workload``, a callable given the pending ``InputRequiredEvent``'s fields (a dict, as
    saved) that returns the human's response; ``meta``: facts a kind needs (built-ins only)."""

    workflow: Workflow
    gated_task: str | None = None
    meta: dict[str, object] = field(default_factory=dict)
    input: dict[str, object] = field(default_factory=dict)
    answer: Callable[[dict], object] | None = None


@dataclass
class LlamaThread:
    """What a team's recovery gets (``resume: app:package.module:recover`` calls ``recover(ctx,
    thread)``, or awaits it, in the fresh process).

    ``saved``: the ``Context.to_dict()`` the application saved last (None: nothing was saved, the
    kill came before the first step finished); ``awaiting_input``: that save was made at an
    ``InputRequiredEvent`` (a human was asked); ``question``: that event's fields; ``pauses``: how
    many pauses the run has made so far; ``ended``: the run had finished; ``answers``: the
    scenario's plan (if any) and ``answer``: its answer for the pause the run waits at now (None:
    no plan, or used up; with a plan, ``recover`` is called again at each pause the run reaches).
    ``drive(handler)`` (awaitable) streams a ``workflow.run(...)`` handler the way chaos does,
    saving the context at every step boundary and at the next pause, and returns what happened;
    ``recover`` returns what its last ``drive`` returned."""

    thread_id: str
    workflow: Workflow
    input: dict[str, object]
    saved: dict | None
    awaiting_input: bool
    question: dict | None
    pauses: int
    ended: bool
    drive: Callable[[object], object]
    answers: list[object] = field(default_factory=list)
    answer: object = None


def _timeout(ctx) -> float:
    """A run that waits for an event nobody will send ends with WorkflowTimeoutError (a value)."""
    return float(ctx.params.get("timeout_s", 10))


def three_step(ctx) -> LlamaWorkload:
    return LlamaWorkload(workflow=ThreeStep(ctx.effect_hook, timeout=_timeout(ctx)))


def gate_after_interrupt(ctx) -> LlamaWorkload:
    return LlamaWorkload(workflow=GateAfterInterrupt(ctx.effect_hook, timeout=_timeout(ctx)), gated_task="gate")


def invalid_type(ctx) -> LlamaWorkload:
    return LlamaWorkload(
        workflow=InvalidType(ctx.effect_hook, timeout=_timeout(ctx)),
        meta={"invalid": {"task": "bad", "field": "count", "value": INVALID_COUNT}},
    )


BUILTIN = {"three_step": three_step, "gate_after_interrupt": gate_after_interrupt, "invalid_type": invalid_type}

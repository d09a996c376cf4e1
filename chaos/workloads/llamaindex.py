"""Built-in LlamaIndex Workflows workloads (classes at module level: steps are typed by events).

* ``three_step``: StartEvent -> a -> AEvent -> b -> BEvent -> c -> StopEvent, one effect per step.
* ``gate_after_interrupt``: pre fires its effect and returns ``InputRequiredEvent`` (the
  framework's human-in-the-loop pause); ``gate`` consumes the ``HumanResponseEvent`` and fires its
  effect keyed by the response (``gate:True``); ``end`` fires the last effect and stops.

Steps reach the effect hook through the workflow instance (``self.effect``), so one racer's hook
never leaks into another's workflow.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from workflows import Context, Workflow, step
from workflows.events import Event, HumanResponseEvent, InputRequiredEvent, StartEvent, StopEvent


class AEvent(Event):
    pass


class BEvent(Event):
    pass


class GatedEvent(Event):
    answer: str = ""


class _Effectful(Workflow):
    def __init__(self, effect: Callable[[str, Any], None], **kw: Any):
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


@dataclass
class LlamaWorkload:
    workflow: Workflow
    gated_task: str | None = None


def _timeout(ctx) -> float:
    """A run that waits for an event nobody will send ends with WorkflowTimeoutError (a value)."""
    return float(ctx.params.get("timeout_s", 10))


def three_step(ctx) -> LlamaWorkload:
    return LlamaWorkload(workflow=ThreeStep(ctx.effect_hook, timeout=_timeout(ctx)))


def gate_after_interrupt(ctx) -> LlamaWorkload:
    return LlamaWorkload(workflow=GateAfterInterrupt(ctx.effect_hook, timeout=_timeout(ctx)), gated_task="gate")


BUILTIN = {"three_step": three_step, "gate_after_interrupt": gate_after_interrupt}

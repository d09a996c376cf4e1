"""A LlamaIndex workflow with a loop whose step fires an effect on every pass: ``draft`` writes
draft n (``ctx.effect("draft", n)``), ``check`` sends it back until the third."""

from __future__ import annotations

from typing import Any

from workflows import Context, Workflow, step
from workflows.events import Event, StartEvent, StopEvent

from chaos.workloads.llamaindex import LlamaWorkload


class Again(Event):
    n: int


class Drafted(Event):
    n: int


class DraftLoop(Workflow):
    def __init__(self, effect: Any, **kw: Any):
        super().__init__(**kw)
        self.effect = effect

    @step
    async def draft(self, ctx: Context, ev: StartEvent | Again) -> Drafted:
        n = ev.n + 1 if isinstance(ev, Again) else 1
        self.effect("draft", n)
        return Drafted(n=n)

    @step
    async def check(self, ctx: Context, ev: Drafted) -> Again | StopEvent:
        return Again(n=ev.n) if ev.n < 3 else StopEvent(result=ev.n)


def draft_loop(ctx: Any) -> LlamaWorkload:
    return LlamaWorkload(workflow=DraftLoop(ctx.effect, timeout=20))

"""LlamaIndex Workflows adapter (racer side): a workflow whose context is saved at step boundaries.

LlamaIndex Workflows keeps a run in memory; its persistence API hands the application the
context as a dict (``Context.to_dict``) and rebuilds it (``Context.from_dict``) to resume. The
application decides when to save. This adapter saves the way the docs suggest for durable runs:
whenever a step finishes (``StepStateChanged`` with ``not_running`` in the internal event stream)
and when the workflow asks for human input (``InputRequiredEvent``), into a JSON file replaced
atomically. Barriers: ``save(after=<step>):before/after``, ``save(input_required):before/after``.

The saved document also carries what the application knows at that moment: the steps finished
so far (the durable frontier), whether the run waits for a human, whether it ended.

Resume forms: ``none`` -> ``from_dict`` + ``run(ctx=...)`` (continue what the saved context holds);
``input`` -> a new run with a fresh context; ``command`` -> ``from_dict`` + ``run`` +
``send_event(HumanResponseEvent(response=value))``, the documented way to answer a pause.
"""

from __future__ import annotations

import json
from typing import Any

from chaos.racer.barrier import BarrierClient
from chaos.racer.ledger import Ledger
from chaos.racer.protocol import Action, ActionOutcome, InspectResult, RacerSpec
from chaos.targets.base import NothingSaved, error_of
from chaos.targets.common import AsyncSession, outcome
from chaos.workloads import build_workload

UNSUPPORTED_OPS = "LlamaIndex Workflows has no checkpoint ids or fork operation (the application keeps one Context dict)"


class NoSavedContext(NothingSaved):
    """Resume asked for, but no context was ever saved for this run."""


def _pending_steps(ctx_doc: dict) -> list[str]:
    workers = (ctx_doc or {}).get("workers") or {}
    return sorted(n for n, w in workers.items() if w.get("queue") or w.get("in_progress"))


class LlamaIndexSession(AsyncSession):
    unsupported_ops = UNSUPPORTED_OPS
    store_suffix = ".ctx.json"

    def __init__(self, spec: RacerSpec, barrier: BarrierClient, ledger: Ledger):
        from chaos.workloads.llamaindex import BUILTIN, LlamaWorkload

        super().__init__(spec, barrier, ledger)
        self.workload = build_workload(spec, self.recorder, BUILTIN, LlamaWorkload)
        self.completed: list[str] = []

    def _save(self, what: str, handler: Any, *, awaiting: bool) -> None:
        doc = handler.ctx.to_dict()
        self.seq += 1
        self.store.save(
            what,
            {
                "seq": self.seq,
                "completed": list(self.completed),
                "awaiting_input": awaiting,
                "ended": not doc.get("is_running", True),
                "ctx": doc,
            },
        )

    async def _drive(self, handler: Any, answer: Any = None, answering: bool = False) -> ActionOutcome:
        from workflows.events import HumanResponseEvent, InputRequiredEvent, StepStateChanged, StopEvent

        if answering:
            handler.ctx.send_event(HumanResponseEvent(response=answer))
        async for ev in handler.stream_events(expose_internal=True):
            if isinstance(ev, StepStateChanged):
                if ev.step_state.value == "not_running":
                    self.completed.append(ev.name)
                    self._save(f"after={ev.name}", handler, awaiting=False)
            elif isinstance(ev, InputRequiredEvent):
                self._save("input_required", handler, awaiting=True)
                await _cancel(handler)
                return outcome("interrupted", self.recorder.observed, interrupts=[getattr(ev, "prefix", "input")])
            elif isinstance(ev, StopEvent):
                break
        result = await handler
        return outcome("done", self.recorder.observed, result=repr(result)[:200])

    async def _perform(self, action: Action) -> ActionOutcome:
        from workflows import Context

        op, form = action.get("op", "run"), action.get("form", "input")
        wf = self.workload.workflow
        if op == "run" or form == "input":
            self.seq, self.completed = (self.store.load() or {}).get("seq", 0), []
            return await self._drive(wf.run())
        doc = self.store.load()
        if doc is None:
            raise NoSavedContext(
                "nothing to continue: the kill came before the first save, and LlamaIndex Workflows persists nothing "
                f"itself (the application saves Context.to_dict after a step; none at {self.store.path.name})"
            )
        self.seq, self.completed = doc["seq"], list(doc["completed"])
        if form == "none" and doc.get("awaiting_input"):
            return outcome("interrupted", self.recorder.observed, interrupts=["input_required"])
        ctx = Context.from_dict(wf, doc["ctx"])
        if form == "none":
            return await self._drive(wf.run(ctx=ctx))
        if form == "command":
            return await self._drive(wf.run(ctx=ctx), action.get("value"), answering=True)
        raise ValueError(f"unknown resume form {form!r}")

    def inspect(self) -> InspectResult:
        try:
            doc = self.store.load()
        except Exception as exc:
            return {"checkpoints": None, "error": error_of(exc)}
        if doc is None:
            return {
                "checkpoints": 0,
                "head_step": None,
                "next": [],
                "completed_tasks": [],
                "pending_interrupts": 0,
                "ended": False,
                "error": None,
            }
        return {
            "checkpoints": doc["seq"],
            "head_step": doc["seq"],
            "next": _pending_steps(doc["ctx"]) + (["input_required"] if doc.get("awaiting_input") else []),
            "completed_tasks": sorted(set(doc["completed"])),
            "pending_interrupts": 1 if doc.get("awaiting_input") else 0,
            "ended": bool(doc.get("ended")),
            "values": self._state_values(doc["ctx"]),
            "values_source": "saver",
            "error": None,
        }

    @staticmethod
    def _state_values(ctx_doc: dict) -> Any:
        """The saved state's values as the serializer wrote them (read below the framework:
        ``Context.from_dict`` decodes the state only when a step reads it)."""
        data = ((ctx_doc or {}).get("state") or {}).get("state_data") if isinstance(ctx_doc, dict) else None
        if isinstance(data, (str, bytes)):
            try:
                data = json.loads(data)
            except ValueError:
                return None
        return data.get("value") if isinstance(data, dict) and "value" in data else data

    def close(self) -> None:
        self.aio.close()


async def _cancel(handler: Any) -> None:
    """Stop a run that waits for a human: the saved context is what a later process resumes."""
    try:
        await handler.cancel_run()
    except Exception:
        pass  # a cancelled run may raise on the way out; the process ends right after


def open_session(spec: RacerSpec, barrier: BarrierClient, ledger: Ledger) -> LlamaIndexSession:
    return LlamaIndexSession(spec, barrier, ledger)


# For warm racers (chaos.racer.forkserver): LlamaIndex Workflows imports start no thread and open nothing
# (checked: one thread, no descriptor after the preload), so racers fork from a pre-imported parent.
PRELOAD = ("workflows", "workflows.events", "chaos.workloads.llamaindex")


def prewarm(only: str | None = None) -> None:
    """Build each built-in workflow once (nothing runs: workflows start their loop only in ``run``)."""
    from chaos.targets.common import prewarm_workloads
    from chaos.workloads.llamaindex import BUILTIN

    prewarm_workloads("llamaindex", BUILTIN, only)

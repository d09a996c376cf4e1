"""LlamaIndex Workflows adapter (racer side): a workflow whose context is saved at step boundaries.

LlamaIndex Workflows keeps a run in memory; its persistence API hands the application the
context as a dict (``Context.to_dict``) and rebuilds it (``Context.from_dict``) to resume. The
application decides when to save. This adapter saves the way the docs suggest for durable runs:
whenever a step finishes (``StepStateChanged`` with ``not_running`` in the internal event stream)
and when the workflow asks for human input (``InputRequiredEvent``), into a JSON file replaced
atomically. A step that returns the ``InputRequiredEvent`` is saved once, with the question (a save
between the two would restore a run that waits for an answer nobody was asked for). Barriers: ``save(after=<step>):before/after``, ``save(input_required):before/after``.

The saved document also carries what the application knows at that moment: the steps finished
so far (the durable frontier), whether the run waits for a human (and the question asked), how
many pauses the run has made, whether it ended.

Every effect row names the step that fired it and its pass (``draft#2``: the second run of
``draft`` in this run's life, read from the framework's step context), and ``inspect`` reports the
passes recorded complete (``completed_task_ids``): a loop's next pass is progress, the same pass
run again after a crash is not. A context restored after its run ended starts over (the framework
re-runs it from its ``StartEvent``), so its passes count from the first again; the adapter's own
resume forms never do that: a saved run that ended (its last step returned the ``StopEvent``, from
whichever end) is nothing to resume, answered or not (outcome ``done`` with ``nothing_to_resume``).

Every ``HumanResponseEvent`` sent into the workflow (by the adapter or by a team's own driver) is
an approval, listed in the action's outcome (``approvals``); a restore that runs on without one is
a recovery, so approval authority (AA) is judged.

Resume forms: ``none`` -> ``from_dict`` + ``run(ctx=...)`` (continue what the saved context holds);
``input`` -> a new run with a fresh context; ``command`` -> ``from_dict`` + ``run`` +
``send_event(HumanResponseEvent(response=value))``, the documented way to answer a pause; with
``answers`` (a plan), the n-th pause of the run gets the n-th answer, pause after pause, until the
run ends or the plan is used up (the pause's number is read from the saved document, so a fresh
process after a crash picks up the plan where the run is); ``app`` -> the team's own
``recover(ctx, thread)`` (``chaos.workloads.llamaindex.LlamaThread``), called again at each pause
the run reaches while an ``answers`` plan has an answer for it (``thread.answer``).
"""

from __future__ import annotations

import json
import os
import re
import warnings
from typing import Any

# llama-index-core (preloaded below where installed) imports numpy, whose OpenBLAS starts a worker
# thread per core at import; one thread is all an agent's bookkeeping needs, and it keeps the fork
# server at one thread (set before anything imports numpy; a value the user set is kept)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from chaos.racer.barrier import BarrierClient
from chaos.racer.ledger import Ledger, Where
from chaos.racer.protocol import Action, ActionOutcome, InspectResult, RacerSpec
from chaos.targets.base import NothingSaved, Unsupported, error_of, jsonable
from chaos.targets.common import AsyncSession, answer_by_plan, answer_when_asked, call_recovery, outcome, recover_by_plan, recovery_context
from chaos.targets.llamaindex import INFO
from chaos.workloads import WorkloadContext, build_workload

FINISHED = "the saved run had ended: nothing to resume (the driver does not run a finished run again; LlamaIndex would restore it and start the run over from its StartEvent)"
ADDRESSED = "an answer cannot be addressed to one pause: a HumanResponseEvent carries no pause id, it goes to whatever step waits for one (resume_by: interrupt is LangGraph's)"
MAX_ANSWERS = 100  # pauses a plan answers in one call (a workflow that always asks again)


_NOTE_APPROVAL: list[Any] = [None]  # the live session's EffectRecorder.note_approval


def track_approvals(note: Any) -> None:
    """Note every ``HumanResponseEvent`` sent into a workflow as an approval, whoever sends it
    (chaos's driver by the plan, or a team's own ``resume: app:`` driver through
    ``handler.ctx.send_event``): that event is the only answer a waiting step takes, so a restored
    context that runs on without one was not approved. ``Context.send_event`` is wrapped once per
    process; the note goes to the session opened last (a racer has one)."""
    from workflows import Context
    from workflows.events import HumanResponseEvent

    _NOTE_APPROVAL[0] = note
    if getattr(Context.send_event, "_chaos_approvals", False):
        return
    orig = Context.send_event

    def send_event(self: Any, message: Any, step: str | None = None) -> None:
        if isinstance(message, HumanResponseEvent) and _NOTE_APPROVAL[0] is not None:
            _NOTE_APPROVAL[0]()
        return orig(self, message, step)

    send_event._chaos_approvals = True  # type: ignore[attr-defined]  # a mark on the patched function: installed once
    Context.send_event = send_event


class NoSavedContext(NothingSaved):
    """Resume asked for, but no context was ever saved for this run."""


def _skipped_key(message: Warning | str) -> str | None:
    """The key an ``UnserializableKeyWarning`` says ``to_dict`` skipped ("... unserializable key:
    memory -- ..."), else None."""
    if type(message).__name__ != "UnserializableKeyWarning":
        return None
    m = re.search(r"unserializable key: ([^\s]+)", str(message))
    return m.group(1) if m else None


def _pending_steps(ctx_doc: dict) -> list[str]:
    workers = (ctx_doc or {}).get("workers") or {}
    return sorted(n for n, w in workers.items() if w.get("queue") or w.get("in_progress"))


def _passes(names: list[str]) -> list[str]:
    """``["draft", "review", "draft"]`` -> ``["draft#1", "review#1", "draft#2"]``: each step's pass."""
    seen: dict[str, int] = {}
    out = []
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        out.append(f"{n}#{seen[n]}")
    return out


class LlamaIndexSession(AsyncSession):
    unsupported_ops = INFO.unsupported["fork"]  # run and resume only: no checkpoints to list, address or fork from
    store_suffix = ".ctx.json"

    def __init__(self, spec: RacerSpec, barrier: BarrierClient, ledger: Ledger):
        from chaos.workloads.llamaindex import BUILTIN, LlamaWorkload

        super().__init__(spec, barrier, ledger)
        self.recorder.where = self._where
        self.spec = spec
        self.workload = build_workload(spec, self.recorder, BUILTIN, LlamaWorkload)
        track_approvals(self.recorder.note_approval)
        self.completed: list[str] = []
        self.pauses = 0
        self.base: dict[str, int] = {}  # step -> passes recorded complete when this action began
        self.invocations: dict[int, tuple[Any, str]] = {}  # id(step context) -> (it, its pass id)
        self.last: ActionOutcome | None = None  # what the last drive returned (for app recoveries)
        self.dropped: list[str] = []  # the state keys the last save skipped (to_dict's UnserializableKeyWarning)
        self.restored_dropped: list[str] = []  # those of the document this action's run was restored from

    def perform(self, action: Action) -> ActionOutcome:
        """As every session; a failed run restored from a save that skipped state keys says which
        (``dropped_state``: the preflight then names LlamaIndex's drop, not the app's wiring)."""
        self.restored_dropped = []
        out = super().perform(action)
        if out.get("status") == "error" and self.restored_dropped:
            out["dropped_state"] = list(self.restored_dropped)
        return out

    def _where(self) -> Where | None:
        """The running step and its pass: the first effect of a step invocation numbers it."""
        try:
            from workflows.runtime.types.results import StepWorkerStateContextVar

            step_ctx = StepWorkerStateContextVar.get()
            name = str(step_ctx.state.step_name)
        except Exception:  # not inside a step (or a release without this context variable)
            return None
        known = self.invocations.get(id(step_ctx))
        if known is None:
            n = self.base.get(name, 0) + 1 + sum(1 for _, t in self.invocations.values() if t.rsplit("#", 1)[0] == name)
            known = self.invocations[id(step_ctx)] = (step_ctx, f"{name}#{n}")
        return {"node": name, "namespace": "", "task_id": known[1], "outside_task": False}

    def _begin(self, doc: dict | None) -> None:
        """Pick up the run where ``doc`` (the saved document, None for a new run) left it."""
        restart = doc is None or bool(doc.get("ended"))
        self.seq = (doc or {}).get("seq", self.seq)
        self.completed = [] if doc is None else list(doc["completed"])
        self.pauses = 0 if doc is None else int(doc.get("pauses", 1 if doc.get("awaiting_input") else 0))
        self.base = {} if restart else {n: self.completed.count(n) for n in set(self.completed)}
        self.invocations = {}
        self.restored_dropped = [] if doc is None else list(doc.get("dropped") or [])

    def _save(self, what: str, handler: Any, *, awaiting: bool, question: Any = None, ended: bool = False) -> None:
        """``ended``: the step just saved returned the ``StopEvent`` (the context may still say it runs).
        The state keys ``to_dict`` skips (``UnserializableKeyWarning``: a FunctionAgent's ``memory``)
        are saved beside it as ``dropped``: a run restored from it has lost them."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            doc = handler.ctx.to_dict()
        self.dropped = sorted({k for w in caught if (k := _skipped_key(w.message))})
        self.seq += 1
        if awaiting:
            self.pauses += 1
        self.store.save(
            what,
            {
                "seq": self.seq,
                "completed": list(self.completed),
                "awaiting_input": awaiting,
                "question": question,
                "pauses": self.pauses,
                "ended": ended or not doc.get("is_running", True),
                "dropped": self.dropped,
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
                    if not _returned(ev.output_event_name, InputRequiredEvent):  # saved with its question, next
                        self._save(f"after={ev.name}", handler, awaiting=False, ended=_returned(ev.output_event_name, StopEvent))
            elif isinstance(ev, InputRequiredEvent):
                self._save("input_required", handler, awaiting=True, question=jsonable(ev))
                await _cancel(handler)
                self.last = outcome("interrupted", self.recorder.observed, interrupts=[getattr(ev, "prefix", "input")])
                return self.last
            elif isinstance(ev, StopEvent):
                break
        result = await handler
        self.last = outcome("done", self.recorder.observed, result=repr(result)[:200])
        return self.last

    def _saved(self) -> dict:
        doc = self.store.load()
        if doc is None:
            raise NoSavedContext(
                "nothing to continue: the kill came before the first save, and LlamaIndex Workflows persists nothing "
                f"itself (the application saves Context.to_dict after a step; none at {self.store.path.name})"
            )
        return doc

    def _restored(self, doc: dict) -> Any:
        from workflows import Context

        wf = self.workload.workflow
        return wf.run(ctx=Context.from_dict(wf, doc["ctx"]))

    async def _perform(self, action: Action) -> ActionOutcome:
        op, form = action.get("op", "run"), action.get("form", "input")
        if action.get("interrupt"):
            raise Unsupported(ADDRESSED)
        wf = self.workload.workflow
        if op == "run" or form == "input":
            self._begin(None)
            self.seq = (self.store.load() or {}).get("seq", 0)
            return await self._drive(wf.run(**self.workload.input))
        if form == "app":
            return await self._recover(action.get("recover") or "", action.get("plan"))
        doc = self._saved()
        self._begin(doc)
        if doc.get("ended"):  # a finished run is not run again, answered or not: nothing to resume
            from workflows import Context

            ctx = Context.from_dict(self.workload.workflow, doc["ctx"])  # read as a resume would: a refusal is the framework's
            await ctx.store.get_state()  # the state is decoded (and validated) when first read
            return outcome("done", self.recorder.observed, nothing_to_resume=FINISHED)
        if "answers" in action:
            return await self._answer_plan(action, doc)
        if form == "none" and doc.get("awaiting_input"):
            return outcome("interrupted", self.recorder.observed, interrupts=["input_required"])
        if form == "none":
            return await self._drive(self._restored(doc))
        if form == "command" and action.get("asked_only"):  # the workflow goes on first when it was not asking

            def saved() -> dict:
                d = self._saved()
                self._begin(d)
                return d

            return await answer_when_asked(
                doc,
                action.get("value"),
                go_on=lambda d: self._drive(self._restored(d)),
                answer=lambda d, value: self._drive(self._restored(d), value, answering=True),
                saved=saved,
                recorder=self.recorder,
            )
        if form == "command":
            return await self._drive(self._restored(doc), action.get("value"), answering=True)
        raise ValueError(f"unknown resume form {form!r}")

    async def _answer_plan(self, action: Action, doc: dict) -> ActionOutcome:
        """Answer pause after pause (``answer_by_plan``, ``chaos.targets.common``): each call restores
        the saved Context, and each document read after one begins the next."""

        def saved() -> dict:
            d = self._saved()
            self._begin(d)
            return d

        return await answer_by_plan(
            action.get("answers"),
            doc,
            pause_number=lambda: self.pauses,
            workload_answer=self.workload.answer,
            workload_type="LlamaWorkload",
            no_question={},
            go_on=lambda d: self._drive(self._restored(d)),
            answer=lambda d, value: self._drive(self._restored(d), value, answering=True),
            saved=saved,
            recorder=self.recorder,
            waiting="input_required",
            most=MAX_ANSWERS,
        )

    async def _recover(self, ref: str, plan: list[Any] | None = None) -> ActionOutcome:
        """The team's own recovery: ``recover(ctx, thread)`` from ``package.module:recover``, once or
        once per pause an answer plan answers (``recover_by_plan``, ``chaos.targets.common``)."""
        return await recover_by_plan(
            ref,
            plan,
            load=self.store.load,
            recorder=self.recorder,
            once=self._recover_once,
            waiting="input_required",
            most=MAX_ANSWERS,
        )

    async def _recover_once(self, ref: str, doc: dict | None, plan: list[Any], answer: Any) -> ActionOutcome:
        from chaos.workloads.llamaindex import LlamaThread

        self._begin(doc)
        self.last = None
        thread = LlamaThread(
            thread_id=self.thread_id,
            workflow=self.workload.workflow,
            input=dict(self.workload.input),
            saved=(doc or {}).get("ctx"),
            awaiting_input=bool((doc or {}).get("awaiting_input")),
            question=(doc or {}).get("question"),
            pauses=self.pauses,
            ended=bool((doc or {}).get("ended")),
            drive=self._drive,
            answers=plan,
            answer=answer,
        )
        failed = await call_recovery(ref, self._context, thread, self.recorder, passed_on=(NothingSaved,))
        if failed is not None:
            return failed
        if self.last is not None:
            self.last["recovered_by"] = ref
            return self.last
        if doc is None:
            raise NoSavedContext("nothing to continue: the recovery ran no workflow, and no context was ever saved")
        waiting = bool(doc.get("awaiting_input"))  # the recovery ran nothing: the run is as it was saved
        return outcome("interrupted" if waiting else "done", self.recorder.observed, recovered_by=ref, ran=False)

    def _context(self) -> WorkloadContext:
        return recovery_context(self.spec, self.recorder, self.thread_id)

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
                "completed_task_ids": [],
                "pending_interrupts": 0,
                "ended": False,
                "error": None,
            }
        return {
            "checkpoints": doc["seq"],
            "head_step": doc["seq"],
            "next": _pending_steps(doc["ctx"]) + (["input_required"] if doc.get("awaiting_input") else []),
            "completed_tasks": sorted(set(doc["completed"])),
            "completed_task_ids": _passes(doc["completed"]),
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


def _returned(output_event_name: str | None, base: type) -> bool:
    """Did the step return a ``base`` (or a subclass)? ``StepStateChanged`` names the output event as
    ``str(type)``. A step that returns the ``InputRequiredEvent`` is saved once, at the pause it
    announces: a save between its end and the pause would restore a run that no longer knows it
    asked (the restored context does not emit the question again) and waits for an answer nobody is
    asked for. A step that returns the ``StopEvent`` ended the run, several ends or one."""
    if not output_event_name:
        return False
    todo: list[type] = [base]
    while todo:
        cls = todo.pop()
        if output_event_name == str(cls):
            return True
        todo += cls.__subclasses__()
    return False


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
# Where llama-index-core is installed (a scenario's ``target.requirements``: agents such as
# ``FunctionAgent`` live there), its racers' workloads import it: ~970 modules, 1.2-1.9 s of CPU that
# every forked racer paid again in its build (measured 2026-12-03; the server imported
# ``workflows`` alone in 0.3 s). Importing it starts no thread (numpy's OpenBLAS is kept to the
# calling one above) and leaves no descriptor, no child process (checked by hand and by the server).
# LlamaIndex's ``Memory`` keeps its messages in an in-memory SQLite over SQLAlchemy's aiosqlite
# dialect, imported when its first store opens (~30 ms per racer; aiosqlite starts its thread per
# connection, at open, not at import).
PRELOAD_OPTIONAL: tuple[str, ...] = (
    "llama_index.core",
    "llama_index.core.agent.workflow",
    "sqlalchemy.dialects.sqlite.aiosqlite",
    "aiosqlite",
)


def prewarm(only: str | None = None) -> None:
    """Build each built-in workflow once (nothing runs: workflows start their loop only in ``run``);
    with llama-index-core, load its default tokenizer too (``get_tokenizer``: tiktoken's
    ``cl100k_base`` read from the copy llama-index-core ships, ~0.15-0.4 s of the first agent run
    of every racer otherwise: ``ChatMemoryBuffer.from_defaults`` asks for it; cached in
    ``llama_index.core.global_tokenizer``, opens nothing afterwards, starts no thread)."""
    import sys

    from chaos.targets.common import prewarm_workloads
    from chaos.workloads.llamaindex import BUILTIN

    prewarm_workloads("llamaindex", BUILTIN, only)
    if "llama_index.core" in sys.modules:
        try:
            from llama_index.core.utils import get_tokenizer

            get_tokenizer()
        except Exception:  # e.g. no tiktoken: the first agent that needs one reports it
            pass

"""Microsoft Agent Framework adapter (racer side): a workflow over an instrumented checkpoint storage.

A workflow run is a series of supersteps; the framework saves a ``WorkflowCheckpoint`` on the run's
entry, on delivered responses and after every superstep, each naming its parent
(``previous_checkpoint_id``). An executor pauses with ``ctx.request_info``: the run ends idle with
pending requests (``IDLE_WITH_PENDING_REQUESTS``), and the answer comes later, in any process, as
``workflow.run(checkpoint_id=..., responses={request_id: answer})``. The storage is
``FileCheckpointStorage`` in the trial's folder (backend ``file``) or a team's own
(``workload_params.storage``); barriers in ``chaos.targets.agent_framework.storage``.

The thread's head is the newest checkpoint of the chains in the storage (by the framework's
timestamp; a run always continues from the checkpoint it restored, so the newest is what an
operator resumes). Resume forms, as an application drives the framework:

* ``none``: restore the head and run on (``run(checkpoint_id=head)``); a head waiting for answers is
  left waiting (interrupted); a head with nothing in flight and nothing pending is finished;
* ``input``: a new run with the workload's input;
* ``command``: the answer: if the head waits, ``run(checkpoint_id=head, responses={id: value})``
  for its pending request (``interrupt: first``: addressed to the first request the thread ever
  made; ``unknown_id``: to an id no request has); if the head has messages in flight (a run
  killed after its answer was delivered), restore and run on; if finished, the answer is sent to
  the request it answered, as a client retrying its request would (the framework refuses it:
  "No pending requests found").
* ``fork``: answer the thread's first pause again from its own checkpoint (the oldest checkpoint with
  pending requests), with another value; the framework's plain addressing (``via: checkpoint``).

Identity (PC): a task is ``executor@superstep`` (the framework's iteration count, which a restore
keeps). ``inspect`` derives the completed ones from the head's chain: for each pair of consecutive
checkpoints (P, C) with C one superstep past P, the executors P's messages were delivered to ran
superstep C. LIVENESS reads the framework's own end: the head has neither messages in flight nor
pending requests (and the run has yielded its output).
"""

from __future__ import annotations

import contextvars
from itertools import pairwise
from pathlib import Path
from typing import Any

from chaos.racer.barrier import BarrierClient
from chaos.racer.ledger import Ledger, Where
from chaos.racer.protocol import Action, ActionOutcome, CheckpointInfo, ForkIntent, InspectResult, OutcomeStatus, RacerSpec, TreeCheckpoint
from chaos.targets.agent_framework.storage import Checkpoint, Message, OwnStorage, Storage, file_storage, storage_folder, watch_saves
from chaos.targets.base import NothingSaved, Unsupported, error_of, jsonable
from chaos.targets.common import AsyncSession, outcome, store_file
from chaos.workloads import build_workload, import_factory

UNKNOWN_ID = "0c4a05c4a05c4a05c4a05c4a05c4a05c"  # chaos.kinds.stray_resume's id that no request has
_RUNNING: contextvars.ContextVar[str | None] = contextvars.ContextVar("chaos_af_executor", default=None)


def _track_executors() -> None:
    """Name the executor running now (a context variable set around ``Executor.execute``), once per
    process: the effect rows name the executor that fired them."""
    from agent_framework import Executor

    if getattr(Executor.execute, "_chaos", False):
        return
    orig = Executor.execute

    async def execute(self: Executor, *args: object, **kwargs: object) -> object:
        token = _RUNNING.set(self.id)
        try:
            return await orig(self, *args, **kwargs)
        finally:
            _RUNNING.reset(token)

    execute._chaos = True  # type: ignore[attr-defined]  # a mark on the patched function: installed once
    Executor.execute = execute


class AgentFrameworkSession(AsyncSession):
    unsupported_ops = "the Agent Framework adapter runs run, resume, fork, checkpoints and intent"

    def __init__(self, spec: RacerSpec, barrier: BarrierClient, ledger: Ledger):
        from chaos.workloads.agent_framework import BUILTIN, AFWorkload

        super().__init__(spec, barrier, ledger)
        self.spec = spec
        self.params = dict(spec.get("workload_params") or {})
        self.workload = build_workload(spec, self.recorder, BUILTIN, AFWorkload)
        _track_executors()
        self.workflow: Any = self.workload.build()  # the edges (message targets); each call builds its own
        self.current: Any = None
        self.folder: Path = storage_folder(store_file(spec, ".ckpt"))
        allowed = [*self.workload.allowed_types, *self.params.get("allowed_types", [])]
        own = self.params.get("storage")
        if own:
            self.storage: Storage = OwnStorage(import_factory(str(own))(self.folder), barrier, self._targets)
        else:
            self.storage = file_storage(self.folder, allowed, barrier, self._targets)
        self.saves = watch_saves()
        self.recorder.where = self._where

    def perform(self, action: Action) -> ActionOutcome:
        if action.get("op") == "intent":
            return outcome("done", {}, intent=self._intent())
        if action.get("op") in ("fork", "checkpoints", "tree"):
            self.recorder.begin_action()
            try:
                return self.recorder.with_approvals(self.aio.run(self._perform(action)))
            except Unsupported:
                raise
            except Exception as exc:  # the framework's answer, recorded as data
                return self.recorder.with_approvals(outcome("error", self.recorder.observed, error=error_of(exc)))
        return super().perform(action)

    @staticmethod
    def _intent() -> ForkIntent:
        """What ``Workflow.run`` says about retry vs fork, read from its signature."""
        import inspect

        from agent_framework import Workflow

        sig = str(inspect.signature(Workflow.run))
        return {
            "discriminator": None,
            "surface": {"Workflow.run": sig},
            "note": "run(checkpoint_id=..., responses=...) restores any checkpoint of the chain and answers its requests: "
            "nothing in the call says whether it retries the newest checkpoint or forks an older one",
        }

    # -- identities -------------------------------------------------------------------------
    def _where(self) -> Where | None:
        ex = _RUNNING.get()
        if ex is None or self.current is None:
            return None
        step = int(self.current._runner._iteration) + 1  # the superstep running now
        return {"node": ex, "namespace": "", "task_id": f"{ex}@{step}", "outside_task": False}

    def _targets(self, message: Message) -> list[str]:
        if message.target_id:
            return [str(message.target_id)]
        src = str(message.source_id)
        return sorted({t for g in self.workflow.edge_groups if src in g.source_executor_ids for t in g.target_executor_ids})

    # -- the storage, read as the framework reads it -----------------------------------------
    async def _all(self) -> list[Checkpoint]:
        cps = await self.storage.list_checkpoints(workflow_name=self.workload.name)
        return sorted(cps, key=lambda c: c.timestamp)

    @staticmethod
    def _chain(head: Checkpoint, cps: list[Checkpoint]) -> list[Checkpoint]:
        """The head's ancestry, oldest first (a missing parent ends it)."""
        by_id = {c.checkpoint_id: c for c in cps}
        out: list[Checkpoint] = []
        seen: set[str] = set()
        c: Checkpoint | None = head
        while c is not None and c.checkpoint_id not in seen:
            seen.add(c.checkpoint_id)
            out.append(c)
            c = by_id.get(c.previous_checkpoint_id or "")
        return out[::-1]

    @staticmethod
    def _waiting(cp: Checkpoint) -> bool:
        return bool(cp.pending_request_info_events) and not any(cp.messages.values())

    @staticmethod
    def _finished(cp: Checkpoint) -> bool:
        return not cp.pending_request_info_events and not any(cp.messages.values())

    # -- actions ----------------------------------------------------------------------------
    async def _run(self, **kw: Any) -> ActionOutcome:
        wf = self.current = self.workload.build()
        failed0 = len(self.saves.failed)
        result = await wf.run(checkpoint_storage=self.storage, **kw)
        state = str(getattr(result.get_final_state(), "name", result.get_final_state()))
        reqs = [e.request_id for e in result if e.type == "request_info"]
        extra: dict[str, Any] = {"result": state, "outputs": jsonable(result.get_outputs())}
        if len(self.saves.failed) > failed0:
            extra["persistence_errors"] = self.saves.failed[failed0:]
        status: OutcomeStatus = "interrupted" if reqs or state == "IDLE_WITH_PENDING_REQUESTS" else "done"
        return outcome(status, self.recorder.observed, interrupts=reqs, interrupt_ids=reqs, **extra)

    async def _head(self) -> tuple[Checkpoint, list[Checkpoint]]:
        cps = await self._all()
        if not cps:
            raise NothingSaved(
                f"no checkpoint of this run in {self.folder.name}: the kill came before the run's entry checkpoint, so the framework never recorded the run"
            )
        return cps[-1], cps

    async def _answer(self, head: Checkpoint, cps: list[Checkpoint], value: object, address: str | None) -> ActionOutcome:
        pending = list(head.pending_request_info_events)
        asked = [rid for c in self._chain(head, cps) for rid in c.pending_request_info_events]
        if address == "first":
            rid = asked[0] if asked else UNKNOWN_ID
        elif address:
            rid = address
        else:
            rid = pending[0] if pending else (asked[-1] if asked else UNKNOWN_ID)
        self.recorder.note_approval()
        out = await self._run(checkpoint_id=head.checkpoint_id, responses={rid: value})
        out["addressed"] = rid
        return out

    async def _perform(self, action: Action) -> ActionOutcome:
        op, form = action.get("op", "run"), action.get("form", "input")
        if op in ("checkpoints", "tree"):  # tree: the list is one read either way
            return await self._checkpoints()
        if op == "fork":
            return await self._fork(action)
        if op == "run" or form == "input":
            return await self._run(message=self.workload.input)
        if form == "app":
            raise Unsupported("resume: app is not read by the Agent Framework adapter yet (no team recovery hook)")
        head, cps = await self._head()
        address = action.get("interrupt")
        if form == "command" and (self._waiting(head) or address or self._finished(head)):
            return await self._answer(head, cps, action.get("value"), address)
        if self._waiting(head):
            return outcome("interrupted", self.recorder.observed, interrupts=list(head.pending_request_info_events))
        if self._finished(head):
            return outcome(
                "done", self.recorder.observed, nothing_to_resume="the head checkpoint has nothing in flight and nothing pending"
            )
        return await self._run(checkpoint_id=head.checkpoint_id)

    async def _fork(self, action: Action) -> ActionOutcome:
        cps = await self._all()
        where = action.get("checkpoint", "interrupt")
        wanted = [c for c in cps if self._waiting(c)] if where == "interrupt" else [c for c in cps if c.checkpoint_id == where]
        if not wanted:
            raise Unsupported(
                "no checkpoint of the thread waits for an answer: nothing to fork from"
                if where == "interrupt"
                else f"no checkpoint {where!r} in the storage"
            )
        at = wanted[0]
        rid = next(iter(at.pending_request_info_events), UNKNOWN_ID)
        self.recorder.note_approval()
        out = await self._run(checkpoint_id=at.checkpoint_id, responses={rid: action.get("value")})
        out["forked_from"] = at.checkpoint_id
        out["via"] = "checkpoint"
        return out

    async def _checkpoints(self) -> ActionOutcome:
        cps = await self._all()

        def key(c: Checkpoint) -> str:  # time-ordered ids, so the newest is the greatest (chaos.kinds.chain)
            return f"{c.timestamp}/{c.checkpoint_id}"

        by_id = {c.checkpoint_id: c for c in cps}
        infos: list[CheckpointInfo] = [
            {
                "id": c.checkpoint_id,
                "step": c.iteration_count,
                "source": "pending" if self._waiting(c) else "loop",
                "next": sorted({t for b in c.messages.values() for m in b for t in self._targets(m)}),
                "interrupts": len(c.pending_request_info_events),
            }
            for c in reversed(cps)
        ]
        tree: list[TreeCheckpoint] = [
            {
                "id": key(c),
                "ns": "",
                "parent": key(by_id[c.previous_checkpoint_id]) if c.previous_checkpoint_id in by_id else c.previous_checkpoint_id,
                "step": c.iteration_count,
                "source": "loop",
            }
            for c in cps
        ]
        return outcome("done", {}, checkpoints=infos, tree=tree)

    def inspect(self) -> InspectResult:
        try:
            cps = self.aio.run(self._all())
        except Exception as exc:
            return {"checkpoints": None, "error": error_of(exc)}
        if not cps:
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
        head = cps[-1]
        chain = self._chain(head, cps)
        done: list[str] = []
        for p, c in pairwise(chain):
            if c.iteration_count == p.iteration_count + 1:
                done += [f"{t}@{c.iteration_count}" for b in p.messages.values() for m in b for t in self._targets(m)]
        nxt = sorted({t for b in head.messages.values() for m in b for t in self._targets(m)})
        waiting = sorted({str(e.source_executor_id) for e in head.pending_request_info_events.values()})
        user = {k: jsonable(v) for k, v in (head.state or {}).items() if not str(k).startswith("_")}
        return {
            "checkpoints": len(cps),
            "head_step": head.iteration_count,
            "next": nxt + waiting,
            "completed_tasks": sorted({d.split("@")[0] for d in done}),
            "completed_task_ids": done,
            "completed_by_namespace": {"": sorted({d.split("@")[0] for d in done})},
            "pending_interrupts": len(head.pending_request_info_events),
            "ended": self._finished(head) and len(chain) > 1,
            "values": user,
            "values_source": "saver",
            "error": None,
        }

    def close(self) -> None:
        self.aio.close()


def open_session(spec: RacerSpec, barrier: BarrierClient, ledger: Ledger) -> AgentFrameworkSession:
    return AgentFrameworkSession(spec, barrier, ledger)


# For warm racers (chaos.racer.forkserver): importing agent_framework starts no thread and opens no
# file; the workflow modules and the checkpoint encoding are imported on first use otherwise.
PRELOAD = (
    "agent_framework",
    "agent_framework._workflows._checkpoint",
    "agent_framework._workflows._checkpoint_encoding",
    "concurrent.futures.thread",  # a workflow's first run starts its executor: imported there otherwise
    "chaos.workloads.agent_framework",
)
PRELOAD_OPTIONAL: tuple[str, ...] = ()  # every module its racers import is there whatever the storage


def prewarm(only: str | None = None) -> None:
    """Build each built-in workflow once (nothing runs: a workflow starts only in ``run``)."""
    from chaos.targets.common import prewarm_factories, prewarm_workloads
    from chaos.workloads import WorkloadContext
    from chaos.workloads.agent_framework import BUILTIN

    prewarm_workloads("agent_framework", BUILTIN, only)
    for factory in prewarm_factories(BUILTIN, only):
        factory(WorkloadContext(checkpointer=None, effect_hook=lambda task, value=None, once=False, key=None: None)).build()

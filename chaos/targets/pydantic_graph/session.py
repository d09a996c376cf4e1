"""pydantic-graph adapter (racer side): a graph over an instrumented ``FileStatePersistence``.

pydantic-graph (1.x line) keeps a run as a JSON list of snapshots, each a node to run with a
status: ``created`` -> ``pending`` (taken by ``load_next``) -> ``running`` (``record_run``) ->
``success`` / ``error``; an ``End`` snapshot closes the run. Every change rewrites the file through
``_save_sync``; the instrumented subclass passes a barrier before and after it, named by what the
write changes: ``save(node=B,status=running):before``, ``save(end):after``. ``:before`` means the
file still holds the old list; ``:after`` means the new list is written.

Resume forms: ``none`` -> ``iter_from_persistence`` (take the next ``created`` snapshot and drive
the graph to the end); ``input`` -> a new run from the start node on the same file; ``command`` ->
``iter_from_persistence(..., deps=answer)``: the documented human-in-the-loop continuation, which
runs the paused node with the human's answer.

A racer killed inside a save leaves ``<file>.pydantic-graph-persistence-lock`` behind (every save
runs under that lock, and ``FileStatePersistence`` never breaks a lock whose holder died): every
later resume waits one second for it and gets anyio's ``TimeoutError`` with an empty message. A
racer killed while a node runs (at its effect) holds no lock, but leaves the node's snapshot
``running``; ``iter_from_persistence`` resumes only a ``created`` one and raises
``GraphRuntimeError: Unable to restore snapshot``. The error of either keeps the framework's type
and chain; its message says which of the two happened (``explain_error``). ``workload_params: {clear_stale_lock: true}`` plays the operator who
removes it before resuming (the outcome says ``cleared_stale_lock``), to measure what recovery does
past the lock.
"""

from __future__ import annotations

import json
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from chaos.racer.barrier import BarrierClient
from chaos.racer.ledger import Ledger, Where
from chaos.racer.protocol import Action, ActionOutcome, ErrorInfo, InspectResult, RacerSpec
from chaos.targets.base import Unsupported, error_of, jsonable
from chaos.targets.common import EffectRecorder, SessionBase, SessionLoop, outcome, store_file
from chaos.targets.pydantic_graph import INFO
from chaos.workloads import build_workload, import_factory, workload_context


def _node_id(snapshot: Any) -> str:
    return "end" if getattr(snapshot, "kind", "") == "end" else snapshot.node.get_node_id()


def describe_change(old: list, new: list) -> str:
    """What a rewrite of the snapshot list changes, e.g. ``node=B,status=running`` or ``end``."""
    before = {s.id: getattr(s, "status", "end") for s in old}
    parts = []
    for s in new:
        status = getattr(s, "status", "end")
        if before.get(s.id) != status:
            parts.append("end" if status == "end" else f"node={_node_id(s)},status={status}")
    return "+".join(parts) or "unchanged"


def instrument(persistence: Any, barrier: BarrierClient, running: list | None = None) -> Any:
    """Barriers around every save; ``running[0]`` holds the snapshot being run (``record_run``),
    the identity pydantic-graph persists for one pass of a node (``<node>:<uuid>``)."""
    base = type(persistence)
    held: list = running if running is not None else [None]

    class Instrumented(base):  # type: ignore[misc, valid-type]  # a subclass of the store's own class, made at run time
        @asynccontextmanager
        async def record_run(self, snapshot_id):
            async with super().record_run(snapshot_id):
                held[0] = snapshot_id
                try:
                    yield
                finally:
                    held[0] = None

        def _load_sync(self):
            out = super()._load_sync()
            barrier.mark("read")  # a timestamp, no boundary (the race window opens at a resume's first read)
            return out

        def _save_sync(self, snapshots):
            name = f"save({describe_change(self._load_sync(), snapshots)})"
            barrier.hit(name + ":before")
            super()._save_sync(snapshots)
            barrier.hit(name + ":after")

    Instrumented.__name__ = Instrumented.__qualname__ = f"Chaos{base.__name__}"
    persistence.__class__ = Instrumented
    return persistence


def explain_error(exc: BaseException, path: Path, snapshots: list[dict] | None) -> str | None:
    """The framework's error in words, or None to keep its own message: a stale lock (TimeoutError
    while the lock file of a dead holder exists) or no ``created`` snapshot to resume."""
    lock = path.parent / f"{path.name}.pydantic-graph-persistence-lock"
    if isinstance(exc, TimeoutError) and lock.exists():
        return (
            "stale lock: the persistence lock file is still held (by a process that died inside a save, or one that held "
            f"it over 1 s); FileStatePersistence never breaks one and gave up after 1 s ({lock.name})"
        )
    if type(exc).__name__ == "GraphRuntimeError" and "Unable to restore snapshot" in str(exc) and snapshots is not None:
        stuck = [f"{s['node']}({s['status']})" for s in snapshots if s.get("status") in ("pending", "running")]
        if stuck:
            return (
                f"nothing 'created' to resume: {', '.join(stuck)} was taken by a process that has not finished it (one that "
                f"died running it, or one running it now), and iter_from_persistence never retries it ({exc})"
            )
        last = snapshots[-1] if snapshots else None
        state = (
            "the run has no snapshot"
            if last is None
            else ("the run had ended" if last["node"] == "end" else f"the last snapshot is {last['node']}({last['status']})")
        )
        return f"nothing 'created' to resume: {state}, and iter_from_persistence resumes only a 'created' snapshot ({exc})"
    return None


MAX_ANSWERS = 100  # pauses an answer plan answers in one call (a graph that always asks again)


class PydanticGraphSession(SessionBase):
    def __init__(self, spec: RacerSpec, barrier: BarrierClient, ledger: Ledger):
        from pydantic_graph.persistence.file import FileStatePersistence

        from chaos.workloads.pydantic_graph import BUILTIN, PGWorkload

        self.thread_id = spec["thread_id"]
        self.aio = SessionLoop()
        self.recorder = EffectRecorder(barrier, ledger, self.thread_id)
        self.path: Path = store_file(spec, ".json")
        self.workload = built = build_workload(spec, self.recorder, BUILTIN, PGWorkload)
        self.ctx = workload_context(spec, self.recorder)
        self.params = dict(spec.get("workload_params") or {})
        self.cleared_lock = False
        self.running: list[str | None] = [None]
        self.persistence = instrument(FileStatePersistence(self.path), barrier, self.running)
        self.persistence.set_graph_types(built.graph)
        self.recorder.where = self._where

    def _where(self) -> Where | None:
        """The node pass running now: its node id and its snapshot id (pydantic-graph's own identity
        of one pass, so a loop's next pass of a node is a new task)."""
        sid = self.running[0]
        if sid is None:
            return None
        return {"node": sid.rsplit(":", 1)[0], "namespace": "", "task_id": sid, "outside_task": False}

    def _deps(self, answer: Any = None) -> Any:
        from chaos.workloads.pydantic_graph import Deps

        return Deps(effect=self.recorder, answer=answer)

    async def _drive(self, run: Any, answering: bool) -> ActionOutcome:
        from pydantic_graph import End

        pause = self.workload.pause
        first = True
        async for node in run:
            if isinstance(node, End):
                return outcome("done", self.recorder.observed)
            if pause is not None and isinstance(node, pause) and not (answering and first):
                return outcome("interrupted", self.recorder.observed, interrupts=[node.get_node_id()])
            first = False
        return outcome("done", self.recorder.observed)

    async def _paused(self) -> bool:
        snaps = await self.persistence.load_all()
        nxt = next((s for s in snaps if getattr(s, "status", None) == "created"), None)
        return nxt is not None and self.workload.pause is not None and isinstance(nxt.node, self.workload.pause)

    def _clear_stale_lock(self) -> None:
        """The operator's manual fix after a crash inside a save: remove the dead holder's lock file."""
        lock = self.path.parent / f"{self.path.name}.pydantic-graph-persistence-lock"
        if lock.exists():
            lock.unlink()
            self.cleared_lock = True

    async def _perform(self, action: Action) -> ActionOutcome:
        op, form = action.get("op", "run"), action.get("form", "input")
        graph = self.workload.graph
        if op == "resume" and self.params.get("clear_stale_lock"):
            self._clear_stale_lock()
        if op == "run" or form == "input":
            async with graph.iter(self.workload.start(), state=self._state(), deps=self._deps(), persistence=self.persistence) as run:
                return await self._drive(run, answering=False)
        if form == "app":
            return await self._recover(action)
        if form == "command" and "answers" in action:
            return await self._answer_plan(action.get("answers"))
        if form == "none":
            if await self._paused():
                return outcome("interrupted", self.recorder.observed, interrupts=["paused"])
            async with graph.iter_from_persistence(self.persistence, deps=self._deps()) as run:
                return await self._drive(run, answering=False)
        if form == "command":
            async with graph.iter_from_persistence(self.persistence, deps=self._deps(action.get("value"))) as run:
                return await self._drive(run, answering=True)
        raise ValueError(f"unknown resume form {form!r}")

    async def _answer_plan(self, plan: Any) -> ActionOutcome:
        """Answer each pause in turn until the run ends or the plan is used up: the n-th pause the
        run reached gets ``plan[n]``, n read from the durable snapshots (the pause node's snapshots
        no longer ``created``: answered before), so a fresh process after a crash picks the plan up
        where the run is; ``answers: workload`` asks the workload's ``answer(node)``."""
        answered: list[list[Any]] = []
        observed: dict[str, Any] = {}
        out: ActionOutcome | None = None
        for _ in range(MAX_ANSWERS):
            snaps = await self.persistence.load_all()
            pause = self.workload.pause
            waiting = next((s for s in snaps if getattr(s, "status", None) == "created"), None)
            if waiting is None or pause is None or not isinstance(waiting.node, pause):
                if out is not None:
                    break
                if any(getattr(s, "kind", "") == "end" for s in snaps):  # finished: nothing to answer or continue
                    out = outcome("done", self.recorder.observed, nothing_to_resume=True)
                    break
                # no pause waits: continue the run as it is, then answer the pause it reaches
                async with self.workload.graph.iter_from_persistence(self.persistence, deps=self._deps()) as run:
                    out = await self._drive(run, answering=False)
                observed.update(self.recorder.observed)
                if out["status"] != "interrupted":
                    break
                continue
            if plan == "workload":
                if self.workload.answer is None:
                    raise Unsupported("answers: workload, but the PGWorkload defines no answer(node) callable")
                value = self.workload.answer(waiting.node)
            else:
                n = sum(1 for s in snaps if s is not waiting and isinstance(getattr(s, "node", None), pause))
                if not isinstance(plan, list) or n >= len(plan):
                    break  # the plan is used up: leave the run waiting
                value = plan[n]
            answered.append([waiting.id, jsonable(value)])
            self.recorder.begin_call()
            async with self.workload.graph.iter_from_persistence(self.persistence, deps=self._deps(value)) as run:
                out = await self._drive(run, answering=True)
            observed.update(self.recorder.observed)
            if out["status"] != "interrupted":
                break
        if out is None:
            out = outcome("interrupted", {}, interrupts=["paused"])
        out["observed"] = observed or out.get("observed") or {}
        out["answered"] = answered
        return out

    async def _recover(self, action: Action) -> ActionOutcome:
        """The team's own resume driver (``resume: app:package.module:recover``): ``recover(ctx, run)``
        with a ``PGRun``; it may be async. With an answer plan (``plan``) it is called again for
        each pause the run reaches, as a CLI is run once per answer, with the plan's n-th answer
        in ``run.answer`` (n read from the durable snapshots), until the run ends or the plan is
        used up. The outcome is read from what it returned (``End``: done; a pause node:
        interrupted), else from the durable snapshots."""
        import inspect as _inspect

        from pydantic_graph import End

        from chaos.workloads.pydantic_graph import PGRun

        ref = action.get("recover") or ""
        recover = import_factory(ref)
        plan = list(action.get("plan") or [])
        pause = self.workload.pause
        observed: dict[str, Any] = {}
        out: ActionOutcome = outcome("interrupted", {}, interrupts=["paused"], recovered_by=ref)
        for call in range(MAX_ANSWERS):
            snaps = await self.persistence.load_all()
            waiting = await self._paused()
            n = sum(1 for s in snaps if pause is not None and isinstance(getattr(s, "node", None), pause) and s.status != "created")
            answer = plan[n] if n < len(plan) else None
            if (plan and waiting and answer is None) or (call and not waiting):
                break  # the plan is used up, or the run left the pause: leave it as it is
            run = PGRun(
                thread_id=self.thread_id,
                graph=self.workload.graph,
                persistence=self.persistence,
                deps=self._deps,
                state=self._state,
                start=self.workload.start,
                snapshots=len(snaps),
                answers=plan,
                answer=answer,
            )
            self.recorder.begin_call()
            try:
                got = recover(self.ctx, run)
                if _inspect.isawaitable(got):
                    got = await got
            except Exception as exc:  # the procedure's own failure, or the framework's refusal inside it
                return outcome("error", {**observed, **self.recorder.observed}, error=self._error(exc), recovered_by=ref)
            observed.update(self.recorder.observed)
            if isinstance(got, End) or any(getattr(s, "kind", "") == "end" for s in await self.persistence.load_all()):
                return outcome("done", observed, recovered_by=ref)
            if pause is not None and (isinstance(got, pause) or await self._paused()):
                out = outcome("interrupted", observed, interrupts=["paused"], recovered_by=ref)
                if not plan:
                    break
                continue
            return outcome("interrupted", observed, interrupts=["not ended"], recovered_by=ref)
        return out

    def _state(self) -> Any:
        return self.workload.state_type()

    def perform(self, action: Action) -> ActionOutcome:
        if action.get("op", "run") not in ("run", "resume"):
            raise Unsupported(f"{action.get('op')!r}: " + INFO.unsupported["fork"])  # run and resume only
        self.recorder.begin_call()
        try:
            out = self.aio.run(self._perform(action))
        except Exception as exc:  # the framework's answer, recorded as data
            out = outcome("error", self.recorder.observed, error=self._error(exc))
        out["cleared_stale_lock"] = self.cleared_lock
        return out

    def _error(self, exc: BaseException) -> ErrorInfo:
        """The framework's error as data, in words when ``explain_error`` knows it. Such a refusal
        (a dead holder's lock, no 'created' snapshot) is pydantic-graph's even when a team's own
        resume driver called it: its frames are kept from the framework's first one inward, so
        blame reads the refusal, not the driver's call (the traceback keeps the whole story)."""
        err = error_of(exc)
        words = explain_error(exc, self.path, self._raw_snapshots())
        if words:
            err["message"] = words
            frames = err.get("frames") or []
            first = next((i for i, f in enumerate(frames) if f["module"].startswith("pydantic_graph")), None)
            if first is not None:
                err["frames"] = frames[first:]
        return err

    def _raw_snapshots(self) -> list[dict] | None:
        """The snapshot list as the file holds it, read below the framework (no validation, no lock)."""
        try:
            raw = json.loads(self.path.read_bytes())
        except FileNotFoundError:
            return []
        except ValueError:
            return None
        out = []
        for s in raw if isinstance(raw, list) else []:
            node = s.get("node") or {}
            out.append(
                {
                    "node": "end" if s.get("kind") == "end" else str(node.get("node_id") or "?"),
                    "status": s.get("status", "end"),
                    "state": s.get("state"),
                }
            )
        return out

    def _values_below(self) -> Any:
        raw = self._raw_snapshots()
        return raw[-1].get("state") if raw else None

    def inspect(self) -> InspectResult:
        try:
            snaps = self.aio.run(self.persistence.load_all())
        except Exception as exc:  # unreadable to the framework: what the file holds, read below it
            return {"checkpoints": None, "error": error_of(exc), "values": self._values_below(), "values_source": "saver"}
        tasks = self.workload.tasks
        done = [s for s in snaps if getattr(s, "status", None) == "success"]
        completed = [tasks.get(_node_id(s), _node_id(s)) for s in done]
        open_ = [s for s in snaps if getattr(s, "status", None) in ("created", "pending", "running")]
        pause = self.workload.pause
        paused = [s for s in open_ if s.status == "created" and pause is not None and isinstance(s.node, pause)]
        ended = any(getattr(s, "kind", "") == "end" for s in snaps)
        return {
            "checkpoints": len(snaps),
            "head_step": len(snaps) or None,
            # an End snapshot is pydantic-graph's own "finished": snapshots a driver took and never ran
            # (the documented load_next-then-iter driver leaves its pause node 'pending') are no work left
            "next": [] if ended else [f"{_node_id(s)}({s.status})" for s in open_ if s not in paused] + [_node_id(s) for s in paused],
            "completed_tasks": sorted(set(completed)),
            # the identity of each pass (snapshot id): a loop's next pass is a new task, not a rerun
            "completed_task_ids": [s.id for s in done],
            "completed_by_namespace": {"": sorted({_node_id(s) for s in done})},
            "pending_interrupts": len(paused),
            "ended": ended,
            "snapshots": [{"node": _node_id(s), "status": getattr(s, "status", "end")} for s in snaps],
            "values": jsonable(snaps[-1].state) if snaps else None,
            "error": None,
        }

    def close(self) -> None:
        self.aio.close()


def open_session(spec: RacerSpec, barrier: BarrierClient, ledger: Ledger) -> PydanticGraphSession:
    return PydanticGraphSession(spec, barrier, ledger)


# For warm racers (chaos.racer.forkserver): importing pydantic-graph starts no thread and opens nothing.
# pydantic's TypeAdapter machinery and anyio are imported lazily by the file persistence (about 50
# ms of a racer's setup): preloaded too.
PRELOAD = (
    "pydantic_graph",
    "pydantic_graph.persistence.file",
    "pydantic.type_adapter",
    "anyio",
    "anyio.to_thread",
    "anyio._backends._asyncio",
    "anyio._core._fileio",
    "concurrent.futures.thread",
    "chaos.workloads.pydantic_graph",
)
PRELOAD_OPTIONAL: tuple[str, ...] = ()  # every module its racers import is there whatever the backend


def prewarm(only: str | None = None) -> None:
    """Build each built-in graph once and the file persistence's snapshot types for it (what a racer's
    session does before its first save); no file is opened, nothing runs."""
    from pydantic_graph.persistence.file import FileStatePersistence

    from chaos.targets.common import prewarm_factories, prewarm_workloads
    from chaos.workloads import WorkloadContext
    from chaos.workloads.pydantic_graph import BUILTIN

    prewarm_workloads("pydantic_graph", BUILTIN, only)
    for factory in prewarm_factories(BUILTIN, only):
        built = factory(WorkloadContext(checkpointer=None, effect_hook=lambda task, value=None, once=False, key=None: None))
        FileStatePersistence(Path("/nonexistent/chaos-prewarm.json")).set_graph_types(built.graph)

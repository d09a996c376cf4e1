"""CrewAI Flows adapter (racer side): plain-method flows over instrumented persistence.

Backends, each CrewAI's own persistence:

* ``sqlite``: ``@persist(SQLiteFlowPersistence)``: the state is saved after every method;
  ``kickoff(inputs={"id": ...})`` restores it by id; a ``@human_feedback`` pause is saved as
  pending feedback and answered with ``from_pending(id).resume(answer)``. Barriers:
  ``save_state(method=X)``, ``save_pending(method=X)``, ``clear_pending``, each ``:before/:after``.
* ``checkpoint_json`` / ``checkpoint_sqlite``: ``CheckpointConfig`` with the JSON or SQLite
  provider, a checkpoint at every ``method_execution_finished``; ``Flow.from_checkpoint`` restores
  the latest one (completed methods are skipped). Barriers:
  ``checkpoint(provider=json,completed=a+b):before/after``.

CrewAI swallows a failed checkpoint into a log line: a provider that raised (its SQLite provider
needs SQLite >= 3.45 for ``jsonb``), or the state's serialisation before the provider is called
(its listener's threads dump the same state at once: pydantic-core's "dictionary changed size
during iteration"). The instrumented provider and listener record every such failure; the racer
reports them as ``persistence_errors`` so a sweep marks the cell unknown with the reason instead
of measuring a run that persisted nothing.

Forks (kind ``fork``, backend ``sqlite`` with ``workload_params: {checkpoints: json}``): the flow
also checkpoints with the JSON provider, so the checkpoint taken before the ``@human_feedback``
pause can be restored: ``via: checkpoint`` -> ``Flow.from_checkpoint`` (the same flow id),
``via: explicit`` -> ``Flow.fork`` (a new branch and state id). Either kickoff asks the human again
(the pause is pending once more) and ``from_pending(id).resume(value)`` answers it. ``intent``
reads that surface: ``Flow.fork(config, branch)`` beside ``Flow.from_checkpoint(config)``.

Resume forms: ``none`` -> restore (by id, or from the latest checkpoint) and run on; ``input`` ->
a new kickoff (a new flow id); ``command`` -> ``from_pending(id).resume(str(value))``.
CrewAI runs with no LLM and no network: telemetry and tracing are switched off before import, and
numpy's OpenBLAS (imported by CrewAI, unused by Flows) is kept to one thread.
"""

from __future__ import annotations

import contextvars
import importlib
import json
import os
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

for _k, _v in {
    "CREWAI_DISABLE_TELEMETRY": "true",
    "OTEL_SDK_DISABLED": "true",
    "CREWAI_DISABLE_TRACKING": "true",
    "CREWAI_TRACING_ENABLED": "false",
    "CREWAI_STORAGE_DIR": "",
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "OPENBLAS_NUM_THREADS": "1",
    # pyarrow (CrewAI's memory, through LanceDB) starts jemalloc's purging thread at import; off, so a
    # fork server that imported it holds one thread (preload_for_fork)
    "JE_ARROW_MALLOC_CONF": "background_thread:false",
}.items():
    if _v:
        os.environ.setdefault(_k, _v)

from chaos.racer.barrier import BarrierClient  # noqa: E402
from chaos.racer.ledger import Ledger, Where  # noqa: E402
from chaos.racer.protocol import Action, ActionOutcome, InspectResult, RacerSpec  # noqa: E402
from chaos.targets.base import Unsupported, error_of  # noqa: E402
from chaos.targets.common import EffectRecorder, SessionBase, outcome  # noqa: E402
from chaos.workloads import build_workload, import_factory, workload_context  # noqa: E402

RUNNING: contextvars.ContextVar[tuple[str, int] | None] = contextvars.ContextVar("chaos_crewai_running", default=None)
"""The method pass running in this context: (method, pass). CrewAI runs a sync method in a worker
thread with the caller's context copied, so the pass set around ``_execute_method`` reaches it."""


def track_passes(flow_class: type, offsets: dict[str, int]) -> None:
    """Wrap ``_execute_method`` of this racer's flow class so every effect knows its method pass:
    CrewAI's own execution count of the method (restored by ``from_checkpoint``, restarted by a
    kickoff by id, which runs the flow again from its start) plus ``offsets`` (the passes durable
    before a ``from_pending`` continuation, which restores the state but not the counts)."""
    orig = flow_class._execute_method  # type: ignore[attr-defined]  # a Flow subclass

    async def _execute_method(self, method_name, method, *args, **kwargs):
        name = str(method_name)
        n = offsets.get(name, 0) + self._method_execution_counts.get(method_name, 0) + 1
        token = RUNNING.set((name, n))
        try:
            return await orig(self, method_name, method, *args, **kwargs)
        finally:
            RUNNING.reset(token)

    flow_class._execute_method = _execute_method  # type: ignore[attr-defined]  # a Flow subclass


def track_approvals(flow_class: type, note: Any) -> None:
    """Wrap ``resume_async`` of this racer's flow class (``resume`` runs it) so every answer to a
    pending ``@human_feedback`` review is noted as an approval, whoever gives it (chaos's driver by
    the plan, or a team's own ``resume: app:`` driver): a kickoff by id is a recovery, never an
    approval (CrewAI runs the flow again from its start and the review is asked again)."""
    orig = flow_class.resume_async  # type: ignore[attr-defined]  # a Flow subclass

    async def resume_async(self, feedback: str = "", *args, **kwargs):
        if getattr(self, "_pending_feedback_context", None) is not None:
            note()
        return await orig(self, feedback, *args, **kwargs)

    flow_class.resume_async = resume_async  # type: ignore[attr-defined]  # a Flow subclass


def where_fired() -> Where | None:
    running = RUNNING.get()
    if running is None:
        return None
    name, n = running
    return {"node": name, "namespace": "", "task_id": f"{name}#{n}", "outside_task": False}


def pass_ids(completions: dict[str, int]) -> list[str]:
    """``method#k`` for each completed pass of each method (CrewAI's identity of a method run)."""
    return [f"{m}#{k}" for m, n in sorted(completions.items()) for k in range(1, n + 1)]


CHECKPOINT_BACKENDS = {"checkpoint_json": "json", "checkpoint_sqlite": "sqlite"}


MAX_ANSWERS = 100  # pauses an answer plan answers in one call (a flow that always asks again)

UNSUPPORTED_OPS = "the CrewAI adapter drives run, resume, checkpoints, fork and intent"
NEEDS_CHECKPOINTS = (
    "a fork restores a checkpoint taken before the pause, which only CrewAI's checkpointing writes: "
    "use backend sqlite with workload_params {checkpoints: json}"
)


class NoCheckpoint(LookupError):
    """Resume asked for, but no checkpoint of this flow exists."""


def _completed_of(data: str) -> list[str]:
    try:
        doc = json.loads(data)
    except ValueError:
        return ["?"]
    for ent in doc.get("entities") or []:
        if ent.get("entity_type") == "flow":
            return sorted(ent.get("checkpoint_completed_methods") or [])  # a set in CrewAI: order by name
    return []


def _counts_of(data: str) -> dict[str, int]:
    """Completed passes per method a checkpoint records (CrewAI's ``checkpoint_method_counts``)."""
    try:
        doc = json.loads(data)
    except ValueError:
        return {}
    for ent in doc.get("entities") or []:
        if ent.get("entity_type") == "flow":
            return {str(k): int(v) for k, v in (ent.get("checkpoint_method_counts") or {}).items()}
    return {}


def instrument_flow_persistence(persistence: Any, barrier: BarrierClient) -> Any:
    base = type(persistence)

    class Instrumented(base):  # type: ignore[misc, valid-type]  # a subclass of the store's own class, made at run time
        def save_state(self, flow_uuid, method_name, state_data):
            name = f"save_state(method={method_name})"
            barrier.hit(name + ":before")
            out = super().save_state(flow_uuid, method_name, state_data)
            barrier.hit(name + ":after")
            return out

        def save_pending_feedback(self, flow_uuid, context, state_data):
            name = f"save_pending(method={getattr(context, 'method_name', '?')})"
            barrier.hit(name + ":before")
            out = super().save_pending_feedback(flow_uuid, context, state_data)
            barrier.hit(name + ":after")
            return out

        def load_pending_feedback(self, flow_uuid):
            out = super().load_pending_feedback(flow_uuid)
            barrier.mark("read")  # a timestamp, no boundary (the race window opens at a resume's first read)
            return out

        def clear_pending_feedback(self, flow_uuid):
            barrier.hit("clear_pending:before")
            out = super().clear_pending_feedback(flow_uuid)
            barrier.hit("clear_pending:after")
            return out

    Instrumented.__name__ = Instrumented.__qualname__ = f"Chaos{base.__name__}"
    persistence.__class__ = Instrumented
    return persistence


def instrument_providers(barrier: BarrierClient, errors: list[dict]) -> None:
    """Wrap the checkpoint providers' writes (this racer process only) with barriers, and record
    in ``errors`` every checkpoint CrewAI's listener failed to write and only logged: a provider
    that raised (SQLite < 3.45), or the state's serialisation before the provider was called
    (pydantic-core: "dictionary changed size during iteration", the listener's threads racing, as
    a ``RuntimeError`` or a ``PanicException``)."""
    import crewai.state.checkpoint_listener as listener
    from crewai.state.provider.json_provider import JsonProvider
    from crewai.state.provider.sqlite_provider import SqliteProvider

    from_provider: list[BaseException] = []  # recorded with their boundary, not again by the listener's wrap

    def failed(exc: BaseException, boundary: str) -> None:
        from_provider.append(exc)
        errors.append({**error_of(exc), "boundary": boundary, "sqlite_version": sqlite3.sqlite_version})

    for cls, kind in ((JsonProvider, "json"), (SqliteProvider, "sqlite")):
        sync, asy = cls.checkpoint, cls.acheckpoint

        def checkpoint(self, data, location, *, _orig=sync, _kind=kind, **kw):
            name = f"checkpoint(provider={_kind},completed={'+'.join(_completed_of(data)) or '-'})"
            barrier.hit(name + ":before")
            try:
                out = _orig(self, data, location, **kw)
            except Exception as exc:
                failed(exc, name)
                raise
            barrier.hit(name + ":after")
            return out

        async def acheckpoint(self, data, location, *, _orig=asy, _kind=kind, **kw):
            name = f"checkpoint(provider={_kind},completed={'+'.join(_completed_of(data)) or '-'})"
            barrier.hit(name + ":before")
            try:
                out = await _orig(self, data, location, **kw)
            except Exception as exc:
                failed(exc, name)
                raise
            barrier.hit(name + ":after")
            return out

        cls.checkpoint, cls.acheckpoint = checkpoint, acheckpoint

    write = listener._do_checkpoint

    def do_checkpoint(state, cfg, event=None, *, _orig=write):
        try:
            return _orig(state, cfg, event)
        except BaseException as exc:  # CrewAI's listener logs it (a panic: its pool keeps it in a future) and goes on
            if not isinstance(exc, (SystemExit, KeyboardInterrupt)) and not any(exc is seen for seen in from_provider):
                trigger = getattr(event, "type", None) or "-"
                errors.append({**error_of(exc), "boundary": f"checkpoint(trigger={trigger}) before its provider"})
            raise

    listener._do_checkpoint = do_checkpoint


class CrewAISession(SessionBase):
    def __init__(self, spec: RacerSpec, barrier: BarrierClient, ledger: Ledger):
        from chaos.workloads.crewai import BUILTIN, CrewWorkload

        self.thread_id = spec["thread_id"]
        self.backend = spec["target"]["backend"]
        self.recorder = EffectRecorder(barrier, ledger, self.thread_id)
        self.persistence_errors: list[dict] = []
        base = Path((spec.get("store") or {}).get("path") or f"{self.thread_id}.sqlite")
        self.workload = built = build_workload(spec, self.recorder, BUILTIN, CrewWorkload)
        if self.backend == "sqlite":
            from crewai.flow.persistence import persist
            from crewai.flow.persistence.sqlite import SQLiteFlowPersistence

            self.db = str(base.with_name(f"{base.stem}-crewai-flows.sqlite"))
            self.persistence = instrument_flow_persistence(SQLiteFlowPersistence(self.db), barrier)
            self.flow_class = persist(self.persistence)(built.flow_class)
            # the JSON checkpoints a fork restores (kind ``fork``): written beside @persist's rows
            self.provider_kind = str((spec.get("workload_params") or {}).get("checkpoints") or "") or None
            self.location = str(base.with_name(f"{base.stem}-crewai-checkpoints"))
            if self.provider_kind not in (None, "json"):
                raise ValueError(f"workload_params.checkpoints: {self.provider_kind!r} is not a provider; use json")
        elif self.backend in CHECKPOINT_BACKENDS:
            self.provider_kind = CHECKPOINT_BACKENDS[self.backend]
            self.location = str(base.with_name(f"{base.stem}-crewai-checkpoints" + (".sqlite" if self.provider_kind == "sqlite" else "")))
            instrument_providers(barrier, self.persistence_errors)
            self.flow_class = built.flow_class
        else:
            raise ValueError(f"unknown crewai backend {self.backend!r}")
        self.offsets: dict[str, int] = {}
        self.ctx = workload_context(spec, self.recorder)
        if getattr(self.flow_class, "_execute_method", None) is not None:
            track_passes(self.flow_class, self.offsets)
            self.recorder.where = where_fired
        if getattr(self.flow_class, "resume_async", None) is not None:
            track_approvals(self.flow_class, self.recorder.note_approval)

    @property
    def meta(self) -> dict[str, object]:
        """The workload's facts, and the methods chaos counts as the flow's ends (the preflight's
        check that the uninterrupted run finished in one of them: ``chaos.targets.crewai.hooks``)."""
        return {**self.workload.meta, "ends": list(self.workload.end_methods)}

    # ---------------------------------------------------------------- durable passes

    def _saved_methods(self) -> list[str]:
        """The method of every state row ``@persist`` saved for this flow, in order."""
        if not Path(self.db).exists():
            return []
        with sqlite3.connect(self.db) as conn:
            return [r[0] for r in conn.execute("SELECT method_name FROM flow_states WHERE flow_uuid = ? ORDER BY id", (self.thread_id,))]

    def _completions(self, rows: list[str]) -> dict[str, int]:
        """Completed passes per method from ``@persist``'s rows: one row per completion, except the
        pause method, which CrewAI saves twice a pass (pending, then answered)."""
        counts = Counter(rows)
        pause = self.workload.pause_method
        if pause in counts:
            counts[pause] //= 2
        return {m: n for m, n in counts.items() if n}

    def _from_pending(self) -> Any:
        """``from_pending``: the persisted run continues; its passes continue the durable ones."""
        self.offsets.clear()
        self.offsets.update(self._completions(self._saved_methods()))
        return self.flow_class.from_pending(self.thread_id, self.persistence)

    # ---------------------------------------------------------------- checkpoints

    def _config(self, restore_from: str | None = None) -> Any:
        from crewai.state.checkpoint_config import CheckpointConfig
        from crewai.state.provider.json_provider import JsonProvider
        from crewai.state.provider.sqlite_provider import SqliteProvider

        provider = JsonProvider() if self.provider_kind == "json" else SqliteProvider()
        return CheckpointConfig(
            location=self.location, on_events=["method_execution_finished"], provider=provider, restore_from=restore_from
        )

    def _checkpoints(self) -> list[tuple[str, str]]:
        """(location, data) of every checkpoint, oldest first (by lineage, not by clock)."""
        if self.provider_kind == "json":
            files = sorted(Path(self.location).glob("*/*.json"))
            ids = {f.stem.split("_p-")[0]: f for f in files}
            parents = {f.stem.split("_p-")[1] for f in files}
            order: list[Path] = []
            head = next((f for i, f in ids.items() if i not in parents), None)
            by_id = {i: f for i, f in ids.items()}
            while head is not None and head not in order:
                order.append(head)
                head = by_id.get(head.stem.split("_p-")[1])
            order.reverse()
            return [(str(f), f.read_text()) for f in order]
        if not Path(self.location).exists():
            return []
        with sqlite3.connect(self.location) as conn:
            try:
                rows = conn.execute("SELECT id, json(data) FROM checkpoints ORDER BY rowid").fetchall()
            except sqlite3.Error:
                return []
        return [(f"{self.location}#{i}", d) for i, d in rows]

    # ---------------------------------------------------------------- actions

    def _kickoff(self, flow: Any, **kw: Any) -> ActionOutcome:
        from crewai.flow.async_feedback.types import HumanFeedbackPending

        result = flow.kickoff(**kw)
        return self._result(result, HumanFeedbackPending)

    def _result(self, result: Any, pending_type: type) -> ActionOutcome:
        if isinstance(result, pending_type):
            return outcome("interrupted", self.recorder.observed, interrupts=[str(result)[:200]])
        return outcome("done", self.recorder.observed, result=repr(result)[:200])

    def _fork(self, action: Action) -> ActionOutcome:
        """Restore the checkpoint taken before the pause, run to the pause again, answer it."""
        from crewai.flow.async_feedback.types import HumanFeedbackPending

        via = action.get("via", "checkpoint")
        if self.backend != "sqlite" or not self.provider_kind:
            raise Unsupported(NEEDS_CHECKPOINTS)
        if via not in ("checkpoint", "explicit"):
            raise Unsupported(f"fork via {via!r}: CrewAI forks via 'checkpoint' (from_checkpoint) or 'explicit' (Flow.fork)")
        pause = self.workload.pause_method
        before = [(loc, data) for loc, data in self._checkpoints() if pause not in _completed_of(data)]
        if not before:
            return outcome(
                "error",
                self.recorder.observed,
                error={
                    "type": "NoSuchCheckpoint",
                    "module": "chaos",
                    "where": "",
                    "message": f"no checkpoint before {pause} at {self.location}",
                },
            )
        loc = before[-1][0]
        config = self._config(restore_from=loc)
        flow = self.flow_class.fork(config) if via == "explicit" else self.flow_class.from_checkpoint(config)
        first = self._kickoff(flow)
        if first["status"] != "interrupted":
            return {**first, "forked_from": loc, "via": via}
        answered = self.flow_class.from_pending(flow.state.id, self.persistence)
        out = self._result(answered.resume(str(action.get("value"))), HumanFeedbackPending)
        out["forked_from"], out["via"] = loc, via
        return out

    def _perform(self, action: Action) -> ActionOutcome:
        from crewai.flow.async_feedback.types import HumanFeedbackPending

        op, form = action.get("op", "run"), action.get("form", "input")
        if op == "fork":
            return self._fork(action)
        if op == "checkpoints":
            if self.backend == "sqlite" and not self.provider_kind:
                raise Unsupported(NEEDS_CHECKPOINTS)
            listed = [{"id": loc, "step": i, "next": [], "interrupts": 0} for i, (loc, _) in enumerate(self._checkpoints())]
            return outcome("done", self.recorder.observed, checkpoints=list(reversed(listed)))  # newest first
        if op == "intent":
            return outcome("done", self.recorder.observed, intent=fork_intent())
        self.offsets.clear()  # a kickoff or from_checkpoint counts passes as CrewAI does
        if op == "resume" and form == "app":
            return self._recover(action)
        if op == "resume" and form == "command" and "answers" in action:
            if self.backend != "sqlite":
                raise Unsupported(
                    "answering a @human_feedback pause needs its pending feedback, which only @persist saves: use backend sqlite"
                )
            return self._answer_plan(action.get("answers"))
        if self.backend == "sqlite":
            if op == "run":
                kw = {"checkpoint": self._config()} if self.provider_kind else {}
                return self._kickoff(self.flow_class(**kw), inputs={"id": self.thread_id})
            if form == "input":
                return self._kickoff(self.flow_class())
            pending = self.persistence.load_pending_feedback(self.thread_id)
            if form == "none":
                if pending is not None:
                    return outcome("interrupted", self.recorder.observed, interrupts=["pending feedback"])
                return self._kickoff(self.flow_class(), inputs={"id": self.thread_id})
            if form == "command" and pending is None and action.get("asked_only"):
                # nothing asked yet (the kill came before the review was saved): the flow goes on by
                # its id first, and the answer goes to the review it then asks, if it asks one
                out = self._kickoff(self.flow_class(), inputs={"id": self.thread_id})
                if out["status"] != "interrupted" or self.persistence.load_pending_feedback(self.thread_id) is None:
                    return out
            if form == "command":
                flow = self._from_pending()
                return self._result(flow.resume(str(action.get("value"))), HumanFeedbackPending)
            raise ValueError(f"unknown resume form {form!r}")
        if form == "command":
            raise Unsupported("answering a @human_feedback pause needs its pending feedback, which only @persist saves: use backend sqlite")
        if op == "run" or form == "input":
            return self._kickoff(self.flow_class(checkpoint=self._config()))
        cps = self._checkpoints()
        if not cps:
            raise NoCheckpoint(f"no checkpoint at {self.location}")
        flow = self.flow_class.from_checkpoint(self._config(restore_from=cps[-1][0]))
        return self._kickoff(flow)

    def _answer_plan(self, plan: Any) -> ActionOutcome:
        """Answer each pending ``@human_feedback`` in turn until the flow finishes or the plan is
        used up: the n-th pause gets ``plan[n]``, n read from the durable rows (so a fresh process
        after a crash picks the plan up where the flow is);
        ``answers: workload`` asks the workload's ``answer(context)``."""
        from crewai.flow.async_feedback.types import HumanFeedbackPending

        answered: list[list[Any]] = []
        observed: dict[str, Any] = {}
        out: ActionOutcome | None = None
        for _ in range(MAX_ANSWERS):
            loaded = self.persistence.load_pending_feedback(self.thread_id)
            if loaded is None:
                if out is not None:
                    break
                if set(self.workload.end_methods) & set(self._completions(self._saved_methods())):
                    # the flow had finished (one of its ends completed): nothing to answer or continue
                    out = outcome("done", self.recorder.observed, nothing_to_resume=True)
                    break
                # nothing waits for an answer: continue the flow as it is (kickoff by id), then answer
                # the review it reaches
                out = self._kickoff(self.flow_class(), inputs={"id": self.thread_id})
                observed.update(self.recorder.observed)
                if out["status"] != "interrupted":
                    break
                continue
            # which review waits: @persist writes the pause method's state when the review is asked
            # and again when it is answered, and clears the pending review only after that
            n = (self._saved_methods().count(self.workload.pause_method or "") + 1) // 2 - 1
            if plan == "workload":
                if self.workload.answer is None:
                    raise Unsupported("answers: workload, but the CrewWorkload defines no answer(context) callable")
                value = self.workload.answer(loaded[1])
            else:
                if not isinstance(plan, list) or n >= len(plan):
                    break  # the plan is used up: leave the flow waiting
                value = plan[n]
            answered.append([n, str(value)])
            self.recorder.begin_call()
            flow = self._from_pending()
            out = self._result(flow.resume(str(value)), HumanFeedbackPending)
            observed.update(self.recorder.observed)
            if out["status"] != "interrupted":
                break
        if out is None:
            out = outcome("interrupted", {}, interrupts=["pending feedback"])
        out["observed"] = observed or out.get("observed") or {}
        out["answered"] = answered
        return out

    def _recover(self, action: Action) -> ActionOutcome:
        """The team's own resume driver (``resume: app:package.module:recover``): ``recover(ctx, run)``
        with a ``CrewRun``; a ``HumanFeedbackPending`` it returns means the flow paused again. With
        an answer plan (``plan``, backend ``sqlite``) it is called again for each pending review
        the flow reaches, with the plan's n-th answer in ``run.answer`` (n counted from the
        durable rows, as chaos's own driver counts it), until the flow finishes or the plan is
        used up: the whole run is answered by the plan."""
        plan = list(action.get("plan") or [])
        observed: dict[str, Any] = {}
        out: ActionOutcome | None = None
        for call in range(MAX_ANSWERS):
            pending = self.backend == "sqlite" and self.persistence.load_pending_feedback(self.thread_id) is not None
            n = (self._saved_methods().count(self.workload.pause_method or "") + 1) // 2 - 1 if pending else -1
            answer = plan[n] if pending and 0 <= n < len(plan) else None
            if (plan and pending and answer is None) or (call and not pending):
                break  # the plan is used up, or the flow left the review: leave it as it is
            self.recorder.begin_call()
            out = self._recover_once(action, plan, answer)
            observed.update(self.recorder.observed)
            if not plan or out["status"] != "interrupted":
                break
        if out is None:  # a review is pending that the plan has no answer for
            out = outcome("interrupted", {}, interrupts=["pending feedback"], recovered_by=action.get("recover") or "")
        out["observed"] = observed or out.get("observed") or {}
        return out

    def _recover_once(self, action: Action, plan: list[Any], answer: Any) -> ActionOutcome:
        from crewai.flow.async_feedback.types import HumanFeedbackPending

        from chaos.workloads.crewai import CrewRun

        ref = action.get("recover") or ""
        recover = import_factory(ref)
        cps = self._checkpoints() if self.provider_kind else []
        run = CrewRun(
            thread_id=self.thread_id,
            flow_class=self.flow_class,
            persistence=getattr(self, "persistence", None),
            checkpoint=self._config if self.provider_kind else None,
            latest_checkpoint=cps[-1][0] if cps else None,
            answers=plan,
            answer=answer,
        )
        try:
            got = recover(self.ctx, run)
        except Exception as exc:  # the procedure's own failure, or the framework's refusal inside it
            return outcome("error", self.recorder.observed, error=error_of(exc), recovered_by=ref)
        out = self._result(got, HumanFeedbackPending)
        out["recovered_by"] = ref
        return out

    def perform(self, action: Action) -> ActionOutcome:
        if action.get("op", "run") not in ("run", "resume", "fork", "checkpoints", "intent"):
            raise Unsupported(f"{action.get('op')!r}: " + UNSUPPORTED_OPS)
        self.recorder.begin_action()
        try:
            out = self._perform(action)
        except Unsupported:
            raise
        except Exception as exc:  # the framework's answer, recorded as data
            out = outcome("error", self.recorder.observed, error=error_of(exc))
        out["persistence_errors"] = list(self.persistence_errors)
        return self.recorder.with_approvals(out)

    def inspect(self) -> InspectResult:
        try:
            return self._inspect()
        except Exception as exc:
            return {"checkpoints": None, "error": error_of(exc)}

    def _inspect(self) -> InspectResult:
        ends = set(self.workload.end_methods)
        if self.backend == "sqlite":
            rows = self._saved_methods()
            pending = self.persistence.load_pending_feedback(self.thread_id) is not None
            done = self._completions(rows)
            ended = bool(ends & set(done))  # CrewAI saves no "finished": one of the flow's ends completed
            last = rows[-1] if rows else None
            nxt = [] if (last is None or ended or pending) else [f"after {last}"]
            return {
                "checkpoints": len(rows),
                "values": self._saved_state(),
                "values_source": "saver",
                "head_step": len(rows) or None,
                "next": nxt,
                "completed_tasks": sorted(done),
                "completed_task_ids": pass_ids(done),
                "completed_by_namespace": {"": sorted(done)},
                "pending_interrupts": int(pending),
                "ended": ended,
                "saved_methods": rows,
                "persistence_errors": list(self.persistence_errors),
                "error": None,
            }
        cps = self._checkpoints()
        methods = _completed_of(cps[-1][1]) if cps else []
        ended = bool(ends & set(methods))
        counts = _counts_of(cps[-1][1]) if cps else {}
        return {
            "checkpoints": len(cps),
            "head_step": len(cps) or None,
            "next": [] if (ended or not cps) else [f"after {'+'.join(methods)}"],
            "completed_tasks": sorted(set(methods)),
            "completed_task_ids": pass_ids(counts),
            "completed_by_namespace": {"": sorted(set(methods))},
            "pending_interrupts": 0,
            "ended": ended,
            "persistence_errors": list(self.persistence_errors),
            "error": None,
        }

    def _saved_state(self) -> Any:
        """The state @persist saved last for this flow, as stored (read below the framework)."""
        if not Path(self.db).exists():
            return None
        with sqlite3.connect(self.db) as conn:
            row = conn.execute(
                "SELECT state_json FROM flow_states WHERE flow_uuid = ? ORDER BY id DESC LIMIT 1", (self.thread_id,)
            ).fetchone()
        try:
            return json.loads(row[0]) if row else None
        except ValueError:
            return None

    def close(self) -> None:
        pass


def fork_intent() -> dict:
    """Can CrewAI's API tell a retry from a fork? Read from the API itself: ``Flow.fork`` (a new
    branch and state id) beside ``Flow.from_checkpoint`` (the same run) and ``from_pending``."""
    import inspect as _inspect

    from crewai.flow.flow import Flow

    surface: dict[str, Any] = {}
    for name in ("fork", "from_checkpoint", "from_pending", "resume", "kickoff"):
        fn = getattr(Flow, name, None)
        if fn is not None:
            surface[f"Flow.{name}"] = str(_inspect.signature(fn))
    has_fork = "Flow.fork" in surface
    return {
        "discriminator": "Flow.fork (a new branch and state id) vs Flow.from_checkpoint (the same run)" if has_fork else None,
        "surface": surface,
        "note": "restoring a checkpoint to run it again and forking it are two calls"
        if has_fork
        else "this release has no Flow.fork: from_checkpoint is the only way back to a checkpoint",
    }


def open_session(spec: RacerSpec, barrier: BarrierClient, ledger: Ledger) -> CrewAISession:
    return CrewAISession(spec, barrier, ledger)


# For warm racers (chaos.racer.forkserver). Importing CrewAI loads numpy, whose OpenBLAS starts a worker
# thread per core at import (seen: one native thread besides the main one after ``import crewai``);
# OPENBLAS_NUM_THREADS=1 above keeps it to the calling thread (Flows never use BLAS), so the
# server holds one thread and forking it is safe. Telemetry and tracing are off (above), so the
# imports open no socket and start no exporter thread (checked by the server after the preload).
PRELOAD = (
    "crewai.flow.flow",
    "crewai.flow.persistence",
    "crewai.flow.persistence.sqlite",
    "crewai.flow.async_feedback.types",
    "crewai.flow.human_feedback",
    "crewai.state.checkpoint_config",
    "crewai.state.provider.json_provider",
    "crewai.state.provider.sqlite_provider",
    "chaos.workloads.crewai",
)
# what a racer's first flow imports lazily (its memory's storage factory, its hooks, the console's emoji
# table), seen in its ``late_imports``; optional: CrewAI may move them
PRELOAD_OPTIONAL: tuple[str, ...] = ("resource", "crewai.memory.storage.factory", "crewai.hooks.contexts", "rich._emoji_codes")


MEMORY_MODULES = ("lancedb", "crewai.memory.unified_memory", "crewai.memory.storage.lancedb_storage")
"""What a racer's first ``Flow()`` imports: every flow creates its memory (``Memory``, LanceDB storage)."""


def preload_for_fork() -> list[str]:
    """``chaos.targets.base.PreloadsForFork``: import CrewAI's memory (LanceDB, pyarrow) in the fork
    server, which every forked racer otherwise imported on its first ``Flow()``: ~3 s of CPU each, most
    of a CrewAI racer's time. LanceDB starts its event loop's thread at import
    (``lancedb.background_loop.LOOP``); it is stopped and its loop closed here, so the server holds one
    thread and no extra descriptor, and each child starts a fresh one at fork: LanceDB's own at-fork
    hook does (``_reset_after_fork``), or, in a release without it, one registered here. Its warning
    that fork support is experimental is silenced for the children: they are forked before any LanceDB
    operation ever ran, the case the hook is made for. A CrewAI without LanceDB memory: nothing."""
    import warnings

    try:
        from lancedb import background_loop
    except ImportError:
        return []
    loaded = []
    for name in MEMORY_MODULES:
        try:
            importlib.import_module(name)
            loaded.append(name)
        except ImportError:
            continue
    loop = background_loop.LOOP
    tid = loop.thread.native_id
    loop.loop.call_soon_threadsafe(loop.loop.stop)
    loop.thread.join()
    loop.loop.close()
    _thread_gone(tid)
    if not hasattr(background_loop, "_reset_after_fork"):
        os.register_at_fork(after_in_child=loop.__init__)
    warnings.filterwarnings("ignore", message="lancedb fork support is experimental", category=RuntimeWarning)
    try:  # the console's width table, which rich imports by a computed name on the first line printed
        from rich._unicode_data import load as load_cell_table

        load_cell_table()
        loaded.append("rich._unicode_data")
    except Exception:  # a rich without it (older, or moved): its racers load what they need themselves
        pass
    return loaded


def _thread_gone(tid: int | None, limit_s: float = 10.0) -> None:
    """Wait until the kernel has ended thread ``tid`` of this process: ``Thread.join`` returns when the
    Python thread is done, a moment before its native thread exits, and the fork server counts native
    threads (``/proc/self/task``) right after the preload (seen: one left, the server refused to start)."""
    import time

    deadline = time.monotonic() + limit_s
    while tid is not None and os.path.exists(f"/proc/self/task/{tid}") and time.monotonic() < deadline:
        time.sleep(0.001)


def prewarm(only: str | None = None) -> None:
    """Build each built-in flow class once (class creation only: no flow is instantiated or run)."""
    from chaos.targets.common import prewarm_workloads
    from chaos.workloads.crewai import BUILTIN

    prewarm_workloads("crewai", BUILTIN, only)

"""Pieces the non-LangGraph adapters share (racer side, standard library only).

* ``EffectRecorder``: the effect hook every workload calls through ``ctx.effect``: append the row
  to the ledger (committed), remember it for the racer's result, then pass the
  ``effect(task=X):after`` barrier so a sweep can crash right after the effect and before the
  framework records it.
  It also keeps the approvals the session gives (``note_approval``: an answer to a pause, told
  apart from a recovery call by the adapter), listed in the action's outcome as ``approvals``
  (``with_approvals``: effects the call had fired before each, and when), so approval authority
  (AA, ``chaos.kinds.approval``) can tell a recovery that walked past a pause from an approval.
* ``JsonFileStore``: an atomic JSON document on disk (write, fsync, rename), for frameworks whose
  persistence API hands the application a dict to keep (LlamaIndex ``Context.to_dict``, AutoGen
  ``save_state``). Its ``save`` passes ``save(<what>):before`` / ``:after`` barriers: ``:before``
  means nothing of this save is durable, ``:after`` means the rename is done.
* ``append_effect``: one effect row appended to the ledger (idempotently with ``once``), as every
  adapter's effect hook (LangGraph's too) records it.
* ``store_file``: the per-trial file a file-backed target keeps its state in.
* ``outcome``: an ``ActionOutcome`` (``chaos.racer.protocol``) with the values the call observed.
* ``recover_by_plan``: the loop that runs a team's own recovery (``recover(ctx, thread)``) once, or
  once per pause an answer plan answers, for the adapters whose state is one saved document.
* ``recovery_context``: the ``WorkloadContext`` a team's own recovery is called with.
* ``prewarm_workloads``: a fork server's ``prewarm`` for an adapter: read the versions, build
  each built-in workload once (no run, no loop, no thread).
* ``SessionLoop``: one event loop for a session's whole life. Async frameworks bind queues and
  runtimes to the loop they first ran on, so a racer that runs and then resumes (two actions)
  must not start a second loop (``asyncio.run`` twice fails in AutoGen: "bound to a different
  event loop").
"""

from __future__ import annotations

import asyncio
import json
import os
import urllib.parse
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from chaos.racer.barrier import BarrierClient, write_atomic
from chaos.racer.ledger import AppendsOnce, Ledger, Where, effect_key
from chaos.racer.protocol import Action, ActionOutcome, ErrorInfo, Fired, OutcomeStatus, RacerSpec
from chaos.targets.base import NothingSaved, Unsupported, error_of, jsonable, nothing_saved_outcome
from chaos.targets.base import outcome as base_outcome

if TYPE_CHECKING:
    from chaos.workloads import WorkloadContext


def boundary_part(value: object) -> str:
    """A name taken from the app (a step, a topic, a key) as one part of a boundary name: plain names
    stay as they are (``pay``, ``app.charge``), and the characters a boundary name is built from
    (``(``, ``)``, ``,``, ``=``, ``+``, ``:``, spaces) are percent-encoded, so a name such as
    ``pay),effect(task=b`` cannot read as two boundaries, nor be matched by ``kill_points`` as one."""
    return urllib.parse.quote(str(value), safe="._-<>@$")


class EffectRecorder:
    """``where``: the adapter's ``() -> Where | None`` naming the task that is running when an effect
    fires (its node and the identity the framework persists for it: ``task_id``), so PC compares
    tasks, not labels (``chaos.targets.base``, "Task identity"); None: rows are not attributed."""

    def __init__(self, barrier: BarrierClient, ledger: Ledger, thread_id: str):
        self.barrier = barrier
        self.ledger = ledger
        self.thread_id = thread_id
        self.fired: list[Fired] = []
        self.observed: dict[str, object] = {}  # values seen during the current call (reset by begin_call)
        self.where: Callable[[], Where | None] | None = None
        self.approvals: list[tuple[int, int]] = []  # (effects fired before it, t_mono_ns): every answer given
        self._call_start = (0, 0)  # (effects, approvals) when the current call began

    def begin_call(self) -> None:
        self.observed = {}

    def begin_action(self) -> None:
        """A racer action begins: its values and its approvals are counted from here."""
        self.begin_call()
        self._call_start = (len(self.fired), len(self.approvals))

    def note_approval(self) -> None:
        """An answer to a pause is given now, after the effects fired so far."""
        import time

        self.approvals.append((len(self.fired), time.monotonic_ns()))

    def with_approvals(self, out: ActionOutcome) -> ActionOutcome:
        """``out`` with the approvals given since ``begin_action`` (``approvals``, as LangGraph's adapter reports them)."""
        fired0, given0 = self._call_start
        if len(self.approvals) > given0:
            out["approvals"] = [{"fired_before": n - fired0, "t_mono_ns": t} for n, t in self.approvals[given0:]]
        return out

    def __call__(self, task: str, value: object, once: bool = False, key: str | None = None) -> None:
        """Record the effect, under its declared identity ``key`` when the team gave one (else its
        label and value); ``once``: with an idempotency key (thread, identity), so a second attempt
        records nothing (``ctx.effect_once``), as a provider's idempotency key would."""
        v = None if value is None else str(value)
        where = self.where() if self.where is not None else None
        fired = append_effect(self.ledger, task, v, self.thread_id, where, once, key)
        if fired is not None:
            self.fired.append(fired)
        if value is not None:
            self.observed[task] = jsonable(value)
        self.barrier.hit(f"effect(task={task}):after")


def append_effect(
    ledger: Ledger, task: str, v: str | None, thread_id: str, where: Where | None, once: bool, key: str | None = None
) -> Fired | None:
    """Append one effect row to the ledger (``once``: with an idempotency key, so a second attempt
    records nothing; ``key``: the identity the team declared); the ``Fired`` entry for the racer's
    result, or None when nothing was recorded."""
    if once:
        if not isinstance(ledger, AppendsOnce):
            raise NotImplementedError(f"{type(ledger).__name__} has no idempotent append (effect_once)")
        seq, inserted = ledger.append_once(task=task, value=v, thread_id=thread_id, where=where, key=key)
    else:
        seq, inserted = ledger.append(task=task, value=v, thread_id=thread_id, where=where, key=key), True
    return {"seq": seq, "effect_key": effect_key(task, v, key)} if inserted else None


def store_file(spec: RacerSpec, suffix: str) -> Path:
    """The trial's state file for a file-backed target (next to where SQLite targets keep theirs)."""
    base = Path(spec.get("store", {}).get("path") or f"{spec['thread_id']}.state")
    return base.with_name(f"{base.stem}-{spec['thread_id']}{suffix}")


class JsonFileStore:
    """One JSON document, replaced atomically; every save passes two barriers named by content."""

    def __init__(self, path: Path, barrier: BarrierClient):
        self.path = Path(path)
        self.barrier = barrier

    def load(self) -> dict | None:
        try:
            return json.loads(self.path.read_bytes())
        except FileNotFoundError:
            return None
        finally:
            self.barrier.mark("read")  # a timestamp, no boundary (the race window opens at a resume's first read)

    def save(self, what: str, doc: dict) -> None:
        name = f"save({what})"
        self.barrier.hit(name + ":before")
        write_atomic(str(self.path), json.dumps(doc, default=repr).encode())
        dir_fd = os.open(str(self.path.parent), os.O_RDONLY)
        try:
            os.fsync(dir_fd)  # the rename itself is durable before ":after"
        finally:
            os.close(dir_fd)
        self.barrier.hit(name + ":after")


def outcome(
    status: OutcomeStatus, observed: dict[str, object], *, error: ErrorInfo | None = None, interrupts: list | None = None, **extra: object
) -> ActionOutcome:
    """``chaos.targets.base.outcome`` with the values the workload saw during this call."""
    return base_outcome(status, error=error, interrupts=list(interrupts or []), observed=observed, **extra)


@runtime_checkable
class GatesATask(Protocol):
    """A workload whose effect an approval gates (``gated_task``: a race counts its fires)."""

    gated_task: str | None


class SessionBase:
    """What every file-backed session exposes besides perform/inspect/close (see chaos.targets.base)."""

    recorder: EffectRecorder
    workload: Any

    @property
    def meta(self) -> dict[str, object]:
        """The workload's facts the kinds need (every built-in workload type has ``meta``)."""
        return dict(self.workload.meta)

    @property
    def fired(self) -> list[Fired]:
        return self.recorder.fired

    @property
    def gated_task(self) -> str | None:
        return self.workload.gated_task if isinstance(self.workload, GatesATask) else None


class AsyncSession(SessionBase):
    """A session over an async framework: run and resume only, each call driven on its own loop.

    ``__init__`` sets up what every such session has: the thread id, one event loop for the
    session's life, the effect recorder and the JSON file (``store_suffix``) the framework's state
    is saved in. Subclasses build their workload, and provide ``async _perform(action)`` and
    ``unsupported_ops`` (why other ops cannot be expressed)."""

    aio: SessionLoop
    unsupported_ops: str = ""
    store_suffix: str = ".json"

    def __init__(self, spec: RacerSpec, barrier: BarrierClient, ledger: Ledger):
        self.thread_id = spec["thread_id"]
        self.aio = SessionLoop()
        self.recorder = EffectRecorder(barrier, ledger, self.thread_id)
        self.store = JsonFileStore(store_file(spec, self.store_suffix), barrier)
        self.seq = 0

    async def _perform(self, action: Action) -> ActionOutcome:
        """Run or resume (``action``) on the framework, on the session's loop: each subclass's own."""
        raise NotImplementedError(f"{type(self).__name__} performs no action")

    def perform(self, action: Action) -> ActionOutcome:
        if action.get("op", "run") not in ("run", "resume"):
            raise Unsupported(f"{action.get('op')!r}: " + self.unsupported_ops)
        self.recorder.begin_action()
        try:
            return self.recorder.with_approvals(self.aio.run(self._perform(action)))
        except NothingSaved as exc:  # the application had saved nothing yet: nothing to continue, no one's fault
            return nothing_saved_outcome(str(exc))
        except Unsupported:
            raise  # the adapter cannot express the action: the racer records it as unsupported, with the reason
        except Exception as exc:  # the framework's answer, recorded as data
            return self.recorder.with_approvals(outcome("error", self.recorder.observed, error=error_of(exc)))


async def answer_by_plan(
    plan: object,
    doc: dict,
    *,
    pause_number: Callable[[], int],
    workload_answer: Callable[[Any], Any] | None,
    workload_type: str,
    no_question: object,
    go_on: Callable[[dict], Awaitable[ActionOutcome]],
    answer: Callable[[dict, Any], Awaitable[ActionOutcome]],
    saved: Callable[[], dict],
    recorder: EffectRecorder,
    waiting: str,
    most: int,
) -> ActionOutcome:
    """Answer pause after pause, for an own-app adapter whose saved document says whether the run
    waits (``awaiting_input``) and what it asked (``question``): the n-th pause of the run
    (``pause_number()``, 1-based, read after each save) gets ``plan[n]`` (or the workload's
    ``answer(question)`` with ``answers: workload``) until the run ends or the plan is used up (at
    most ``most`` calls). ``go_on(doc)`` continues a run nothing waits in, ``answer(doc, value)``
    answers its pause, ``saved()`` reads the document again. Outcome: the last call's (``waiting``
    as its interrupt when no call was made), with ``answered`` (``[[pause, value], ...]``) and the
    values seen by every call."""
    answered: list[list[object]] = []
    observed: dict[str, object] = {}
    out: ActionOutcome | None = None
    for _ in range(most):
        if not doc.get("awaiting_input"):
            if out is not None:
                break  # the last answer ended the run without a pause
            out = await go_on(doc)  # nothing waits: continue the run as it is
        else:
            n = pause_number() - 1
            if plan == "workload":
                if workload_answer is None:
                    raise Unsupported(f"answers: workload, but the {workload_type} defines no answer(question) callable")
                value = workload_answer(doc.get("question") or no_question)
            elif isinstance(plan, list) and n < len(plan):
                value = plan[n]
            else:
                break  # the plan is used up: leave the run waiting
            answered.append([n, jsonable(value)])
            out = await answer(doc, value)
        observed.update(recorder.observed)
        if out["status"] != "interrupted":
            break
        doc = saved()
    if out is None:
        out = outcome("interrupted", {}, interrupts=[waiting])
    out["observed"] = observed or out.get("observed") or {}
    out["answered"] = answered
    return out


async def answer_when_asked(
    doc: dict,
    value: object,
    *,
    go_on: Callable[[dict], Awaitable[ActionOutcome]],
    answer: Callable[[dict, Any], Awaitable[ActionOutcome]],
    saved: Callable[[], dict],
    recorder: EffectRecorder,
) -> ActionOutcome:
    """A recovery's one answer (``asked_only``), for an own-app adapter whose saved document says
    whether the run waits (``awaiting_input``): given at once to a pause the document holds, else
    the run is continued first (``go_on``) and the answer goes to the pause it stops at (read again
    with ``saved()``), never sent into a run that has not asked yet. Outcome: the last call's, with
    the values seen by both calls."""
    if doc.get("awaiting_input"):
        return await answer(doc, value)
    out = await go_on(doc)
    observed = dict(recorder.observed)
    if out["status"] == "interrupted" and (d := saved()).get("awaiting_input"):
        out = await answer(d, value)
    out["observed"] = {**observed, **recorder.observed} or out.get("observed") or {}
    return out


async def recover_by_plan(
    ref: str,
    plan: list[object] | None,
    *,
    load: Callable[[], dict | None],
    recorder: EffectRecorder,
    once: Callable[[str, dict | None, list[Any], Any], Awaitable[ActionOutcome]],
    waiting: str,
    most: int,
) -> ActionOutcome:
    """The team's own recovery ``ref`` (``package.module:recover``), run by ``once(ref, doc, plan,
    answer)``. With an answer plan it is called again for each pause the run reaches (at most
    ``most`` calls), with the plan's n-th answer (n read from the saved document ``load()``:
    ``pauses``, ``awaiting_input``), until the run ends or the plan is used up: the whole run is
    answered by the plan, as chaos's own driver does. ``waiting``: the interrupt a run left at a
    pause the plan has no answer for reports. Outcome: the last call's, with the values every call saw."""
    plan = list(plan or [])
    observed: dict[str, object] = {}
    out: ActionOutcome | None = None
    for call in range(most):
        doc = load()
        at_pause = bool((doc or {}).get("awaiting_input"))
        n = int((doc or {}).get("pauses", 1 if at_pause else 0)) - 1
        answer = plan[n] if at_pause and 0 <= n < len(plan) else None
        if (plan and at_pause and answer is None) or (call and not at_pause):
            break  # the plan is used up, or the run left the pause: leave it as it is
        recorder.begin_call()
        out = await once(ref, doc, plan, answer)
        observed.update(recorder.observed)
        if not plan or out["status"] != "interrupted":
            break
    if out is None:  # the run waits at a pause the plan has no answer for
        out = outcome("interrupted", {}, interrupts=[waiting], recovered_by=ref, ran=False)
    out["observed"] = observed or out.get("observed") or {}
    return out


async def call_recovery(
    ref: str,
    context: Callable[[], WorkloadContext],
    thread: Any,
    recorder: EffectRecorder,
    passed_on: tuple[type[Exception], ...] = (),
) -> ActionOutcome | None:
    """Call the team's ``recover(context(), thread)`` (awaited when it is a coroutine): None when it
    returned; a failure of importing it, of building its context, or its own (or the framework's
    refusal inside it) is an ``error`` outcome. ``passed_on``: exceptions that are not the
    procedure's to own, raised on as they are."""
    import inspect

    from chaos.workloads import import_factory

    try:
        got = import_factory(ref)(context(), thread)
        if inspect.isawaitable(got):
            await got
    except passed_on:
        raise
    except Exception as exc:  # the procedure's own failure, or the framework's refusal inside it
        return outcome("error", recorder.observed, error=error_of(exc), recovered_by=ref)
    return None


def recovery_context(spec: RacerSpec, recorder: EffectRecorder, thread_id: str) -> WorkloadContext:
    """The ``WorkloadContext`` a team's own recovery (``recover(ctx, thread)``) gets: no
    checkpointer, effects through ``recorder``, the session's thread."""
    from chaos.workloads import WorkloadContext, scratch_dir

    return WorkloadContext(
        checkpointer=None,
        effect_hook=recorder,
        seed=int(spec.get("seed", 0)),
        racer_id=spec["racer_id"],
        params=dict(spec.get("workload_params") or {}),
        trial_id=spec.get("trial_id", ""),
        thread_id=thread_id,
        scratch=scratch_dir(spec),
    )


def prewarm_factories(builtin: dict, only: str | None = None) -> list:
    """The built-in factories a prewarm builds: all, or just ``only`` (none if ``only`` names a
    user's workload: its factory is the user's code, run only where the racer builds it for real)."""
    if only is None:
        return list(builtin.values())
    return [builtin[only]] if only in builtin else []


def prewarm_workloads(framework: str, builtin: dict, only: str | None = None) -> None:
    """Fill what a racer's first build fills (class and schema machinery, type hints): in the fork
    server once, or in a held racer for its own workload (``only``) while it waits for its turn.
    Each built-in workload is built with a no-op effect hook and thrown away. Nothing runs: no
    event loop, no thread, no file (``chaos.racer.forkserver`` checks that after the preload)."""
    from chaos.targets.base import prewarm_versions
    from chaos.workloads import WorkloadContext

    prewarm_versions(framework)
    for factory in prewarm_factories(builtin, only):
        try:
            factory(WorkloadContext(checkpointer=None, effect_hook=lambda task, value=None, once=False, key=None: None))
        except ImportError:  # needs what this release lacks: its own racer reports that when it builds it
            continue


class SessionLoop:
    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()

    def run(self, coro: Any) -> Any:
        return self.loop.run_until_complete(coro)

    def close(self) -> None:
        try:
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
        except Exception:
            pass
        self.loop.close()

"""DBOS adapter (racer side): a ``@DBOS.workflow`` of ``@DBOS.step`` steps over an instrumented system database.

Why a seam inside DBOS: DBOS writes everything durable through one object, its ``SystemDatabase``
(``dbos._sys_db``; the SQLite and Postgres system databases are its two subclasses, made by
``SystemDatabase.create``). Every such object this process makes gets a subclass that passes a
barrier before and after each durable write, named by what it writes (read from dbos 3.4.0's
``dbos/_sys_db.py``; the method names are the seam, ``SEAM_VERSION``):

* ``init_workflow``: ``status(PENDING)`` (or the status it records: ``ENQUEUED``), the workflow's
  first row, with its inputs;
* ``record_operation_result``: ``step(name=pay,n=1)``, a step's output (``n``: DBOS's function id);
* ``recv_setup``: ``recv_wait(topic=approve)``, the recv's durable deadline (a ``DBOS.sleep`` row):
  after it, the workflow waits for a message;
* ``recv_consume``: ``recv(topic=approve)``, the message consumed and the recv's output recorded,
  in one transaction;
* ``send_bulk``: ``send(topic=approve)``, a message row (``DBOS.send``);
* ``set_event_from_workflow``: ``set_event(key=K)``;
* ``update_workflow_outcome``: ``status(SUCCESS)`` / ``status(ERROR)``, the workflow's end;
* ``reenqueue_for_recovery``: ``recover(enqueue)``, a recovery handing a PENDING workflow back to a
  queue (DBOS 3.x recovers through its internal queue, whose dequeue admits one runner);
* ``resume_workflows``: ``resume_workflow``; ``fork_workflow``: ``fork``.

``:before`` means nothing of that write is durable; ``:after`` means its transaction committed.

Resume forms: ``none``: a fresh process constructs DBOS with the same executor id and calls
``DBOS.launch()``, which recovers the PENDING workflows of that executor (``workload_params:
{recover_by: resume_workflow}``: ``DBOS.resume_workflow(id)`` instead, after a launch that finds
nothing of its executor's: ``executor_id`` set apart); ``command``: the same launch, then the
answer ``DBOS.send(id, value, topic)`` (an approval, ``note_approval``); ``input``: start the
workflow again with the same id (DBOS returns the existing workflow: its ids are idempotent).
With an ``answers`` plan (form ``command``), the n-th answer is sent to the n-th recv, one at a
time, n counted from the durable rows (the recvs recorded and the answers sent, not yet consumed).

A resuming process of another application version than the workflow recorded (``workload_params.
application_version``, or DBOS's hash of the workflows' source) gets nothing to run: DBOS's launch
recovers only its own executor's and version's PENDING workflows (the seam watches
``get_pending_workflows`` to see which it found) and its queue dequeues only its own version, so
the session reports ``left_for_version`` (the recorded version) and ``app_version`` (its own)
instead of waiting (the ``upgrade`` kind's *left for v1*).

The session then waits until the workflow ends (its outcome row) or waits at a recv (the pause),
at most ``workload_params.wait_s`` seconds (default 20): a workflow that does neither is reported
as it is (``stalled``), which the kinds read as liveness lost.

``workload_params: {retry_connection_errors: false}`` turns DBOS's retry of a lost database
connection off (its ``SystemDatabase.create`` switch, which ``DBOSClient`` exposes and the config does
not): a lost connection then raises where DBOS would block and retry, as before dbos-transact-py 717.

Ending a racer whose workflow waits at a recv: the waiting thread would keep the process alive
(its wait ends only at the recorded deadline), so ``close`` wakes it with ``ProcessEnds``, a
``BaseException`` raised before the recv consumes anything: DBOS records no outcome for it (it
catches ``Exception`` only), so the workflow stays PENDING, waiting, as if the process had exited.

Inspect reads the durable state from outside, with ``DBOSClient`` (it runs no workflow and
recovers nothing): the workflow's status and its recorded steps.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from typing import Any, cast

from chaos.racer.barrier import BarrierClient
from chaos.racer.ledger import Ledger, Where
from chaos.racer.protocol import Action, ActionOutcome, InspectResult, RacerSpec
from chaos.targets.base import Unsupported, error_of, jsonable, nothing_saved_outcome
from chaos.targets.common import EffectRecorder, SessionBase, boundary_part, outcome, store_file
from chaos.targets.dbos import INFO
from chaos.targets.dbos.preflight import params_problem
from chaos.workloads import build_workload

SEAM_VERSION = "dbos 3.4.0: dbos/_sys_db.py SystemDatabase.{init_workflow, record_operation_result, recv_setup, recv_consume, send_bulk, set_event_from_workflow, update_workflow_outcome, reenqueue_for_recovery, resume_workflows, fork_workflow}"
APP_NAME = "chaos-dbos"
MAX_ANSWERS = 8  # recvs an answers plan answers in one action (chaos.kinds.baseline's bound)
TERMINAL = ("SUCCESS", "ERROR", "CANCELLED", "MAX_RECOVERY_ATTEMPTS_EXCEEDED")


# what DBOS's API says about retry vs fork (the fork kind's FI): two calls, and the fork is a new workflow
INTENT = {
    "discriminator": "DBOS.fork_workflow(id, start_step) -> a new workflow id, vs DBOS.resume_workflow(id) / recovery (the same id)",
    "surface": {
        "fork_workflow": "(workflow_id, start_step, *, application_version, queue_name, ...) -> WorkflowHandle of a new workflow",
        "resume_workflow": "(workflow_id) -> WorkflowHandle of the same workflow",
    },
    "note": "a fork is a new workflow with its own id; a retry (recovery, resume_workflow) continues the same id from its recorded steps",
}


# DBOS polls at 1 s by default where chaos waits on it: a handle's get_result (dbos/_core.py
# DEFAULT_POLLING_INTERVAL), which only chaos's watcher calls here: polled every 20 ms, it reads the
# same outcome row sooner. Its internal queue (through which a launch's recovery and resume_workflow
# run a workflow: dbos/_queue.py DEFAULT_QUEUE_POLLING_INTERVAL_SEC, the wait before each dequeue)
# is polled every 50 ms by a racer that races no other (no start gate: a sweep's resume, a fork), where
# the period only delays the one dequeue; racers released together (a race) keep DBOS's 1 s unless
# ``workload_params.queue_poll_s`` sets it, since a faster queue changes which interleavings k
# recoverers meet: a recoverer launching one period after another's dequeue re-enqueues the running
# workflow (all share one executor id, which is what DBOS's re-enqueue checks) and a second run
# starts, measured as two recoveries and two runs (docs/contract.md, DBOS): the race measures DBOS as it ships.
QUEUE_POLL_S = 0.05
RESULT_POLL_S = 0.02
DESTROY_WAIT_S = 5.0  # at most this long for DBOS.destroy after DBOS saw its database connection fail (close)


def fast_internal_queue(poll_s: float) -> None:
    """Set the polling period of DBOS's internal queue (an in-memory ``Queue`` its registry makes
    on first use; dbos 3.4.0 offers no configuration for it), before ``DBOS.launch`` starts its worker."""
    from dbos._dbos import _get_or_create_dbos_registry

    queue = _get_or_create_dbos_registry().get_internal_queue()
    queue._polling_interval_sec = poll_s


class ProcessEnds(BaseException):
    """The racer ends while a workflow waits at a recv: leave it waiting, as a process exit would."""


class Watch:
    """What the workflow threads of this process did, for the session's main thread to wait on."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.waiting: list[Any] = []  # events of recvs waiting now
        self.consumed = 0  # recvs that consumed (or gave up) since the process started
        self.outcomes: dict[str, str] = {}  # workflow id -> status recorded by this process
        self.closing = False
        self.recoveries = 0  # reenqueue_for_recovery calls that re-enqueued
        self.found: set[str] = set()  # workflows a launch found PENDING for its executor id and application version
        self.ran = 0  # workflow runs started in this process (init_workflow with should_execute)
        self.connection_failures: list[str] = []  # DBOS's own "Database connection failed ... Retrying" (db_retry), first 20
        self.connection_failed = 0
        self.recovery_errors: list[str] = []  # the errors of DBOS's "Exception encountered when recovering workflow ...", first 20

    def note(self, fn: Any) -> None:
        with self.cond:
            fn()
            self.cond.notify_all()


WATCH = Watch()


class DBOSLog(logging.Handler):
    """What DBOS logs and goes on from, kept for the outcome: a database connection that failed
    (its ``db_retry`` logs and retries it) and a recovery that failed (``startup_recovery_thread``
    logs the workflow and drops it). Neither raises to the caller, so without them a lost database
    would show only as a workflow that never finished."""

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        # db_retry logs SQLite's lock contention in the same words: that is DBOS's own concurrency, no lost database
        if text.startswith("Database connection failed") and "sqlite3." not in text and "database is locked" not in text:

            def failed() -> None:
                WATCH.connection_failed += 1
                if len(WATCH.connection_failures) < 20:
                    WATCH.connection_failures.append(text[:300])

            WATCH.note(failed)
        elif text.startswith("Exception encountered when recovering workflow"):
            exc = record.exc_info[1] if record.exc_info else None
            # the error alone (SQLAlchemy's first line: its driver's error), the workflow's id is the caller's
            err = f"{type(exc).__name__}: {' '.join(str(exc).split(chr(10))[0].split())}" if exc else text
            if len(WATCH.recovery_errors) < 20:
                WATCH.note(lambda: WATCH.recovery_errors.append(err[:300]))


def watch_dbos_log() -> None:
    """Add ``DBOSLog`` to DBOS's logger (once; after DBOS made its own console handler)."""
    log = logging.getLogger("dbos")
    if not any(isinstance(h, DBOSLog) for h in log.handlers):
        log.addHandler(DBOSLog(logging.WARNING))


def _topic(topic: Any) -> str:
    return "none" if topic is None else boundary_part(topic)


def op_name(result: Any) -> str:
    """The boundary of one recorded operation: a step's output (``step(name=pay,n=1)``), or one of
    DBOS's own operations by its recorded name (``DBOS.sleep`` -> ``sleep(n=3)``, the recv's deadline)."""
    full = str(result.get("function_name") or "?")
    tag = ",error" if result.get("error") is not None else ""
    if full.startswith("DBOS."):
        return f"{boundary_part(full[5:])}(n={result.get('function_id')}{tag})"
    return f"step(name={boundary_part(full)},n={result.get('function_id')}{tag})"


def instrument_class(base: type, barrier_of: Any) -> type:
    """The subclass of a SystemDatabase class that passes the barriers (``barrier_of()``: the racer's)."""

    def around(name: str, call: Any) -> Any:
        b = barrier_of()
        if b is not None:
            b.hit(name + ":before")
        out = call()
        if b is not None:
            b.hit(name + ":after")
        return out

    class Instrumented(base):
        def init_workflow(self, status, *a, **kw):
            out = around(f"status({status.get('status')})", lambda: super(Instrumented, self).init_workflow(status, *a, **kw))
            return out

        def record_operation_result(self, result, *a, **kw):
            return around(op_name(result), lambda: super(Instrumented, self).record_operation_result(result, *a, **kw))

        def recv_setup(self, workflow_uuid, function_id, timeout_function_id, topic, *a, **kw):
            out = around(
                f"recv_wait(topic={_topic(topic)})",
                lambda: super(Instrumented, self).recv_setup(workflow_uuid, function_id, timeout_function_id, topic, *a, **kw),
            )
            if not out[0]:
                WATCH.note(lambda: WATCH.waiting.append(out[1]))
            return out

        def recv_consume(self, workflow_uuid, function_id, topic, *a, **kw):
            if WATCH.closing:
                raise ProcessEnds("the racer ends; the workflow stays waiting at its recv")

            def consumed() -> None:
                WATCH.consumed += 1
                WATCH.waiting[:] = [e for e in WATCH.waiting if not e.is_set()]

            try:
                return around(
                    f"recv(topic={_topic(topic)})",
                    lambda: super(Instrumented, self).recv_consume(workflow_uuid, function_id, topic, *a, **kw),
                )
            finally:
                WATCH.note(consumed)

        def send_bulk(self, messages, *a, **kw):
            topics = "+".join(sorted({_topic(getattr(m, "topic", None)) for m in messages}))
            return around(f"send(topic={topics})", lambda: super(Instrumented, self).send_bulk(messages, *a, **kw))

        def set_event_from_workflow(self, workflow_uuid, function_id, key, *a, **kw):
            return around(
                f"set_event(key={boundary_part(key)})",
                lambda: super(Instrumented, self).set_event_from_workflow(workflow_uuid, function_id, key, *a, **kw),
            )

        def update_workflow_outcome(self, workflow_id, status, *a, **kw):
            landed = around(f"status({status})", lambda: super(Instrumented, self).update_workflow_outcome(workflow_id, status, *a, **kw))
            if landed:
                WATCH.note(lambda: WATCH.outcomes.__setitem__(workflow_id, str(status)))
            return landed

        def get_pending_workflows(self, *a, **kw):
            # what DBOS's launch will recover: PENDING workflows of its executor id AND its application version
            out = super().get_pending_workflows(*a, **kw)
            ids = {str(w.workflow_id) for w in out}
            WATCH.note(lambda: WATCH.found.update(ids))
            return out

        def reenqueue_for_recovery(self, *a, **kw):
            done = around("recover(enqueue)", lambda: super(Instrumented, self).reenqueue_for_recovery(*a, **kw))
            if done:
                WATCH.note(lambda: setattr(WATCH, "recoveries", WATCH.recoveries + 1))
            return done

        def start_queued_workflows(self, *a, **kw):
            out = super().start_queued_workflows(*a, **kw)
            ids = out[0] if isinstance(out, tuple) else out
            if ids:
                WATCH.note(lambda: setattr(WATCH, "ran", WATCH.ran + len(list(ids))))
            return out

        def resume_workflows(self, *a, **kw):
            return around("resume_workflow", lambda: super(Instrumented, self).resume_workflows(*a, **kw))

        def fork_workflow(self, *a, **kw):
            return around("fork", lambda: super(Instrumented, self).fork_workflow(*a, **kw))

    Instrumented.__name__ = Instrumented.__qualname__ = f"Chaos{base.__name__}"
    return Instrumented


_BARRIER: list[BarrierClient | None] = [None]
_CLASSES: dict[type, type] = {}
# DBOS's own switch, ``SystemDatabase.create(retry_connection_errors=...)`` (``DBOSClient`` exposes it,
# DBOS's config does not): False raises a lost connection instead of retrying it (``workload_params``)
_RETRY: list[bool] = [True]


def install_seam(barrier: BarrierClient, retry_connection_errors: bool = True) -> None:
    """Every SystemDatabase this process makes from now on passes ``barrier`` (idempotent)."""
    from dbos._sys_db import SystemDatabase

    _BARRIER[0] = barrier
    _RETRY[0] = retry_connection_errors
    if getattr(SystemDatabase.create, "_chaos", False):
        return
    original = SystemDatabase.create

    def create(*a: Any, **kw: Any) -> Any:
        if not _RETRY[0]:
            kw["retry_connection_errors"] = False
        db = original(*a, **kw)
        cls = type(db)
        if cls not in _CLASSES:
            _CLASSES[cls] = instrument_class(cls, lambda: _BARRIER[0])
        db.__class__ = _CLASSES[cls]
        return db

    create._chaos = True  # type: ignore[attr-defined]  # a mark on the patched function: installed once
    SystemDatabase.create = staticmethod(create)


def system_database(spec: RacerSpec) -> tuple[str, str]:
    """The trial's system database URL and schema: a SQLite file in the trial's folder, or a schema
    of its own on the run's Postgres (recovery takes every PENDING workflow of its executor in the
    schema, so trials must not share one)."""
    store = dict(spec.get("store") or {})
    if spec["target"].get("backend") == "postgres":
        dsn = store.get("dsn")
        if not dsn:
            raise Unsupported("backend postgres needs the run's Postgres (CHAOS_PG_DSN)")
        base = str(store.get("schema") or "chaos_run")
        tag = hashlib.sha1(spec["thread_id"].encode()).hexdigest()[:10]
        return str(dsn), f"{base[:50]}_{tag}"
    return f"sqlite:///{store_file(spec, '.dbos.sqlite')}", "dbos"


def registered_or_refuse(workload: Any, ref: str) -> None:
    """The workload's workflow is a ``@DBOS.workflow`` registered in this process (a fresh process
    must find it by name to recover it), else one line saying so."""
    from dbos._dbos import _get_or_create_dbos_registry
    from dbos._registrations import get_dbos_func_name

    fn = workload.workflow
    name = get_dbos_func_name(fn) if hasattr(fn, "dbos_function_name") else None
    if name is None or name not in _get_or_create_dbos_registry().workflow_info_map:
        what = getattr(fn, "__qualname__", repr(fn))
        raise TypeError(
            f"workload {ref!r}: {what} is not a registered DBOS workflow: decorate it with @DBOS.workflow() at module level, "
            "so that a fresh process registers it on import and can recover it"
        )


class DBOSSession(SessionBase):
    def __init__(self, spec: RacerSpec, barrier: BarrierClient, ledger: Ledger):
        from chaos.workloads.dbos import BUILTIN, DBOSWorkload

        self.spec = spec
        self.thread_id = spec["thread_id"]
        self.barrier = barrier
        self.recorder = EffectRecorder(barrier, ledger, self.thread_id)
        self.params = dict(spec.get("workload_params") or {})
        self.workload = build_workload(spec, self.recorder, BUILTIN, DBOSWorkload)
        registered_or_refuse(self.workload, spec["workload"])
        self.url, self.schema = system_database(spec)
        # chaos's own reads (the workflow's row and steps, from outside) reach the database directly
        # when DBOS's is relayed (fault: db_restart): an outage planned for DBOS must not fail the instrument
        self.observe_url = str((spec.get("store") or {}).get("observe_dsn") or self.url)
        # recover_by resume_workflow: the resumer's executor id is its own, so its launch recovers
        # nothing and DBOS.resume_workflow(id) is what brings the workflow back
        self.by_resume = self.params.get("recover_by") == "resume_workflow"
        problem = params_problem(self.params)  # refused by the run's preflight already (chaos.targets.dbos.preflight)
        if problem is not None:
            raise ValueError(problem)
        own = f"resumer-{spec['racer_id']}" if self.by_resume and spec["racer_id"] != "victim" else None
        self.executor_id = str(self.params.get("executor_id") or own or "local")
        self.wait_s = float(self.params.get("wait_s", 20))
        self.launched = False
        self.watching: set[str] = set()
        # one DBOSClient for all of chaos's reads of the store (made on the first): each client opens
        # an engine and checks its connection, once per racer instead of once per read
        self._reader: Any = None
        self._reader_lock = threading.Lock()
        self.recorder.where = self._where
        install_seam(barrier, retry_connection_errors=self.params.get("retry_connection_errors", True) is not False)

    # --- DBOS in this process ---------------------------------------------------------------------
    def _config(self) -> dict[str, Any]:
        cfg: dict[str, Any] = {
            "name": APP_NAME,
            "system_database_url": self.url,
            "dbos_system_schema": self.schema,
            "executor_id": self.executor_id,
            "log_level": str(self.params.get("log_level", "WARNING")),
            "notification_listener_polling_interval_sec": 0.01,
        }
        name = (self.spec.get("store") or {}).get("application_name")
        if name and self.spec["target"].get("backend") == "postgres":
            # fault: db_disconnect finds this racer's connections by their name; DBOS names its own
            # "dbos_transact" in connect_args, which win over the URL's, so the name goes there (its
            # other engine defaults, pool_pre_ping among them, stay: dbos/_dbos_config.py)
            cfg["db_engine_kwargs"] = {"connect_args": {"application_name": str(name)}}
        if self.params.get("application_version"):
            cfg["application_version"] = str(self.params["application_version"])
        return cfg

    def _launch(self) -> None:
        """Construct DBOS and launch it: on a fresh process this is DBOS's recovery of the PENDING
        workflows of its executor id."""
        from dbos import DBOS

        if self.launched:
            return
        DBOS(config=self._config())
        watch_dbos_log()
        poll = self.params.get("queue_poll_s")
        if poll is None and not self.spec.get("gate"):  # racing no other racer: only the wait is shortened
            poll = QUEUE_POLL_S
        if poll is not None:
            fast_internal_queue(float(poll))
        DBOS.launch()
        self.launched = True

    def _where(self) -> Where | None:
        from dbos import DBOS

        fid = DBOS.step_id
        if fid is None:
            return None
        return {"node": None, "namespace": "", "task_id": str(fid), "outside_task": False}

    # --- actions -------------------------------------------------------------------------------
    def perform(self, action: Action) -> ActionOutcome:
        op, form = action.get("op", "run"), action.get("form", "input")
        if op not in ("run", "resume", "fork", "checkpoints", "intent"):
            raise Unsupported(f"{op!r} is not expressed by the DBOS adapter")
        if op == "intent":
            return outcome("done", {}, intent=INTENT)
        if op == "checkpoints":
            return outcome("done", {}, checkpoints=self._checkpoints())
        self.recorder.begin_action()
        try:
            if op == "fork":
                return self.recorder.with_approvals(self._fork(action))
            if op == "run" or form == "input":
                return self.recorder.with_approvals(self._start())
            if form == "command" and "answers" in action:
                return self.recorder.with_approvals(self._answer_plan(action.get("answers")))
            if form == "none":
                return self.recorder.with_approvals(self._recover(answer=None, answering=False))
            if form == "command":
                return self.recorder.with_approvals(self._recover(answer=action.get("value"), answering=True))
            if form == "app":
                return self.recorder.with_approvals(self._recover_by_app(action))
            raise Unsupported(f"resume form {form!r} is not expressed by the DBOS adapter yet")
        except Unsupported:
            raise
        except Exception as exc:  # the framework's answer, recorded as data
            return self.recorder.with_approvals(outcome("error", self.recorder.observed, error=error_of(exc)))

    def _start(self) -> ActionOutcome:
        from dbos import DBOS, SetWorkflowID

        self._launch()
        before = self._status()
        consumed0 = WATCH.consumed
        with SetWorkflowID(self.thread_id):
            DBOS.start_workflow(self.workload.workflow, *self.workload.args, **self.workload.kwargs)
        if before in TERMINAL:
            return outcome("done", self.recorder.observed, nothing_to_resume=True, workflow_status=before)
        return self._await(consumed0)

    def _recover(self, answer: Any, answering: bool) -> ActionOutcome:
        from dbos import DBOS

        before = self._status()
        if before is None:
            return nothing_saved_outcome(
                "DBOS has no row for the workflow: its first write (status PENDING, with its inputs) was not committed at the "
                "kill, so there is nothing to recover (the start call had not returned either)"
            )
        if before in TERMINAL:  # finished: recovery runs nothing; an answer is sent all the same
            self._launch()
            if answering:
                self._send(answer)
            return outcome("done", self.recorder.observed, nothing_to_resume=True, workflow_status=before)
        consumed0 = WATCH.consumed
        if answering:  # the recovered run finds the answer at its recv, or is woken by it
            self._launch()
            if self.by_resume:
                DBOS.resume_workflow(self.thread_id)
            self._send(answer)
            return self._left_for_version() or self._await(consumed0, answered=True)
        self._launch()
        if self.by_resume:
            DBOS.resume_workflow(self.thread_id)
        return self._left_for_version() or self._await(consumed0)

    def _answer_plan(self, plan: Any) -> ActionOutcome:
        """An ``answers`` plan: the n-th answer is sent (``DBOS.send``) to the n-th recv, one at a
        time: each after the workflow consumed the one before and waits again. n is read from the
        durable rows, the recvs DBOS recorded plus the messages sent and not consumed yet, so a
        fresh process after a crash picks the plan up where the workflow is: an answer whose
        ``send`` committed before the kill is not sent again (it waits for its recv, and a second
        copy would be consumed by the next recv as the next answer). The plan used up, the
        workflow is left waiting."""
        from dbos import DBOS

        if not isinstance(plan, list):
            raise Unsupported("answers: workload needs an answer callable, and a DBOSWorkload has none: give the answers as a list")
        before = self._status()
        if before is None:
            return nothing_saved_outcome("DBOS has no row for the workflow: its first write was not committed at the kill")
        self._launch()
        if before in TERMINAL:
            return outcome("done", self.recorder.observed, nothing_to_resume=True, workflow_status=before)
        if self.by_resume:
            DBOS.resume_workflow(self.thread_id)
        left = self._left_for_version()
        if left is not None:
            return left
        answered: list[list[Any]] = []
        observed: dict[str, Any] = {}
        out: ActionOutcome | None = None
        for _ in range(MAX_ANSWERS):
            queued = self._queued()
            n = self._received() + queued
            consumed0 = WATCH.consumed
            if not queued:  # else an answer already sent waits for its recv: let the workflow consume it first
                if n >= len(plan):
                    break  # the plan is used up: leave the workflow waiting
                answered.append([n, jsonable(plan[n])])
                self._send(plan[n])
            out = self._await(consumed0, answered=True)
            observed.update(self.recorder.observed)
            if out["status"] != "interrupted":
                break
        if out is None:  # nothing the plan answers: the recovered run goes on to its next pause or its end
            out = self._await(WATCH.consumed)
        out["observed"] = observed or out.get("observed") or {}
        out["answered"] = answered
        return out

    def _received(self) -> int:
        """The recvs the workflow has consumed (DBOS records each with its message)."""
        return sum(1 for c in self._checkpoints() if c["source"] == "DBOS.recv")

    def _queued(self) -> int:
        """Messages sent to the workflow on its topic that no recv has consumed yet (DBOS's
        ``notifications`` rows, ``consumed`` false: dbos 3.4.0 has no API that lists them)."""
        import sqlalchemy as sa

        db = self._client()._sys_db
        t = db.tables.notifications
        query = sa.select(sa.func.count()).where(
            t.c.destination_uuid == self.thread_id, t.c.topic == self.workload.topic, t.c.consumed == sa.false()
        )
        with db.engine.begin() as c:
            return int(c.execute(query).scalar() or 0)

    def _left_for_version(self) -> ActionOutcome | None:
        """DBOS runs a workflow only in a process of the application version it recorded: a launch
        recovers the PENDING workflows of its executor id and its version (``get_pending_workflows``
        in ``DBOS._launch``), and the queue that ``resume_workflow`` hands it to dequeues only its
        own version (``start_queued_workflows``, dbos 3.4.0 ``_sys_db.py``). When this process runs
        another version and the launch did not find the workflow, say so with both version strings,
        instead of waiting for a run DBOS will not make here."""
        from dbos import DBOS

        row = self._row()
        recorded = str(row.app_version) if row is not None and row.app_version is not None else None
        mine = str(DBOS.application_version)
        if row is None or recorded is None or recorded == mine or str(row.status) in TERMINAL:
            return None
        if self.thread_id in WATCH.found:  # the launch did find it: let it run, and see
            return None
        return outcome(
            "done",
            self.recorder.observed,
            left_for_version=recorded,
            app_version=mine,
            workflow_status=str(row.status),
            facts={"recoveries": WATCH.recoveries, "runs": WATCH.ran},
        )

    def _recover_by_app(self, action: Action) -> ActionOutcome:
        """The team's own recovery: ``recover(ctx, thread)`` from ``package.module:recover`` in this
        fresh process, after DBOS is launched here (which recovers the PENDING workflows of its
        executor); with an answer plan, ``thread.answer`` is the plan's answer for the pause the
        workflow waits at next (n: the recvs recorded and the answers sent, not yet consumed). Then chaos
        waits for the workflow as after any resume."""
        from dbos import DBOS

        from chaos.targets.common import recovery_context
        from chaos.workloads import import_factory
        from chaos.workloads.dbos import DBOSThread

        ref = action.get("recover") or ""
        plan = list(action.get("plan") or [])
        before = self._status()
        if before is None:
            return nothing_saved_outcome("DBOS has no row for the workflow: nothing to recover")
        got = self._received()  # read before the launch recovers it
        n = got + (self._queued() if self.workload.topic is not None else 0)  # the pause the workflow waits at next
        consumed0 = WATCH.consumed
        self._launch()
        answered: list[Any] = []

        def send(value: Any) -> None:
            answered.append(value)
            self._send(value)

        thread = DBOSThread(
            workflow_id=self.thread_id,
            status=before,
            topic=self.workload.topic,
            answer=plan[n] if n < len(plan) else None,
            send=send,
            resume=lambda: DBOS.resume_workflow(self.thread_id),
            received=got > 0,
        )
        try:
            got = import_factory(ref)(recovery_context(self.spec, self.recorder, self.thread_id), thread)
            if hasattr(got, "__await__"):
                import asyncio

                asyncio.run(got)
        except Exception as exc:  # the procedure's own failure, or the framework's refusal inside it
            return outcome("error", self.recorder.observed, error=error_of(exc), recovered_by=ref)
        if before in TERMINAL:
            return outcome("done", self.recorder.observed, nothing_to_resume=True, workflow_status=before, recovered_by=ref)
        out = self._await(consumed0, answered=bool(answered))
        out["recovered_by"] = ref
        return out

    def _send(self, value: Any, to: str | None = None) -> None:
        from dbos import DBOS

        topic = self.workload.topic
        if topic is None:
            raise Unsupported("the workflow waits for no message (its DBOSWorkload has no topic): there is nothing to answer")
        self.recorder.note_approval()
        DBOS.send(to or self.thread_id, value, topic)

    def _fork(self, action: Action) -> ActionOutcome:
        """``DBOS.fork_workflow(id, start_step)`` from the recv's step (the steps before it are
        copied from the original's recorded outputs, the recv and all after run again in a new
        workflow), then the fork's answer sent to the new workflow."""
        from dbos import DBOS

        if action.get("via", "checkpoint") != "explicit":
            raise Unsupported(INFO.unsupported["fork:checkpoint"])
        recv = [c for c in self._checkpoints() if c["source"] == "DBOS.recv"]
        if not recv:
            raise Unsupported("the workflow recorded no DBOS.recv: there is no pause to fork from")
        start = int(recv[-1]["step"] or 0)
        self._launch()
        consumed0 = WATCH.consumed
        handle = DBOS.fork_workflow(self.thread_id, start)
        new_id = handle.get_workflow_id()
        self._send(action.get("value"), to=new_id)
        out = self._await(consumed0, answered=True, wf=new_id)
        out["forked_from"] = f"{self.thread_id}@step{start}"
        out["via"] = "explicit"
        out["fork_id"] = new_id
        return out

    def _checkpoints(self) -> list[dict[str, Any]]:
        """The workflow's recorded operations, newest first (DBOS's steps: the addresses a fork takes)."""
        steps = self._client().list_workflow_steps(self.thread_id, load_output=False)
        return [
            {"id": str(s["function_id"]), "step": s["function_id"], "source": s["function_name"], "next": [], "interrupts": 0}
            for s in reversed(steps)
        ]

    def _await(self, consumed0: int, answered: bool = False, wf: str | None = None) -> ActionOutcome:
        """Wait until the workflow's outcome is recorded, or it waits at a recv (after the answer
        was consumed, when answering), at most ``wait_s``."""
        wf = wf or self.thread_id
        self._watch_result(wf)

        def settled() -> bool:
            if wf in WATCH.outcomes:
                return True
            waiting = any(not e.is_set() for e in WATCH.waiting)
            return waiting and (not answered or WATCH.consumed > consumed0)

        with WATCH.cond:
            WATCH.cond.wait_for(settled, timeout=self.wait_s)
            status = WATCH.outcomes.get(wf)
            waiting = any(not e.is_set() for e in WATCH.waiting)
        # what this process did to the workflow: recoveries (re-enqueues that landed) and runs it dequeued;
        # the database connections DBOS saw fail and retried, and the recoveries it logged and dropped
        facts: dict[str, Any] = {"recoveries": WATCH.recoveries, "runs": WATCH.ran}
        if WATCH.connection_failed:
            facts["connection_failures"] = WATCH.connection_failed
        if WATCH.recovery_errors:
            facts["recovery_errors"] = list(WATCH.recovery_errors)
        extra: dict[str, Any] = {"facts": facts}
        if status == "SUCCESS":
            return outcome("done", self.recorder.observed, workflow_status=status, **extra)
        if status is not None:  # ended otherwise: the recorded error, raised again by DBOS's own get_result
            from dbos import DBOS

            try:
                DBOS.retrieve_workflow(wf).get_result()
            except Exception as exc:
                return outcome("error", self.recorder.observed, error=error_of(exc), workflow_status=status, **extra)
            return outcome("done", self.recorder.observed, workflow_status=status, **extra)
        if waiting:
            return outcome("interrupted", self.recorder.observed, interrupts=[f"recv({self.workload.topic})"], **extra)
        # neither ended nor waiting: what the durable state says, for the kinds to judge; with the
        # connection failures DBOS retried, by which an outage chaos did not plan is told from a verdict
        if WATCH.connection_failures:
            extra["connection_errors"] = list(WATCH.connection_failures)
        return outcome("done", self.recorder.observed, stalled=True, workflow_status=self._status(), waited_s=self.wait_s, **extra)

    def _watch_result(self, wf: str) -> None:
        """Learn when the workflow ends wherever it runs (another process may own it): DBOS's own
        ``get_result`` on a handle, in a daemon thread (it polls the system database)."""
        from dbos import DBOS

        if wf in self.watching:
            return
        self.watching.add(wf)

        def watch() -> None:
            try:
                DBOS.retrieve_workflow(wf).get_result(polling_interval_sec=RESULT_POLL_S)
                status: str | None = "SUCCESS"
            except BaseException:  # ended in error, or DBOS shut down under the wait
                try:
                    status = self._status(wf)
                except Exception:
                    return
            if status in TERMINAL:
                WATCH.note(lambda: WATCH.outcomes.setdefault(wf, str(status)))

        threading.Thread(target=watch, name="chaos-dbos-result", daemon=True).start()

    # --- durable state, read from outside --------------------------------------------------------
    def _client(self) -> Any:
        """The session's DBOSClient (made on the first read; its pool pre-pings, so a cut connection is
        replaced, not reused; the result watcher's thread reads through it too)."""
        from dbos import DBOSClient

        with self._reader_lock:
            if self._reader is None:
                self._reader = DBOSClient(system_database_url=self.observe_url, dbos_system_schema=self.schema)
            return self._reader

    def _row(self, wf: str | None = None) -> Any:
        """The workflow's status row as DBOS recorded it (its ``WorkflowStatus``; None: DBOS has no row of it)."""
        rows = self._client().list_workflows(workflow_ids=[wf or self.thread_id])
        return rows[0] if rows else None

    def _status(self, wf: str | None = None) -> str | None:
        """The workflow's status as DBOS recorded it (None: DBOS has no row of it)."""
        row = self._row(wf)
        return str(row.status) if row is not None else None

    def inspect(self) -> InspectResult:
        try:
            client = self._client()
        except Exception as exc:
            return {"checkpoints": None, "error": error_of(exc)}
        try:
            rows = client.list_workflows(workflow_ids=[self.thread_id])
            steps = client.list_workflow_steps(self.thread_id) if rows else []
        except Exception as exc:
            return {"checkpoints": None, "error": error_of(exc)}
        status = str(rows[0].status) if rows else None
        names = self.workload.steps
        done = [s for s in steps if s["function_name"] in names and s.get("error") is None]
        completed = [names[s["function_name"]] for s in done]
        recv_fids = {s["function_id"] for s in steps if s["function_name"] == "DBOS.recv"}
        pending = [s for s in steps if s["function_name"] == "DBOS.sleep" and s["function_id"] - 1 not in recv_fids]
        ended = status in TERMINAL
        waiting = status == "PENDING" and bool(pending)
        todo = [t for t in names.values() if t not in completed]
        state: dict[str, Any] = {
            "checkpoints": len(steps) + (1 if rows else 0),
            "head_step": len(steps) if rows else None,
            # the head of the durable frontier (the newest recorded operation) and every durable
            # record, the workflow's row with its operations (as ``checkpoints``): what moved under a
            # resume (chaos.kinds.upgrade reads both)
            "checkpoint": str(steps[-1]["function_id"]) if steps else None,
            "durable_checkpoints": len(steps) + (1 if rows else 0),
            "app_version": str(rows[0].app_version) if rows and rows[0].app_version is not None else None,
            # a PENDING workflow not waiting at a recv still has work: its remaining effect steps, or
            # the workflow itself when the workload names none (a team's app whose effects are not steps)
            "next": []
            if ended or status is None
            else (["recv"] if waiting else []) + (todo or ([] if waiting else [f"workflow({status})"])),
            "completed_tasks": sorted(set(completed)),
            "completed_task_ids": [str(s["function_id"]) for s in done],
            "completed_by_namespace": {"": sorted({s["function_name"] for s in done})},
            "pending_interrupts": 1 if waiting else 0,
            "ended": ended,
            "workflow_status": status,
            "workflow_id": self.thread_id,
            "steps": [{"n": s["function_id"], "name": s["function_name"], "output": jsonable(s.get("output"))} for s in steps],
            "values": jsonable(rows[0].output) if rows and status == "SUCCESS" else None,
            "error": None,
        }
        return cast(InspectResult, state)

    def close(self) -> None:
        from dbos import DBOS

        def closing() -> None:
            WATCH.closing = True
            for e in WATCH.waiting:
                e.set()  # the waiting recv wakes and meets ProcessEnds before it consumes anything

        WATCH.note(closing)
        if self._reader is not None:
            # its engine disposed, its connections closed as they come back (a late read of the
            # result watcher still gets an answer, on a connection closed after it)
            try:
                self._reader.destroy()
            except Exception:
                pass
        if self.launched:

            def destroy() -> None:
                try:
                    DBOS.destroy(workflow_completion_timeout_sec=0)
                except Exception:
                    pass

            if WATCH.connection_failed:
                # DBOS's destroy joins each of its background threads for up to 10 s, and under a lost
                # database they retry (db_retry) instead of stopping: the racer's result must not wait on them
                t = threading.Thread(target=destroy, name="chaos-dbos-destroy", daemon=True)
                t.start()
                t.join(timeout=DESTROY_WAIT_S)
            else:
                destroy()
        _BARRIER[0] = None


def open_session(spec: RacerSpec, barrier: BarrierClient, ledger: Ledger) -> DBOSSession:
    return DBOSSession(spec, barrier, ledger)


# For warm racers (chaos.racer.forkserver): importing dbos (and pydantic-ai's DBOS integration) starts
# no thread and opens nothing (checked: one thread, no descriptor after the import); DBOS's threads and
# engine start only at DBOS.launch(), in the racer. Importing the built-in workloads registers their
# workflows once, in the server (about 2.5 s of a cold racer's start is these imports). SQLAlchemy
# imports its SQLite dialect (and the sqlite3 module) only when DBOS.launch() creates the engine: 65 ms
# of every racer's launch at load 6 (cProfile of a recovery launch, 2026-12-02), imported here once;
# the Postgres dialect likewise, when the environment has psycopg (importing it starts no thread).
PRELOAD = (
    "dbos",
    "dbos._sys_db",
    "dbos._sys_db_sqlite",
    "dbos._sys_db_postgres",
    "dbos._client",
    "sqlalchemy.dialects.sqlite",
    "sqlalchemy.dialects.sqlite.pysqlite",
    "chaos.workloads.dbos",
)
PRELOAD_OPTIONAL = ("pydantic_ai", "pydantic_ai.durable_exec.dbos", "sqlalchemy.dialects.postgresql.psycopg")


def prewarm(only: str | None = None) -> None:
    """The fork server's pre-warm (``chaos.racer.forkserver``): what every DBOS racer would otherwise
    read for itself, none of it DBOS's running state. The distributions' versions; and the source of
    the registered workflows, which ``DBOS.launch()`` hashes into the application version
    (``compute_app_version``: ``inspect.getsource`` of each), read once here so a racer finds the
    files in ``linecache`` (the racer still computes the version itself, from the workflows it has
    registered). A pooled child (``only``) inherits both from the server."""
    if only is not None:
        return
    from dbos._dbos import _get_or_create_dbos_registry

    from chaos.targets.base import prewarm_versions

    prewarm_versions("dbos")
    _get_or_create_dbos_registry().compute_app_version(APP_NAME)

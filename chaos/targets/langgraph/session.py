"""LangGraph adapter (racer side): a workload over an instrumented checkpoint saver.

The saver of the chosen backend (SqliteSaver, PostgresSaver, InMemorySaver; AsyncSqliteSaver and
AsyncPostgresSaver for ``sqlite_async`` / ``postgres_async``) is given a subclass that calls the
barrier hook before and after every ``put`` / ``aput`` (a checkpoint) and ``put_writes`` /
``aput_writes`` (a task's pending writes). Boundaries are named by content: ``put(step=1,source=loop):before``,
``put_writes(node=b,channels=b+branch:to:c):after``. ``:before`` means nothing of this call is
durable yet; ``:after`` means its transaction committed.

Resume forms map to LangGraph calls: ``none`` -> ``invoke(None)`` (continue from the last
checkpoint), ``input`` -> ``invoke(input)`` (a new run on the thread), ``command`` ->
``invoke(Command(resume=value))`` (answer the pending interrupt; with ``answers``, every pending
interrupt in turn, each by its id), ``app`` -> the team's ``recover(ctx, thread)``. On an async
backend the same calls are ``ainvoke`` (and ``aupdate_state``), awaited on an event loop that runs
on its own thread (``AsyncBridge``), where the saver's connection lives, as in LangGraph's server;
reads (``get_state``, history) use the async saver's sync bridge.

Every effect row names the node and (sub)graph namespace that fired it, read from LangGraph's
runnable config (``where_fired``); ``inspect`` reports the durable frontier per namespace.

Static breakpoints (``interrupt_before`` / ``interrupt_after``, compiled into the graph or passed
to every ``invoke`` by the workload) are approval points like ``interrupt()``: a thread stopped at
one is ``interrupted`` with its ``breakpoint`` (``inspect`` reports it too), read from the durable
head by LangGraph's own rule (a breakpoint node next, or just run, and a channel updated since the
last pause). Its approval is ``invoke(None)``, after an optional ``update_state`` edit (``Edit``).
Every answer or approval this session gives is listed in the outcome (``approvals``: how many
effects the call had fired before it), so a checker can tell a recovery from an approval.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any

from chaos.racer.barrier import BarrierClient
from chaos.racer.ledger import Ledger, Where
from chaos.racer.protocol import Action, ActionOutcome, Fired, InspectResult, RacerSpec, StoreSpec
from chaos.targets.base import OPS, Unsupported, error_of, jsonable, outcome
from chaos.targets.common import append_effect
from chaos.targets.langgraph.guards import refused_by
from chaos.targets.langgraph.saver_boundaries import put_name, writes_name
from chaos.workloads import WorkloadContext, import_factory, scratch_dir
from chaos.workloads.langgraph import Breakpoint, Edit


def graph_namespace(checkpoint_ns: str | None) -> str:
    """A (sub)graph's namespace without task ids: ``sub:1f..|inner:2a..`` -> ``sub|inner``; ``""`` is the root."""
    return "|".join(part.split(":", 1)[0] for part in (checkpoint_ns or "").split("|") if part)


def where_fired() -> Where:
    """The task running on this thread, read from LangGraph's runnable config: its node, the
    namespace of the (sub)graph it runs in, its task id. Outside a running task (a thread the node
    started, code after the graph returned) LangGraph has no config: ``outside_task`` is then true."""
    from langgraph.config import get_config

    try:
        config = get_config()
    except RuntimeError:
        return {"node": None, "namespace": None, "task_id": None, "outside_task": True}
    md, conf = config.get("metadata") or {}, config.get("configurable") or {}
    node = md.get("langgraph_node")
    if node is None:
        return {"node": None, "namespace": None, "task_id": None, "outside_task": True}
    return {
        "node": str(node),
        "namespace": graph_namespace(md.get("checkpoint_ns")),
        "task_id": conf.get("__pregel_task_id"),
        "outside_task": False,
    }


def instrument(saver: Any, barrier: BarrierClient, reads: Any = None) -> Any:
    """Give ``saver`` a subclass whose writes pass through barriers and whose reads are marked
    (``read``: a timestamp, no boundary); returns the saver. ``reads`` (``chaos.targets.langgraph.guards.Reads``)
    gives chaos's own reads the guard's inspection keys."""
    base = type(saver)
    read_config = reads.config if reads is not None else (lambda config: config)

    class Instrumented(base):  # type: ignore[misc, valid-type]  # a subclass of the store's own class, made at run time
        # reads are marked, not boundaries (no kill point): when the race window opens
        def get_tuple(self, config):
            out = super().get_tuple(read_config(config))
            barrier.mark("read")
            return out

        async def aget_tuple(self, config):
            out = await super().aget_tuple(read_config(config))
            barrier.mark("read")
            return out

        def put(self, config, checkpoint, metadata, new_versions):
            name = put_name(metadata)
            barrier.hit(name + ":before")
            try:
                out = super().put(config, checkpoint, metadata, new_versions)
            except BaseException as exc:
                barrier.failed(name, error_of(exc))
                raise
            barrier.hit(name + ":after")
            return out

        def put_writes(self, config, writes, task_id, task_path=""):
            name = writes_name(writes, task_path)
            barrier.hit(name + ":before")
            try:
                out = super().put_writes(config, writes, task_id, task_path)
            except BaseException as exc:
                barrier.failed(name, error_of(exc))
                raise
            barrier.hit(name + ":after")
            return out

        async def aput(self, config, checkpoint, metadata, new_versions):
            name = put_name(metadata)
            barrier.hit(name + ":before")
            try:
                out = await super().aput(config, checkpoint, metadata, new_versions)
            except BaseException as exc:
                barrier.failed(name, error_of(exc))
                raise
            barrier.hit(name + ":after")
            return out

        async def aput_writes(self, config, writes, task_id, task_path=""):
            name = writes_name(writes, task_path)
            barrier.hit(name + ":before")
            try:
                out = await super().aput_writes(config, writes, task_id, task_path)
            except BaseException as exc:
                barrier.failed(name, error_of(exc))
                raise
            barrier.hit(name + ":after")
            return out

    Instrumented.__name__ = Instrumented.__qualname__ = f"Chaos{base.__name__}"
    saver.__class__ = Instrumented
    return saver


ASYNC_BACKENDS = ("sqlite_async", "postgres_async")


class AsyncBridge:
    """An event loop on a thread of its own: an async saver's connection is opened there and every
    ``ainvoke`` is awaited there, while the racer's main thread waits for the result."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="chaos-async-saver", daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)


def make_async_saver(backend: str, store: StoreSpec, bridge: AsyncBridge) -> tuple[Any, Callable[[], None]]:
    """AsyncSqliteSaver / AsyncPostgresSaver, opened on the bridge's loop, with the same connection
    settings as their sync siblings (so only the API differs), and a closer."""
    if backend == "sqlite_async":
        import aiosqlite
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        async def open_sqlite() -> tuple[Any, Any]:
            conn = await aiosqlite.connect(store["path"], check_same_thread=False, timeout=60)
            await conn.execute("PRAGMA busy_timeout=60000")
            saver = AsyncSqliteSaver(conn)
            await saver.setup()
            return saver, conn

        saver, conn = bridge.run(open_sqlite())
    elif backend == "postgres_async":
        import psycopg
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
        from psycopg.rows import dict_row

        async def open_pg() -> tuple[Any, Any]:
            conn = await psycopg.AsyncConnection.connect(
                store["dsn"], autocommit=True, prepare_threshold=0, row_factory=dict_row, **_app_name(store)
            )
            if store.get("schema"):
                await conn.execute(f'SET search_path TO "{store["schema"]}"')
            saver = AsyncPostgresSaver(conn)
            if store.get("setup", True):
                await saver.setup()
            return saver, conn

        saver, conn = bridge.run(open_pg())
    else:
        raise ValueError(f"unknown async langgraph backend {backend!r}")

    def close() -> None:
        try:
            bridge.run(conn.close())
        finally:
            bridge.close()

    return saver, close


def _app_name(store: StoreSpec) -> dict[str, Any]:
    """The saver connection's ``application_name`` (the racer's own: ``fault: db_disconnect``
    terminates this backend and no other), when the orchestrator gave one."""
    return {"application_name": store["application_name"]} if store.get("application_name") else {}


def _setup_shared_sqlite(saver: Any, attempts: int = 50) -> None:
    """``SqliteSaver.setup()`` on a store that other racers open at the same moment. Its ``PRAGMA
    journal_mode=WAL`` needs an exclusive lock, which SQLite refuses at once ("database is locked",
    no busy handler: it would deadlock) while another connection is in the middle of the same
    setup; seen as a racer's harness error about once in 20 starts of three racers on one new store.
    Setup is idempotent (``IF NOT EXISTS``), so it is tried again, a bounded number of times."""
    for attempt in range(attempts):
        try:
            saver.setup()
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == attempts - 1:
                raise
            time.sleep(0.01 * (attempt + 1))  # back off from the other setup (at most about 12 s in all)


def make_saver(backend: str, store: StoreSpec) -> tuple[Any, Any]:
    """The backend's saver and a closer for its connection."""
    if backend == "memory":
        from langgraph.checkpoint.memory import InMemorySaver

        return InMemorySaver(), lambda: None
    if backend == "sqlite":
        from langgraph.checkpoint.sqlite import SqliteSaver

        conn = sqlite3.connect(store["path"], check_same_thread=False, timeout=60)
        conn.execute("PRAGMA busy_timeout=60000")
        saver = SqliteSaver(conn)
        _setup_shared_sqlite(saver)
        return saver, conn.close
    if backend == "postgres":
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg.rows import dict_row

        pg = psycopg.connect(store["dsn"], autocommit=True, prepare_threshold=0, row_factory=dict_row, **_app_name(store))
        if store.get("schema"):
            pg.execute(f'SET search_path TO "{store["schema"]}"')
        pg_saver = PostgresSaver(pg)
        if store.get("setup", True):
            pg_saver.setup()
        return pg_saver, pg.close
    if backend == "postgres_pool":  # as LangGraph's docs set it up for a server: PostgresSaver(ConnectionPool(...))
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg.rows import dict_row
        from psycopg_pool import ConnectionPool

        options = {"options": f"-c search_path={store['schema']}"} if store.get("schema") else {}
        kwargs = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row, **_app_name(store), **options}
        pool: Any = ConnectionPool(store["dsn"], min_size=1, max_size=4, kwargs=kwargs, open=True)
        pool_saver = PostgresSaver(pool)
        if store.get("setup", True):
            pool_saver.setup()
        return pool_saver, pool.close
    raise ValueError(f"unknown langgraph backend {backend!r}")


class LangGraphSession:
    def __init__(self, spec: RacerSpec, barrier: BarrierClient, ledger: Ledger):
        from chaos.workloads.langgraph import LangGraphWorkload
        from chaos.workloads.langgraph_builtins import BUILTIN

        target = spec["target"]
        self.barrier = barrier
        self.ledger = ledger
        self.thread_id = spec["thread_id"]
        self.graph: Any = None  # built below, after the saver: a guard asking for the state schema before gets None
        # "default": pass no durability, so LangGraph's own default (or the graph's) applies
        durability = target.get("durability", "sync")
        self.invoke_opts: dict[str, Any] = {} if durability == "default" else {"durability": durability}
        self._bridge = AsyncBridge() if target["backend"] in ASYNC_BACKENDS else None
        self._measure_store = bool(spec.get("measure_store"))  # inspect reports the store's sizes (chaos.targets.langgraph.store_size)
        self._backend, self._store = str(target["backend"]), dict(spec.get("store") or {})
        saver_ref = target.get("saver")
        # a team's saver's own refusal (its guard, chaos.targets.langgraph.custom_saver), named after it
        self.saver_refusal: Callable[[BaseException], str | None] = lambda exc: None
        # a guard (chaos.targets.langgraph.guards): wraps the stock saver, and chaos's own reads carry its inspection keys
        self.guard, self.reads, gctx = self._guard(spec)
        if saver_ref:  # a team's own saver (chaos.targets.langgraph.custom_saver): wrapped, not subclassed
            from chaos.targets.langgraph.custom_saver import close_saver, load_saver, saver_context, wrap

            inner = load_saver(saver_ref, saver_context(spec))
            guarded = self.guard.wrap(inner, gctx) if self.guard and self.guard.wrap else inner
            self.saver, self._close = wrap(guarded, barrier, self.reads), lambda: close_saver(inner)
            self.saver_refusal = self.saver.refused
        elif self._bridge is not None:
            self.saver, self._close = make_async_saver(target["backend"], spec.get("store", {}), self._bridge)
            instrument(self.saver, barrier, self.reads)
        else:
            self.saver, self._close = make_saver(target["backend"], spec.get("store", {}))
            if self.guard and self.guard.wrap:
                self.saver = self.guard.wrap(self.saver, gctx)
            instrument(self.saver, barrier, self.reads)
        self.fired: list[Fired] = []
        self.facts: list[dict] = []
        self.observed: dict[str, Any] = {}
        ctx = WorkloadContext(
            checkpointer=self.saver,
            effect_hook=self._effect,
            seed=int(spec.get("seed", 0)),
            racer_id=spec["racer_id"],
            params=dict(spec.get("workload_params") or {}),
            trial_id=spec.get("trial_id", ""),
            thread_id=self.thread_id,
            scratch=scratch_dir(spec),
            observe_hook=self._observe,
            version=spec.get("workload_version") or "v1",
            effect_fault=dict(spec["effect_fault"]) if spec.get("effect_fault") else None,
        )
        self.ctx = ctx
        name = spec["workload"]
        factory = BUILTIN.get(name) or import_factory(name)
        built = factory(ctx)
        self.workload = built if isinstance(built, LangGraphWorkload) else LangGraphWorkload(graph=built)
        self.graph = self.workload.graph
        self.config: dict = {"configurable": {"thread_id": self.thread_id}}
        if self.workload.max_concurrency:  # the workload's own choice; chaos forces none
            self.config["max_concurrency"] = self.workload.max_concurrency
        # static breakpoints: the graph's own (compile time) and the workload's per-invoke ones
        if self.workload.interrupt_before:
            self.invoke_opts["interrupt_before"] = self.workload.interrupt_before
        if self.workload.interrupt_after:
            self.invoke_opts["interrupt_after"] = self.workload.interrupt_after
        self.bp_before = _nodes_of(self.invoke_opts.get("interrupt_before") or getattr(self.graph, "interrupt_before_nodes", None))
        self.bp_after = _nodes_of(self.invoke_opts.get("interrupt_after") or getattr(self.graph, "interrupt_after_nodes", None))
        self.approvals: list[tuple[int, int]] = []  # (effects fired before it, t_mono_ns): every answer given

    def _guard(self, spec: RacerSpec) -> tuple[Any, Any, Any]:
        """The scenario's guard (None), the reads policy, and the guard's context."""
        from chaos.targets.langgraph.custom_saver import saver_context
        from chaos.targets.langgraph.guards import GuardContext, Reads, is_none, load_guard

        ref = spec["target"].get("guard")
        if ref is None or is_none(str(ref)):
            return None, Reads(), None
        sctx = saver_context(spec)
        gctx = GuardContext(
            folder=sctx.folder,
            trial_id=sctx.trial_id,
            thread_id=sctx.thread_id,
            racer_id=sctx.racer_id,
            state_schema=lambda: getattr(getattr(self.graph, "builder", None), "state_schema", None),
        )
        guard = load_guard(str(ref), gctx)
        return guard, Reads(guard.inspect), gctx

    def _effect(self, task: str, value: Any, once: bool = False, key: str | None = None) -> None:
        v = None if value is None else str(value)
        fired = append_effect(self.ledger, task, v, self.thread_id, where_fired(), once, key)
        if fired is not None:
            self.fired.append(fired)
        if value is not None:
            self.observed[task] = jsonable(value)
        self.barrier.hit(f"effect(task={task}):after")

    def _observe(self, name: str, value: Any) -> None:
        self.facts.append({"name": name, "value": jsonable(value), **where_fired()})

    @property
    def gated_task(self) -> str | None:
        return self.workload.gated_task

    @property
    def meta(self) -> dict:
        return dict(self.workload.meta)

    def perform(self, action: Action) -> ActionOutcome:
        before, fired0, given0 = len(self.facts), len(self.fired), len(self.approvals)
        out = self._perform(action)
        if len(self.facts) > before:
            out["facts"] = self.facts[before:]
        if len(self.approvals) > given0:
            out["approvals"] = [{"fired_before": n - fired0, "t_mono_ns": t} for n, t in self.approvals[given0:]]
        return out

    def _note_approval(self) -> None:
        """An answer or approval is given now: after the effects fired so far."""
        import time

        self.approvals.append((len(self.fired), time.monotonic_ns()))

    def _perform(self, action: Action) -> ActionOutcome:
        op = action.get("op", "run")
        self.observed = {}  # what the nodes see during this call only
        if op == "resume" and "answers" in action:
            return self._answer_plan(action)
        if op == "resume" and action.get("form") == "command" and action.get("by_id") and not action.get("answer_map"):
            return self._answer_pause(action)
        if op == "resume" and action.get("form") == "app":
            return self._recover(action.get("recover") or "")
        if op == "resume" and action.get("form") == "command" and action.get("asked_only") and not action.get("interrupt"):
            # a recovery answers only a pause the thread durably waits at: with none pending, it
            # continues the thread first (invoke(None)) and answers the pause it stops at, so the
            # answer is never handed to an interrupt() that was not yet asked. A state this graph
            # cannot read (a deploy's v2 over v1's checkpoints) is left to the resume itself, whose
            # refusal is the outcome
            if self._state_readable():
                return self._answer_plan(action, once=True)
        if op == "resume" and action.get("form") == "command" and self.has_breakpoints:
            if action.get("interrupt") and self._breakpoint() is not None:
                raise Unsupported(
                    "the thread waits at a static breakpoint, which has no interrupt id to address "
                    "(its approval is invoke(None)): use resume_by: thread"
                )
            if not action.get("interrupt"):  # answer the one pause pending (or reached), by its kind
                return self._answer_plan(action, once=True)
        if op in ("run", "resume"):
            payload = self._payload(action)
            extra = {"addressed": next(iter(payload.resume))} if action.get("interrupt") else {}
            if action.get("answer_map"):
                extra = {"addressed": sorted(payload.resume)}
            if op == "resume" and action.get("form") == "command":
                self._note_approval()
            return self._invoke(payload, self.config, **extra)
        if op == "fork":
            return self._fork(action)
        if op == "checkpoints":
            return outcome("done", checkpoints=self._checkpoints(), tree=self._tree(), **self._head())
        if op == "tree":  # the saver's list alone: no state history, no head (a race's LC read)
            return outcome("done", tree=self._tree())
        if op == "intent":
            intent = fork_intent()
            if self.guard is not None and self.guard.intent:  # the guard adds a discriminator to the wire (FI)
                intent = {**intent, "discriminator": self.guard.intent, "note": f"added by guard {self.guard.name}: {self.guard.intent}"}
            return outcome("done", intent=intent)
        raise Unsupported(f"unknown op {op!r}; known: {', '.join(OPS)}")

    def _recover(self, ref: str) -> ActionOutcome:
        """The team's own recovery: ``recover(ctx, thread)`` from ``package.module:recover``."""
        from chaos.workloads.langgraph import Thread

        recover = import_factory(ref)
        durable = sum(1 for _ in self.saver.list({"configurable": {"thread_id": self.thread_id}}))
        thread = Thread(
            thread_id=self.thread_id,
            config=self.config,
            graph=self.graph,
            input=self.workload.input,
            checkpoints=durable,
            invoke=lambda payload: self._run_graph(payload, self.config),
        )
        try:
            with self.reads.app_call():
                out = recover(self.ctx, thread)
        except Exception as exc:  # the procedure's own failure, or the framework's refusal inside it
            return outcome("error", error=error_of(exc), observed=self.observed, recovered_by=ref, **self._head())
        interrupts = _interrupts_of(out)
        bp = None if interrupts else self._breakpoint()
        extra: dict[str, Any] = {"breakpoint": {"when": bp.when, "nodes": list(bp.nodes)}} if bp is not None else {}
        return outcome(
            "interrupted" if interrupts or bp is not None else "done",
            interrupts=[jsonable(getattr(i, "value", i)) for i in interrupts],
            interrupt_ids=[getattr(i, "id", None) for i in interrupts],
            observed=self.observed,
            recovered_by=ref,
            **self._head(),
            **extra,
        )

    def _answer_plan(self, action: Action, *, once: bool = False) -> ActionOutcome:
        """Answer pending pauses until the run completes or the plan says nothing more.

        A resume of form ``none``, ``input`` or ``app`` first makes that recovery call (no answer);
        one of form ``command`` with nothing pending continues the thread with ``invoke(None)``.
        Then every pause the thread stands at is answered, in turn: an ``interrupt()`` with the
        workload's ``answer(interrupt)`` when ``answers`` is ``"workload"``, else ``answers[n]``
        where ``n`` is its place among the thread's pauses, read from its durable state (so a
        fresh process after a crash picks up the plan where the thread is), addressed by its id;
        a static breakpoint is approved with ``invoke(None)`` (after ``update_state`` when its
        answer is an ``Edit`` or ``{"update": ..., "as_node": ...}``). ``answers: "breakpoints"``
        approves breakpoints only and leaves an ``interrupt()`` waiting; ``once`` (a single
        ``command:<value>``) answers one pause with the action's value (a plain value when one
        interrupt is pending, by id among parallel ones). Outcome: the last call's,
        with ``answered`` (``[[interrupt_id or "breakpoint:<when>:<nodes>", value], ...]``) and the
        effects of every call."""
        from langgraph.types import Command

        plan = action.get("answers")
        if plan == "breakpoints" and not self.has_breakpoints:  # nothing to approve
            if action.get("form", "command") == "command":  # the thread stays as it stands
                return outcome("interrupted", observed={}, answered=[], **self._head())
            if action.get("form") == "app":
                return self._recover(action.get("recover") or "")
            return self._invoke(self._payload(action), self.config)
        answered: list[list[Any]] = []
        observed: dict[str, Any] = {}
        out: ActionOutcome | None = None
        form = action.get("form", "command")
        if form != "command":  # the recovery call itself
            out = self._recover(action.get("recover") or "") if form == "app" else self._invoke(self._payload(action), self.config)
            observed.update(out.get("observed") or {})
        for _ in range(MAX_ANSWERS):
            if out is not None and out["status"] != "interrupted":
                break
            pending = self._pending_interrupts()
            bp = None if pending else self._breakpoint()
            if not pending and bp is None:
                if out is None:  # nothing waits for an answer: continue the thread, then answer where it stops
                    out = self._invoke(None, self.config)
                    observed.update(out.get("observed") or {})
                    continue
                break
            if once and answered:
                break
            if bp is not None:
                key = f"breakpoint:{bp.when}:{'+'.join(bp.nodes)}"
                ok, value = self._bp_answer(plan, bp, action, once)
                if not ok:
                    break  # the plan is used up: leave the thread waiting
                answered.append(
                    [key, jsonable(value if not isinstance(value, Edit) else {"update": value.values, "as_node": value.as_node})]
                )
                self.observed = {}
                out = self._approve(value, bp)
            else:
                intr = pending[0]
                if once:
                    value = action.get("value")
                elif plan == "workload":
                    if self.workload.answer is None:
                        raise Unsupported("answers: workload, but the workload defines no answer(interrupt) callable")
                    value = self.workload.answer(intr)
                elif isinstance(plan, list):
                    n = self._plan_index(intr.id)
                    if n >= len(plan):
                        break  # the plan is used up: leave the thread waiting
                    value = plan[n]
                else:  # approving breakpoints only: an interrupt() waits for a value no plan gave
                    break
                answered.append([intr.id, jsonable(value)])
                self.observed = {}
                self._note_approval()
                # one command value to the one interrupt pending: the plain Command(resume=v) a team
                # sends; by its id otherwise (parallel interrupts: LangGraph refuses a plain value)
                plain = once and len(pending) == 1
                out = self._invoke(Command(resume=value if plain else {intr.id: value}), self.config)
            observed.update(self.observed)
        if out is None:
            out = outcome("interrupted", interrupts=[], observed={}, **self._head())
        out["observed"] = observed or out.get("observed") or {}
        out["answered"] = answered
        return out

    def _answer_pause(self, action: Action) -> ActionOutcome:
        """An approach to a later pause (``by_id``): every interrupt pending now answered in one
        call, each with the plan's answer at its place among the thread's interrupts (the count the
        baseline's plan uses, ``_plan_index``), else the action's value; by id when several are
        pending (LangGraph refuses a plain value there), plain when one is. A thread at a static
        breakpoint, or at none, gets the action as it is. ``answered``: ``[[id, value], ...]``."""
        from langgraph.types import Command

        pending = {str(i.id): i for i in self._pending_interrupts() if getattr(i, "id", None)}
        if not pending:
            plain = Action(**action)
            del plain["by_id"]
            return self._perform(plain)
        plan = list(action.get("plan") or [])
        answers = {i: plan[n] if (n := self._plan_index(i)) < len(plan) else action.get("value") for i in sorted(pending)}
        self._note_approval()
        payload: Any = Command(resume=answers if len(answers) > 1 else next(iter(answers.values())))
        out = self._invoke(payload, self.config, addressed=sorted(answers))
        out["answered"] = [[i, jsonable(v)] for i, v in answers.items()]
        return out

    def _bp_answer(self, plan: Any, bp: Breakpoint, action: Action, once: bool) -> tuple[bool, Any]:
        """The answer to a static breakpoint: (False, None) when the plan has none left."""
        if once:
            return True, action.get("value")
        if plan == "workload":
            return True, self.workload.answer(bp) if self.workload.answer is not None else None
        if isinstance(plan, list):
            n = len({i for _c, _ns, _t, intrs in self._raised() for i in intrs}) + self._breakpoints_passed()
            return (True, plan[n]) if n < len(plan) else (False, None)
        return True, None  # "breakpoints": approve

    def _approve(self, value: Any, bp: Breakpoint) -> ActionOutcome:
        """Approve the static breakpoint the thread waits at: the edit first (``update_state``), then ``invoke(None)``."""
        edit = value if isinstance(value, Edit) else None
        if edit is None and isinstance(value, dict) and "update" in value:
            edit = Edit(values=value["update"], as_node=value.get("as_node"))
        self._note_approval()
        if edit is not None:
            try:
                if self._bridge is not None:
                    with self.reads.app_call():
                        self._bridge.run(self.graph.aupdate_state(self.config, edit.values, as_node=edit.as_node))
                else:
                    with self.reads.app_call():
                        self.graph.update_state(self.config, edit.values, as_node=edit.as_node)
            except Exception as exc:  # the framework's refusal of the edit, recorded as data
                return outcome("error", error=error_of(exc), observed=self.observed, **self._head())
        return self._invoke(None, self.config, approved={"when": bp.when, "nodes": list(bp.nodes), "edited": edit is not None})

    @property
    def has_breakpoints(self) -> bool:
        return bool(self.bp_before or self.bp_after)

    def _breakpoint(self) -> Breakpoint | None:
        """The static breakpoint the thread's durable head waits at, by LangGraph's own rule
        (``should_interrupt``): a node of ``interrupt_before`` is next (or one of
        ``interrupt_after`` just ran) and some channel was updated since the last pause. ``None``
        on a graph without breakpoints, at an ``interrupt()``, or on a finished thread."""
        if not self.has_breakpoints:
            return None
        try:
            snap = self.graph.get_state(self.config)
            if not snap.next or any(t.interrupts for t in snap.tasks):
                return None
            tup = self.saver.get_tuple(self.config)
            parent = self.graph.get_state(snap.parent_config) if self.bp_after and snap.parent_config else None
        except Exception:  # an unreadable thread waits at nothing we can name
            return None
        return _waits_at(snap, tup.checkpoint if tup else None, parent, self.bp_before, self.bp_after)

    def _breakpoints_passed(self) -> int:
        """How many static breakpoints the thread stood at before its head (an ``update_state``
        edit's checkpoint is part of its approval, not a pause)."""
        history = list(reversed(self._history()))  # oldest first
        n = 0
        for i, h in enumerate(history[:-1]):
            if (h.metadata or {}).get("source") == "update":
                continue
            tup = self.saver.get_tuple(h.config)
            if _waits_at(h, tup.checkpoint if tup else None, history[i - 1] if i else None, self.bp_before, self.bp_after):
                n += 1
        return n

    def _state_readable(self) -> bool:
        """Whether this graph reads the thread's saved state (``get_state`` raises on one it cannot)."""
        try:
            self.graph.get_state(self.config, subgraphs=True)
        except Exception:
            return False
        return True

    def _pending_interrupts(self) -> list:
        """The interrupts the thread waits on now, subgraphs included (oldest task first)."""
        snap = self.graph.get_state(self.config, subgraphs=True)

        def walk(s: Any) -> list:
            found = []
            for t in s.tasks:
                sub = getattr(t, "state", None)
                if sub is not None and hasattr(sub, "tasks"):
                    found += walk(sub)
                elif t.interrupts:
                    found += list(t.interrupts)
            return found

        out = walk(snap)
        if not out:  # a subgraph's state may not be expanded: fall back to what the root lists
            out = [i for t in snap.tasks for i in t.interrupts]
        return out

    def _writes(self) -> list[tuple[str, str, str, str, Any]]:
        """Every durable pending write of the thread, all namespaces: (checkpoint_id, ns, task_id, channel, value)."""
        rows = []
        for tup in self.saver.list({"configurable": {"thread_id": self.thread_id}}):
            conf = tup.config["configurable"]
            for task_id, channel, value in tup.pending_writes or []:
                rows.append((conf.get("checkpoint_id") or "", conf.get("checkpoint_ns") or "", str(task_id), str(channel), value))
        return rows

    def _raised(self) -> list[tuple[str, str, str, list]]:
        """The durable ``__interrupt__`` writes of the tasks that raised them, oldest checkpoint first:
        (checkpoint_id, ns, task_id, interrupts). A subgraph's interrupt also shows in its parent's
        checkpoint, under the parent's task that runs the subgraph, and there it is replaced by the
        subgraph's *current* interrupt: writes of a task that runs a subgraph are left out."""
        writes = self._writes()
        subgraph_tasks = {part.split(":", 1)[1] for _c, ns, _t, _ch, _v in writes for part in ns.split("|") if ":" in part}
        return sorted(
            (cid, ns, task_id, list(value) if isinstance(value, (list, tuple)) else [value])
            for cid, ns, task_id, channel, value in writes
            if channel == "__interrupt__" and task_id not in subgraph_tasks
        )

    def _plan_index(self, interrupt_id: str) -> int:
        """Which answer of a plan the pending interrupt ``interrupt_id`` is: the number of distinct
        interrupts the thread raised before it, plus the answers its own task already got (a node
        that calls ``interrupt()`` twice raises both under one id)."""
        raised = self._raised()
        order: list[str] = []
        for _c, _ns, _t, intrs in raised:
            for i in intrs:
                if getattr(i, "id", None) and i.id not in order:
                    order.append(i.id)
        base = order.index(interrupt_id) if interrupt_id in order else len(order)
        if self.has_breakpoints:  # the static breakpoints the thread passed came before it
            base += self._breakpoints_passed()
        latest = [(c, ns, t) for c, ns, t, intrs in raised if any(getattr(i, "id", None) == interrupt_id for i in intrs)]
        if not latest:
            return base
        cid, ns, task_id = latest[-1]
        got = [v for c, n, t, ch, v in self._writes() if (c, n, t, ch) == (cid, ns, task_id, "__resume__")]
        return base + (len(got[0]) if got and isinstance(got[0], list) else 0)

    def _payload(self, action: Action) -> Any:
        from langgraph.types import Command

        op, form = action.get("op", "run"), action.get("form", "input")
        if op == "run" or form == "input":
            return self.workload.input
        if form == "none":
            return None
        if form == "command":
            if action.get("answer_map"):  # parallel interrupts, each answered by its id in one call
                return Command(resume=dict(action["answer_map"]))
            if action.get("interrupt"):  # addressed to one interrupt by its id: {id: value}
                return Command(resume={self._interrupt_id(action["interrupt"]): action.get("value")})
            return Command(resume=action.get("value"))
        raise ValueError(f"unknown resume form {form!r}")

    def _interrupt_id(self, which: str) -> str:
        """``first``: the id of the thread's first interrupt, the one its first answer consumed.

        Read from the durable ``__interrupt__`` writes of every namespace, oldest checkpoint first,
        of the tasks that raised them (``_raised``): not the parent's record of a subgraph's
        interrupt, which LangGraph replaces by the subgraph's current one."""
        if which != "first":
            return which
        ids = [i.id for _c, _ns, _t, intrs in self._raised() for i in intrs if getattr(i, "id", None)]
        if not ids:
            why = (
                ": its pauses are static breakpoints, which have no id (their approval is invoke(None)); use resume_by: thread"
                if self.has_breakpoints
                else ""
            )
            raise Unsupported(f"thread {self.thread_id} never had a pending interrupt to address{why}")
        return ids[0]

    def _run_graph(self, payload: Any, config: dict) -> Any:
        """``invoke``, or on an async backend ``ainvoke`` awaited on the bridge's loop (the app's
        call: its reads are the app's, never given a guard's inspection keys)."""
        with self.reads.app_call():
            if self._bridge is not None:
                return self._bridge.run(self.graph.ainvoke(payload, config, **self.invoke_opts))
            return self.graph.invoke(payload, config, **self.invoke_opts)

    def _invoke(self, payload: Any, config: dict, **extra: Any) -> ActionOutcome:
        fired0 = len(self.fired)
        try:
            out = self._run_graph(payload, config)
        except Exception as exc:  # the framework's answer, recorded as data
            err = error_of(exc)
            by = refused_by(self.guard, exc) or self.saver_refusal(exc)
            if by is not None:  # the guard's loud refusal: before any effect an outcome, after one an error naming it
                err["refused_by"] = by
                if len(self.fired) == fired0:
                    return outcome("refused", error=err, observed=self.observed, **self._head(), **extra)
            return outcome("error", error=err, observed=self.observed, **self._head(), **extra)
        interrupts = _interrupts_of(out)
        bp = None if interrupts else self._breakpoint()
        if bp is not None:
            extra["breakpoint"] = {"when": bp.when, "nodes": list(bp.nodes)}
        return outcome(
            "interrupted" if interrupts or bp is not None else "done",
            interrupts=[jsonable(getattr(i, "value", i)) for i in interrupts],
            interrupt_ids=[getattr(i, "id", None) for i in interrupts],
            observed=self.observed,
            **self._head(),
            **extra,
        )

    def _fork(self, action: Action) -> ActionOutcome:
        from langgraph.types import Command

        via = action.get("via", "checkpoint")
        target = action.get("checkpoint", "interrupt")
        snap = self._find(target)
        if snap is None and target == "interrupt" and self.has_breakpoints:
            raise Unsupported(
                "the thread's pauses are static breakpoints: their approval (invoke(None)) carries no value, "
                "so there is no second answer to fork the first pause with"
            )
        if snap is None:
            return outcome(
                "error",
                error={
                    "type": "NoSuchCheckpoint",
                    "module": "chaos",
                    "where": "",
                    "message": f"no checkpoint {target!r} on thread {self.thread_id}",
                },
            )
        cid = snap.config["configurable"]["checkpoint_id"]
        intent = self.guard.fork if self.guard is not None else {}  # a guard's fork intent (REMIT's remit_fork flag)
        cfg = {**self.config, "configurable": {**self.config["configurable"], **snap.config["configurable"], **intent}}
        if via == "explicit":
            # LangGraph's explicit fork: a new checkpoint branching off ``cid`` (no state change).
            try:
                with self.reads.app_call():
                    forked = self._bridge.run(self.graph.aupdate_state(cfg, None)) if self._bridge else self.graph.update_state(cfg, None)
                cfg = {**self.config, "configurable": {**self.config["configurable"], **forked["configurable"], **intent}}
            except Exception as exc:
                return outcome("error", error=error_of(exc), forked_from=cid, via=via)
        elif via != "checkpoint":
            raise Unsupported(f"fork via {via!r}: LangGraph forks via 'checkpoint' or 'explicit'")
        return self._invoke(Command(resume=action.get("value")), cfg, forked_from=cid, via=via, fork_config=jsonable(cfg["configurable"]))

    def _history(self) -> list:
        return list(self.graph.get_state_history(self.config))

    def _find(self, target: str) -> Any:
        history = self._history()  # newest first
        if target == "interrupt":
            # the oldest checkpoint at which an interrupt was pending: the thread's first interrupt
            parked = [h for h in history if any(t.interrupts for t in h.tasks)]
            return parked[-1] if parked else None
        return next((h for h in history if h.config["configurable"].get("checkpoint_id") == target), None)

    def _checkpoints(self) -> list[dict]:
        return [
            {
                "id": h.config["configurable"].get("checkpoint_id"),
                "step": (h.metadata or {}).get("step"),
                "source": (h.metadata or {}).get("source"),
                "next": list(h.next),
                "interrupts": sum(len(t.interrupts) for t in h.tasks),
            }
            for h in self._history()
        ]

    def _tree(self) -> list[dict]:
        """Every checkpoint of the thread as the saver lists it (``saver.list``: no claiming read,
        every namespace), with its parent: the tree a chain check reads (``chaos.kinds.chain``)."""
        out = []
        for tup in self.saver.list({"configurable": {"thread_id": self.thread_id}}):
            conf, parent = tup.config["configurable"], (tup.parent_config or {}).get("configurable") or {}
            md = tup.metadata or {}
            out.append(
                {
                    "id": conf.get("checkpoint_id"),
                    "ns": conf.get("checkpoint_ns") or "",
                    "parent": parent.get("checkpoint_id"),
                    "step": md.get("step"),
                    "source": md.get("source"),
                }
            )
        return out

    def _head(self) -> dict:
        """The thread's state values and head checkpoint id after a call (None where unreadable)."""
        try:
            snap = self.graph.get_state(self.config)
        except Exception:
            return {"values": None, "checkpoint": None}
        return {"values": jsonable(snap.values), "checkpoint": (snap.config or {}).get("configurable", {}).get("checkpoint_id")}

    def inspect(self) -> InspectResult:
        try:
            snap = self.graph.get_state(self.config)
            history = list(self.graph.get_state_history(self.config))
        except Exception as exc:
            # the framework cannot read its own thread: say how, and what the store holds
            return {"checkpoints": None, "error": error_of(exc), **self._raw()}
        completed = _completed(history)
        md = snap.metadata or {}
        frontier, durable, task_ids = self._frontier(completed, _completed_ids(history))
        return {
            "values": jsonable(snap.values),
            "checkpoint": (snap.config or {}).get("configurable", {}).get("checkpoint_id"),
            "checkpoints": len(history),
            "head_step": md.get("step"),
            "next": list(snap.next),
            "completed_tasks": sorted(set(completed)),
            "completed_by_namespace": frontier,
            "completed_task_ids": task_ids,
            "durable_checkpoints": durable,
            "pending_interrupts": sum(len(t.interrupts) for t in snap.tasks),
            "breakpoint": {"when": bp.when, "nodes": list(bp.nodes)} if (bp := self._breakpoint()) is not None else None,
            "error": None,
            **self._sizes(),
        }

    def _sizes(self) -> dict:
        """``store_size`` when the spec asks for it (a sweep's dry run): the bytes of each checkpoint and the store's."""
        if not self._measure_store:
            return {}
        from chaos.targets.langgraph.store_size import measure

        return {"store_size": measure(self.saver, self._backend, self._store, self.thread_id)}

    def _frontier(self, root_completed: list[str], root_ids: list[str]) -> tuple[dict[str, list[str]], int, list[str]]:
        """Completed nodes per (sub)graph namespace (``""``: the root; ``sub|inner`` without task ids),
        the number of durable checkpoints of the thread, subgraphs' included, and the ids of every
        completed task (a node that runs again in a loop is a new task with a new id; the same task
        re-executed after a crash keeps its id)."""
        frontier: dict[str, set[str]] = {"": set(root_completed)}
        ids: set[str] = set(root_ids)
        by_ns: dict[str, int] = {}
        for tup in self.saver.list({"configurable": {"thread_id": self.thread_id}}):
            ns = tup.config["configurable"].get("checkpoint_ns") or ""
            by_ns[ns] = by_ns.get(ns, 0) + 1
        for ns in by_ns:
            if not ns:
                continue
            cfg = {"configurable": {"thread_id": self.thread_id, "checkpoint_ns": ns}}
            try:
                history = list(self.graph.get_state_history(cfg))
            except Exception:  # a namespace the graph cannot map back to a subgraph: count its checkpoints only
                continue
            frontier.setdefault(graph_namespace(ns), set()).update(_completed(history))
            ids.update(_completed_ids(history))
        return {k: sorted(v) for k, v in sorted(frontier.items())}, sum(by_ns.values()), sorted(ids)

    def _raw(self) -> dict:
        """The head checkpoint's channel values and pending writes, read from the saver directly."""
        try:
            tup = self.saver.get_tuple(self.config)
        except Exception as exc:
            return {"values": None, "raw_error": error_of(exc)}
        if tup is None:
            return {"values": None, "pending_writes": []}
        values = {k: v for k, v in (tup.checkpoint.get("channel_values") or {}).items() if not k.startswith(("branch:", "__"))}
        return {
            "values": jsonable(values),
            "values_source": "saver",
            "checkpoint": tup.config["configurable"].get("checkpoint_id"),
            "pending_writes": [[str(w[1]), jsonable(w[2])] for w in (tup.pending_writes or [])],
        }

    def close(self) -> None:
        try:
            self._close()
        except Exception:
            pass


MAX_ANSWERS = 100


def _completed(history: list) -> list[str]:
    """Nodes recorded complete in one namespace's history (newest first): every task of an older
    checkpoint finished (a later checkpoint exists); in the head, a task is complete only if its
    writes are pending there."""
    done: list[str] = []
    for i, h in enumerate(history):
        for t in h.tasks:
            if t.name.startswith("__"):
                continue
            if i > 0 or getattr(t, "result", None) is not None:
                done.append(t.name)
    return done  # a plan answers at most this many interrupts in one call (a graph that always asks again)


def _completed_ids(history: list) -> list[str]:
    """The ids of the tasks ``_completed`` counts (same rule: finished in an older checkpoint, or
    with pending writes in the head)."""
    return [
        str(t.id)
        for i, h in enumerate(history)
        for t in h.tasks
        if not t.name.startswith("__") and (i > 0 or getattr(t, "result", None) is not None)
    ]


def _nodes_of(nodes: Any) -> Any:
    """A graph's breakpoint nodes: ``"*"`` (every node), a tuple of names, or ``()``."""
    if nodes == "*":
        return "*"
    return tuple(nodes or ())


def _named(node: str, nodes: Any) -> bool:
    return not node.startswith("__") if nodes == "*" else node in nodes


def _updated_since_pause(checkpoint: dict | None) -> bool:
    """LangGraph's rule for a breakpoint to fire: some channel was updated since the last pause
    (``versions_seen["__interrupt__"]``, which a resume moves up to the current versions)."""
    if not checkpoint:
        return False
    versions = checkpoint.get("channel_versions") or {}
    if not versions:
        return False
    seen = (checkpoint.get("versions_seen") or {}).get("__interrupt__", {})
    null = type(next(iter(versions.values())))()
    return any(v > seen.get(c, null) for c, v in versions.items())


def _waits_at(snap: Any, checkpoint: dict | None, parent: Any, before: Any, after: Any) -> Breakpoint | None:
    """The breakpoint a checkpoint stands at: ``snap`` its state, ``parent`` the one before it
    (whose tasks ran to make it)."""
    if not snap.next or any(t.interrupts for t in snap.tasks) or not _updated_since_pause(checkpoint):
        return None
    hit = tuple(n for n in snap.next if before and _named(n, before))
    if hit:
        return Breakpoint("before", hit)
    if after and parent is not None:
        ran = tuple(t.name for t in parent.tasks if _named(t.name, after))
        if ran:
            return Breakpoint("after", ran)
    return None


def _interrupts_of(out: Any) -> list:
    if isinstance(out, dict):
        return list(out.get("__interrupt__", []))
    return []


INTENT_WORDS = ("fork", "retry", "attempt", "idempot", "intent")


def fork_intent() -> dict:
    """Can LangGraph's public API tell a retry of a resume from a fork? Read from the API itself:
    the parameters of ``Command`` and ``invoke`` and the config keys that address a checkpoint.
    Internal (``__pregel_*``) resume keys are listed as evidence but are not public API."""
    import inspect as _inspect

    from langgraph.pregel import Pregel
    from langgraph.types import Command

    try:
        from langgraph._internal import _constants as consts
    except ImportError:  # older releases keep them elsewhere
        from langgraph import constants as consts  # type: ignore[no-redef]  # the same names, an older home
    command_params = list(_inspect.signature(Command).parameters)
    invoke_params = list(_inspect.signature(Pregel.invoke).parameters)
    address = [
        getattr(consts, n, d)
        for n, d in (
            ("CONFIG_KEY_THREAD_ID", "thread_id"),
            ("CONFIG_KEY_CHECKPOINT_NS", "checkpoint_ns"),
            ("CONFIG_KEY_CHECKPOINT_ID", "checkpoint_id"),
        )
    ]
    surface: dict[str, Any] = {
        "Command": str(_inspect.signature(Command)),
        "Pregel.invoke": str(_inspect.signature(Pregel.invoke)),
        "Pregel.update_state": str(_inspect.signature(Pregel.update_state)),
        "config.configurable": address,
        "internal resume keys (not public)": {n: getattr(consts, n) for n in dir(consts) if n.startswith("CONFIG_KEY") and "RESUM" in n},
    }
    public = [f"Command.{p}" for p in command_params] + [f"invoke.{p}" for p in invoke_params] + [f"configurable.{a}" for a in address]
    hits = [p for p in public if any(w in p.lower() for w in INTENT_WORDS) and "retry_policy" not in p]
    return {
        "discriminator": ", ".join(hits) or None,
        "surface": surface,
        "note": (
            f"possible discriminator: {', '.join(hits)}"
            if hits
            else "Command(resume=v) with a checkpoint_id is how a past interrupt is answered; no public parameter of "
            "Command, invoke or the config says whether it is a retry of the same resume or a fork with a new value"
        ),
    }


def open_session(spec: RacerSpec, barrier: BarrierClient, ledger: Ledger) -> LangGraphSession:
    return LangGraphSession(spec, barrier, ledger)


# For warm racers (chaos.racer.forkserver): what a racer imports, so a forked racer starts with it all.
PRELOAD = (
    "langgraph.graph",
    "langgraph.types",
    "langgraph.checkpoint.memory",
    "langgraph.checkpoint.sqlite",
    "langchain_core.tracers.context",
    "langchain_core.tracers.run_collector",
    "langchain_core.tracers.stdout",
    "chaos.workloads.langgraph",
    # imported by every session (its guard context) and by a dry run's store sizes: in a forked
    # racer each was compiled from source again (racers write no bytecode), about 5 ms of CPU a racer
    "chaos.targets.langgraph.custom_saver",
    "chaos.targets.langgraph.store_size",
)
PRELOAD_OPTIONAL = ("psycopg", "psycopg.rows", "langgraph.checkpoint.postgres")


def prewarm(only: str | None = None) -> None:
    """Build every built-in workload (or just ``only``) once over an in-memory saver (no connection,
    no thread): in the fork server, and in a held racer for its own workload while it waits.

    Compiling a graph fills caches that live as long as the process (type hints, channel and
    schema machinery); a forked racer then finds them filled, as a cold racer finds them after
    its first build. Nothing is invoked: invoking would start LangGraph's executor threads.
    The distributions' versions (which every racer reports) are read here too, once.
    """
    from langgraph.checkpoint.memory import InMemorySaver

    from chaos.targets.base import prewarm_versions
    from chaos.targets.common import prewarm_factories
    from chaos.workloads.langgraph_builtins import BUILTIN

    prewarm_versions("langgraph")
    for factory in prewarm_factories(BUILTIN, only):
        ctx = WorkloadContext(checkpointer=InMemorySaver(), effect_hook=lambda task, value=None, once=False, key=None: None)
        try:
            factory(ctx)
        except ImportError:
            # a built-in that needs what this release lacks (langgraph.prebuilt's ToolNode on an
            # older langgraph) is no reason to refuse every other workload: a racer that builds it
            # for real reports the ImportError itself
            continue

"""LangGraph adapter (racer side): a workload over an instrumented checkpoint saver.

The saver of the chosen backend (SqliteSaver, PostgresSaver, InMemorySaver) is given a subclass
that calls the barrier hook before and after every ``put`` (a checkpoint) and ``put_writes`` (a
task's pending writes). Boundaries are named by content: ``put(step=1,source=loop):before``,
``put_writes(node=b,channels=b+branch:to:c):after``. ``:before`` means nothing of this call is
durable yet; ``:after`` means its transaction committed.

Resume forms map to LangGraph calls: ``none`` -> ``invoke(None)`` (continue from the last
checkpoint), ``input`` -> ``invoke(input)`` (a new run on the thread), ``command`` ->
``invoke(Command(resume=value))`` (answer the pending interrupt).
"""

from __future__ import annotations

import sqlite3
from typing import Any

from chaos.barrier import BarrierClient
from chaos.ledger import Ledger, effect_key
from chaos.targets.base import error_of, jsonable
from chaos.workloads import WorkloadContext, import_factory


def _node_of(task_path: Any) -> str:
    text = str(task_path or "")
    if not text:
        return "-"
    return text.split(", ")[-1].strip("()'\" ") or "-"


def instrument(saver: Any, barrier: BarrierClient) -> Any:
    """Give ``saver`` a subclass whose writes pass through barriers; returns the saver."""
    base = type(saver)

    def put_name(metadata: Any) -> str:
        md = metadata or {}
        return f"put(step={md.get('step')},source={md.get('source')})"

    def writes_name(writes: Any, task_path: Any) -> str:
        channels = "+".join(str(w[0]) for w in writes)
        return f"put_writes(node={_node_of(task_path)},channels={channels})"

    class Instrumented(base):  # type: ignore[misc, valid-type]
        def put(self, config, checkpoint, metadata, new_versions):
            name = put_name(metadata)
            barrier.hit(name + ":before")
            out = super().put(config, checkpoint, metadata, new_versions)
            barrier.hit(name + ":after")
            return out

        def put_writes(self, config, writes, task_id, task_path=""):
            name = writes_name(writes, task_path)
            barrier.hit(name + ":before")
            out = super().put_writes(config, writes, task_id, task_path)
            barrier.hit(name + ":after")
            return out

        async def aput(self, config, checkpoint, metadata, new_versions):
            name = put_name(metadata)
            barrier.hit(name + ":before")
            out = await super().aput(config, checkpoint, metadata, new_versions)
            barrier.hit(name + ":after")
            return out

        async def aput_writes(self, config, writes, task_id, task_path=""):
            name = writes_name(writes, task_path)
            barrier.hit(name + ":before")
            out = await super().aput_writes(config, writes, task_id, task_path)
            barrier.hit(name + ":after")
            return out

    Instrumented.__name__ = Instrumented.__qualname__ = f"Chaos{base.__name__}"
    saver.__class__ = Instrumented
    return saver


def make_saver(backend: str, store: dict) -> tuple[Any, Any]:
    """The backend's saver and a closer for its connection."""
    if backend == "memory":
        from langgraph.checkpoint.memory import InMemorySaver

        return InMemorySaver(), lambda: None
    if backend == "sqlite":
        from langgraph.checkpoint.sqlite import SqliteSaver

        conn = sqlite3.connect(store["path"], check_same_thread=False, timeout=60)
        conn.execute("PRAGMA busy_timeout=60000")
        saver = SqliteSaver(conn)
        saver.setup()
        return saver, conn.close
    if backend == "postgres":
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg.rows import dict_row

        conn = psycopg.connect(store["dsn"], autocommit=True, prepare_threshold=0, row_factory=dict_row)
        if store.get("schema"):
            conn.execute(f'SET search_path TO "{store["schema"]}"')
        saver = PostgresSaver(conn)
        if store.get("setup", True):
            saver.setup()
        return saver, conn.close
    raise ValueError(f"unknown langgraph backend {backend!r}")


class LangGraphSession:
    def __init__(self, spec: dict, barrier: BarrierClient, ledger: Ledger):
        from chaos.workloads.langgraph import BUILTIN, LangGraphWorkload

        target = spec["target"]
        self.barrier = barrier
        self.ledger = ledger
        self.thread_id = spec["thread_id"]
        self.durability = target.get("durability", "sync")
        self.saver, self._close = make_saver(target["backend"], spec.get("store", {}))
        instrument(self.saver, barrier)
        self.fired: list[dict] = []
        self.observed: dict[str, Any] = {}
        ctx = WorkloadContext(
            checkpointer=self.saver,
            effect_hook=self._effect,
            seed=int(spec.get("seed", 0)),
            racer_id=spec["racer_id"],
            params=dict(spec.get("workload_params") or {}),
        )
        name = spec["workload"]
        factory = BUILTIN.get(name) or import_factory(name)
        built = factory(ctx)
        self.workload = built if isinstance(built, LangGraphWorkload) else LangGraphWorkload(graph=built)
        self.graph = self.workload.graph
        self.config = {"configurable": {"thread_id": self.thread_id}, "max_concurrency": 1}

    def _effect(self, task: str, value: Any) -> None:
        v = None if value is None else str(value)
        seq = self.ledger.append(task=task, value=v, thread_id=self.thread_id)
        self.fired.append({"seq": seq, "effect_key": effect_key(task, v)})
        if value is not None:
            self.observed[task] = jsonable(value)
        self.barrier.hit(f"effect(task={task}):after")

    def perform(self, action: dict) -> dict:
        from langgraph.types import Command

        op, form = action.get("op", "run"), action.get("form", "input")
        if op == "run" or form == "input":
            payload: Any = self.workload.input
        elif form == "none":
            payload = None
        elif form == "command":
            payload = Command(resume=action.get("value"))
        else:
            raise ValueError(f"unknown resume form {form!r}")
        try:
            out = self.graph.invoke(payload, self.config, durability=self.durability)
        except Exception as exc:  # the framework's answer, recorded as data
            return {"status": "error", "error": error_of(exc), "interrupts": [], "observed": dict(self.observed)}
        interrupts = out.get("__interrupt__", []) if isinstance(out, dict) else []
        return {
            "status": "interrupted" if interrupts else "done",
            "error": None,
            "interrupts": [jsonable(getattr(i, "value", i)) for i in interrupts],
            "observed": dict(self.observed),
        }

    def inspect(self) -> dict:
        try:
            snap = self.graph.get_state(self.config)
            history = list(self.graph.get_state_history(self.config))
        except Exception as exc:
            return {"checkpoints": None, "error": error_of(exc)}
        completed: list[str] = []
        for i, h in enumerate(history):
            for t in h.tasks:
                if t.name.startswith("__"):
                    continue
                # Tasks of older checkpoints finished (a later checkpoint exists); in the head,
                # a task is recorded complete only if its writes are pending there.
                if i > 0 or getattr(t, "result", None) is not None:
                    completed.append(t.name)
        md = snap.metadata or {}
        return {
            "checkpoints": len(history),
            "head_step": md.get("step"),
            "next": list(snap.next),
            "completed_tasks": sorted(set(completed)),
            "pending_interrupts": sum(len(t.interrupts) for t in snap.tasks),
            "error": None,
        }

    def close(self) -> None:
        try:
            self._close()
        except Exception:
            pass


def open_session(spec: dict, barrier: BarrierClient, ledger: Ledger) -> LangGraphSession:
    return LangGraphSession(spec, barrier, ledger)


# For warm racers (chaos.forkserver): what a racer imports, so a forked racer starts with it all.
PRELOAD = (
    "langgraph.graph",
    "langgraph.types",
    "langgraph.checkpoint.memory",
    "langgraph.checkpoint.sqlite",
    "langchain_core.tracers.context",
    "langchain_core.tracers.run_collector",
    "langchain_core.tracers.stdout",
    "chaos.workloads.langgraph",
)
PRELOAD_OPTIONAL = ("psycopg", "psycopg.rows", "langgraph.checkpoint.postgres")


def prewarm() -> None:
    """Build every built-in workload once over an in-memory saver (no connection, no thread).

    Compiling a graph fills caches that live as long as the process (type hints, channel and
    schema machinery); a forked racer then finds them filled, as a cold racer finds them after
    its first build. Nothing is invoked: invoking would start LangGraph's executor threads.
    """
    from langgraph.checkpoint.memory import InMemorySaver

    from chaos.workloads.langgraph import BUILTIN

    for factory in BUILTIN.values():
        ctx = WorkloadContext(checkpointer=InMemorySaver(), effect_hook=lambda task, value: None)
        factory(ctx)

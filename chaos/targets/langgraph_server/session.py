"""Racer side of the ``langgraph_server`` target: a client of the LangGraph Agent Server, through ``langgraph-sdk`` only.

Why: a team that deploys its graph behind the Agent Server never calls ``graph.invoke``; it calls
the runs API, and concurrency on a thread is the server's business (``multitask_strategy``). A
racer here is one such client. The server itself (``chaos.targets.langgraph_server.host``) is
started by the orchestrator for the cell; its URL arrives in the racer's spec (``service_url``).

What it promises (``chaos.targets.base`` is the contract):

* ``run``: creates the trial's thread on the server (a UUID derived from chaos's thread id), starts
  a run of the workload's graph (graph id = workload name; the id after ``#`` of a workload
  ``path/to/langgraph.json#id``) with ``runs.create`` and joins it; the
  outcome is ``interrupted`` when the thread then waits at an interrupt.
* ``resume`` (``command``: ``Command(resume=value)``, or ``Command(resume={id: value, ...})`` for
  parallel interrupts: the action's ``answer_map``, or with ``by_id`` or ``asked_only`` the ids
  pending when it is sent; ``input``: a new input; ``none``: no input)
  starts a run with ``multitask_strategy`` = ``workload_params.multitask_strategy`` (default
  ``enqueue``, the server's own: langgraph_api/models/run.py) and joins it. Every outcome carries ``http``: the create's
  HTTP status (200, 409, ...), the run's final status as the server reports it (``success``,
  ``interrupted`` = cancelled by a later run, ``error``, ...; ``deleted`` when the run no longer
  exists: ``rollback`` deletes the run it replaces) and the run id. A 409 is the server refusing
  the run before anything ran (``refused``, ``refused_by`` naming the strategy); a run the server
  cancelled or deleted is ``refused`` too, with the reason, since the server, not the graph, ended it.
* Effects are fired in the server's worker (``chaos.targets.langgraph_server.app``), tagged with
  this racer's id by the run's config; after each action ``fired`` lists this racer's ledger rows.
* ``message`` sends a message (``{"msg": value}``) as a new run with the cell's strategy while the
  thread's runs may be in flight, without joining it (its ``hold`` waits for the action's ``release``
  file); the outcome says the run or the refusal (HTTP status) and the thread's runs just before.
  ``join`` joins the runs named and reads each one's final status (``deleted`` when gone) and the
  thread's values. Double texting (``chaos.kinds.double_texting``) is made of these.
* ``inspect`` reads the thread back through the API: a thread the server no longer knows has no
  durable checkpoint, ``thread_found: False`` and ``lost_thread`` (its server id): lost state, LS
  (``chaos.kinds.lost_state``); a thread it knows, ``thread_found: True`` and ``server_thread``.
* With no ``service_url`` in the spec (a sweep) the racer is the server
  (``chaos.targets.langgraph_server.inproc``, in the trial's ``agent-server`` folder): its barriers
  stop the whole server. A resume that finds the thread gone re-creates it and runs the input
  again, as a client told ``Thread not found`` would (``lost_thread`` in its outcome); with the
  ``command`` form, a pause asked again on the new thread gets the command's answer (the client
  had been told of the pause, or is now: the racer's ``only_if_durable`` does not skip a thread
  the server lost, ``chaos.racer.main.nothing_durable``).
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

from chaos.racer.barrier import BarrierClient
from chaos.racer.ledger import Ledger
from chaos.racer.protocol import Action, ActionOutcome, ErrorInfo, Fired, InspectResult, MessageSent, RacerSpec
from chaos.targets.base import Unsupported, error_of, jsonable, outcome

STRATEGIES = ("reject", "enqueue", "interrupt", "rollback")
DEFAULT_INPUT: dict[str, Any] = {"log": []}
GATED = {"gate_after_interrupt": "gate", "approval_idempotent": "gate", "two_gates": "gate"}


def server_thread_id(run_id: str, thread_id: str) -> str:
    """The server's thread id for chaos's thread (the server wants UUIDs): stable per run and thread."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"chaos:{run_id}/{thread_id}"))


class ServerSession:
    def __init__(self, spec: RacerSpec, barrier: BarrierClient, ledger: Ledger):
        from langgraph_sdk import get_sync_client

        store = spec.get("store") or {}
        url = spec.get("service_url")  # the cell's server (chaos.targets.langgraph_server.host), when the kind shares one
        self.in_process = not url
        from chaos.targets.langgraph_server.config import is_config_ref
        from chaos.targets.langgraph_server.config import load as load_config

        # a team's own langgraph.json, found where its racers find a team's module (cwd, PYTHONPATH)
        team = (
            load_config(spec["workload"], [os.getcwd(), *os.environ.get("PYTHONPATH", "").split(os.pathsep)])
            if is_config_ref(spec["workload"])
            else None
        )
        if not url:  # a sweep: this racer is the server (the victim), in the trial's server folder
            from chaos.targets.langgraph_server import inproc as langgraph_server_inproc
            from chaos.targets.langgraph_server.host import graphs_for

            folder = Path(store.get("path") or f"{spec['thread_id']}.state").parent / "agent-server"
            if team is None:
                url = langgraph_server_inproc.start(folder, graphs_for(spec["workload"]), barrier, ledger)
            else:
                url = langgraph_server_inproc.start(folder, team.graphs, barrier, ledger, paths=team.paths, env=team.env)
        self.spec = spec
        self.barrier = barrier
        self.ledger = ledger
        self.params = dict(spec.get("workload_params") or {})
        self.strategy = str(self.params.get("multitask_strategy", "enqueue"))
        if self.strategy not in STRATEGIES:
            raise ValueError(f"workload_params.multitask_strategy {self.strategy!r}: one of {', '.join(STRATEGIES)}")
        from chaos.targets.langgraph_server.host import APP_GRAPH

        self.graph_id = team.graph_id if team is not None else APP_GRAPH if ":" in spec["workload"] else str(spec["workload"])
        self.input = self.params.get("input", DEFAULT_INPUT)
        self.client: Any = get_sync_client(url=url, timeout=float(self.params.get("http_timeout_s", 120)))
        self.thread_id = server_thread_id(spec.get("run_id", ""), spec["thread_id"])
        self.config = {
            "configurable": {
                "chaos_trial_id": spec.get("trial_id", ""),
                "chaos_racer_id": spec["racer_id"],
                "chaos_cell_id": spec.get("cell_id", ""),
                "chaos_thread_id": spec["thread_id"],
            }
        }
        self.fired: list[Fired] = []
        self._seen: set[int] = set()
        self.gated_task: str | None = GATED.get(self.graph_id, self.params.get("gated_task"))
        self.meta: dict[str, Any] = {"server_thread_id": self.thread_id, "multitask_strategy": self.strategy}

    # ---------------------------------------------------------------- actions

    def perform(self, action: Action) -> ActionOutcome:
        try:
            return self._perform(action)
        finally:
            self._collect_fired()

    def _perform(self, action: Action) -> ActionOutcome:
        op = action.get("op")
        if op == "run":
            self.client.threads.create(thread_id=self.thread_id, if_exists="do_nothing", metadata={"chaos_thread": self.spec["thread_id"]})
            return self._run(input=self.input)
        if op == "resume":
            form = action.get("form", "command")
            if self.in_process and not self._thread_exists():  # the restarted server lost it: a client re-creates it
                self.client.threads.create(
                    thread_id=self.thread_id, if_exists="do_nothing", metadata={"chaos_thread": self.spec["thread_id"]}
                )
                out = self._run(input=self.input)
                if form == "command" and out["status"] == "interrupted":
                    # the pause is asked again on the new thread; the client sends the answer it had
                    # (or the human gives it now): the sweep's own life of the run, from the start
                    out = self._run(command={"resume": self._answer(action)}, multitask_strategy=self.strategy)
                out["lost_thread"] = self.thread_id
                return out
            if form == "command" and action.get("asked_only") and (st := self._state()) is not None and not self._interrupts(st):
                # nothing asked yet: the thread goes on first (a run with no input), and the answer
                # goes to the pause it stops at, never to an interrupt() the thread has not reached
                out = self._run(input=None, multitask_strategy=self.strategy)
                if out["status"] != "interrupted":
                    return out
            if form == "command":
                return self._run(command={"resume": self._answer(action)}, multitask_strategy=self.strategy)
            if form == "input":
                return self._run(input=action.get("value") or self.input, multitask_strategy=self.strategy)
            if form == "none":
                return self._run(input=None, multitask_strategy=self.strategy)
            raise Unsupported(f"resume form {form!r}: the runs API has no recovery hook for an app's own resume")
        if op == "message":
            return self._message(action)
        if op == "join":
            return self._join(action.get("runs") or [])
        raise Unsupported(f"op {op!r} is not driven through the Agent Server's API yet")

    def _answer(self, action: Action) -> object:
        """What ``command.resume`` carries: the action's map by interrupt id (a racer's answer to
        parallel interrupts, ``{id: value, ...}``, which the runs API hands to ``Command(resume=...)``
        as it is); with ``by_id`` (an approach to a later pause) or ``asked_only`` (an answer to
        what the client was asked: a baseline's, a recovery's), such a map read now when several
        interrupts are pending; else the plain value, for the one interrupt pending."""
        if action.get("answer_map"):
            return dict(action["answer_map"])
        if action.get("by_id") or action.get("asked_only"):
            ids = sorted({str(i["id"]) for i in self._interrupts(self._state()) if isinstance(i, dict) and i.get("id")})
            if len(ids) > 1:
                return {i: action.get("value") for i in ids}
        return action.get("value")

    def _message(self, action: Action) -> ActionOutcome:
        """A new run with the message (``{"msg": value}``, the deployed graphs' input) and the cell's
        ``multitask_strategy``, not joined; its run waits at ``hold`` for the ``release`` file."""
        from langgraph_sdk.errors import APIStatusError

        self.client.threads.create(thread_id=self.thread_id, if_exists="do_nothing", metadata={"chaos_thread": self.spec["thread_id"]})
        before = {str(r["run_id"]): str(r["status"]) for r in self.client.runs.list(self.thread_id)}
        config = {"configurable": {**self.config["configurable"], "chaos_release": action.get("release", "")}}
        sent: MessageSent = {"before": before}
        try:
            run = self.client.runs.create(
                self.thread_id, self.graph_id, input={"msg": action.get("value")}, multitask_strategy=self.strategy, config=config
            )
            sent["create"], sent["run_id"] = 200, str(run["run_id"])
        except APIStatusError as exc:
            sent["create"], sent["error"] = exc.status_code, f"{type(exc).__name__}: {str(exc)[:200]}"
        return outcome("done", message=sent)

    def _join(self, runs: list[str]) -> ActionOutcome:
        """Each run joined, then its final status read (``deleted``: gone, as a rollback leaves it)."""
        from langgraph_sdk.errors import NotFoundError

        ended: dict[str, str] = {}
        for run_id in runs:
            try:
                self.client.runs.join(self.thread_id, run_id)
            except NotFoundError:
                pass
            try:
                ended[run_id] = str(self.client.runs.get(self.thread_id, run_id)["status"])
            except NotFoundError:
                ended[run_id] = "deleted"
        return outcome("done", runs=ended, values=jsonable(dict(self.client.threads.get_state(self.thread_id)).get("values")))

    def _run(self, **kwargs: Any) -> ActionOutcome:
        from langgraph_sdk.errors import APIStatusError, NotFoundError

        http: dict[str, Any] = {"strategy": kwargs.get("multitask_strategy")}
        try:
            run = self.client.runs.create(self.thread_id, self.graph_id, config=self.config, **kwargs)
        except APIStatusError as exc:
            http["create"] = exc.status_code
            if exc.status_code == 409:
                err = error_of(exc)
                err["refused_by"] = f"multitask_strategy={self.strategy} (HTTP 409)"
                return outcome("refused", error=err, http=http)
            return outcome("error", error=error_of(exc), http=http)
        except Exception as exc:  # the server is gone (connection refused) or answered nonsense
            http["create"] = None
            return outcome("error", error=error_of(exc), http=http)
        http["create"] = 200
        http["run_id"] = run["run_id"]
        joined: Any = None
        try:
            joined = self.client.runs.join(self.thread_id, run["run_id"])
        except NotFoundError:
            pass  # deleted meanwhile (rollback): read below
        except Exception as exc:
            http["join_error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
        status: str
        try:
            status = self.client.runs.get(self.thread_id, run["run_id"])["status"]
        except NotFoundError:
            status = "deleted"
        except Exception as exc:
            return outcome("error", error=error_of(exc), http=http)
        http["run_status"] = status
        state = self._state()
        interrupts = self._interrupts(state)
        values = jsonable((state or {}).get("values"))
        checkpoint = ((state or {}).get("checkpoint") or {}).get("checkpoint_id")
        if status in ("interrupted", "deleted"):
            why = "cancelled by a later run" if status == "interrupted" else "deleted by a later run (rollback)"
            ended: ErrorInfo = {"type": "RunEnded", "module": "langgraph_api", "message": f"run {run['run_id']} {why}", "where": ""}
            ended["refused_by"] = f"multitask_strategy={self.strategy} ({status})"
            return outcome("refused", error=ended, http=http, values=values, checkpoint=checkpoint, interrupts=interrupts)
        if status != "success":
            failed: ErrorInfo = {
                "type": f"Run{status.title()}",
                "module": "langgraph_api",
                "message": f"run {run['run_id']} ended {status}: {_error_in(joined)}",
                "where": "",
            }
            return outcome("error", error=failed, http=http, values=values, checkpoint=checkpoint)
        ids = [i.get("id") if isinstance(i, dict) else None for i in interrupts]  # a racer answers parallel ones by id
        return outcome(
            "interrupted" if interrupts else "done",
            http=http,
            values=values,
            checkpoint=checkpoint,
            interrupts=interrupts,
            interrupt_ids=ids,
        )

    def _thread_exists(self) -> bool:
        from langgraph_sdk.errors import NotFoundError

        try:
            self.client.threads.get(self.thread_id)
        except NotFoundError:
            return False
        return True

    def _state(self) -> dict[str, Any] | None:
        try:
            return dict(self.client.threads.get_state(self.thread_id))
        except Exception:
            return None

    @staticmethod
    def _interrupts(state: dict[str, Any] | None) -> list:
        if not state:
            return []
        out = list(state.get("interrupts") or [])
        for task in state.get("tasks") or []:
            out += list(task.get("interrupts") or [])
        seen, uniq = set(), []
        for i in out:  # a pending interrupt is listed on the thread and on its task
            key = (i or {}).get("id") if isinstance(i, dict) else repr(i)
            if key not in seen:
                seen.add(key)
                uniq.append(jsonable(i))
        return uniq

    def _collect_fired(self) -> None:
        """This racer's effect rows (fired by the server's worker, tagged with its id)."""
        try:
            rows = self.ledger.rows(run_id=self.spec.get("run_id", ""), trial_id=self.spec.get("trial_id", ""))
        except Exception:
            return
        for r in rows:
            if r.get("racer_id") == self.spec["racer_id"] and r["seq"] not in self._seen:
                self._seen.add(r["seq"])
                self.fired.append({"seq": r["seq"], "effect_key": r["effect_key"]})

    # ---------------------------------------------------------------- inspect

    def inspect(self) -> InspectResult:
        from langgraph_sdk.errors import NotFoundError

        try:
            state: dict[str, Any] = dict(self.client.threads.get_state(self.thread_id))
            history = list(self.client.threads.get_history(self.thread_id, limit=1000))
            thread = dict(self.client.threads.get(self.thread_id))
        except NotFoundError:  # nothing of the thread is durable as far as the API can tell: lost state
            return {
                "checkpoints": 0,
                "durable_checkpoints": 0,
                "next": [],
                "completed_tasks": [],
                "completed_by_namespace": {"": []},
                "pending_interrupts": 0,
                "thread_found": False,
                "lost_thread": self.thread_id,
            }
        except Exception as exc:
            return {"checkpoints": None, "error": error_of(exc)}
        completed = [n for h in reversed(history) for n in _ran(h)]
        return {
            "checkpoints": len(history),
            "durable_checkpoints": len(history),
            "head_step": (state.get("metadata") or {}).get("step"),
            "next": list(state.get("next") or []),
            "completed_tasks": completed,
            "completed_by_namespace": {"": completed},
            "pending_interrupts": len(self._interrupts(state)),
            "values": jsonable(state.get("values")),
            "checkpoint": (state.get("checkpoint") or {}).get("checkpoint_id"),
            "thread_found": True,
            "server_thread": self.thread_id,
            "thread_status": thread.get("status"),
            "ended": not state.get("next"),
        }

    def close(self) -> None:
        try:
            self.client.http.client.close()
        except Exception:
            pass


def _error_in(joined: Any) -> str:
    """The error a joined run's output names (the server puts ``__error__`` there), or ``?``."""
    err = joined.get("__error__") if isinstance(joined, dict) else None
    if isinstance(err, dict):
        return f"{err.get('error')}: {str(err.get('message'))[:500]}"
    return "?"


def _ran(checkpoint: dict) -> list[str]:
    """The nodes whose writes a history entry's checkpoint recorded (``metadata.writes``' keys, if any)."""
    md = checkpoint.get("metadata") or {}
    writes = md.get("writes") or {}
    return [str(n) for n in writes if n != "__start__"] if isinstance(writes, dict) else []


def open_session(spec: RacerSpec, barrier: BarrierClient, ledger: Ledger) -> ServerSession:
    return ServerSession(spec, barrier, ledger)


PRELOAD = ("langgraph_sdk", "httpx")
# The in-process server's stack (a sweep's racers are the server, ``chaos.targets.langgraph_server.inproc``):
# the libraries ``run_server`` imports, which each racer otherwise imported after the fork (chaos's
# own from source: racers write no bytecode). Measured on langgraph-api 0.16.7: a server-kill trial's
# resume racer imported 1,076 modules late before, 212 after, and the 48 trials of
# scenarios/agent_server.yaml's server-kill cells spent 106 s of CPU before, 39 s after (one job).
# Not ``langgraph_api`` nor its runtime: they read their configuration from the environment at
# import, which ``run_server`` sets first (the graphs, the runtime edition), so they stay the racer's
# own; nor gRPC (a fork of a process that loaded gRPC's core is its own subject, for 0.07 s). None
# starts a thread at import (the fork server checks). Optional: a release that moves one loads without it.
PRELOAD_OPTIONAL: tuple[str, ...] = (
    "langgraph.graph",
    "langgraph.checkpoint.memory",
    "langgraph.store.memory",
    "langgraph.store.base.batch",
    "langgraph.cache.memory",
    "langgraph.version",
    "langgraph_sdk.runtime",
    "langchain_core.runnables.graph",
    "langchain_core.tracers.langchain",
    "langchain_core.tracers.event_stream",
    "langchain_core.tracers.context",
    "langchain_core.tracers.run_collector",
    "langchain_core.tracers.stdout",
    "langsmith.client",
    "langsmith.run_helpers",
    "starlette.applications",
    "starlette.authentication",
    "starlette.config",
    "starlette.middleware.authentication",
    "starlette.middleware.base",
    "starlette.middleware.cors",
    "starlette.schemas",
    "starlette.staticfiles",
    "sse_starlette",
    "structlog",
    "prometheus_client",
    "opentelemetry.sdk.trace",
    "opentelemetry.sdk.resources",
    "opentelemetry.sdk.metrics",
    "opentelemetry.exporter.otlp.proto.http.metric_exporter",
    "opentelemetry.exporter.prometheus",
    "uvicorn.main",
    "uvicorn.lifespan.on",
    "uvicorn.loops.auto",
    "uvicorn.loops.uvloop",
    "uvicorn.protocols.http.auto",
    "uvicorn.protocols.http.httptools_impl",
    "uvicorn.protocols.websockets.auto",
    "httpcore",
    "anyio._backends._asyncio",
    "anyio._core._fileio",
    "cProfile",
    "pstats",
    "croniter",
    "cloudpickle",
    "jsonschema_rs",
    "truststore",
    "tenacity",
    # chaos's side of the in-process server: the server module, the deployed built-ins and LangGraph's saver names
    "chaos.targets.langgraph_server.inproc",
    "chaos.targets.langgraph_server.config",
    "chaos.targets.langgraph_server.host",
    "chaos.targets.langgraph.session",
    "chaos.targets.langgraph.guards",
    "chaos.workloads.langgraph_builtins",
)


def prewarm(only: str | None = None) -> None:
    """Nothing to build ahead: the workload runs in the server, a racer is its client (``PRELOAD`` is all)."""

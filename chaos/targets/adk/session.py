"""Google ADK adapter (racer side): a resumable ``App`` run by a ``Runner`` over an instrumented session service.

Why a seam on the session service: everything ADK keeps durable goes through one object, the
session service (an append-only event log plus state). This adapter subclasses the chosen service
class, ``SqliteSessionService`` (``sqlite``) or ``DatabaseSessionService`` (SQLAlchemy:
``db_sqlite`` on a SQLite file, ``postgres`` on the run's Postgres through asyncpg, ``mariadb`` on
the MariaDB of ``CHAOS_MYSQL_DSN`` through aiomysql, ADK's driver for a ``mysql`` URL), and passes a
barrier before and after each durable write, named by what it writes (google-adk 2.13.0,
``google/adk/sessions/*_session_service.py``: ``create_session``, ``append_event``):

* ``create_session``;
* ``append(author=<user|agent>,kind=<call:T|response:T|text|empty>[,delta])``: one event, named by
  its author and its first part (a function call or response of tool T, text), ``,delta`` when it
  carries a state delta. ``:before`` means nothing of it is durable; ``:after`` that it committed.

Pauses: an ``adk_request_confirmation`` call (ADK's tool confirmation), or a long-running tool's
call (``LongRunningFunctionTool``: its id in the event's ``long_running_tool_ids``; the tool's own
first response, "pending", answers nothing; the app answers later with a user-authored
``FunctionResponse`` of the same id and name, as ADK's ``human_in_loop`` sample does).

Resume forms: ``command`` answers the pause that waited when the racer opened the session (as a
person clicking it would, even if another answer was recorded meanwhile): a confirmation with a
``FunctionResponse`` (``confirmed: true``, ``payload``: the value) and the paused invocation's id,
a long-running call with the value as its update (a mapping as it is, else ``{"result": value}``);
when none waited, it continues the unfinished invocation by its id (a recovery), answering the
pause it then asks for, or, the run complete, sends the last answer again (a racer's or a stray's
answer; a recovery's, ``asked_only``, sends nothing to a completed run);
``workload_params.invocation_id: omit`` sends the answer without the invocation id, which the docs
say starts a new invocation. ``none`` continues the last invocation by its id with no message
(``run_async(invocation_id=...)``, also when a confirmation waits: ADK then appends nothing and
runs no tool); ``input`` sends the first message again (a new invocation).
ADK's refusal (``StaleSessionError``: the session moved in storage since this racer read it) is the
outcome ``refused`` when the racer had fired no effect in the action, else ``error`` naming it in
``refused_by`` (a duplicate its caller was told had failed; the effects are in ``fired``), as a
guard's refusal is reported (``chaos.kinds.race``).
"""

from __future__ import annotations

import contextvars
import os
from pathlib import Path
from typing import Any

from chaos.racer.barrier import BarrierClient
from chaos.racer.ledger import Ledger, Where
from chaos.racer.protocol import Action, ActionOutcome, InspectResult, RacerSpec
from chaos.targets.adk import mariadb
from chaos.targets.base import Unsupported, error_of, jsonable, nothing_saved_outcome
from chaos.targets.common import EffectRecorder, SessionBase, SessionLoop, outcome, store_file
from chaos.workloads import build_workload

SEAM_VERSION = "google-adk 2.13.0: google/adk/sessions/{sqlite,database}_session_service.py create_session, append_event"
USER = "chaos-user"
CONFIRM = "adk_request_confirmation"
# ADK's optimistic guard against two writers of one session (google.adk.errors.StaleSessionError): a
# racer it turns away before any effect is ``refused``; after its effect fired, an error naming it
STALE = "StaleSessionError"
REFUSED_BY = "ADK's StaleSessionError (the session moved in storage since this process read it)"
# backend mariadb: the server's DSN (``mysql://user:password@host:port/database``: scripts/mariadb.sh
# prints one); the run's trials share a database of the run's own there (``chaos.targets.adk.mariadb``),
# each its own session (the thread id)
MYSQL_ENV = mariadb.MYSQL_ENV
# the tool running now (name, function call id): the effect rows' ``Where``
_RUNNING: contextvars.ContextVar[tuple[str, str] | None] = contextvars.ContextVar("chaos_adk_tool", default=None)


def event_name(event: Any) -> str:
    """``append(author=A,kind=K[,delta])`` of one event."""
    parts = (event.content.parts if event.content is not None else None) or []
    kind = "empty"
    for p in parts:
        if p.function_call is not None:
            kind = f"call:{p.function_call.name}"
            break
        if p.function_response is not None:
            kind = f"response:{p.function_response.name}"
            break
        if p.text:
            kind = "text"
            break
    delta = ",delta" if event.actions is not None and event.actions.state_delta else ""
    return f"append(author={event.author},kind={kind}{delta})"


def instrumented(base: type, barrier: BarrierClient) -> type:
    """The subclass of a session service class whose writes pass ``barrier``."""

    class Instrumented(base):  # a class chosen at run time: the service this trial uses
        async def create_session(self, **kw: Any) -> Any:
            barrier.hit("create_session:before")
            out = await super().create_session(**kw)
            barrier.hit("create_session:after")
            return out

        async def get_session(self, **kw: Any) -> Any:
            out = await super().get_session(**kw)
            barrier.mark("read")  # the race window opens at a resume's first read
            return out

        async def append_event(self, session: Any, event: Any) -> Any:
            if event.partial:
                return await super().append_event(session, event)
            name = event_name(event)
            barrier.hit(name + ":before")
            out = await super().append_event(session, event)
            barrier.hit(name + ":after")
            return out

    Instrumented.__name__ = Instrumented.__qualname__ = f"Chaos{base.__name__}"
    return Instrumented


def session_service(spec: RacerSpec, barrier: BarrierClient) -> Any:
    """The trial's session service, instrumented: by ``target.backend``."""
    backend = spec["target"].get("backend") or "sqlite"
    store = dict(spec.get("store") or {})
    if backend == "sqlite":
        from google.adk.sessions.sqlite_session_service import SqliteSessionService

        return instrumented(SqliteSessionService, barrier)(str(store_file(spec, ".adk.sqlite")))
    from google.adk.sessions.database_session_service import DatabaseSessionService

    cls = instrumented(DatabaseSessionService, barrier)
    if backend == "db_sqlite":
        return cls(f"sqlite+aiosqlite:///{store_file(spec, '.adk-db.sqlite')}")
    if backend == "postgres":
        dsn = str(store.get("dsn") or "")
        if not dsn:
            raise Unsupported("backend postgres needs the run's Postgres (CHAOS_PG_DSN)")
        url = "postgresql+asyncpg://" + dsn.split("://", 1)[1]
        settings = {"search_path": str(store.get("schema") or "public")}
        if store.get("application_name"):  # fault: db_disconnect finds this racer's connections by it
            settings["application_name"] = str(store["application_name"])
        return cls(url, connect_args={"server_settings": settings})
    if backend == "mariadb":  # the run's own database on that server, dropped at the run's cleanup
        mysql_url(os.environ.get(MYSQL_ENV, ""))  # refuses a missing DSN, naming the variable
        service = cls(mysql_url(mariadb.ensure(os.environ[MYSQL_ENV], spec["run_id"])))
        if store.get("application_name"):  # fault: db_disconnect kills this racer's connections by their ids
            path = mariadb.connections_file(Path(spec["result_path"]).parent, str(store["application_name"]))
            mariadb.report_connections(service.db_engine, path)
        return service
    raise Unsupported(f"backend {backend!r} is not expressed by the ADK adapter")


def mysql_url(dsn: str) -> str:
    """SQLAlchemy's URL for ``DatabaseSessionService`` on the MariaDB of ``dsn``: ADK's async
    driver for a ``mysql`` URL (aiomysql; a bare ``mariadb://`` URL would ask for asyncmy)."""
    if "://" not in dsn:
        raise Unsupported(
            f"backend mariadb needs {MYSQL_ENV} (mysql://user:password@host:port/database: bash scripts/mariadb.sh | tail -1)"
        )
    return "mysql+aiomysql://" + dsn.split("://", 1)[1]


def tool_plugin() -> Any:
    from google.adk.plugins.base_plugin import BasePlugin

    class Plugin(BasePlugin):
        async def before_tool_callback(self, *, tool: Any, tool_args: dict, tool_context: Any) -> None:
            _RUNNING.set((str(tool.name), str(tool_context.function_call_id)))
            return None

    return Plugin(name="chaos_where")


def _calls(ev: Any) -> list[Any]:
    return [p.function_call for p in ((ev.content.parts if ev.content is not None else None) or []) if p.function_call is not None]


def _pauses(events: list[Any]) -> dict[str, tuple[str, str]]:
    """call id -> (name, invocation id) of every pause the log asked, in order: an
    ``adk_request_confirmation`` call, or a long-running tool's call (its id in the event's
    ``long_running_tool_ids``: ADK's ``LongRunningFunctionTool``, whose own first response, authored
    by the agent, says "pending" and answers nothing; the app answers it later with a user-authored
    ``FunctionResponse`` of the same id and name)."""
    asked: dict[str, tuple[str, str]] = {}
    for ev in events:
        long_running = set(ev.long_running_tool_ids or ())
        for call in _calls(ev):
            if call.name == CONFIRM or str(call.id) in long_running:
                asked[str(call.id)] = (str(call.name), str(ev.invocation_id))
    return asked


def _answered(events: list[Any]) -> set[str]:
    """Call ids a pause's answer names: a confirmation's response (whoever appended it), or a
    user-authored response to a long-running call."""
    out = set()
    for ev in events:
        for p in (ev.content.parts if ev.content is not None else None) or []:
            fr = p.function_response
            if fr is not None and (fr.name == CONFIRM or ev.author == "user"):
                out.add(str(fr.id))
    return out


def pending_pause(events: list[Any]) -> tuple[str, str, str] | None:
    """(function call id, invocation id, name) of the first pause no answer answers yet."""
    answered = _answered(events)
    return next(((cid, inv, name) for cid, (name, inv) in _pauses(events).items() if cid not in answered), None)


def last_pause(events: list[Any]) -> tuple[str, str, str] | None:
    """(function call id, invocation id, name) of the newest pause, answered or not."""
    asked = list(_pauses(events).items())
    return (asked[-1][0], asked[-1][1][1], asked[-1][1][0]) if asked else None


def completed_tools(events: list[Any], names: dict[str, str]) -> list[tuple[str, str]]:
    """(effect label, function call id) of each workload tool the log records a successful response of."""
    out = []
    for ev in events:
        if ev.actions is not None and ev.actions.requested_tool_confirmations:
            continue  # the tool asked for a confirmation: its response is the request, not its run
        for p in (ev.content.parts if ev.content is not None else None) or []:
            fr = p.function_response
            if fr is not None and fr.name in names and "error" not in (fr.response or {}):
                out.append((names[str(fr.name)], str(fr.id)))
    return out


def ended(events: list[Any]) -> bool:
    """The run has answered: an agent's final text, after which no new work began (no function call,
    no new user message; an answer to a confirmation already answered starts none)."""
    done = False
    for ev in events:
        parts = (ev.content.parts if ev.content is not None else None) or []
        update = ev.author == "user" and any(p.function_response is not None and p.function_response.name != CONFIRM for p in parts)
        if any(p.function_call is not None for p in parts) or (ev.author == "user" and any(p.text for p in parts)) or update:
            done = False  # a long-running tool's update (a user-authored response) starts work: the agent acts on it
        elif ev.author != "user" and any(p.text for p in parts):
            done = True
    return done and pending_pause(events) is None


class ADKSession(SessionBase):
    def __init__(self, spec: RacerSpec, barrier: BarrierClient, ledger: Ledger):
        from google.adk.runners import Runner

        from chaos.workloads.adk import BUILTIN, ADKWorkload

        self.spec = spec
        self.thread_id = spec["thread_id"]
        self.params = dict(spec.get("workload_params") or {})
        self.recorder = EffectRecorder(barrier, ledger, self.thread_id)
        self.recorder.where = self._where
        self.workload = build_workload(spec, self.recorder, BUILTIN, ADKWorkload)
        self.app = self.workload.app
        resumable = self.app.resumability_config is not None and self.app.resumability_config.is_resumable
        if not resumable:
            raise ValueError(
                f"workload {spec['workload']!r}: its App {self.app.name!r} has resumability off: ADK resumes a paused "
                "invocation only in a resumable App; set App(resumability_config=ResumabilityConfig(is_resumable=True))"
            )
        self.aio = SessionLoop()
        self.service = session_service(spec, barrier)
        app = self.app.model_copy(update={"plugins": [*self.app.plugins, tool_plugin()]})
        self.runner = Runner(app=app, session_service=self.service)
        # the confirmation waiting when this process opened the session (read without the race window's mark)
        self.shown = self.aio.run(self._shown())

    def _where(self) -> Where | None:
        running = _RUNNING.get()
        if running is None:
            return None
        return {"node": running[0], "namespace": "", "task_id": running[1], "outside_task": False}

    def perform(self, action: Action) -> ActionOutcome:
        op, form = action.get("op", "run"), action.get("form", "input")
        if op not in ("run", "resume"):
            raise Unsupported(f"{op!r}: ADK has no checkpoint ids to address or fork (a session's events can only be rewound)")
        self.recorder.begin_action()
        fired0 = len(self.recorder.fired)
        try:
            return self.recorder.with_approvals(self.aio.run(self._perform(op, form, action)))
        except Unsupported:
            raise
        except Exception as exc:  # the framework's answer, recorded as data
            err = error_of(exc)
            if type(exc).__name__ == STALE:  # ADK's own guard: before any effect an outcome, after one an error naming it
                err["refused_by"] = REFUSED_BY
                if len(self.recorder.fired) == fired0:
                    return self.recorder.with_approvals(outcome("refused", self.recorder.observed, error=err))
            return self.recorder.with_approvals(outcome("error", self.recorder.observed, error=err))

    async def _shown(self) -> tuple[str, str, str] | None:
        # the service's own get_session (its class's base), not the instrumented one
        get = type(self.service).__mro__[1].get_session  # type: ignore[attr-defined]  # the base class is a session service
        session = await get(self.service, app_name=self.app.name, user_id=USER, session_id=self.thread_id)
        return pending_pause(session.events) if session is not None else None

    async def _session(self) -> Any:
        return await self.service.get_session(app_name=self.app.name, user_id=USER, session_id=self.thread_id)

    async def _perform(self, op: str, form: str, action: Action) -> ActionOutcome:
        from google.genai import types

        session = await self._session()
        if op == "run" or form == "input":
            if session is None:
                await self.service.create_session(app_name=self.app.name, user_id=USER, session_id=self.thread_id)
            msg = types.Content(role="user", parts=[types.Part(text=self.workload.message)])
            return await self._drive(new_message=msg)
        if session is None:
            return nothing_saved_outcome("ADK has no session (create_session was not committed at the kill)")
        if form not in ("command", "none"):
            raise Unsupported(f"resume form {form!r} is not expressed by the ADK adapter")
        if not session.events:
            return nothing_saved_outcome("the session holds no event: the first message was not committed at the kill")
        if form == "command" and self.shown is not None:
            # the confirmation this process was shown when it opened the session: answered as a person
            # clicking it would, whether or not another answer was recorded meanwhile (a racer)
            return await self._answer(self.shown, action.get("value"))
        asked = last_pause(session.events)
        if ended(session.events):
            # the answer sent again after the run completed (a stray, a racer); a recovery's answer
            # (asked_only) goes only to a pause the session waits at: a completed run is left alone
            if form == "command" and asked is not None and not action.get("asked_only"):
                return await self._answer(asked, action.get("value"))
            return outcome("done", {}, nothing_to_resume=True)
        pending = pending_pause(session.events)
        if pending is None:  # the invocation was cut short: continue it by its id (ADK's resume)
            out = await self._drive(invocation_id=session.events[-1].invocation_id)
            session = await self._session()
            pending = pending_pause(session.events) if session is not None else None
            if form == "none" or pending is None or out["status"] != "interrupted":
                return out
        if form == "none":  # ADK's resume of the paused invocation, unanswered: it appends nothing and runs no tool
            return await self._drive(invocation_id=pending[1])
        return await self._answer(pending, action.get("value"))

    async def _answer(self, pause: tuple[str, str, str], value: Any) -> ActionOutcome:
        """The answer to ``pause`` (call id, invocation id, name): a confirmation's ``{"confirmed":
        true, "payload": value}``; a long-running tool's update, the value itself when it is a
        mapping (the sample's ``{"status": "approved", ...}``), else ``{"result": value}`` (ADK's
        wrapping of a tool's plain return)."""
        from google.genai import types

        call_id, invocation, name = pause
        if name == CONFIRM:
            response = {"confirmed": True, "payload": value}
        else:
            response = dict(value) if isinstance(value, dict) else {"result": value}
        fr = types.FunctionResponse(id=call_id, name=name, response=response)
        msg = types.Content(role="user", parts=[types.Part(function_response=fr)])
        self.recorder.note_approval()
        if self.params.get("invocation_id") == "omit":  # the answer alone (ADK 2.13 finds the invocation by the call id)
            return await self._drive(new_message=msg)
        return await self._drive(new_message=msg, invocation_id=invocation)

    async def _drive(self, **kw: Any) -> ActionOutcome:
        waiting: list[str] = []
        async for event in self.runner.run_async(user_id=USER, session_id=self.thread_id, **kw):
            for p in (event.content.parts if event.content is not None else None) or []:
                if p.function_call is not None and p.function_call.name == CONFIRM:
                    waiting.append(str(p.function_call.id))
        session = await self._session()
        pending = pending_pause(session.events) if session is not None else None
        if pending is not None:
            return outcome("interrupted", self.recorder.observed, interrupts=[f"{pending[2]}({pending[0]})"])
        return outcome("done", self.recorder.observed)

    def inspect(self) -> InspectResult:
        try:
            session = self.aio.run(self._session())
        except Exception as exc:
            return {"checkpoints": None, "error": error_of(exc)}
        events = list(session.events) if session is not None else []
        done = completed_tools(events, self.workload.tasks)
        pending = pending_pause(events)
        finished = ended(events)
        return {
            "checkpoints": len(events),
            "head_step": len(events) if session is not None else None,
            "checkpoint": str(events[-1].id) if events else None,
            "next": [] if finished or session is None else ([pending[2]] if pending else ["agent"]),
            "completed_tasks": sorted({t for t, _ in done}),
            "completed_task_ids": [i for _, i in done],
            "completed_by_namespace": {"": sorted({t for t, _ in done})},
            "pending_interrupts": 1 if pending else 0,
            "ended": finished,
            "values": jsonable(dict(session.state)) if session is not None else None,
            "error": None,
        }

    def close(self) -> None:
        try:
            self.aio.run(self.runner.close())
        except Exception:
            pass
        self.aio.close()


def open_session(spec: RacerSpec, barrier: BarrierClient, ledger: Ledger) -> ADKSession:
    return ADKSession(spec, barrier, ledger)


# For warm racers: importing ADK starts no thread and opens nothing; the service, runner and loop are the racer's.
PRELOAD = (
    "google.adk",
    "google.adk.runners",
    "google.adk.sessions.sqlite_session_service",
    "google.adk.sessions.database_session_service",
    "chaos.workloads.adk",
)
# What a racer's first ``run_async`` and first engine import lazily, inside functions (google-adk 2.13.0,
# measured with an import hook over a racer's first run: about 550 modules, 0.5 s of CPU per racer,
# each forked racer paying it again): the runner's agent routing imports the workflow machinery
# (``_agent_router.find_agent_to_run`` -> ``workflow._workflow``, which pulls in ADK's auth stack:
# fastapi, starlette, authlib, cryptography, requests, opentelemetry), the LLM flow, the Gemini
# model class and the built-in tools the agent's tool list is checked against; SQLAlchemy imports a
# URL's dialect (and its driver: asyncpg, aiomysql) when the engine is created. Importing them starts
# no thread and opens nothing (the fork server checks); a cold racer imports the same modules on its
# first call. Optional: private names that may move between ADK releases (one missing is skipped).
PRELOAD_OPTIONAL: tuple[str, ...] = (
    "google.adk.agents._agent_router",
    "google.adk.workflow._workflow",
    "google.adk.workflow._node_runner_utils",
    "google.adk.workflow._llm_agent_wrapper",
    "google.adk.flows.llm_flows.auto_flow",
    "google.adk.flows.llm_flows.single_flow",
    "google.adk.auth.auth_preprocessor",
    "google.adk.models.google_llm",
    "google.adk.tools.google_search_tool",
    "google.adk.tools.vertex_ai_search_tool",
    "google.adk.tools._node_tool",
    "google.adk.a2a.agent",  # what remains of the build's try at RemoteA2aAgent when a2a is not installed
    "sqlalchemy.dialects.sqlite.aiosqlite",  # db_sqlite
    "sqlalchemy.dialects.postgresql.asyncpg",  # postgres
    "asyncpg",
    "sqlalchemy.dialects.mysql.aiomysql",  # mariadb
    "aiomysql",
)


# google.genai's types are pydantic models built lazily (``defer_build``): the first one a process
# validates builds its schema then. These are the ones a racer's first run and first session read
# built (google-genai with google-adk 2.13.0: a user message, the flow's LLM request and config, the
# agent's tool declarations, the model's function calls and the tools' responses), about 0.3 s of CPU
# per racer when each forked racer built them again.
GENAI_DEFERRED = (
    "Content",
    "UserContent",
    "Part",
    "FunctionCall",
    "FunctionResponse",
    "FunctionDeclaration",
    "Tool",
    "GenerateContentConfig",
    "LiveConnectConfig",
    "AudioTranscriptionConfig",
)


def prewarm(only: str | None = None) -> None:
    """Build each built-in workload once (scripted model, no run), and the schemas of the
    ``google.genai`` types a run validates (``GENAI_DEFERRED``): what a racer's first call would
    build, built once in the fork server. Nothing runs, nothing is opened."""
    from google.genai import types

    from chaos.targets.common import prewarm_workloads
    from chaos.workloads.adk import BUILTIN

    prewarm_workloads("adk", BUILTIN, only)
    for name in GENAI_DEFERRED:
        model = getattr(types, name, None)
        if model is not None:  # a name another google-genai lacks: its racers build what they use
            model.model_rebuild()  # a no-op once built (a pooled child finds them built by the server)

"""OpenAI Agents SDK adapter (racer side): a Runner whose saved ``RunState`` lives in the app's store.

The SDK's human-in-the-loop promise: a tool declared ``needs_approval`` stops the run with
``result.interruptions``; the app saves ``result.to_state().to_json()`` where it likes, and later,
in any process, ``RunState.from_json(agent, blob)``, ``state.approve(item)`` (or ``reject``),
``Runner.run(agent, state)``. This adapter is that app: it saves the state blob (in the envelope of
``chaos.targets.openai_agents.stores``) when a run stops at an approval and when it ends, in the
backend's store (``file``, ``sqlite``, ``postgres``). With backend ``sqlite_session`` the blob is in
the file store and the conversation is also kept by the SDK's own ``SQLiteSession``, whose writes
(``add_items``, ``pop_item``, ``clear_session``) pass barriers named by what they write:
``session.add_items(n=2,kind=function_call+function_call_output):before/after``.

Resume forms: ``none`` -> a run waiting for an approval stays waiting (outcome ``interrupted``); a run
the SDK's session holds but no blob does (killed mid-run) is continued from the session
(``Runner.run(agent, [], session=...)``); ``input`` -> a new run; ``command`` -> ``from_json``,
approve every pending item with the value (``false``, ``"reject"``: reject it), ``Runner.run``, and
save what it returned. ``none`` on a run waiting for an approval restores the saved state to show
the approver what waits (``RunState.from_json``, ``get_interruptions``): a blob the SDK cannot
restore is refused there, loudly. A saved run that ended is nothing to resume (outcome ``done`` with
``nothing_to_resume``): the app does not run a finished state again. ``fork`` restores the blob saved
at the first approval (the app kept what it showed the approver) and answers it again.

An approval addressed by call id (``interrupt``: ``first``, the call the run first stopped at, or
any call id: an approver's request that names the call it answers) is handed to the SDK whatever
the saved state is: the app restores the latest blob, ended or not, and approves the pending item
of that call id, else an item of the gated tool with that call id (the first approval's item, as
the request names it), and runs it. Measured by hand on 0.24.0: ``state.approve`` of an unknown
call id, or of an item already answered on the finished state, is accepted silently (the first
run stops again at the real pending item; the second calls the model again and appends a message;
neither fires a tool): what AR judges.

A workload with ``tamper`` (``tampered_gate``) has the store write a value into the state blob
below the SDK when the run stops at its approval; ``inspect`` then reports the blob at that path
(``values["state"]``), so the invalid-state kind sees what the store holds.

Identities: each effect row names the tool call it fired in (the SDK's ``call_id``); ``inspect``
reports the call ids the durable state records an output for (the blob's generated items and the
session's items), so PC compares steps. Finished: the SDK's own final output. Two outputs for one
call id in the session is reported as ``duplicate_outputs``, and the ``checkpoints`` op lists the
durable history as a tree (``history_tree``) so LC is judged after a race: two outputs for one call
id are two children of one parent, a fork no writer asked for.
"""

from __future__ import annotations

import inspect as pyinspect
from collections import Counter
from typing import Any

from chaos.racer.barrier import BarrierClient
from chaos.racer.ledger import Ledger, Where
from chaos.racer.protocol import Action, ActionOutcome, CheckpointInfo, InspectResult, RacerSpec
from chaos.targets.base import NothingSaved, Unsupported, error_of, jsonable, nothing_saved_outcome
from chaos.targets.common import EffectRecorder, SessionBase, SessionLoop, outcome, store_file
from chaos.targets.openai_agents import INFO
from chaos.targets.openai_agents.stores import BlobStore, describe, open_store
from chaos.workloads import build_workload

FINISHED = (
    "the saved run had ended (the SDK's final output is in the state): nothing to resume (the app does not run a finished state again)"
)
REJECTS = (False, "false", "reject", "rejected", "no")


def item_kind(item: Any) -> str:
    """A conversation item's kind for a boundary's name: its ``type``, else its role."""
    if isinstance(item, dict):
        return str(item.get("type") or item.get("role") or "item")
    return str(getattr(item, "type", None) or "item")


def output_ids(items: Any) -> list[str]:
    """The call ids of every ``function_call_output`` among items (raw dicts or the blob's generated items)."""
    out = []
    for i in items or []:
        raw = i.get("raw_item", i) if isinstance(i, dict) else None
        if isinstance(raw, dict) and raw.get("type") == "function_call_output":
            out.append(str(raw.get("call_id")))
    return out


def calls_by_id(items: Any) -> dict[str, str]:
    """call id -> tool name of every ``function_call`` among items."""
    names = {}
    for i in items or []:
        raw = i.get("raw_item", i) if isinstance(i, dict) else None
        if isinstance(raw, dict) and raw.get("type") == "function_call":
            names[str(raw.get("call_id"))] = str(raw.get("name"))
    return names


def history_tree(items: Any) -> list[dict]:
    """The durable history as a checkpoint tree for LC (``chaos.kinds.chain``): one node per tool
    output (``function_call_output``: the SDK's record that a step ran), in the order the history
    holds them (id ``<position>:<call id>``); its parent is the latest output before the step's
    call (``function_call``, the first of that call id). A linear history is a chain; two outputs
    for one call id are two children of one parent (a fork no writer asked for), and the one the
    latest output does not build on is unreachable from it."""
    raws = [(i.get("raw_item", i) if isinstance(i, dict) else {}) for i in items or []]
    first_call: dict[str, int] = {}
    for n, raw in enumerate(raws):
        if isinstance(raw, dict) and raw.get("type") == "function_call":
            first_call.setdefault(str(raw.get("call_id")), n)
    tree: list[dict] = []
    last_output: list[tuple[int, str]] = []  # (position, node id) of every output so far
    for n, raw in enumerate(raws):
        if not (isinstance(raw, dict) and raw.get("type") == "function_call_output"):
            continue
        cid = str(raw.get("call_id"))
        node = f"{n:04d}:{cid}"
        asked = first_call.get(cid, n)
        parent = next((i for at, i in reversed(last_output) if at < asked), None)
        tree.append({"id": node, "ns": "", "parent": parent, "step": n, "source": "history"})
        last_output.append((n, node))
    return tree


def tampered(blob: dict, path: str, value: Any) -> dict:
    """A copy of ``blob`` with ``value`` at the dotted ``path`` (a store altered below the SDK)."""
    import copy

    out = copy.deepcopy(blob)
    *head, last = path.split(".")
    at: Any = out
    for part in head:
        at = at[int(part)] if isinstance(at, list) else at[part]
    at[int(last) if isinstance(at, list) else last] = value
    return out


def projected(blob: Any, path: str) -> dict:
    """``{head: {...: value at path}}``: the part of ``blob`` at the dotted ``path`` (empty if absent)."""
    at: Any = blob
    parts = path.split(".")
    for part in parts:
        if isinstance(at, dict) and part in at:
            at = at[part]
        else:
            return {}
    out: Any = at
    for part in reversed(parts):
        out = {part: out}
    return out


def instrumented_session(session: Any, barrier: BarrierClient) -> Any:
    """The SDK's ``SQLiteSession`` with a barrier before and after each of its writes."""
    base = type(session)

    class Instrumented(base):  # type: ignore[misc, valid-type]  # a subclass of the session's own class, made at run time
        async def add_items(self, items):
            kinds = "+".join(sorted({item_kind(i) for i in items}))
            name = f"session.add_items(n={len(items)},kind={kinds})"
            barrier.hit(name + ":before")
            await super().add_items(items)
            barrier.hit(name + ":after")

        async def pop_item(self):
            barrier.hit("session.pop_item:before")
            got = await super().pop_item()
            barrier.hit("session.pop_item:after")
            return got

        async def clear_session(self):
            barrier.hit("session.clear_session:before")
            await super().clear_session()
            barrier.hit("session.clear_session:after")

    Instrumented.__name__ = Instrumented.__qualname__ = f"Chaos{base.__name__}"
    session.__class__ = Instrumented
    return session


class OpenAIAgentsSession(SessionBase):
    def __init__(self, spec: RacerSpec, barrier: BarrierClient, ledger: Ledger):
        from chaos.workloads.openai_agents import BUILTIN, OpenAIAgentsWorkload

        self.spec = spec
        self.thread_id = spec["thread_id"]
        self.aio = SessionLoop()
        self.recorder = EffectRecorder(barrier, ledger, self.thread_id)
        self.recorder.where = self._where
        self.workload = build_workload(spec, self.recorder, BUILTIN, OpenAIAgentsWorkload)
        self.store: BlobStore = open_store(spec, barrier)
        self.sdk_session: Any = None
        self.engine: Any = None  # the SQLAlchemy session's engine (disposed on close)
        backend = spec["target"].get("backend")
        if backend == "sqlite_session":
            from agents import SQLiteSession

            self.sdk_session = instrumented_session(SQLiteSession(self.thread_id, str(store_file(spec, ".session.sqlite"))), barrier)
        elif backend == "postgres" and (spec.get("workload_params") or {}).get("session") == "sqlalchemy":
            self.sdk_session = instrumented_session(self._sqlalchemy_session(spec), barrier)

    def _sqlalchemy_session(self, spec: RacerSpec) -> object:
        """The SDK's SQLAlchemySession on the run's Postgres, its tables in the run's schema (dropped with it)."""
        from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession
        from sqlalchemy.ext.asyncio import create_async_engine

        store = dict(spec.get("store") or {})
        dsn, schema = str(store.get("dsn") or ""), str(store.get("schema") or "chaos_run")
        url = dsn.replace("postgresql://", "postgresql+psycopg://", 1).replace("postgres://", "postgresql+psycopg://", 1)
        self.engine = create_async_engine(url, connect_args={"options": f"-csearch_path={schema}"})
        return SQLAlchemySession(self.thread_id, engine=self.engine, create_tables=True)

    def _where(self) -> Where:
        from chaos.workloads.openai_agents import CALL

        return {"node": None, "namespace": "", "task_id": CALL.get(), "outside_task": False}

    # -- the app's saves ------------------------------------------------------------------------

    def _save(self, result: Any, before: dict | None, first_pause: Any = None) -> ActionOutcome:
        """Save what a run returned (its state blob, in the app's envelope) and say what happened."""
        waiting = [str(i.raw_item.call_id) for i in result.interruptions]
        state = result.to_state().to_json()
        if waiting and self.workload.tamper is not None:  # the store alters the blob below the SDK
            state = tampered(state, *self.workload.tamper)
        doc = {
            "seq": int((before or {}).get("seq", 0)) + 1,
            "state": state,
            "awaiting": bool(waiting),
            "interruptions": waiting,
            "ended": not waiting,
            "final_output": jsonable(result.final_output),
            "first_pause": (before or {}).get("first_pause") or first_pause or (state if waiting else None),
        }
        self.store.save(describe(doc), doc)
        if waiting:
            return outcome("interrupted", self.recorder.observed, interrupts=waiting)
        return outcome("done", self.recorder.observed, values={"final_output": doc["final_output"]})

    def _saved(self) -> dict:
        doc = self.store.load()
        if doc is None:
            raise NothingSaved(
                "nothing to continue: no state blob was saved (the SDK persists nothing itself; the app saves "
                f"result.to_state() when the run stops or ends; none in {self.store.where})"
            )
        return doc

    # -- actions ----------------------------------------------------------------------------------

    def perform(self, action: Action) -> ActionOutcome:
        op = action.get("op", "run")
        if op in ("checkpoints", "tree"):  # tree (a race's LC read): the history is one read either way
            return self._checkpoints()
        if op == "intent":
            return self._intent()
        if op not in ("run", "resume", "fork"):
            raise Unsupported(f"{op!r}: the SDK has no such operation on a saved RunState")
        if op == "fork" and action.get("via") == "explicit":
            raise Unsupported(INFO.unsupported["fork:explicit"])
        self.recorder.begin_action()
        try:
            return self.recorder.with_approvals(self.aio.run(self._perform(action)))
        except NothingSaved as exc:
            return nothing_saved_outcome(str(exc))
        except Exception as exc:  # the framework's answer (or the app's), recorded as data
            return self.recorder.with_approvals(outcome("error", self.recorder.observed, error=error_of(exc)))

    async def _perform(self, action: Action) -> ActionOutcome:
        from agents import Runner

        op, form = action.get("op", "run"), action.get("form", "input")
        agent = self.workload.agent
        if op == "run" or (op == "resume" and form == "input"):
            before = self.store.load()
            result = await Runner.run(agent, self.workload.input, session=self.sdk_session, context=self.workload.context)
            return self._save(result, {"seq": (before or {}).get("seq", 0)})
        if op == "fork":
            saved = self._saved()
            if not saved.get("first_pause"):
                raise Unsupported("the run never stopped at an approval: no saved blob to fork from")
            out = await self._answer(saved, saved["first_pause"], action.get("value"))
            out["forked_from"] = "first_pause"
            out["via"] = "checkpoint"
            return out
        doc = self.store.load()
        if doc is not None and form == "command" and action.get("interrupt"):
            return await self._answer_by_id(doc, str(action["interrupt"]), action.get("value"))
        if doc is None:
            if self.sdk_session is not None and await self.sdk_session.get_items():
                # killed mid-run: the SDK's session holds the conversation; the app continues it
                result = await Runner.run(agent, [], session=self.sdk_session, context=self.workload.context)
                return self._save(result, None)
            raise NothingSaved(f"nothing to continue: no state blob in {self.store.where} and no session items")
        if doc.get("ended"):
            return outcome("done", self.recorder.observed, nothing_to_resume=FINISHED)
        if form == "none":  # the app shows the approver what waits: it restores the saved state (a bad blob is refused here)
            state = await self._restore(doc["state"])
            return outcome("interrupted", self.recorder.observed, interrupts=[str(i.raw_item.call_id) for i in state.get_interruptions()])
        if form == "command":
            return await self._answer(doc, doc["state"], action.get("value"))
        raise ValueError(f"unknown resume form {form!r}")

    async def _restore(self, blob: dict) -> Any:
        """``RunState.from_json`` of a saved blob, with the app's run context (``context_override``):
        the SDK restores a context that is not plain JSON (a pydantic model, a dataclass) as a dict,
        and asks the app to hand it back."""
        from agents import RunState

        w = self.workload
        if w.context is None:
            return await RunState.from_json(w.agent, blob)
        return await RunState.from_json(w.agent, blob, context_override=w.context)

    async def _answer(self, doc: dict, blob: dict, value: Any) -> ActionOutcome:
        """The app's approval handler: restore the blob, answer every pending item, run, save."""
        w = self.workload
        if w.claim is not None:
            if not w.claim(self.thread_id, doc):
                return outcome(
                    "done", self.recorder.observed, claim_lost="another process holds the claim on this approval (the app's claim)"
                )
            now = self.store.load()  # read again under the claim: an approval another process already consumed is not run again
            if now is None or now.get("seq") != doc.get("seq"):
                return outcome("done", self.recorder.observed, claim_lost="the approval was consumed before this process claimed it")
        state = await self._restore(blob)
        items = state.get_interruptions()
        out = await self._decide_and_run(state, items, value, doc)
        out["answered"] = [[str(i.raw_item.call_id), jsonable(value)] for i in items]
        return out

    async def _answer_by_id(self, doc: dict, call_id: str, value: Any) -> ActionOutcome:
        """An approver's request naming the call it answers (``first``: the call the run first stopped
        at), handed to the SDK whatever the saved state is: restore the latest blob, answer the
        pending item of that call id, else an item of the gated tool with that id, run, save."""
        from agents.items import ToolApprovalItem

        first = await self._restore(doc.get("first_pause") or doc["state"])
        shown = first.get_interruptions()  # what the approver was shown at the first pause
        if call_id == "first":
            if not shown:
                raise NothingSaved("the run never stopped at an approval: no first call to address")
            call_id = str(shown[0].raw_item.call_id)
        state = await self._restore(doc["state"])
        item = next((i for i in state.get_interruptions() if str(i.raw_item.call_id) == call_id), None)
        if item is None:  # not pending: the item the request names (the first approval's, with that call id)
            template = shown[0]
            raw = template.raw_item.model_dump() if hasattr(template.raw_item, "model_dump") else dict(template.raw_item)
            item = ToolApprovalItem(agent=template.agent, raw_item={**raw, "call_id": call_id}, tool_name=template.tool_name)
        out = await self._decide_and_run(state, [item], value, doc)
        out["answered"] = [[call_id, jsonable(value)]]
        return out

    async def _decide_and_run(self, state: Any, items: list, value: Any, doc: dict) -> ActionOutcome:
        """Approve ``items`` of ``state`` (reject them when ``value`` is the app's reject), run the
        state on with the answer the tools see, and save what the run returned."""
        from agents import Runner

        from chaos.workloads.openai_agents import ANSWER

        for item in items:
            if value in REJECTS:
                state.reject(item)
            else:
                state.approve(item)
            self.recorder.note_approval()
        token = ANSWER.set(value)
        try:
            result = await Runner.run(self.workload.agent, state, session=self.sdk_session)
        finally:
            ANSWER.reset(token)
        return self._save(result, doc)

    def _checkpoints(self) -> ActionOutcome:
        """The saved state (``latest``, ``first_pause``), and the durable history as a tree (the
        session's items, else the saved blob's generated items: ``history_tree``)."""
        doc = self.store.load()
        cps: list[CheckpointInfo] = []
        if doc is not None:
            cps.append(
                {
                    "id": "latest",
                    "step": doc.get("seq"),
                    "source": "save_state",
                    "next": [],
                    "interrupts": len(doc.get("interruptions") or []),
                }
            )
            if doc.get("first_pause"):
                cps.append({"id": "first_pause", "step": None, "source": "save_state", "next": [], "interrupts": 1})
        items = self.aio.run(self.sdk_session.get_items()) if self.sdk_session is not None else None
        history = items if items is not None else ((doc or {}).get("state") or {}).get("generated_items") or []
        return outcome("done", {}, checkpoints=cps, tree=history_tree(history))

    def _intent(self) -> ActionOutcome:
        from agents import Runner, RunState

        surface = {
            "RunState.from_json": str(pyinspect.signature(RunState.from_json)),
            "RunState.approve": str(pyinspect.signature(RunState.approve)),
            "Runner.run": str(pyinspect.signature(Runner.run)),
        }
        note = (
            "RunState.from_json restores any saved blob and Runner.run runs it: no parameter says whether a resume "
            "continues the saved run or starts a second branch of it (two states from one blob are both resumable)"
        )
        return outcome("done", {}, intent={"discriminator": None, "surface": surface, "note": note})

    # -- reading the durable state ------------------------------------------------------------------

    def inspect(self) -> InspectResult:
        try:
            doc = self.store.load()
            session_items = self.aio.run(self.sdk_session.get_items()) if self.sdk_session is not None else []
        except Exception as exc:
            return {"checkpoints": None, "error": error_of(exc)}
        generated = (doc or {}).get("state", {}).get("generated_items") or []
        names = {**calls_by_id(session_items), **calls_by_id(generated)}
        done_ids = list(dict.fromkeys([*output_ids(generated), *output_ids(session_items)]))
        tasks = self.workload.tasks
        dup = sorted(c for c, n in Counter(output_ids(session_items)).items() if n > 1)
        awaiting = bool((doc or {}).get("awaiting"))
        ended = bool((doc or {}).get("ended"))
        out: InspectResult = {
            "checkpoints": int((doc or {}).get("seq", 0)) + (1 if session_items else 0),
            "head_step": (doc or {}).get("seq"),
            "next": [] if ended else (list((doc or {}).get("interruptions") or []) if awaiting else ["model"]),
            "completed_tasks": sorted({tasks.get(names.get(c, c), names.get(c, c)) for c in done_ids}),
            "completed_task_ids": done_ids,
            "pending_interrupts": len((doc or {}).get("interruptions") or []) if awaiting else 0,
            "ended": ended,
            "values": {"final_output": (doc or {}).get("final_output"), "duplicate_outputs": dup, **self._tampered_part(doc)},
            "error": None,
        }
        return out

    def _tampered_part(self, doc: dict | None) -> dict:
        """``{"state": ...}``, the blob at the path the workload's store tampers (nothing else), when it tampers."""
        if self.workload.tamper is None or doc is None:
            return {}
        return {"state": projected(doc.get("state"), self.workload.tamper[0])}

    def close(self) -> None:
        try:
            if self.engine is not None:
                self.aio.run(self.engine.dispose())
            elif self.sdk_session is not None:
                self.sdk_session.close()
            self.store.close()
        finally:
            self.aio.close()


def open_session(spec: RacerSpec, barrier: BarrierClient, ledger: Ledger) -> OpenAIAgentsSession:
    return OpenAIAgentsSession(spec, barrier, ledger)


# For warm racers (chaos.racer.forkserver): importing the SDK starts no thread and opens nothing; the
# agent (and its scripted model) is built by the racer, never here.
PRELOAD = ("agents", "agents.testing", "chaos.workloads.openai_agents", "chaos.targets.openai_agents.team_store")
PRELOAD_OPTIONAL: tuple[str, ...] = ()  # every module its racers import is there whatever the store


def prewarm(only: str | None = None) -> None:
    """Build each built-in workload's agent once (scripted models; nothing runs)."""
    from chaos.targets.common import prewarm_workloads
    from chaos.workloads.openai_agents import BUILTIN

    prewarm_workloads("openai_agents", BUILTIN, only)

"""Built-in OpenAI Agents SDK workloads: one agent, function tools, a scripted model (no network).

No LLM and no API key: the agent's model is the SDK's own ``agents.testing.ScriptedModel``, whose
every step is a responder that reads the conversation it is given and answers with the next call of
the plan whose ``call_id`` has no output yet, then a final message. The plan is read from the
conversation, not from a queue: a fresh process restoring a saved ``RunState`` (or reading a
``Session``) gets the same next step, as a real model given the same history would.

* ``three_step``: the model calls tools ``a``, ``b``, ``c`` in turn (one call per turn), each firing
  its effect; then says "done".
* ``gate_after_interrupt``: ``pre`` (effect) -> ``gate`` (``needs_approval=True``: the run stops with
  ``result.interruptions``; once approved it fires its effect keyed by the answer) -> ``end``
  (effect) -> "done". A rejected ``gate`` does not run: the model is told, and goes on to ``end``.
* ``tampered_gate``: ``gate_after_interrupt`` whose saved blob the store alters below the SDK when the
  run stops at the approval, as a tampered, corrupted or foreign store would hold it
  (``workload_params.tamper``, one of ``TAMPERS``: ``foreign_agent``, the blob of another app's
  agent; ``newer_schema``, a schema version no release has written; ``emptied_history``, the
  blob's generated items lost). ``meta["invalid"]`` declares it (``via: tamper``) for the
  invalid-state kind, which asks whether a fresh process restoring it is refused loudly.

Each effect names the tool call it fired in (``CALL``: the SDK's ``call_id``, its identity of one
step), so PC compares steps, not labels. The answer a resume approves with reaches the gated tool
through ``ANSWER`` (the SDK hands a tool no approval value: the key is chaos's, so k racers with
distinct values fire distinct rows).

A team's own app returns an ``OpenAIAgentsWorkload`` from its factory (``package.module:factory``).
A team's own state store (``workload_params.store: package.module:factory``) is a factory given a
``StoreContext`` that returns a ``StateStore``: ``save(key, blob)`` and ``load(key)`` of text.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from agents import Agent, function_tool, set_tracing_disabled
from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call
from agents.tool_context import ToolContext

set_tracing_disabled(True)  # nothing is ever sent to the tracing endpoint

# the call id of the tool running now (set by ``fire``), and the answer the resume approved with
CALL: ContextVar[str | None] = ContextVar("chaos_openai_agents_call", default=None)
ANSWER: ContextVar[Any] = ContextVar("chaos_openai_agents_answer", default=True)

FINAL = "done"
MAX_MODEL_CALLS = 64  # scripted responder steps per model (each reads the conversation; far more than any run makes)


@dataclass(frozen=True)
class Call:
    """One planned tool call: the tool's name, its arguments and the call id the model gives it."""

    name: str
    arguments: dict[str, Any]
    call_id: str


def outputs_in(items: Any) -> set[str]:
    """The call ids that have an output (a ``function_call_output``) among conversation items."""
    if not isinstance(items, list):
        return set()
    return {str(i.get("call_id")) for i in items if isinstance(i, dict) and i.get("type") == "function_call_output"}


def scripted_model(plan: list[Call], final: str = FINAL) -> ScriptedModel:
    """The SDK's ScriptedModel answering with the first planned call that has no output yet, one per
    turn, then ``final``: what it says depends on the conversation only."""

    def respond(call: Any) -> list[Any]:
        done = outputs_in(call.input)
        for c in plan:
            if c.call_id not in done:
                return [function_call(c.name, c.arguments, call_id=c.call_id)]
        return [assistant_message(final)]

    return ScriptedModel([ModelStep.respond(respond)] * MAX_MODEL_CALLS)


def fire(ctx: ToolContext[Any], effect: Callable[..., None], task: str, value: Any = None) -> None:
    """Fire ``task``'s effect, naming the tool call it fires in (``CALL``)."""
    token = CALL.set(ctx.tool_call_id)
    try:
        effect(task, value)
    finally:
        CALL.reset(token)


@dataclass
class OpenAIAgentsWorkload:
    """What a factory (``package.module:factory``, given a ``WorkloadContext``) returns to have its
    own agent tested.

    ``agent``: the starting ``Agent`` (its model the app's scripted one: chaos runs no LLM);
    ``input``: the first run's input; ``gated_task``: the effect an approval gates (its tool has
    ``needs_approval``); ``tasks``: tool name -> the effect label its call fires (the frontier a
    report names; default: the tool's name); ``meta``: facts the kinds read; ``claim``: the app's
    consume-once guard, ``claim(thread_id, saved)`` -> whether this process owns the approval of the
    saved document (called before the state is restored; a loser runs nothing). A winner reads the
    store again under its claim and runs nothing if the saved document moved meanwhile (another
    process consumed the approval and saved before this one claimed). ``context``: the run context
    the app passes to ``Runner.run(..., context=...)`` (what its tools and ``is_enabled`` read as
    ``ctx.context``), handed back on every restore (``RunState.from_json(..., context_override=)``),
    as the SDK asks for a context that is not plain JSON (else it comes back a dict)."""

    agent: Any
    input: str = "go"
    gated_task: str | None = None
    tasks: dict[str, str] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    claim: Callable[[str, dict], bool] | None = None
    context: Any = None
    tamper: tuple[str, Any] | None = None  # built-ins only: (a dotted path of the state blob, the value the store writes there)


@dataclass(frozen=True)
class StoreContext:
    """What a state store factory (``workload_params.store``) gets: ``folder``, a folder every racer
    of the run and every resume shares (put a file or an embedded database there); ``thread_id``,
    ``trial_id`` and ``racer_id`` name who asks (a server-backed store can prefix by them)."""

    folder: Path
    thread_id: str = ""
    trial_id: str = ""
    racer_id: str = ""


@runtime_checkable
class StateStore(Protocol):
    """A team's own store of the saved run: ``save(key, blob)`` keeps ``blob`` (text: the app's
    document holding ``RunState.to_json()``) under ``key`` (the run's thread id), replacing what was
    there, and returns once it is durable; ``load(key)`` returns the last blob saved under ``key``,
    or None. chaos calls ``save`` between the barriers ``save_state(...):before`` and ``:after``."""

    def save(self, key: str, blob: str) -> None: ...
    def load(self, key: str) -> str | None: ...


def _tool(effect: Callable[..., None], task: str, approval: bool = False, keyed: bool = False) -> Any:
    async def body(ctx: ToolContext[Any]) -> str:
        fire(ctx, effect, task, ANSWER.get() if keyed else None)
        return f"{task} done"

    return function_tool(body, name_override=task, description_override=f"perform step {task}", needs_approval=approval)


def three_step(ctx: Any) -> OpenAIAgentsWorkload:
    plan = [Call(t, {}, f"call_{t}") for t in ("a", "b", "c")]
    agent = Agent(name="stepper", instructions="run a, b, c", model=scripted_model(plan), tools=[_tool(ctx.effect, t) for t in "abc"])
    return OpenAIAgentsWorkload(agent=agent, input="run the three steps")


def gate_after_interrupt(ctx: Any) -> OpenAIAgentsWorkload:
    plan = [Call("pre", {}, "call_pre"), Call("gate", {}, "call_gate"), Call("end", {}, "call_end")]
    tools = [_tool(ctx.effect, "pre"), _tool(ctx.effect, "gate", approval=True, keyed=True), _tool(ctx.effect, "end")]
    agent = Agent(name="approver", instructions="pre, then the gated step, then end", model=scripted_model(plan), tools=tools)
    return OpenAIAgentsWorkload(agent=agent, input="run the gated flow", gated_task="gate")


# what ``tampered_gate`` writes into the saved blob (a dotted path of ``RunState.to_json()``, the value)
TAMPERS: dict[str, tuple[str, Any]] = {
    "foreign_agent": ("current_agent.name", "stranger"),  # a blob another app's agent saved
    "newer_schema": ("$schemaVersion", "99.0"),  # a schema version no release has written
    "emptied_history": ("generated_items", []),  # the run's generated items lost
}


def tampered_gate(ctx: Any) -> OpenAIAgentsWorkload:
    name = str(ctx.params.get("tamper", "foreign_agent"))
    if name not in TAMPERS:
        raise ValueError(f"workload_params.tamper: {name!r} is not one of {', '.join(TAMPERS)}")
    path, value = TAMPERS[name]
    w = gate_after_interrupt(ctx)
    w.tamper = (path, value)
    # the invalid-state kind reads the value at ``field`` of the durable values: the adapter projects the blob there (``state``)
    w.meta["invalid"] = {"task": "pre", "field": f"state.{path}", "value": value, "via": "tamper", "tamper": name}
    return w


BUILTIN = {"three_step": three_step, "gate_after_interrupt": gate_after_interrupt, "tampered_gate": tampered_gate}

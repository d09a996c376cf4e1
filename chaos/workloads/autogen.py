"""Built-in AutoGen AgentChat workloads: round-robin teams driven by replayed model replies.

No LLM and no network: every AssistantAgent talks to autogen-ext's ``ReplayChatCompletionClient``,
which replays a fixed reply: a call of the agent's one tool, whose body fires the effect.

* ``three_step``: agents a -> b -> c; each calls its tool (``step_a`` ...), which fires the effect.
  The run ends when c has spoken.
* ``gate_after_interrupt``: pre (tool effect) -> ask (replies "APPROVE?": the team stops, the
  AgentChat way to wait for a human) | the human's answer arrives as the next run's task -> gate
  (fires its effect keyed by the answer) -> end (tool effect). The run ends when end has spoken.
* ``invalid_type``: agents a -> bad -> c (tool agents). AgentChat has no application state a node
  writes: a team's state is the framework's own pydantic models (``TeamState``,
  ``AssistantAgentState``, the model context's ``LLMMessage`` list). So the schema-breaking value is
  written below the framework: from ``bad``'s turn on, the application's store saves the team
  state with an int as the first message's ``content`` (a str or a list of parts), as a tampered
  or corrupted store would hold it (``meta["invalid"]["via"] == "tamper"``). The invalid-state kind
  asks whether ``load_state`` in a fresh process refuses it.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from autogen_agentchat.agents import AssistantAgent, BaseChatAgent
from autogen_agentchat.base import Response
from autogen_agentchat.messages import BaseChatMessage, TextMessage
from autogen_core import CancellationToken, FunctionCall
from autogen_core.models import CreateResult, ModelFamily, ModelInfo, RequestUsage
from autogen_core.tools import FunctionTool
from autogen_ext.models.replay import ReplayChatCompletionClient

QUESTION = "APPROVE?"
_INFO = ModelInfo(vision=False, function_calling=True, json_output=False, family=ModelFamily.UNKNOWN, structured_output=False)


def _tool_call(name: str) -> CreateResult:
    return CreateResult(
        content=[FunctionCall(id=f"call_{name}", arguments="{}", name=name)],
        finish_reason="function_calls",
        usage=RequestUsage(prompt_tokens=0, completion_tokens=0),
        cached=False,
    )


def tool_agent(task: str, effect: Callable[[str, object], None], replies: int = 8) -> AssistantAgent:
    """An AssistantAgent whose (replayed) model calls one tool that fires ``task``'s effect."""

    async def fire() -> str:  # async: runs on the loop's thread (a sync tool would run in a worker thread)
        effect(task, None)
        return f"{task} done"

    tool = FunctionTool(fire, name=f"step_{task}", description=f"perform step {task}")
    client = ReplayChatCompletionClient([_tool_call(f"step_{task}")] * replies, model_info=_INFO)
    return AssistantAgent(task, model_client=client, tools=[tool], reflect_on_tool_use=False)


class GateAgent(BaseChatAgent):
    """Reads the human's answer (the last user message) and fires the gated effect with it."""

    def __init__(self, name: str, effect: Callable[[str, object], None]):
        super().__init__(name, description="fires the approved effect")
        self._effect = effect

    @property
    def produced_message_types(self) -> Sequence[type[BaseChatMessage]]:
        return (TextMessage,)

    async def on_messages(self, messages: Sequence[BaseChatMessage], cancellation_token: CancellationToken) -> Response:
        answer = next((m.content for m in reversed(messages) if m.source == "user" and isinstance(m, TextMessage)), None)
        self._effect("gate", answer)
        return Response(chat_message=TextMessage(content=f"gate {answer}", source=self.name))

    async def on_reset(self, cancellation_token: CancellationToken) -> None:
        pass


@dataclass
class AutoGenWorkload:
    """What a factory (``package.module:factory``, given a ``WorkloadContext``) returns to have its
    own AgentChat team tested.

    Either ``participants`` (the adapter makes them a ``RoundRobinGroupChat``) or ``team``: a
    callable ``team(max_turns)`` that builds the team as the app does (``RoundRobinGroupChat``,
    ``SelectorGroupChat``, ``Swarm``, with its own termination condition), passing ``max_turns``
    on: chaos runs a team one turn at a time and saves ``team.save_state()`` after each, as
    AgentChat's docs advise (save after the team stopped).

    When the run waits for a human: after a turn by ``pause_after`` (its answer arrives as the
    next run's task, a ``TextMessage`` from ``user``), or after a ``HandoffMessage`` to ``human``
    (the Swarm way: the answer goes back as ``HandoffMessage(source=human, target=<who handed
    off>, content=answer)``). When it has ended: after a turn by ``last``, or, with no ``last``,
    when the team's own termination condition stopped it with no handoff to the human.

    ``task``: the first run's task; ``tasks``: agent -> the effect label its turn fires (the
    frontier a report names); ``gated_task``: the effect an approval gates; ``answer``: for
    ``answers: workload``, a callable given the question (the asking message's content) that
    returns the human's answer; ``tamper``: built-ins only (a value the store writes below the
    framework: agent, dotted path, value)."""

    participants: list = field(default_factory=list)
    last: str | None = None  # the agent whose turn ends the run
    pause_after: str | None = None  # the agent whose turn stops the team for a human
    gated_task: str | None = None
    task: str = "go"
    tasks: dict[str, str] = field(default_factory=dict)  # agent -> task whose effect its turn fires
    meta: dict[str, object] = field(default_factory=dict)
    # a value the application's store writes into the saved team state from this agent's turn on:
    # (agent, dotted path in the team state, value)
    tamper: tuple[str, str, object] | None = None
    team: Callable[[int], Any] | None = None  # builds an AgentChat team (untyped here: AgentChat is not in the orchestrator's environment)
    human: str = "user"  # the handoff target that means "ask a human"
    answer: Callable[[str], object] | None = None


@dataclass
class AutoGenThread:
    """What a team's recovery gets (``resume: app:package.module:recover`` calls ``recover(ctx,
    thread)``, or awaits it, in the fresh process).

    ``team``: the team, built fresh (load ``saved`` into it with ``await team.load_state(...)``);
    ``saved``: the ``team.save_state()`` the application saved last (None: nothing was saved);
    ``awaiting_input``: the run waits for a human; ``handoff_from``: the agent that handed off to
    the human (None for a round-robin pause); ``question``: what it asked; ``pauses``: how many
    pauses the run has made; ``ended``: the run had finished; ``answers``: the scenario's plan (if
    any) and ``answer``: its answer for the pause the run waits at now (None: no plan, or used up;
    with a plan, ``recover`` is called again at each pause the run reaches). ``run(task)`` (awaitable) runs the
    team turn by turn as chaos does, saving after each turn, and returns what happened;
    ``recover`` returns what its last ``run`` returned."""

    thread_id: str
    team: Any
    task: str
    saved: dict | None
    awaiting_input: bool
    handoff_from: str | None
    question: str | None
    pauses: int
    ended: bool
    run: Callable[[object], object]
    answers: list[object] = field(default_factory=list)
    answer: object = None


def three_step(ctx) -> AutoGenWorkload:
    agents = [tool_agent(t, ctx.effect_hook) for t in ("a", "b", "c")]
    return AutoGenWorkload(participants=agents, last="c", tasks={"a": "a", "b": "b", "c": "c"})


def gate_after_interrupt(ctx) -> AutoGenWorkload:
    ask = AssistantAgent("ask", model_client=ReplayChatCompletionClient([QUESTION] * 8))
    agents = [tool_agent("pre", ctx.effect_hook), ask, GateAgent("gate", ctx.effect_hook), tool_agent("end", ctx.effect_hook)]
    return AutoGenWorkload(
        participants=agents, last="end", pause_after="ask", gated_task="gate", tasks={"pre": "pre", "gate": "gate", "end": "end"}
    )


TAMPER_PATH = "agent_states.bad.agent_state.llm_context.messages.0.content"
TAMPER_VALUE = 12345


def invalid_type(ctx) -> AutoGenWorkload:
    agents = [tool_agent(t, ctx.effect_hook) for t in ("a", "bad", "c")]
    return AutoGenWorkload(
        participants=agents,
        last="c",
        tasks={"a": "a", "bad": "bad", "c": "c"},
        meta={"invalid": {"task": "bad", "field": TAMPER_PATH, "value": TAMPER_VALUE, "via": "tamper"}},
        tamper=("bad", TAMPER_PATH, TAMPER_VALUE),
    )


BUILTIN = {"three_step": three_step, "gate_after_interrupt": gate_after_interrupt, "invalid_type": invalid_type}

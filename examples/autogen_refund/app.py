"""A flight-refund team on AutoGen AgentChat, written from the framework's Swarm and
human-in-the-loop docs: a ``Swarm`` of two ``AssistantAgent``s, ``travel_agent`` and
``flights_refunder``, stopped by ``HandoffTermination(target="user") | TextMentionTermination("TERMINATE")``.
The refunder asks the customer to approve by handing off to ``user``; the application saves
``team.save_state()`` and, when the answer arrives, runs the team again with
``HandoffMessage(source="user", target=<who handed off>, content=answer)``.

No LLM: each agent's model is a scripted ``ReplayChatCompletionClient`` that picks its reply from
the conversation it is shown (so a team restored in a fresh process replies as it would have).
The refund is the irreversible effect, counted with ``ctx.effect``. Two factories:

* ``stock``: as the docs write it: the ``refund_flight`` tool refunds with a plain call.
* ``fixed``: the refund carries an idempotency key (the flight number, as a payment provider's
  ``Idempotency-Key``), through ``ctx.effect_once``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.base import Handoff
from autogen_agentchat.conditions import HandoffTermination, TextMentionTermination
from autogen_agentchat.teams import Swarm
from autogen_core import FunctionCall
from autogen_core.models import CreateResult, FunctionExecutionResultMessage, ModelFamily, ModelInfo, RequestUsage, UserMessage
from autogen_core.tools import FunctionTool
from autogen_ext.models.replay import ReplayChatCompletionClient

from chaos.workloads.autogen import AutoGenWorkload

FLIGHT = "ABC123"
INFO = ModelInfo(vision=False, function_calling=True, json_output=False, family=ModelFamily.UNKNOWN, structured_output=False)


def call(name: str, **args: Any) -> CreateResult:
    return CreateResult(
        content=[FunctionCall(id=f"call_{name}", arguments=json.dumps(args), name=name)],
        finish_reason="function_calls",
        usage=RequestUsage(prompt_tokens=0, completion_tokens=0),
        cached=False,
    )


class ScriptedClient(ReplayChatCompletionClient):
    """A replayed model whose reply is ``script(messages)``: what it says depends on the conversation."""

    def __init__(self, script: Callable[[Sequence[Any]], CreateResult | str]):
        super().__init__(["unused"], model_info=INFO)
        self._script = script

    async def create(self, messages: Sequence[Any], **kw: Any) -> CreateResult:
        self.chat_completions = [self._script(messages)]
        self._current_index = 0
        return await super().create(messages, **kw)


def travel_agent_script(messages: Sequence[Any]) -> CreateResult | str:
    return call("transfer_to_flights_refunder")


def refunder_script(messages: Sequence[Any]) -> CreateResult | str:
    if any(isinstance(m, FunctionExecutionResultMessage) and any(r.name == "refund_flight" for r in m.content) for m in messages):
        return f"Flight {FLIGHT} refunded. TERMINATE"  # already refunded: a model that sees it says so
    answers = [m.content for m in messages if isinstance(m, UserMessage) and m.source == "user"]
    if len(answers) < 2:  # only the customer's request so far: ask for approval
        return call("transfer_to_user")
    if "approve" in str(answers[-1]).lower():
        return call("refund_flight", flight_id=FLIGHT)
    return f"Refund of {FLIGHT} not approved. TERMINATE"


def team_factory(refund: Callable[[str, Any], None]) -> Callable[[int], Swarm]:
    async def refund_flight(flight_id: str) -> str:
        """Refund a flight (async: AgentChat runs it on the team's loop)."""
        refund("refund_flight", flight_id)  # the irreversible write: the money goes back
        return f"flight {flight_id} refunded"

    def make(max_turns: int) -> Swarm:
        travel_agent = AssistantAgent(
            "travel_agent",
            model_client=ScriptedClient(travel_agent_script),
            handoffs=["flights_refunder", "user"],
            system_message="You are a travel agent. Hand refunds to flights_refunder.",
        )
        refunder = AssistantAgent(
            "flights_refunder",
            model_client=ScriptedClient(refunder_script),
            handoffs=[Handoff(target="user", message=f"Please approve the refund of flight {FLIGHT}: approve or deny?")],
            tools=[FunctionTool(refund_flight, name="refund_flight", description="Refund a flight.")],
            system_message="You refund flights once the customer approves.",
        )
        stop = HandoffTermination(target="user") | TextMentionTermination("TERMINATE")
        return Swarm([travel_agent, refunder], termination_condition=stop, max_turns=max_turns)

    return make


TASK = f"I need to refund my flight {FLIGHT}."


def stock(ctx: Any) -> AutoGenWorkload:
    """As the docs write it: the refund tool refunds with a plain call."""
    return AutoGenWorkload(team=team_factory(ctx.effect), task=TASK, gated_task="refund_flight")


def fixed(ctx: Any) -> AutoGenWorkload:
    """The refund carries an idempotency key (the flight number): a second refund is a no-op."""
    return AutoGenWorkload(team=team_factory(ctx.effect_once), task=TASK, gated_task="refund_flight")


async def recover(ctx: Any, thread: Any) -> None:
    """The app's own resume driver (``resume: app:examples.autogen_refund.app:recover``), as the
    docs write it: ``load_state`` the saved team and run it on; a handoff to the customer gets the
    customer's answer (the scenario's ``answers`` plan in ``thread.answer``; else
    ``ctx.params["answer"]``, default ``approve``, standing for the app's inbox) back as ``HandoffMessage(source="user", target=<who handed off>)``. A run that had ended
    is left alone; with nothing saved, the request is run again from the start."""
    from autogen_agentchat.messages import HandoffMessage

    if thread.saved is None:
        await thread.run(thread.task)
        return
    if thread.ended:
        return
    await thread.team.load_state(thread.saved)
    if thread.awaiting_input and thread.handoff_from:
        answer = str(thread.answer if thread.answer is not None else ctx.params.get("answer", "approve"))
        await thread.run(HandoffMessage(source="user", target=thread.handoff_from, content=answer))
    else:
        await thread.run(None)

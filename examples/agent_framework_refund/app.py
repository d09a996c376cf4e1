"""examples/autogen_refund ported to the Microsoft Agent Framework, as a team migrating from AutoGen would.

The AutoGen app: a ``Swarm`` of ``travel_agent`` and ``flights_refunder``; the refunder asks the
customer by handing off to ``user`` (``HandoffTermination(target="user")`` stops the team), the app
saves ``team.save_state()`` and later runs the team again with ``HandoffMessage(source="user", ...)``;
on "approve" the refunder's ``refund_flight`` tool refunds.

The port (what changes is in README.md): the team becomes a ``Workflow``. ``travel_agent`` is an
``AgentExecutor`` over an ``Agent`` (a scripted chat client: no LLM, no network); the handoff to the
customer becomes ``ctx.request_info(RefundApproval(...), str)`` in the ``flights_refunder`` executor,
answered in any process with ``workflow.run(checkpoint_id=..., responses={request_id: answer})``;
the app no longer saves state itself: the framework checkpoints every superstep to
``FileCheckpointStorage``. The refund runs in the refunder's ``@response_handler``.

* ``stock``: the refund is a plain call, as the AutoGen tool was.
* ``fixed``: the refund carries an idempotency key (the flight number, ``ctx.effect_once``), and the
  checkpoints go to ``LinearFileStorage`` (``workload_params.storage``; shared with
  examples/agent_framework_release_notes): the first writer of a checkpoint's child wins.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent_framework import (
    Agent,
    AgentExecutor,
    AgentExecutorResponse,
    BaseChatClient,
    ChatResponse,
    Executor,
    Message,
    WorkflowBuilder,
    WorkflowContext,
    handler,
    response_handler,
)

from chaos.workloads import AFWorkload, WorkloadContext

FLIGHT = "ABC123"
TASK = f"I need to refund my flight {FLIGHT}."
REQUEST_TYPE = "examples.agent_framework_refund.app:RefundApproval"


class ScriptedTravelAgent(BaseChatClient):
    """The travel agent's model, replayed (the AutoGen app's ``travel_agent_script``)."""

    async def _inner_get_response(self, *, messages: Any, stream: bool, options: Any, **kwargs: Any) -> ChatResponse:
        text = f"Your refund of {FLIGHT} goes to our flights refunder."
        return ChatResponse(messages=[Message(role="assistant", contents=[text])], response_id="travel-1")


@dataclass
class RefundApproval:
    """What the customer is asked (was the refunder's handoff message to ``user``)."""

    flight_id: str = FLIGHT
    prompt: str = f"Please approve the refund of flight {FLIGHT}: approve or deny?"


class FlightsRefunder(Executor):
    def __init__(self, refund: Any) -> None:
        super().__init__(id="flights_refunder")
        self._refund = refund

    @handler
    async def on_request(self, response: AgentExecutorResponse, ctx: WorkflowContext) -> None:
        await ctx.request_info(RefundApproval(), str)

    @response_handler
    async def on_answer(self, original: RefundApproval, answer: str, ctx: WorkflowContext[str, str]) -> None:
        if "approve" in answer.lower():
            self._refund("refund_flight", original.flight_id)  # the irreversible write: the money goes back
            await ctx.yield_output(f"Flight {original.flight_id} refunded.")
        else:
            await ctx.yield_output(f"Refund of {original.flight_id} not approved.")


def _workload(refund: Any) -> AFWorkload:
    def build() -> Any:
        travel = AgentExecutor(Agent(client=ScriptedTravelAgent(), name="travel_agent", instructions="You are a travel agent."))
        refunder = FlightsRefunder(refund)
        return WorkflowBuilder(start_executor=travel, name="flight_refund").add_edge(travel, refunder).build()

    return AFWorkload(build=build, input=TASK, name="flight_refund", allowed_types=[REQUEST_TYPE], gated_task="refund_flight")


def stock(ctx: WorkloadContext) -> AFWorkload:
    """As the AutoGen tool was: a plain call."""
    return _workload(ctx.effect)


def fixed(ctx: WorkloadContext) -> AFWorkload:
    """The refund carries an idempotency key (the flight number)."""
    return _workload(ctx.effect_once)


def linear_storage(folder: Any) -> Any:
    """The fixed variant's storage: examples/agent_framework_release_notes's ``LinearFileStorage``."""
    from examples.agent_framework_release_notes.app import LinearFileStorage

    return LinearFileStorage(folder, allowed_checkpoint_types=[REQUEST_TYPE])

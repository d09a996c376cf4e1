"""The shipping coordinator of Google's 5-Day AI Agents course (Day 2b), ported for chaos.

Ported, briefly, from the Kaggle notebook "Day 2b - Agent Tools Best Practices" of Google's 5-Day AI
Agents course (Apache-2.0, Copyright 2025 Google LLC), sections 3-4 ("long-running operations"):
``place_shipping_order(num_containers, destination)`` auto-approves up to five containers and, for
more, pauses with ``tool_context.request_confirmation(hint, payload=...)``; the course's workflow
finds the ``adk_request_confirmation`` event and resumes with the human's decision
(``FunctionResponse(name="adk_request_confirmation", response={"confirmed": ...})``) and the saved
``invocation_id``, in an ``App`` with ``ResumabilityConfig(is_resumable=True)``. Changed for chaos:
the model is scripted (``ScriptedLlm``: it orders 10 containers to Rotterdam, the course's demo,
then answers), and placing the order is an effect chaos counts (``ctx.effect``; in the course the
tool only returns an order id).

* ``stock``: the course's tool as it is.
* ``fixed``: the order carries an idempotency key (``ctx.effect_once``: the thread, the tool and the
  order), as a shipping API's key would; and the confirmation is declared on the tool
  (``require_confirmation=`` the course's threshold), so an invocation killed between its
  confirmation request and the tool's response event can still be confirmed.
"""

from __future__ import annotations

from google.adk.agents import LlmAgent
from google.adk.apps import App, ResumabilityConfig
from google.adk.tools import FunctionTool, ToolContext

from chaos.workloads import ADKWorkload, ScriptedLlm, WorkloadContext

LARGE_ORDER_THRESHOLD = 5


async def _large(num_containers: int, destination: str, tool_context: ToolContext) -> bool:
    """An order of more than ``LARGE_ORDER_THRESHOLD`` containers needs a human (the course's rule)."""
    return num_containers > LARGE_ORDER_THRESHOLD


def _app(ctx: WorkloadContext, fixed: bool) -> ADKWorkload:
    place = ctx.effect_once if fixed else ctx.effect

    def place_shipping_order(num_containers: int, destination: str, tool_context: ToolContext) -> dict:
        """Places a shipping order. Requires approval if ordering more than 5 containers (LARGE_ORDER_THRESHOLD)."""
        if num_containers <= LARGE_ORDER_THRESHOLD:
            place("place_order", f"{num_containers}:{destination}")
            return {"status": "approved", "order_id": f"ORD-{num_containers}-AUTO"}
        if not tool_context.tool_confirmation:
            tool_context.request_confirmation(
                hint=f"Large order: {num_containers} containers to {destination}. Do you want to approve?",
                payload={"num_containers": num_containers, "destination": destination},
            )
            return {"status": "pending", "message": f"Order for {num_containers} containers requires approval"}
        if tool_context.tool_confirmation.confirmed:
            place("place_order", f"{num_containers}:{destination}")
            return {"status": "approved", "order_id": f"ORD-{num_containers}-HUMAN"}
        return {"status": "rejected", "message": f"Order rejected: {num_containers} containers to {destination}"}

    model = ScriptedLlm(
        plan=["place_shipping_order"],
        args={"place_shipping_order": {"num_containers": 10, "destination": "Rotterdam"}},
        final="Order ORD-10-HUMAN: 10 containers to Rotterdam, approved.",
    )
    agent = LlmAgent(
        name="shipping_agent",
        model=model,
        instruction="You are a shipping coordinator assistant: place the order with place_shipping_order and summarise its status.",
        # fixed: the confirmation declared on the tool, so ADK knows on resume that the tool waits for one
        tools=[FunctionTool(place_shipping_order, require_confirmation=_large if fixed else False)],
    )
    app = App(name="shipping_coordinator", root_agent=agent, resumability_config=ResumabilityConfig(is_resumable=True))
    return ADKWorkload(
        app=app, tasks={"place_shipping_order": "place_order"}, gated_task="place_order", message="Ship 10 containers to Rotterdam"
    )


def stock(ctx: WorkloadContext) -> ADKWorkload:
    return _app(ctx, fixed=False)


def fixed(ctx: WorkloadContext) -> ADKWorkload:
    return _app(ctx, fixed=True)

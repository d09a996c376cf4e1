"""ADK's long-running-tool sample, ported for chaos: a manager approves a reimbursement ticket.

Ported, briefly, from google/adk-python ``contributing/samples/human_in_loop`` (Apache-2.0,
Copyright 2025 Google LLC), "Agent with Long-Running Tools": the agent calls
``ask_for_approval(purpose, amount)``, a ``LongRunningFunctionTool`` that answers at once with
``{"status": "pending", "ticketId": ...}``; the app later sends the manager's decision as a new
``FunctionResponse`` with the same call id and name (``{"status": "approved", ...}``), and the
agent then calls ``reimburse(purpose, amount)``. Amounts under $100 are reimbursed without asking.
Changed for chaos: the model is scripted (``ReimburseLlm``, a ``BaseLlm`` that follows the
sample's instruction: $200 for conference travel, ask, wait, reimburse once approved), the
reimbursement is an effect chaos counts (``ctx.effect``; in the sample the tool returns
``{"status": "ok"}``), and the app is an ``App`` with resumability on and its sessions on disk
(the sample keeps them in memory, which no crash survives).

* ``stock``: the sample's tools as they are.
* ``fixed``: the reimbursement carries an idempotency key (the ticket: ``ctx.effect_once``), as a
  payments API's key would.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.apps import App, ResumabilityConfig
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.tools import ToolContext
from google.adk.tools.long_running_tool import LongRunningFunctionTool
from google.genai import types

from chaos.workloads import ADKWorkload, WorkloadContext

PURPOSE, AMOUNT = "conference travel", 200.0
TICKET = "reimbursement-ticket-001"  # the sample's ticket id


def _text(s: str) -> LlmResponse:
    return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=s)]))


def _call(name: str, **args: Any) -> LlmResponse:
    return LlmResponse(content=types.Content(role="model", parts=[types.Part(function_call=types.FunctionCall(name=name, args=args))]))


class ReimburseLlm(BaseLlm):
    """The sample's instruction, scripted: under $100 reimburse at once; else ask for approval, tell
    the employee it is pending, and once the manager's update says approved, reimburse; rejected,
    say so. It reads only the request's history, as a model does."""

    model: str = "scripted-reimbursement"

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        approval: dict[str, Any] | None = None  # the newest response to ask_for_approval
        reimbursed = False
        for content in llm_request.contents:
            for part in content.parts or []:
                fr = part.function_response
                if fr is None:
                    continue
                if fr.name == "ask_for_approval":
                    approval = dict(fr.response or {})
                if fr.name == "reimburse" and (fr.response or {}).get("status") == "ok":
                    reimbursed = True
        if reimbursed:
            yield _text(f"Your ${AMOUNT:.0f} for {PURPOSE} has been reimbursed.")
        elif AMOUNT < 100 or (approval or {}).get("status") == "approved":
            yield _call("reimburse", purpose=PURPOSE, amount=AMOUNT)
        elif approval is None:
            yield _call("ask_for_approval", purpose=PURPOSE, amount=AMOUNT)
        elif approval.get("status") == "pending":
            yield _text(f"Your request is pending manager approval (ticket {approval.get('ticketId')}).")
        else:
            yield _text("Your manager rejected the reimbursement.")


def _app(ctx: WorkloadContext, once: bool) -> ADKWorkload:
    def reimburse(purpose: str, amount: float) -> dict:
        """Reimburse the amount of money to the employee."""
        if once:
            ctx.effect_once("reimburse", f"{purpose}:{amount:.0f}", key=TICKET)
        else:
            ctx.effect("reimburse", f"{purpose}:{amount:.0f}")
        return {"status": "ok"}

    def ask_for_approval(purpose: str, amount: float, tool_context: ToolContext) -> dict[str, Any]:
        """Ask for approval for the reimbursement."""
        return {"status": "pending", "amount": amount, "ticketId": TICKET}

    agent = LlmAgent(
        name="reimbursement_agent",
        model=ReimburseLlm(),
        instruction=(
            "You are an agent whose job is to handle the reimbursement process for the employees. If the amount is "
            "less than $100, you will automatically approve the reimbursement. If the amount is greater than $100, you "
            "will ask for approval from the manager. If the manager approves, you will call reimburse() to reimburse "
            "the amount to the employee. If the manager rejects, you will inform the employee of the rejection."
        ),
        tools=[reimburse, LongRunningFunctionTool(func=ask_for_approval)],
    )
    app = App(name="human_in_the_loop", root_agent=agent, resumability_config=ResumabilityConfig(is_resumable=True))
    return ADKWorkload(
        app=app, tasks={"reimburse": "reimburse"}, gated_task="reimburse", message=f"Please reimburse ${AMOUNT:.0f} for {PURPOSE}"
    )


def stock(ctx: WorkloadContext) -> ADKWorkload:
    return _app(ctx, once=False)


def fixed(ctx: WorkloadContext) -> ADKWorkload:
    return _app(ctx, once=True)

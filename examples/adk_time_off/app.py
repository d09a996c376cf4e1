"""ADK's own tool-confirmation sample, ported for chaos: a manager approves time off.

Ported, briefly, from google/adk-python ``contributing/samples/human_tool_confirmation/agent.py``
(Apache-2.0, Copyright 2025 Google LLC), which ADK's "Get action confirmation for ADK Tools" page
links as its complete sample: ``request_time_off(days)`` asks the manager with
``tool_context.request_confirmation(hint, payload={"approved_days": 0})`` (the advanced
confirmation) and books the days the answer's payload approves. Changed for chaos: the model is
scripted (``ScriptedLlm``: it asks for 5 days, then answers), the booking is an effect chaos counts
(``ctx.effect``), and the app is resumable (``ResumabilityConfig(is_resumable=True)``), as the
docs' "Resume stopped agents" page asks for an approval answered in another process.

* ``stock``: the sample as it is: the booking is a plain call (an HR system's POST).
* ``fixed``: the booking carries an idempotency key (the thread, the tool and the days approved:
  ``ctx.effect_once``), as an HR API's idempotency key would, so a resumed or racing invocation that
  runs the tool again books nothing twice; and the confirmation is declared on the tool
  (``require_confirmation=`` a threshold, the sample's form for ``reimburse``), so an invocation
  killed between its confirmation request and the tool's response event can still be confirmed
  (stock: ADK refuses that answer with "Tool 'request_time_off' does not require confirmation").
"""

from __future__ import annotations

from google.adk.agents import LlmAgent
from google.adk.apps import App, ResumabilityConfig
from google.adk.tools import FunctionTool, ToolContext

from chaos.workloads import ADKWorkload, ScriptedLlm, WorkloadContext


def _approved(payload: object) -> int:
    """The days the manager's answer approves: the sample's ``{"approved_days": n}``, or a bare number."""
    if isinstance(payload, dict):
        return int(payload.get("approved_days", 0))
    return int(str(payload))


async def _needs_manager(days: int, tool_context: ToolContext) -> bool:
    """More than two days need the manager (the sample's threshold, as ``confirmation_threshold`` has it for reimburse)."""
    return days > 2


def _app(ctx: WorkloadContext, once: bool) -> ADKWorkload:
    def request_time_off(days: int, tool_context: ToolContext) -> dict:
        """Request day off for the employee."""
        if days <= 0:
            return {"status": "Invalid days to request."}
        if days <= 2:
            return {"status": "ok", "approved_days": days}
        confirmation = tool_context.tool_confirmation
        if not confirmation:
            tool_context.request_confirmation(
                hint="Please approve or reject the tool call request_time_off() by responding with a FunctionResponse "
                "with an expected ToolConfirmation payload.",
                payload={"approved_days": 0},
            )
            return {"status": "Manager approval is required."}
        approved = min(_approved(confirmation.payload), days)
        if approved == 0:
            return {"status": "The time off request is rejected.", "approved_days": 0}
        (ctx.effect_once if once else ctx.effect)("book_time_off", approved)
        return {"status": "ok", "approved_days": approved}

    model = ScriptedLlm(plan=["request_time_off"], args={"request_time_off": {"days": 5}}, final="Your time off is booked.")
    agent = LlmAgent(
        name="time_off_agent",
        model=model,
        instruction="You help employees with time off requests; use request_time_off and wait for the manager.",
        # fixed: the confirmation is declared on the tool (the sample's confirmation_threshold form), so
        # ADK knows on resume that the tool waits for one, even when the crash came before its response event
        tools=[FunctionTool(request_time_off, require_confirmation=_needs_manager if once else False)],
    )
    app = App(name="time_off", root_agent=agent, resumability_config=ResumabilityConfig(is_resumable=True))
    return ADKWorkload(app=app, tasks={"request_time_off": "book_time_off"}, gated_task="book_time_off", message="I need 5 days off.")


def stock(ctx: WorkloadContext) -> ADKWorkload:
    return _app(ctx, once=False)


def fixed(ctx: WorkloadContext) -> ADKWorkload:
    return _app(ctx, once=True)

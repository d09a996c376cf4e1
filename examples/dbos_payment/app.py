"""A pydantic-ai agent made durable with DBOS: a payment tool behind a human's approval (no LLM, no network).

The workflow (``@DBOS.workflow``) waits for the approval on ``DBOS.recv("approve")``, then runs the
agent. The agent is durable through pydantic-ai's DBOS integration (``DBOSDurability``, the
capability that replaces the deprecated ``DBOSAgent`` wrapper in pydantic-ai 2.68): each model
request is a DBOS step, recorded in the system database, so a recovered workflow replays the
model's answers instead of asking again. The model is a ``FunctionModel``: it asks for the tool
``pay`` once, then answers with text.

* ``stock``: ``pay`` is a plain tool, as the agent's code would have it before it was made durable:
  it runs in workflow code, not in a step, so nothing records that it ran.
* ``fixed``: ``pay`` is a ``@DBOS.step`` and charges with an idempotency key (the workflow id),
  as a payment provider's key would (``ctx.effect_once``).
* ``recover``: the team's own recovery for ``resume: app:``: DBOS's launch has recovered the
  workflow already; the recovery sends the approval from the app's inbox if one is still due.
"""

from __future__ import annotations

from typing import Any

from dbos import DBOS
from pydantic_ai import Agent
from pydantic_ai.durable_exec.dbos import DBOSDurability
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from chaos.workloads.dbos import DBOSThread, DBOSWorkload

AMOUNT = 42


class _Ctx:
    """The racer's ``ctx`` (effects go through it); one racer is one process."""

    ctx: Any = None


CTX = _Ctx()


def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """The stand-in LLM: call ``pay`` with the amount, then, given the tool's return, say it is done."""
    if any(p.part_kind == "tool-return" for p in messages[-1].parts):
        return ModelResponse(parts=[TextPart(f"paid {AMOUNT}")])
    return ModelResponse(parts=[ToolCallPart("pay", {"amount": AMOUNT})])


stock_agent = Agent(FunctionModel(model), name="payer_stock", capabilities=[DBOSDurability()])
fixed_agent = Agent(FunctionModel(model), name="payer_fixed", capabilities=[DBOSDurability()])


@stock_agent.tool_plain
def pay(amount: int) -> str:
    """Charge the card (the irreversible effect), as a plain call."""
    CTX.ctx.effect("pay", amount)
    return "charged"


@DBOS.step(name="pay")
def pay_step(amount: int) -> str:
    """Charge the card inside a DBOS step, with an idempotency key: the workflow's id and the amount
    (``effect_once`` keys by the thread, which is the workflow id, the task and the value)."""
    CTX.ctx.effect_once("pay", amount)
    return "charged"


@fixed_agent.tool_plain(name="pay")
def pay_fixed(amount: int) -> str:
    return pay_step(amount)


@DBOS.workflow(name="payment_stock")
def payment_stock(request: str, timeout_s: float) -> str:
    approved = DBOS.recv("approve", timeout_seconds=timeout_s)
    if not approved:
        return "not approved"
    return stock_agent.run_sync(request).output


@DBOS.workflow(name="payment_fixed")
def payment_fixed(request: str, timeout_s: float) -> str:
    approved = DBOS.recv("approve", timeout_seconds=timeout_s)
    if not approved:
        return "not approved"
    return fixed_agent.run_sync(request).output


def _workload(ctx: Any, workflow: Any, steps: dict[str, str]) -> DBOSWorkload:
    CTX.ctx = ctx
    return DBOSWorkload(
        workflow=workflow,
        args=("pay the invoice", float(ctx.params.get("recv_timeout_s", 3600))),
        steps=steps,
        topic="approve",
        gated_task="pay",
    )


def stock(ctx: Any) -> DBOSWorkload:
    return _workload(ctx, payment_stock, {})


def fixed(ctx: Any) -> DBOSWorkload:
    return _workload(ctx, payment_fixed, {"pay": "pay"})


def recover(ctx: Any, thread: DBOSThread) -> None:
    """The team's recovery, run in a fresh process after DBOS's launch recovered the workflow: send
    the approval from the app's inbox (``workload_params.approve``, default true; the scenario's
    ``thread.answer`` when it gives one) unless the workflow already received one (a recorded
    ``DBOS.recv``) or has ended."""
    if thread.status != "PENDING" or thread.received:
        return
    thread.send(thread.answer if thread.answer is not None else ctx.params.get("approve", True))

"""A prebuilt ReAct agent whose tool asks for approval inside itself, as LangGraph's human-in-the-loop
guide writes it ("Add human intervention: review tool calls", the ``book_hotel`` tool that calls
``interrupt()`` and goes on when the answer accepts), ported in our own words with a scripted model.

The agent is ``langgraph.prebuilt.create_react_agent`` over one tool, ``pay_invoice``. The tool asks
the reviewer (``interrupt``) and, once answered, does two different writes, as a finance tool does:
an audit row of the decision (written whatever the answer: it needs no approval) and, when
approved, the payment itself (the write the approval gates). Both are the tool's, so a team labels
both by the tool's name; their values tell them apart. ``declared`` labels them the same way but
gives each its identity (``key=``): the invoice's audit entry and the invoice's payment.

The model is scripted (no LLM): it reads the thread's messages, so a fresh process answers as the
first did: call ``pay_invoice`` for INV-7, then report.
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.prebuilt import create_react_agent
from langgraph.types import interrupt

from chaos import WorkloadContext
from chaos.workloads.langgraph import LangGraphWorkload

INVOICE, AMOUNT = "INV-7", "120.00 EUR"


class ScriptedModel(BaseChatModel):
    """Calls ``pay_invoice`` once, then says what happened."""

    @property
    def _llm_type(self) -> str:
        return "scripted-finance-assistant"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:  # create_react_agent binds its tools to the model
        return self

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        if not any(isinstance(m, ToolMessage) for m in messages):
            call = {"name": "pay_invoice", "args": {"invoice": INVOICE, "amount": AMOUNT}, "id": "call-pay-7"}
            reply = AIMessage(content="", tool_calls=[call])
        else:
            reply = AIMessage(content=f"Done: {messages[-1].content}")
        return ChatResult(generations=[ChatGeneration(message=reply)])


def build(ctx: WorkloadContext, *, declare: bool = False) -> LangGraphWorkload:
    @tool
    def pay_invoice(invoice: str, amount: str) -> str:
        """Pay a supplier's invoice, once a human approved it."""
        answer = interrupt(f"Trying to call pay_invoice with {invoice} {amount}. Please approve or reject.")
        decision = "approved" if answer == "approve" else "rejected"
        # the audit row: written for every answer, no approval needed
        ctx.effect("pay_invoice", f"audit {invoice} {decision}", **({"key": f"audit {invoice}"} if declare else {}))
        if decision != "approved":
            return f"Payment of {invoice} rejected by the reviewer."
        # the payment: the write the approval gates
        ctx.effect("pay_invoice", f"payment {invoice} {amount}", **({"key": f"payment {invoice}"} if declare else {}))
        return f"Paid {invoice} ({amount})."

    agent = create_react_agent(model=ScriptedModel(), tools=[pay_invoice], checkpointer=ctx.checkpointer)
    return LangGraphWorkload(graph=agent, input={"messages": [("user", f"Please pay invoice {INVOICE}.")]}, gated_task="pay_invoice")


def declared(ctx: WorkloadContext) -> LangGraphWorkload:
    """The same agent, each write with its declared identity (``ctx.effect(..., key=...)``)."""
    return build(ctx, declare=True)

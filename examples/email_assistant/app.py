"""An e-mail assistant with human approvals: the worked example of testing your own graph with chaos.

Based on the public LangGraph example langchain-ai/agents-from-scratch,
``src/email_assistant/email_assistant_hitl.py`` (written anew here, smaller): a ``MessagesState``
graph whose ``triage_router`` routes with ``Command(goto=...)``, and a ``response_agent`` subgraph
(``llm_call`` -> ``interrupt_handler`` -> ``llm_call``) whose ``interrupt_handler`` asks a human,
in Agent Inbox format, to approve each approval-gated tool call. The chat model is a fake from
``langchain_core`` (no LLM, no network): its first reply calls two tools in parallel (one
``AIMessage``, two tool calls: pay the invoice, e-mail the customer), so one run meets two approval
interrupts. ``llm_call`` carries a ``RetryPolicy``, as a model call in production would.

The tools' irreversible effects go through ``ctx.effect`` (chaos's effect ledger counts them):
``send_payment`` (value: the invoice number) and ``send_email`` (value: the message id).

Two factories, the same graph:

* ``stock``: the tools fire as soon as their approval comes back, inside the node that asks. Two
  real bugs follow. (1) The second ``interrupt()`` in ``interrupt_handler`` re-runs the node from
  its top when it is answered, so the payment fires again with no crash at all. (2) The payment
  fires before anything about it is durable, so a crash (or a second worker resuming the same
  approval) fires it again.
* ``fixed``: two changes. (1) ``interrupt_handler`` handles one approval per pass (it routes back
  to itself with ``Command(goto=...)`` while tool calls remain), so each ``interrupt()`` is the
  only one of its task: answering the e-mail approval never re-runs the payment, and an answer
  addressed by id to the consumed payment approval cannot reach the e-mail approval (LangGraph
  1.2 hands a resume addressed to a task's *first* interrupt id to that task's next interrupt,
  a compatibility rule for older releases). (2) Each effect carries an idempotency key
  (``ctx.effect_once``: the invoice number, the message id), as a payment provider's
  ``Idempotency-Key`` header does, so a crash replay or a racing worker resuming the same
  approval fires nothing new.

An answer is an Agent Inbox response: ``[{"type": "accept"}]`` (a list, as the inbox sends it),
``{"type": "accept"}``, or the bare type ``"accept"``/``"ignore"``; anything else is refused with
``ValueError``, as the original refuses an unknown response type.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, AnyMessage, ToolCall, ToolMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Command, RetryPolicy, interrupt

from chaos import WorkloadContext
from chaos.workloads.langgraph import LangGraphWorkload

INVOICE = "INV-1042"
EMAIL = {
    "id": "msg-7781",
    "author": "billing@acme.example",
    "to": "me@example.com",
    "subject": "Invoice INV-1042 overdue",
    "body": "Hi, invoice INV-1042 (1,200 EUR) is now overdue. Could you settle it and confirm by e-mail?",
}
REPLY_ID = "reply-msg-7781"
GATED = ("send_payment", "send_email")  # the tools a human must approve


class State(MessagesState, total=False):
    email_input: dict
    classification: str


def _script() -> list[AIMessage]:
    """The fake model's replies, one per ``llm_call`` turn: two tool calls in parallel, then done."""
    return [
        AIMessage(
            content="",
            tool_calls=[
                {"name": "send_payment", "args": {"invoice": INVOICE, "amount_eur": 1200, "to": "ACME GmbH"}, "id": "call_pay"},
                {
                    "name": "send_email",
                    "args": {"to": EMAIL["author"], "subject": f"Re: {EMAIL['subject']}", "body": "Paid today. Best regards."},
                    "id": "call_mail",
                },
            ],
        ),
        AIMessage(content="Invoice paid and the customer told."),
    ]


def _answer(raw: Any) -> dict:
    """An Agent Inbox response as a dict ``{"type": ..., "args": ...}``; ValueError if it is not one."""
    if isinstance(raw, list) and len(raw) == 1:
        raw = raw[0]
    if isinstance(raw, str) and raw in ("accept", "ignore"):
        raw = {"type": raw}
    if isinstance(raw, dict) and raw.get("type") in ("accept", "ignore", "edit", "response"):
        return raw
    raise ValueError(f"Invalid response: {raw!r}")


def _request(call: ToolCall) -> list[dict]:
    """The Agent Inbox interrupt payload for one tool call."""
    return [
        {
            "action_request": {"action": call["name"], "args": call["args"]},
            "config": {"allow_ignore": True, "allow_respond": True, "allow_edit": True, "allow_accept": True},
            "description": f"From {EMAIL['author']}: {EMAIL['subject']}\n\nApprove {call['name']}?",
        }
    ]


def _tool_calls(message: AnyMessage) -> list[ToolCall]:
    return list(message.tool_calls) if isinstance(message, AIMessage) else []


def _pending_calls(messages: list[AnyMessage]) -> tuple[list[ToolCall], int]:
    """The tool calls of the newest model reply, and how many of them are answered already."""
    for i in range(len(messages) - 1, -1, -1):
        calls = _tool_calls(messages[i])
        if calls:
            return calls, sum(1 for m in messages[i + 1 :] if isinstance(m, ToolMessage))
    return [], 0


class AlreadyClaimed(RuntimeError):
    """The claim row of this effect is taken: another worker (or an earlier attempt) holds it."""


def claim_row(ctx: WorkloadContext) -> Callable[[str, Any], None]:
    """A team's own guard: before an effect, a unique ``INSERT`` of its key into a ``claims`` table
    of a database every worker of the thread shares (here the trial's scratch folder); a second
    claim of the same key raises ``AlreadyClaimed`` before the effect, so only one worker fires."""
    import sqlite3

    folder = ctx.scratch if ctx.scratch is not None else Path(tempfile.mkdtemp(prefix="claims-"))
    path = str(folder / "claims.sqlite")

    def fire(task: str, key: Any) -> None:
        conn = sqlite3.connect(path, timeout=60)
        try:
            conn.execute("CREATE TABLE IF NOT EXISTS claims (thread TEXT, effect TEXT, key TEXT, PRIMARY KEY (thread, effect, key))")
            with conn:
                conn.execute("INSERT INTO claims VALUES (?, ?, ?)", (ctx.thread_id, task, str(key)))
        except sqlite3.IntegrityError:
            raise AlreadyClaimed(f"{task} {key} is already claimed on thread {ctx.thread_id}") from None
        finally:
            conn.close()
        ctx.effect(task, key)

    return fire


def claim_guard(ctx: Any) -> Any:
    """``target.guard`` for the claim row: it wraps no saver; its refusal is ``AlreadyClaimed``."""
    from chaos.workloads import Guard

    return Guard(name="claim_row", refuses=(AlreadyClaimed,))


def build(ctx: WorkloadContext, *, fixed: bool, fire: Callable[[str, Any], None] | None = None) -> Any:
    """Compile the assistant with ``ctx.checkpointer``; ``fixed`` picks the variant; ``fire`` (the
    fixed graph with another guard than idempotency keys) fires each effect."""
    fire = fire or (ctx.effect_once if fixed else ctx.effect)

    def send_payment(invoice: str, amount_eur: int, to: str) -> str:
        fire("send_payment", invoice)
        return f"paid {amount_eur} EUR to {to} for {invoice}"

    def send_email(to: str, subject: str, body: str) -> str:
        fire("send_email", REPLY_ID)
        return f"sent {subject!r} to {to}"

    tools: dict[str, Callable[..., str]] = {"send_payment": send_payment, "send_email": send_email}

    def triage_router(state: State) -> Command[Literal["response_agent", "__end__"]]:
        email = state["email_input"]
        verdict = FakeMessagesListChatModel(responses=[AIMessage(content="respond")]).invoke(
            f"Classify: respond, notify or ignore?\n{email['subject']}\n{email['body']}"
        )
        if verdict.content == "respond":
            note = {"role": "user", "content": f"Respond to the email from {email['author']}: {email['subject']}\n{email['body']}"}
            return Command(goto="response_agent", update={"classification": "respond", "messages": [note]})
        return Command(goto="__end__", update={"classification": str(verdict.content)})

    def llm_call(state: State) -> dict:
        turn = sum(1 for m in state["messages"] if isinstance(m, AIMessage))
        script = _script()
        model = FakeMessagesListChatModel(responses=[script[min(turn, len(script) - 1)]])
        return {"messages": [model.invoke(state["messages"])]}

    def should_continue(state: State) -> Literal["interrupt_handler", "__end__"]:
        return "interrupt_handler" if _tool_calls(state["messages"][-1]) else "__end__"

    def run_tool(call: ToolCall, answer: dict) -> ToolMessage:
        if answer["type"] == "ignore":
            return ToolMessage(content=f"{call['name']} declined by the user", tool_call_id=call["id"])
        if answer["type"] == "response":
            return ToolMessage(content=f"user feedback: {answer.get('args')}", tool_call_id=call["id"])
        args = {**call["args"], **(answer.get("args") or {})} if answer["type"] == "edit" else call["args"]
        return ToolMessage(content=tools[call["name"]](**args), tool_call_id=call["id"])

    def interrupt_handler(state: State) -> dict:
        # stock, as in the original: ask, then act, one tool call after another in one node
        result = []
        for call in _tool_calls(state["messages"][-1]):
            answer = _answer(interrupt(_request(call))) if call["name"] in GATED else {"type": "accept"}
            result.append(run_tool(call, answer))
        return {"messages": result}

    def interrupt_handler_fixed(state: State) -> Command[Literal["interrupt_handler", "llm_call"]]:
        # fixed: one approval per pass of the node, so each interrupt() is the only one of its task
        # (answering it never re-runs an earlier approval's effect, and an answer addressed to it
        # by id cannot reach the next one); the effects carry idempotency keys (``fire``)
        calls, done = _pending_calls(state["messages"])
        call = calls[done]
        answer = _answer(interrupt(_request(call))) if call["name"] in GATED else {"type": "accept"}
        more = done + 1 < len(calls)
        return Command(goto="interrupt_handler" if more else "llm_call", update={"messages": [run_tool(call, answer)]})

    agent = StateGraph(State)
    agent.add_node("llm_call", llm_call, retry_policy=RetryPolicy(max_attempts=3))
    agent.add_node("interrupt_handler", interrupt_handler_fixed if fixed else interrupt_handler)
    agent.add_edge(START, "llm_call")
    agent.add_conditional_edges("llm_call", should_continue, ["interrupt_handler", END])
    if not fixed:
        agent.add_edge("interrupt_handler", "llm_call")
    response_agent = agent.compile()  # no checkpointer of its own: it inherits the parent's

    root = StateGraph(State)
    root.add_node("triage_router", triage_router)
    root.add_node("response_agent", response_agent)
    root.add_edge(START, "triage_router")
    return root.compile(checkpointer=ctx.checkpointer)


def _workload(ctx: WorkloadContext, *, fixed: bool, fire: Callable[[str, Any], None] | None = None) -> LangGraphWorkload:
    return LangGraphWorkload(
        graph=build(ctx, fixed=fixed, fire=fire), input={"email_input": dict(EMAIL), "messages": []}, gated_task="send_payment"
    )


def stock(ctx: WorkloadContext) -> LangGraphWorkload:
    """The assistant as written: effects fire inside the node that asks for their approval."""
    return _workload(ctx, fixed=False)


def fixed(ctx: WorkloadContext) -> LangGraphWorkload:
    """The assistant fixed: one approval per task, and every effect with an idempotency key."""
    return _workload(ctx, fixed=True)


def unkeyed(ctx: WorkloadContext) -> LangGraphWorkload:
    """The fixed graph (one approval per task) before any guard: effects fire with no key."""
    return _workload(ctx, fixed=True, fire=ctx.effect)


def claimed(ctx: WorkloadContext) -> LangGraphWorkload:
    """The fixed graph guarded by the team's own claim row (``claim_row``) instead of idempotency keys."""
    return _workload(ctx, fixed=True, fire=claim_row(ctx))

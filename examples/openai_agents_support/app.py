"""The support agent of the Agents SDK's human-in-the-loop guide, as a team would test it with chaos.

Written from the SDK's docs (docs/human_in_the_loop.md, "Marking tools that need approval"): a
"Support agent" with ``cancel_order`` (``needs_approval=True``) and ``send_email`` (approval decided
per call by ``requires_review``: only a subject about a refund needs a human). No LLM and no
network: the model is the SDK's ``ScriptedModel`` (``chaos.workloads.scripted_model``), whose next
step is read from the conversation, so a state restored in a fresh process gets the same answer.

The ticket asks to cancel order 101: the model calls ``cancel_order(order_id=101)``; the run stops
for the approval (chaos saves ``result.to_state().to_json()``, restores it with
``RunState.from_json`` in a fresh process, approves, ``Runner.run``); then ``send_email`` (subject
"Order 101 cancelled": no review), then the final answer.

* ``stock``: as the docs write it: the tools act with plain calls.
* ``fixed``: the two fixes the SDK's docs leave to the app. A claim before the saved state is
  restored (consume-once: an exclusive lock in the app's shared folder, held by the process that
  runs the approval and released by the kernel if it dies, with the saved state read again under
  it), and idempotent tools (the order id and the e-mail's subject as idempotency keys, through
  ``ctx.effect_once``, as a provider's ``Idempotency-Key`` would).
"""

from __future__ import annotations

import fcntl
import os
from typing import Any

from agents import Agent, function_tool

from chaos.workloads import Call, OpenAIAgentsWorkload, scripted_model

TICKET = "Ticket 7: please cancel my order 101 and let me know."
PLAN = [
    Call("cancel_order", {"order_id": 101}, "call_cancel_101"),
    Call("send_email", {"subject": "Order 101 cancelled", "body": "Your order 101 is cancelled."}, "call_email_101"),
]
FINAL = "Order 101 is cancelled and the customer was told."


async def requires_review(_ctx: Any, params: dict[str, Any], _call_id: str) -> bool:
    return "refund" in str(params.get("subject", "")).lower()


def support_agent(effect: Any) -> Agent:
    @function_tool(needs_approval=True)
    async def cancel_order(order_id: int) -> str:
        effect("cancel_order", order_id)  # the irreversible write (chaos counts it)
        return f"Cancelled order {order_id}"

    @function_tool(needs_approval=requires_review)
    async def send_email(subject: str, body: str) -> str:
        effect("send_email", subject)
        return f"Sent '{subject}'"

    return Agent(
        name="Support agent",
        instructions="Handle tickets and ask for approval when needed.",
        tools=[cancel_order, send_email],
        model=scripted_model(PLAN, FINAL),
    )


def stock(ctx: Any) -> OpenAIAgentsWorkload:
    return OpenAIAgentsWorkload(agent=support_agent(ctx.effect), input=TICKET, gated_task="cancel_order")


_HELD: list[int] = []  # the claim's descriptors, held for the life of the process that runs the approval


def claim_in(folder: str) -> Any:
    """A claim on a thread's pending approval: an exclusive, non-blocking lock on a file in ``folder``
    (one the app's workers share). The kernel drops it when its holder exits or is killed, so a
    worker that died mid-approval does not block the one that recovers it."""

    def claim(thread_id: str, saved: dict) -> bool:
        fd = os.open(os.path.join(folder, f"approval-{thread_id}.lock"), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        _HELD.append(fd)
        return True

    return claim


def fixed(ctx: Any) -> OpenAIAgentsWorkload:
    folder = str(ctx.scratch or ".")
    return OpenAIAgentsWorkload(agent=support_agent(ctx.effect_once), input=TICKET, gated_task="cancel_order", claim=claim_in(folder))

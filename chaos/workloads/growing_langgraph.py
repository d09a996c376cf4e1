"""A LangGraph workload whose state grows with every step (checkpoint growth, issue 26 item 4).

``growing_messages``: ``s1 -> s2 -> ... -> sN``; each step appends one message of
``message_bytes`` characters to ``messages`` (a list reduced by ``operator.add``, as a chat
agent's history is) and fires one effect. LangGraph stores the whole list in every checkpoint
that changes it, so each checkpoint is bigger than the last by about one message and the thread's
total grows with the square of its steps: a bound on the bytes per checkpoint is crossed for real.
Params: ``steps`` (default 6), ``message_bytes`` (default 4096); the
text of each message is seeded by its step, so every run stores the same bytes.
"""

from __future__ import annotations

import operator
import random
import string
from typing import TYPE_CHECKING, Annotated, TypedDict

from chaos.workloads import WorkloadContext

if TYPE_CHECKING:
    from chaos.workloads.langgraph import LangGraphWorkload


class GrowingState(TypedDict, total=False):
    messages: Annotated[list, operator.add]


def _text(step: int, size: int) -> str:
    """``size`` characters of text that compresses as prose does, not as one repeated letter
    (Postgres compresses what it stores: a run of one letter would hide the growth)."""
    rng = random.Random(step)
    return "".join(rng.choices(string.ascii_letters + "      ", k=size))


def growing_messages(ctx: WorkloadContext) -> LangGraphWorkload:
    from langgraph.graph import END, START, StateGraph

    from chaos.workloads.langgraph import PINNED, LangGraphWorkload

    steps = int(ctx.params.get("steps", 6))
    size = int(ctx.params.get("message_bytes", 4096))
    if steps < 1 or size < 0:
        raise ValueError("growing_messages: steps must be at least 1 and message_bytes at least 0")

    def make(i: int):
        def node(state: GrowingState) -> dict:
            ctx.effect(f"s{i}")
            return {"messages": [{"role": "assistant", "step": i, "content": _text(i, size)}]}

        return node

    g = StateGraph(GrowingState)
    names = [f"s{i}" for i in range(1, steps + 1)]
    for i, name in enumerate(names, 1):
        g.add_node(name, make(i))
    for a, b in zip([START, *names], [*names, END], strict=True):
        g.add_edge(a, b)
    return LangGraphWorkload(graph=g.compile(checkpointer=ctx.checkpointer), input={"messages": []}, max_concurrency=PINNED)


GROWING = {"growing_messages": growing_messages}

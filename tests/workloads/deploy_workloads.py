"""A team's own workflow in two releases: the user workloads of the deploy-between-pause-and-resume tests.

``invoice_v1`` / ``invoice_v2``: two factories, as a team keeps two releases apart. prepare ->
approve (``interrupt()``, then ``send_invoice``) -> archive. v2 adds ``currency`` to the state:
``prepare`` sets it and ``approve`` sends the invoice in it. A thread paused under v1 resumes
under v2 with no currency: the invoice goes out with ``None``.
``invoice``: the same pair as one factory reading ``ctx.version``.
``invoice_v2_broken``: a v2 whose factory raises while being built (a bad deploy): refused before
any trial, naming the field.
"""

from __future__ import annotations

import operator
from typing import Annotated, TypedDict


class Invoice(TypedDict, total=False):
    log: Annotated[list, operator.add]
    currency: str


def _build(ctx, *, v2: bool):
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    def prepare(state: Invoice) -> dict:
        ctx.effect("prepare")
        return {"log": ["prepare"], **({"currency": "EUR"} if v2 else {})}

    def approve(state: Invoice) -> dict:
        interrupt({"question": "send the invoice?"})
        ctx.effect("send_invoice", state.get("currency") if v2 else "EUR")
        return {"log": ["approve"]}

    def archive(state: Invoice) -> dict:
        ctx.effect("archive")
        return {"log": ["archive"]}

    g = StateGraph(Invoice)
    for name, fn in (("prepare", prepare), ("approve", approve), ("archive", archive)):
        g.add_node(name, fn)
    g.add_edge(START, "prepare")
    g.add_edge("prepare", "approve")
    g.add_edge("approve", "archive")
    g.add_edge("archive", END)
    return g.compile(checkpointer=ctx.checkpointer)


def invoice_v1(ctx):
    return _build(ctx, v2=False)


def invoice_v2(ctx):
    return _build(ctx, v2=True)


def invoice(ctx):
    return _build(ctx, v2=ctx.version == "v2")


def invoice_v2_broken(ctx):
    raise RuntimeError("v2 needs the BILLING_URL setting")

"""The AutoGen worked example with the app's own answer function (``answers: workload``): the
customer approves what the refunder asks to approve."""

from __future__ import annotations

from typing import Any

from examples.autogen_refund import app as refund


def refund_answered(ctx: Any) -> Any:
    w = refund.stock(ctx)
    w.answer = lambda question: "approve" if "approve" in str(question) else "deny"
    return w

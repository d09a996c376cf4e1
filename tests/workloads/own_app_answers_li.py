"""The LlamaIndex worked example with the app's own answer function (``answers: workload``): the
editor revises the first draft and approves the second."""

from __future__ import annotations

from typing import Any

from examples.llamaindex_review import app as review


def review_answered(ctx: Any) -> Any:
    w = review.stock(ctx)
    w.answer = lambda question: "revise" if "draft 1" in str(question.get("prefix")) else "approve"
    return w

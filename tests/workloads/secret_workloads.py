"""A user's LangGraph workload that carries secrets everywhere a real one can leak them.

The masking story (``tests/test_masking.py``) names these factories; ``ctx.params["forms"]`` holds
the corpus of secret forms (``tests/kits/secret_forms.py``), one string each.

``leaky``: a -> b -> c as a team writes it carelessly. ``a`` logs every form to the racer's
stdout and stderr (as a debug print of a config would) and fires one effect per single-line form,
named after it and carrying it as its value, and one named like an HTML tag; ``b`` and ``c`` fire plain effects, so the kill sweep
has an ordinary graph to judge; ``c`` also fires ``reset_password`` and ``create_session``,
effects whose names sound secret and are not (their counts must stay numbers).
``raising``: the same, but ``b``, when a resume runs it after a crash, raises an error whose message
quotes every form (a client library that puts the request, headers and all, in its exception): the
user's error, an app error (an uninterrupted run passes, so the preflight lets the cell run).
"""

from __future__ import annotations

import operator
import sys
from typing import Annotated, TypedDict


class S(TypedDict, total=False):
    log: Annotated[list, operator.add]


def _graph(ctx, *, raise_in_b: bool):
    from langgraph.graph import END, START, StateGraph

    forms = [str(f) for f in ctx.params.get("forms", [])]

    def a(state):
        for form in forms:
            print(f"debug: {form}", flush=True)
            print(f"warning: {form}", file=sys.stderr, flush=True)
        for i, form in enumerate(f for f in forms if "\n" not in f):
            ctx.effect(f"notify {i} {form}", form)
        ctx.effect("a")
        ctx.effect("<img src=x onerror=alert(2)>")  # a name a report must show as text, never as HTML
        return {"log": ["a"]}

    def b(state):
        if raise_in_b and ctx.racer_id == "resume":
            raise RuntimeError("request failed: " + " | ".join(forms))
        ctx.effect("b")
        return {"log": ["b"]}

    def c(state):
        ctx.effect("c")
        ctx.effect("reset_password")  # effects named like secrets: names, never secrets; counted as any
        ctx.effect("create_session")
        return {"log": ["c"]}

    g = StateGraph(S)
    for name, fn in (("a", a), ("b", b), ("c", c)):
        g.add_node(name, fn)
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    g.add_edge("c", END)
    return g.compile(checkpointer=ctx.checkpointer)


def leaky(ctx):
    return _graph(ctx, raise_in_b=False)


def raising(ctx):
    return _graph(ctx, raise_in_b=True)

"""CrewAI's router example, ported: the ``RouterFlow`` of CrewAI's Flows docs ("Conditional logic:
router", https://docs.crewai.com/concepts/flows), with a fake coin (the docs draw
``random.choice``; here the flag is ``ctx.params["success"]``, default True) and an effect in each
branch.

``start_method`` sets the flag, the ``@router`` ``second_method`` returns "success" or "failed",
``third_method`` listens to "success" and ``fourth_method`` to "failed". The flow finishes in
whichever branch runs: both are ends.

* ``router_default_ends``: the factory a new user writes first, listing ``methods`` in the
  docs' order and leaving ``ends`` out: chaos's default end is the last method, ``fourth_method``,
  but the run finishes in ``third_method``.
* ``router_both_ends``: the same flow with both branches named as its ``ends``.
"""

from __future__ import annotations

from crewai.flow.flow import Flow, FlowState, listen, start
from crewai.flow.flow import router as route

from chaos.workloads.crewai import CrewWorkload

METHODS = ("start_method", "second_method", "third_method", "fourth_method")


class ExampleState(FlowState):
    success_flag: bool = False


def _flow(ctx) -> type:
    class RouterFlow(Flow[ExampleState]):
        @start()
        def start_method(self):
            self.state.success_flag = bool(ctx.params.get("success", True))  # the docs: random.choice([True, False])

        @route(start_method)
        def second_method(self):
            return "success" if self.state.success_flag else "failed"

        @listen("success")
        def third_method(self):
            ctx.effect("third_method")

        @listen("failed")
        def fourth_method(self):
            ctx.effect("fourth_method")

    return RouterFlow


def router_default_ends(ctx) -> CrewWorkload:
    return CrewWorkload(flow_class=_flow(ctx), methods=METHODS)


def router_both_ends(ctx) -> CrewWorkload:
    return CrewWorkload(flow_class=_flow(ctx), methods=METHODS, ends=("third_method", "fourth_method"))

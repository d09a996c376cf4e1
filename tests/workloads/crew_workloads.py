"""CrewAI flows a team would write: the one CrewAI user-workload module of the tests.

``approval_first``: the flow's ``@start`` method is the ``@human_feedback`` pause itself. Its
provider notifies the approver (effect ``notify``), then raises ``HumanFeedbackPending``; the answer
reaches ``pay`` (effect ``pay``, keyed by the answer). Nothing is saved before the pause: no
checkpoint precedes it (a fork has nothing to restore) and a crash before the pending feedback is
saved leaves an approver notified of a run that is gone.
"""

from __future__ import annotations

from typing import Any

from crewai.flow.async_feedback.types import HumanFeedbackPending
from crewai.flow.flow import Flow, FlowState, listen, start
from crewai.flow.human_feedback import human_feedback

from chaos.workloads.crewai import CrewWorkload


class Log(FlowState):
    log: list[str] = []


def approval_first(ctx) -> CrewWorkload:
    class NotifyThenWait:
        def request_feedback(self, context: Any, flow: Any) -> str:
            ctx.effect("notify")
            raise HumanFeedbackPending(context=context)

    class ApprovalFirst(Flow[Log]):
        @start()
        @human_feedback(message="pay invoice INV-7?", provider=NotifyThenWait())
        def ask(self):
            return "INV-7"

        @listen(ask)
        def pay(self, result: Any = None):
            ctx.effect("pay", getattr(result, "feedback", result))
            self.state.log.append("pay")
            return list(self.state.log)

    return CrewWorkload(flow_class=ApprovalFirst, gated_task="pay", pausable=True, methods=("ask", "pay"), pause_method="ask")

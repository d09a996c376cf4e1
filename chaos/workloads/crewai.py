"""Built-in CrewAI Flow workloads: plain methods only (no LLM, no network).

* ``three_step``: @start a -> @listen(a) b -> @listen(b) c, one effect per method.
* ``gate_after_interrupt``: pre -> ask (``@human_feedback`` whose provider raises
  ``HumanFeedbackPending``: CrewAI's async human-in-the-loop pause, persisted as pending feedback)
  | ``from_pending(id).resume(answer)`` -> gate (fires its effect keyed by the feedback) -> end.
* ``invalid_type``: @start a -> @listen bad -> @listen c over ``Flow[CountState]`` (a pydantic
  state with ``count: int``); ``bad`` assigns a string to ``self.state.count`` (a pydantic model
  validates construction, not assignment). The invalid-state kind reads what ``@persist`` saves.

Flow classes are made per racer (closures over the effect hook); the adapter adds persistence
(``@persist`` or a ``CheckpointConfig``) according to the scenario's backend.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from crewai.flow.flow import Flow, FlowState, listen, start


class StepState(FlowState):
    log: list[str] = []


@dataclass
class CrewWorkload:
    """A CrewAI Flow as chaos drives it (a team's factory ``f(ctx) -> CrewWorkload``).

    ``flow_class``: the ``Flow`` subclass (chaos adds ``@persist`` or a ``CheckpointConfig`` by
    backend); ``methods``: its methods in order; ``ends``: the methods that finish the flow (a
    router's several ends, e.g. ``("publish", "archive")``; default: the last of ``methods``):
    CrewAI persists no "finished" mark, so a flow is finished once one of them completed;
    ``pause_method``: the ``@human_feedback`` method a run pauses in (its provider raises
    ``HumanFeedbackPending``); ``answer``: ``answer(context) -> str`` for ``answers: workload``."""

    flow_class: type
    gated_task: str | None = None
    pausable: bool = False
    methods: tuple[str, ...] = ()
    pause_method: str | None = None  # the @human_feedback method a run pauses in
    meta: dict[str, object] = field(default_factory=dict)
    ends: tuple[str, ...] = ()
    answer: Callable[[object], object] | None = None

    @property
    def end_methods(self) -> tuple[str, ...]:
        return self.ends or self.methods[-1:]


@dataclass
class CrewRun:
    """What a team's own resume driver gets (``resume: app:package.module:recover`` calls
    ``recover(ctx, run)`` in the fresh process): the flow id, the flow class as chaos persists it,
    the ``@persist`` persistence (backend ``sqlite``; else None), ``checkpoint(restore_from=None)``
    (a ``CheckpointConfig`` of the checkpoint backends; else None), the latest checkpoint's
    location (or None), the scenario's answer plan (``answers``) and its answer for the review
    pending now (``answer``: None with no plan, or when it is used up; with a plan the driver is
    called again at each pending review the flow reaches). Return what the driver's last ``kickoff``
    / ``resume`` returned (a ``HumanFeedbackPending`` when the flow paused again)."""

    thread_id: str
    flow_class: type
    persistence: Any
    checkpoint: Callable[..., object] | None
    latest_checkpoint: str | None
    answers: list[object] = field(default_factory=list)
    answer: object = None


def three_step(ctx) -> CrewWorkload:
    class ThreeStep(Flow[StepState]):
        @start()
        def a(self):
            ctx.effect("a")
            self.state.log.append("a")

        @listen(a)
        def b(self):
            ctx.effect("b")
            self.state.log.append("b")

        @listen(b)
        def c(self):
            ctx.effect("c")
            self.state.log.append("c")
            return list(self.state.log)

    return CrewWorkload(flow_class=ThreeStep, methods=("a", "b", "c"))


def gate_after_interrupt(ctx) -> CrewWorkload:
    from crewai.flow.async_feedback.types import HumanFeedbackPending
    from crewai.flow.human_feedback import human_feedback

    class PendingProvider:
        """Asks nobody now: the flow pauses and its pending feedback is persisted."""

        def request_feedback(self, context: object, flow: object) -> str:
            raise HumanFeedbackPending(context=context)

    class GateAfterInterrupt(Flow[StepState]):
        @start()
        def pre(self):
            ctx.effect("pre")
            self.state.log.append("pre")

        @listen(pre)
        @human_feedback(message="approve?", provider=PendingProvider())
        def ask(self):
            return "please approve"

        @listen(ask)
        def gate(self, result: object = None):
            answer = getattr(result, "feedback", result)
            ctx.effect("gate", answer)
            self.state.log.append("gate")

        @listen(gate)
        def end(self):
            ctx.effect("end")
            self.state.log.append("end")
            return list(self.state.log)

    return CrewWorkload(
        flow_class=GateAfterInterrupt, gated_task="gate", pausable=True, methods=("pre", "ask", "gate", "end"), pause_method="ask"
    )


class CountState(FlowState):
    log: list[str] = []
    count: int = 0


INVALID_COUNT = "not-a-number"


def invalid_type(ctx) -> CrewWorkload:
    class InvalidType(Flow[CountState]):
        @start()
        def a(self):
            ctx.effect("a")
            self.state.log.append("a")
            self.state.count = 1

        @listen(a)
        def bad(self):
            ctx.effect("bad")
            self.state.log.append("bad")
            self.state.count = INVALID_COUNT  # the schema-breaking write under test

        @listen(bad)
        def c(self):
            ctx.effect("c")
            self.state.log.append("c")
            return list(self.state.log)

    return CrewWorkload(
        flow_class=InvalidType,
        methods=("a", "bad", "c"),
        meta={"invalid": {"task": "bad", "field": "count", "value": INVALID_COUNT}},
    )


BUILTIN = {"three_step": three_step, "gate_after_interrupt": gate_after_interrupt, "invalid_type": invalid_type}

"""Which pause a race or a stray answer aims at, and the answer it sends there.

Why: a race or a stray resume used to answer the first pause with the plan's first value, as one
plain value. A validation loop whose first planned answer re-asks by design never reaches the
gated effect that way, and two parallel interrupts refuse a plain value (LangGraph asks for the
interrupt id). A kind aims instead at the n-th pause (``at_pause``: the n-th time the run stops),
answering the pauses before it by the plan, and sends the plan's n-th answer there; when the
pause has several interrupts pending at once, the answer is a map by interrupt id (each gets the
same value), as a client that read the pause would send it.

What it promises:

* ``AimOptions`` (``at_pause``), the base of the options of the kinds that aim (``race``,
  ``stray_resume``), so the field is declared once.
* ``aimed_value(scenario)``: the answer sent at the aimed pause (the plan's n-th value, else the
  command value).
* ``approach(scenario)``: the actions after ``run`` that answer the pauses before the aimed one,
  each pause whole: with several interrupts pending, every one is answered by its id in one call
  (``by_id``: the adapter reads the ids when it answers), as a client would. Where the adapter
  knows each interrupt's place in the plan (LangGraph: the baseline's own count, one answer per
  interrupt the thread raised), each gets the plan's answer at its place (``plan``), and the
  outcome says what it answered (``answered``).
* ``aimed_at(scenario, approached)``: the answer sent at the aimed pause once the run is parked
  there: the plan's answer after every interrupt the approach answered (two parallel bookings at
  pause 1 take two of the plan's answers), else ``aimed_value``.
* ``answer_map(ids, value)``: the answer to a pause with several interrupts, by id; ``None`` when
  the pause has one (then a plain value goes, as before).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import Field

from chaos.kinds.base import KindOptions
from chaos.racer.protocol import ActionSpec
from chaos.scenario.model import Scenario


class AimOptions(KindOptions):
    """The pause a kind's answer aims at."""

    at_pause: int = Field(
        1,
        ge=1,
        le=8,
        description="the pause (the n-th time the run stops) the answers aim at: the pauses before it are answered by the "
        "plan (answers:, else the command value), and the plan's n-th answer is sent there",
    )


def aimed_value(s: Scenario) -> object:
    """The answer sent at the aimed pause: the plan's n-th value when the plan has one, else the command value."""
    n = AimOptions.of(s).at_pause
    if isinstance(s.answers, list) and len(s.answers) >= n:
        return s.answers[n - 1]
    return s.resume_value


def approach(s: Scenario) -> list[ActionSpec]:
    """The answers to the pauses before the aimed one, each only if the run stopped again."""
    n = AimOptions.of(s).at_pause
    plan = s.answers if isinstance(s.answers, list) else []
    return [
        {
            "op": "resume",
            "form": "command",
            "value": plan[i] if i < len(plan) else s.resume_value,
            "plan": plan,
            "if": "interrupted",
            "by_id": True,  # a pause of parallel interrupts is answered whole, each by its id
            "label": f"approach{i + 1}",
        }
        for i in range(n - 1)
    ]


def aimed_at(s: Scenario, approached: Sequence[Mapping[str, object]]) -> object:
    """The answer at the aimed pause, given the approach's outcomes: the plan's answer after every
    interrupt they answered (``answered``; one per outcome that does not say), else the command value."""
    if not approached:
        return aimed_value(s)
    done = sum(len(a) if isinstance(a := o.get("answered"), list) else 1 for o in approached)
    if isinstance(s.answers, list) and len(s.answers) > done:
        return s.answers[done]
    return s.resume_value


def answer_map(ids: Sequence[object] | None, value: object) -> dict[str, object] | None:
    """The answer to a pause with several interrupts pending at once: ``{id: value}`` for each;
    ``None`` for a pause with one (or none with an id): a plain value is sent."""
    distinct = sorted({str(i) for i in ids or [] if i})
    return {i: value for i in distinct} if len(distinct) > 1 else None

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
  each pause whole: with several interrupts pending, every one gets the plan's answer to that
  pause by its id (``by_id``: the adapter reads the ids when it answers), as a client would.
* ``answer_map(ids, value)``: the answer to a pause with several interrupts, by id; ``None`` when
  the pause has one (then a plain value goes, as before).
"""

from __future__ import annotations

from collections.abc import Sequence

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
            "if": "interrupted",
            "by_id": True,  # a pause of parallel interrupts is answered whole, each by its id
            "label": f"approach{i + 1}",
        }
        for i in range(n - 1)
    ]


def answer_map(ids: Sequence[object] | None, value: object) -> dict[str, object] | None:
    """The answer to a pause with several interrupts pending at once: ``{id: value}`` for each;
    ``None`` for a pause with one (or none with an id): a plain value is sent."""
    distinct = sorted({str(i) for i in ids or [] if i})
    return {i: value for i in distinct} if len(distinct) > 1 else None

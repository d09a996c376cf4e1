"""The crash-free baseline of a cell: what the workload fires when nothing goes wrong.

Why: a verdict about a crash or a race must be judged against what the workflow does without one.
An effect an uninterrupted run already fires twice (parallel tool calls whose second
``interrupt()`` re-runs the node from its top, say) is the workflow's own duplicate: it needs no
crash and no race, and blaming it on one misleads the team that reads the report.

What it promises:

* ``baseline_actions(cell)``: the workload's whole uninterrupted life: run, and answer each
  interrupt when the scenario resumes with a command (the preflight run uses the same).
* ``Baseline`` values (``baseline_of``): the effect keys of an uninterrupted run, with how many
  rows each, and the keys it fires more than once by itself (``workflow_duplicates``).
* ``with_baseline(ctx, cell, trials)``: for kinds whose trials are repeats (``race``), one racer
  runs the workload uninterrupted (no fault, its own thread) once the first trial has run, and
  every trial record carries its effect counts in ``observations["baseline_effects"]`` (or
  ``baseline_error`` when that run did not finish; ``baseline_stopped_at`` when it stopped at a
  pause nobody answered, ``stopped_at``), so a checker, a pure function of the records,
  reads the baseline from any trial. A sweep's dry run is its baseline (``chaos.kinds.sweep``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, NotRequired, TypedDict

from chaos.racer.ledger_rows import declared
from chaos.racer.protocol import ActionSpec
from chaos.records import Baseline, TrialRecord
from chaos.running.trial import RunContext, TrialRun
from chaos.scenario.model import Cell, Scenario

MAX_ANSWERS = 8  # interrupts answered in a baseline run (an approval loop stops at this many)


def answer_action(s: Scenario) -> ActionSpec:
    """Answer the pending interrupt: with the scenario's answer plan (every interrupt in turn, until
    the run completes) when it has one, else once with resume's command value. Either answers only
    a pause the thread durably waits at, as a human who was asked (``asked_only``; a plan does by
    itself): never an ``interrupt()`` not yet asked, and each of parallel interrupts by its id."""
    if s.answers is not None:
        return {"op": "resume", "form": "command", "value": s.first_answer, "answers": s.answers}
    return {"op": "resume", "form": "command", "value": s.resume_value, "asked_only": True}


def approvals_plan(s: Scenario) -> ActionSpec:
    """What follows a recovery of form ``none``, ``input`` or ``app`` on a framework with static
    breakpoints: the scenario's ``answers:`` plan when it has one, else ``"breakpoints"``: approve
    every static breakpoint the run stops at (``invoke(None)``) and leave an ``interrupt()`` waiting."""
    return {"answers": s.answers if s.answers is not None else "breakpoints"}


def approve_action(s: Scenario) -> ActionSpec:
    """Approve the pauses a run of a scenario that does not resume with a command stops at (``approvals_plan``)."""
    return {"op": "resume", "form": "command", **approvals_plan(s)}


def baseline_actions(cell: Cell) -> list[ActionSpec]:
    """Run, then answer its interrupts when the scenario resumes with a command: the answer plan
    answers each in turn until the run completes; one command value answers each (up to
    ``MAX_ANSWERS``); with the team's own driver (``resume: app:``) and a plan, the driver answers
    each by the plan, as a sweep's dry run does. With another resume form, static breakpoints (LangGraph's) are approved
    (``approve_action``): their approval needs no value."""
    from chaos.kinds.base import approves_breakpoints

    s = cell.scenario
    acts: list[ActionSpec] = [{"op": "run"}]
    if s.resume_form == "command":
        if s.answers is not None:
            acts.append({**answer_action(s), "if": "interrupted"})
        else:
            acts += [{**answer_action(s), "if": "interrupted"} for _ in range(MAX_ANSWERS)]
    elif s.resume_form == "app" and isinstance(s.answers, list):  # the team's driver answers each pause by the plan
        acts.append({"op": "resume", "form": "app", "recover": s.recover_ref or "", "plan": s.answers, "if": "interrupted"})
    elif approves_breakpoints(s):
        acts.append({**approve_action(s), "if": "interrupted"})
    return acts


def effect_counts(rows: Iterable[dict[str, Any]]) -> dict[str, int]:
    """Rows per effect key (the task, or ``task:value`` for a gated effect)."""
    return dict(Counter(row["effect_key"] for row in rows))


def declared_payloads(rows: Iterable[dict[str, Any]]) -> dict[str, list[str | None]]:
    """The payloads (values) of each declared identity (``task@key``) among ``rows``, in ledger
    order: what an uninterrupted run gave the effects whose identity the team chose."""
    out: dict[str, list[str | None]] = {}
    for row in rows:
        if declared(row) and row["value"] not in out.setdefault(row["effect_key"], []):
            out[row["effect_key"]].append(row["value"])
    return out


def baseline_of(trial_id: str, effects: dict[str, int], payloads: dict[str, list[str | None]] | None = None) -> Baseline:
    return Baseline(
        trial_id=trial_id, effects=effects, workflow_duplicates={k: n for k, n in effects.items() if n > 1}, payloads=payloads or {}
    )


def stopped_at(outcomes: Sequence[Mapping[str, Any]] | None, *, driver: bool = False) -> str | None:
    """The pause an uninterrupted run stopped at unanswered, else None: its last outcome
    interrupted, and nothing after the run (under ``resume: app:`` without a plan the team's driver
    answers only in a recovery or a race). With the team's driver (``driver``), an approval of
    static breakpoints that found none (``answered: []``, LangGraph's) answered nothing either: it
    leaves the ``interrupt()`` waiting for the driver. Such a baseline says nothing of what the run
    fires past its pause."""
    outs = [o for o in outcomes or [] if isinstance(o, Mapping)]
    if not outs or outs[-1].get("status") != "interrupted":
        return None
    if any((o.get("action") or {}).get("op", "run") != "run" and not (driver and o.get("answered") == []) for o in outs):
        return None  # something was answered (or the team's driver ran): the run went past a pause
    asked = next((o.get("interrupts") for o in reversed(outs) if o.get("interrupts")), None)
    return "; ".join(str(q) for q in asked or []) or "a pause"


class BaselineRun(TypedDict):
    """One uninterrupted run of a cell's workload: its trial id, and the effects it fired or why it
    failed; ``stopped_at``: the pause it stopped at unanswered (``stopped_at``), if it did."""

    trial_id: str
    effects: NotRequired[dict[str, int]]
    error: NotRequired[str]
    stopped_at: NotRequired[str]


def run_baseline(ctx: RunContext, cell: Cell) -> BaselineRun:
    """One uninterrupted run of the cell's workload: ``{"trial_id", "effects"}`` or ``{"trial_id", "error"}``."""
    trial_id = f"c{cell.index:03d}-base"
    run = TrialRun(ctx, cell, trial_id)
    try:
        (h,) = run.start([run.spec("base", actions=baseline_actions(cell))])
        hung = run.wait_exit([h])
        out = run.collect(h, "base", "run", hung=bool(hung))
        outcomes = out.outcomes
        err = next((o.get("error") for o in outcomes if o.get("status") == "error"), None)
        if out.status != "ok" or err:
            why = f"{err.get('type')}: {err.get('message')}" if err else f"{out.status}: {run.history[-1].detail}"
            return {"trial_id": trial_id, "error": why[:500]}
        done: BaselineRun = {"trial_id": trial_id, "effects": effect_counts(ctx.read_ledger(trial_id))}
        if (pause := stopped_at(outcomes, driver=cell.scenario.resume_form == "app")) is not None:
            done["stopped_at"] = pause
        return done
    finally:
        run.cleanup()


def with_baseline(ctx: RunContext, cell: Cell, trials: Iterator[TrialRecord]) -> Iterator[TrialRecord]:
    """``trials``, each carrying the cell's baseline (run once, when the first trial has run)."""
    base: BaselineRun | None = None
    while True:
        if base is None:
            # pull the next trial lazily: a resumed run whose trials are all journaled runs no baseline
            try:
                first = next(trials)
            except StopIteration:
                return
            base = run_baseline(ctx, cell)
            rec = first
        else:
            try:
                rec = next(trials)
            except StopIteration:
                return
        if "effects" in base:
            rec.observations["baseline_effects"] = base["effects"]
            if "stopped_at" in base:
                rec.observations["baseline_stopped_at"] = base["stopped_at"]
        else:
            rec.observations["baseline_error"] = base["error"]
        rec.observations["baseline_trial"] = base["trial_id"]
        yield rec

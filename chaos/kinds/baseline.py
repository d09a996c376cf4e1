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
* ``run_uninterrupted(run, racer_id, actions)``: the racers of one uninterrupted life. On a
  framework that ``restores`` a paused run (``TargetInfo.restores``) the run pauses, its process
  ends, and each answer is given by a fresh racer that restores the run from the store, as a
  restarted app does (the process that paused holds live objects a restarted app has not: an
  AutoGen team's replayed model goes on to its next reply, a restored one starts its replies over
  and asks the same question again). A fresh racer numbers its boundaries on from the racers
  before it (``counts_before``), so a boundary keeps its name whichever process passes it; an
  answer after which the run asks the same question again is ``asked_again``: "the approval was
  answered and the same question came back", unless the run answered in the process that paused
  asks it again too (``asks_again_in_process``, checked only on such a repeat): then it is the
  app's own loop (a validation loop refusing the answer), not the restore's.
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
from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict, cast

from chaos.racer.ledger_rows import declared
from chaos.racer.protocol import ActionOutcome, ActionSpec, RacerResult
from chaos.records import Baseline, RacerOutcome, TrialRecord
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


ASKED_AGAIN = "the approval was answered and the same question came back"


def restarts(cell: Cell) -> bool:
    """Does an uninterrupted run of this cell answer its pauses in fresh processes (``TargetInfo.restores``)?"""
    from chaos.targets import get_target

    return get_target(cell.scenario.target.framework).restores


def counts_before(boundaries: list[str], index: int) -> dict[str, int]:
    """Occurrences per boundary name among ``boundaries[:index]``: what a racer carrying on the life
    there numbers its boundaries on from (``BarrierSpec.counts``), so a boundary keeps its name
    whichever process passes it."""
    return dict(Counter(b.rpartition("#")[0] for b in boundaries[:index]))


@dataclass
class Uninterrupted:
    """The racers of one uninterrupted life, in order (one, or the run and each answer's fresh
    process), the boundaries they passed (``restarted`` names), and ``asked_again``: the pause an
    answer given after a restore left the run waiting at again (None: none)."""

    outs: list[RacerOutcome] = field(default_factory=list)
    boundaries: list[str] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)  # where in ``boundaries`` each racer began
    asked_again: str | None = None
    # pauses an answer was asked again at after a restore AND in the process that paused: the app's
    # own loop (a validation loop refusing the answer), not the restore's doing (``asks_again_in_process``)
    loops: list[str] = field(default_factory=list)

    @property
    def outcomes(self) -> list[ActionOutcome]:
        return [o for out in self.outs for o in out.outcomes]

    def result(self) -> RacerResult:
        """The life as one racer's result: the last racer's, with every racer's outcomes and trace
        (times are one host's monotonic clock)."""
        trace = [t for out in self.outs for t in out.trace]
        return cast(RacerResult, {**self.outs[-1].racer_result, "outcomes": self.outcomes, "trace": trace})


def asked_again_words(pause: str, trial_id: str) -> str:
    """The sentence a verdict says when an answer given after a restore was asked for again."""
    return (
        f"{ASKED_AGAIN}: the uninterrupted run ({trial_id}), paused and restored in a fresh process as a restarted app is, "
        f"was answered and then asked again at the same pause ({pause}): restarted, the app does not get past it with this answer"
    )


def _pause(out: RacerOutcome) -> str | None:
    """The pause a racer's run was left waiting at (its last outcome ``interrupted``), by its interrupts."""
    return outcome_pause(out.last_outcome)


def pause_words(interrupts: Iterable[object] | None) -> str:
    """A pause as a verdict names it: its interrupts, or "a pause" when it carries none."""
    return "; ".join(str(q) for q in interrupts or []) or "a pause"


def outcome_pause(o: Mapping[str, Any] | None) -> str | None:
    """The pause an action left the run waiting at (``interrupted``), by its interrupts; else None."""
    if o is None or o.get("status") != "interrupted":
        return None
    return pause_words(o.get("interrupts"))


def life_phases(cell: Cell, actions: list[ActionSpec]) -> list[list[ActionSpec]]:
    """The actions of each racer of an uninterrupted life: all in one; or, where the framework
    ``restores`` a paused run, the run, then each answer alone (no ``if``: a fresh racer performs it
    only once the racer before ended waiting; an answer ``repeat``-ed is one racer per answer)."""
    if not restarts(cell):
        return [actions]
    # an answer repeated at every later pause (``repeat``) is given once per fresh racer: repeated
    # in the restored process, its second answer would hide a first one the restore lost
    once = [(cast(ActionSpec, {k: v for k, v in a.items() if k not in ("if", "repeat")}), int(a.get("repeat") or 1)) for a in actions[1:]]
    return [actions[:1], *[[a] for a, n in once for _ in range(n)]]


def waiting(out: RacerOutcome) -> bool:
    """Did the racer's run end waiting at a pause (so a fresh racer answers it next)?"""
    return _pause(out) is not None


def run_uninterrupted(
    run: TrialRun, racer_id: str, actions: list[ActionSpec], *, inspect_after: bool = False, measure_store: bool = False
) -> Uninterrupted:
    """One uninterrupted life of the workload: ``actions`` (a run, then its answers, each ``if:
    interrupted``) in one racer; or, on a framework that ``restores`` a paused run, the run in one
    racer and each answer in a fresh one (``<racer_id>-restart<n>``) once the one before ended
    waiting, stopping when the run no longer waits or an answer was asked again (``asked_again``;
    a repeat the process that paused makes too is the app's loop, ``loops``, and the life goes on).
    ``inspect_after``, ``measure_store``: each racer's (``TrialRun.spec``)."""
    phases = life_phases(run.cell, actions)
    life = Uninterrupted()
    for n, acts in enumerate(phases):
        if n and _pause(life.outs[-1]) is None:
            break
        rid = f"{racer_id}-restart{n}" if n else racer_id
        counts = counts_before(life.boundaries, len(life.boundaries))
        (h,) = run.start([run.spec(rid, actions=acts, inspect_after=inspect_after, measure_store=measure_store, counts=counts)])
        hung = run.wait_exit([h])
        out = run.collect(h, rid, "run" if n == 0 else "resume", hung=bool(hung))
        life.outs.append(out)
        life.starts.append(len(life.boundaries))
        life.boundaries += [t["barrier"] for t in out.trace]
        if out.status != "ok":
            break
        before, after, last = _pause(life.outs[-2]) if n else None, _pause(out), out.last_outcome or {}
        if n and after is not None and after == before and (last.get("approvals") or last.get("answered")):
            if asks_again_in_process(run, actions[: n + 1], after):  # the app's own loop: no restore needed
                life.loops.append(after)
                continue
            life.asked_again = after
            break
    return life


def asks_again_in_process(run: TrialRun, actions: list[ActionSpec], pause: str) -> bool:
    """Does the run, answered in the process that paused (one racer performing ``actions``: the run
    and its answers up to the one asked again after a restore), also end asked again at ``pause``?
    Then the repeat is the app's own (a validation loop given an answer it refuses), not the
    restore's. Its own trial (``<trial>-inproc``: its own store, thread and ledger rows), run only
    once a repeat was seen; a racer that fails says no (the restore is not cleared)."""
    check = TrialRun(run.ctx, run.cell, f"{run.trial_id}-inproc")
    try:
        (h,) = check.start([check.spec("inproc", actions=actions)])
        out = check.collect(h, "inproc", "run", hung=bool(check.wait_exit([h])))
        outs = out.outcomes
        if out.status != "ok" or len(outs) != len(actions) or any(o.get("status") == "error" for o in outs):
            return False
        last, prior = outs[-1], outs[-2]
        answered = bool(last.get("approvals") or last.get("answered"))
        return answered and outcome_pause(prior) == pause and outcome_pause(last) == pause
    finally:
        check.cleanup()


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
    return pause_words(asked)


class BaselineRun(TypedDict):
    """One uninterrupted run of a cell's workload: its trial id, and the effects it fired or why it
    failed; ``asked_again``: the pause an answer given after a restore was asked again at;
    ``stopped_at``: the pause it stopped at unanswered (``stopped_at``), if it did."""

    trial_id: str
    effects: NotRequired[dict[str, int]]
    error: NotRequired[str]
    asked_again: NotRequired[str]
    stopped_at: NotRequired[str]


def run_baseline(ctx: RunContext, cell: Cell) -> BaselineRun:
    """One uninterrupted run of the cell's workload: ``{"trial_id", "effects"}`` or ``{"trial_id", "error"}``."""
    trial_id = f"c{cell.index:03d}-base"
    run = TrialRun(ctx, cell, trial_id)
    try:
        life = run_uninterrupted(run, "base", baseline_actions(cell))
        err = next((o.get("error") for o in life.outcomes if o.get("status") == "error"), None)
        failed = next((out for out in life.outs if out.status != "ok"), None)
        if failed is not None or err:
            why = f"{err.get('type')}: {err.get('message')}" if err else f"{failed.status if failed else '?'}: {run.history[-1].detail}"
            return {"trial_id": trial_id, "error": why[:500]}
        base: BaselineRun = {"trial_id": trial_id, "effects": effect_counts(ctx.read_ledger(trial_id))}
        if life.asked_again is not None:
            base["asked_again"] = life.asked_again
        if (pause := stopped_at(life.outcomes, driver=cell.scenario.resume_form == "app")) is not None:
            base["stopped_at"] = pause
        return base
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
        if "asked_again" in base:
            rec.observations["baseline_asked_again"] = base["asked_again"]
        yield rec

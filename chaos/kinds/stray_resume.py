"""``stray_resume``: answer an interrupt, then send the same answer again (a retry, a replayed request) -> CO.

Per trial: phase ``first`` runs the workload to its interrupt and answers it with v; phase
``stray`` looks at the thread, sends ``Command(resume=v)`` again, and looks again. After the first
answer the thread is either complete (``gate_after_interrupt``) or waiting at a later interrupt
(``two_gates``): both are "consumed" for the first interrupt, so the stray answer must be inert: no
effect fires, the state does not move. With ``resume_by: interrupt`` both answers are addressed to
the first interrupt by its id (LangGraph: ``Command(resume={id: v})``), as a client replaying its
exact request would send them.

CO (consume-once): inert means it fires no effect and the thread's state (values, next tasks,
pending interrupts) does not move. A refusal (an error) is inert too. A stray answer that lands on
a later interrupt and answers it is the violation a retry/fork discriminator would prevent.

What it needs from an adapter: ``run``, ``resume`` (command) repeated on a consumed and on a
completed thread, with ``interrupt: "first"`` when the scenario sets ``resume_by: interrupt``;
``inspect``; ``gated_task``. Scenario fields: ``resume_by``; ``resume`` must be ``command:<value>``, or
``none`` on a framework with static breakpoints (LangGraph), whose approval ``invoke(None)`` is then
sent twice. A static breakpoint has no id: ``resume_by: interrupt`` on one is ``unsupported`` with that reason.

Two stale or unknown answers (LangGraph, issue 26): ``resume_by: none_after_answer`` sends, in
phase ``stray``, a continue with no answer (``invoke(None)``) after the first answer was consumed
(LangGraph issue 8837: the consumed value is re-delivered to a later interrupt of the same task);
``resume_by: unknown_id`` addresses the stray answer to an interrupt id that no interrupt of the
thread has (``UNKNOWN_ID``; LangGraph issue 8836: it is silently ignored). Both are judged for CO
as above; ``unknown_id`` also for **AR** (an answer addressed to nothing is refused loudly): holds
when the stray answer was refused with an error, violated when it was accepted (a no-op or
worse) without one. ``resume_by: answered_id`` sends the first answer again addressed by id to the
interrupt it answered (as ``interrupt`` does) and is judged for AR too: an answer to an interrupt
already answered is addressed to nothing pending (OpenAI Agents SDK: ``state.approve`` of an item
already answered is accepted silently).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Literal, TypedDict

from pydantic import Field

from chaos.kinds.aim import AimOptions, aimed_value, approach
from chaos.kinds.base import Checker, Kind, Property, approval_action, needs_approval_resume
from chaos.kinds.checking import base_fields, verdict
from chaos.kinds.phases import failed, independent_trials, inspected, run_phases
from chaos.kinds.race import CO
from chaos.racer.ledger_rows import of_task
from chaos.racer.protocol import ActionSpec, ErrorInfo, InspectResult, OutcomeStatus
from chaos.records import CellResult, TrialRecord, Verdict, error_field, error_of, status_of
from chaos.running.trial import RunContext, TrialRun
from chaos.scenario.model import Cell, Scenario

MOVED_KEYS = ("values", "next", "pending_interrupts")
# an interrupt id (LangGraph's are 32 hex digits) that no interrupt of any thread has
UNKNOWN_ID = "0c4a05c4a05c4a05c4a05c4a05c4a05c"
# the resume_by forms whose stray message is not the first answer sent again
STALE_FORMS = ("none_after_answer", "unknown_id")
# the resume_by forms whose stray answer is addressed to nothing pending: judged for AR too
ADDRESSED_TO_NOTHING = ("unknown_id", "answered_id")


class StrayOptions(AimOptions):
    """What a stray resume reads: where the repeated answer is addressed, and the pause whose
    answer is repeated (``at_pause``, ``chaos.kinds.aim``)."""

    resume_by: Literal["thread", "interrupt", "answered_id", "none_after_answer", "unknown_id"] = Field(
        "thread",
        description="a repeated answer: to whatever interrupt is pending, or to the first one by its id; answered_id: to the "
        "first one by its id, judged for AR (an answer to an interrupt already answered must be refused); none_after_answer: "
        "a continue with no answer (LangGraph invoke(None)) after the answer was consumed; unknown_id: the answer addressed "
        "to an interrupt id no pending interrupt has",
    )


AR = Property("AR", "an answer addressed to nothing is refused", "stray-resume-co-kind-stray_resume")
# the resume_by forms whose stray answer is the answered pause's own, sent again (by thread or by its id)
REPEATS = ("thread", "interrupt")


class StrayResume(Kind):
    name = "stray_resume"
    about = "send the answer to a consumed interrupt again: is the repeat inert?"
    properties = ("CO",)
    checks = (Checker(CO, lambda cell, records: check_co(cell, records)), Checker(AR, lambda cell, records: check_ar(cell, records)))
    fields = ("resume_by", "at_pause")
    counts_gated = True
    section = "contract"
    title = "Stray resume"
    Options = StrayOptions

    def validate(self, scenario: Scenario) -> None:
        needs_approval_resume(self.name, scenario)
        by = StrayOptions.of(scenario).resume_by
        if scenario.resume == "none" and by in ("interrupt", "answered_id"):
            raise ValueError(
                f"resume_by: {by} addresses the first interrupt by its id with a command; resume: none sends invoke(None), which addresses nothing"
            )
        if scenario.resume == "none" and by in STALE_FORMS:
            raise ValueError(
                f"resume_by: {by} follows a consumed answer sent as a command; resume: none approves a static "
                "breakpoint with invoke(None), which consumes no answer: set resume: command:<value>"
            )

    def run_cell(self, ctx: RunContext, cell: Cell, skip: set[str]) -> Iterator[TrialRecord]:
        # each repeat its own thread, store and rows, its two answers one after the other: no race,
        # so ``--jobs`` of them at a time
        return independent_trials(ctx, cell, skip, stray_trial)

    def summary(self, cell: Cell, records: Iterable[TrialRecord]) -> tuple[CellResult, list[TrialRecord]]:
        recs = list(records)
        return stray_summary(cell, recs), recs

    def checkers(self, cell: Cell, facts: list[TrialRecord]) -> tuple[Checker[list[TrialRecord]], ...]:
        """CO; AR too when the stray answer is addressed to nothing pending (an unknown id, the answered
        interrupt's id), or when it
        repeats an answer while the thread waited at a later pause (where it could land)."""
        by = StrayOptions.of(cell.scenario).resume_by
        if by in ADDRESSED_TO_NOTHING or (by in REPEATS and any(_later_pause(r) for r in facts if r.valid)):
            return self.checks
        return self.checks[:1]

    def explain(self, rec: TrialRecord) -> list[str]:
        """Only a stray answer that was not inert is explained, with the trial's ledger."""
        status, why = trial_co(rec)
        if status != "violated":
            return []
        seqs = ", ".join(f"{r['effect_key']} (seq {r['seq']}, racer {r['racer_id']})" for r in sorted(rec.ledger, key=lambda r: r["seq"]))
        return [f"{why}; the ledger of this trial: {seqs}"]


KIND = StrayResume()


def stray_trial(run: TrialRun) -> TrialRecord:
    s = run.cell.scenario
    v = aimed_value(s)  # the plan's answer at the aimed pause (the first by default), else resume's command value
    # resume: none (LangGraph): the approval of a static breakpoint, invoke(None), sent twice;
    # resume: app: the team's own driver answering with v, run twice
    answer: ActionSpec = approval_action(s, v)
    by = StrayOptions.of(s).resume_by
    if by in ("interrupt", "answered_id"):
        answer["interrupt"] = "first"  # the same request, addressed to the interrupt it answered
    stray = ActionSpec(**answer)
    if by == "none_after_answer":  # a continue with no answer (LangGraph 8837)
        stray = {"op": "resume", "form": "none"}
    elif by == "unknown_id":  # the answer addressed to an interrupt no one has (LangGraph 8836)
        stray = {**answer, "interrupt": UNKNOWN_ID}
    labelled, racers = run_phases(
        run,
        [
            ("first", [{"op": "run", "label": "run"}, *approach(s), {**answer, "if": "interrupted", "label": "resume"}]),
            (
                "stray",
                [
                    {"op": "inspect", "label": "before"},
                    {**stray, "label": "stray", "keep_going": True},
                    {"op": "inspect", "label": "after"},
                ],
            ),
        ],
    )
    gated = next((r.gated_task for r in racers if r.result), None)
    run_o, resume_o, stray_o = labelled.get("run"), labelled.get("resume"), labelled.get("stray")
    before: InspectResult = inspected(labelled, "before") or {}
    after: InspectResult = inspected(labelled, "after") or {}
    resume_fired = resume_o.get("fired", []) if resume_o else []
    breakpoint = resume_o.get("breakpoint") if resume_o else None
    consumed_obs: ConsumedObs = {
        "status": status_of(resume_o),
        "fired": resume_fired,
        "waiting_at": (resume_o.get("interrupts") if resume_o else None) or [bp for bp in [breakpoint] if bp],
    }
    stray_obs: StrayObs = {
        "status": status_of(stray_o),
        "fired": stray_o.get("fired", []) if stray_o else [],
        "observed": stray_o.get("observed") if stray_o else None,
        "error": error_of(stray_o),
    }
    run.observations.update(
        gated_task=gated,
        sent=v,
        resume_by=by,
        consumed=consumed_obs,
        thread_before=_state(before),
        thread_after=_state(after),
        stray=stray_obs,
    )
    why = failed(racers)
    if why:
        return run.record(valid=False, invalid_reason=why, fault_fired=False)
    if not run_o or run_o.get("status") != "interrupted":
        return run.record(
            valid=False, invalid_reason=f"the run did not stop at an interrupt (status {status_of(run_o)})", fault_fired=False
        )
    if status_of(resume_o) == "unsupported":  # e.g. resume_by: interrupt on a static breakpoint
        why = error_field(error_of(resume_o), "message")
        return run.record(valid=False, invalid_reason=f"the first answer is unsupported: {why}", fault_fired=False)
    consumed = [k for k in resume_fired if of_task(k, gated)]  # task, task:value or task@key (a declared identity)
    if not consumed and status_of(resume_o) != "interrupted":  # answered, and the run went on to a later pause: consumed too
        return run.record(valid=False, invalid_reason=f"the first answer did not fire {gated}: nothing was consumed", fault_fired=False)
    if stray_o is None:
        return run.record(valid=False, invalid_reason="the stray resume was not performed", fault_fired=False)
    return run.record(valid=True, fault_fired=True)


class ConsumedObs(TypedDict, total=False):
    """``observations["consumed"]``: the first answer (status, effect keys fired, what the thread then waits at)."""

    status: OutcomeStatus | None
    fired: list[str]
    waiting_at: list[object]  # the pending interrupts after it, else the static breakpoint ([] : the thread completed)


class StrayObs(TypedDict, total=False):
    """``observations["stray"]``: the stray resume (status, effect keys fired, what the nodes saw, its error)."""

    status: OutcomeStatus | None
    fired: list[str]
    observed: dict[str, object] | None
    error: ErrorInfo | None


class ThreadState(TypedDict, total=False):
    """``observations["thread_before"]`` / ``["thread_after"]``: the parts of the thread a stray resume must not move."""

    values: object
    next: list[str] | None
    pending_interrupts: int | None
    checkpoints: int | None
    checkpoint: str | None
    error: ErrorInfo | None


def _state(inspected: InspectResult) -> ThreadState:
    """The parts of the thread a stray resume must not move (each key present, None if unknown)."""
    return {
        "values": inspected.get("values"),
        "next": inspected.get("next"),
        "pending_interrupts": inspected.get("pending_interrupts"),
        "checkpoints": inspected.get("checkpoints"),
        "checkpoint": inspected.get("checkpoint"),
        "error": inspected.get("error"),
    }


# ------------------------------------------------------------------------------------ check


def trial_co(rec: TrialRecord) -> tuple[str, str]:
    o = rec.observations
    stray, before, after = (
        rec.observed("stray", StrayObs),
        rec.observed("thread_before", ThreadState),
        rec.observed("thread_after", ThreadState),
    )
    where = "a thread waiting at a later interrupt" if rec.observed("consumed", ConsumedObs).get("waiting_at") else "a completed thread"
    if o.get("resume_by") in ("interrupt", "answered_id"):
        where += " (addressed to the first interrupt's id)"
    elif o.get("resume_by") == "unknown_id":
        where += f" (addressed to interrupt id {UNKNOWN_ID}, which no interrupt has)"
    if o.get("resume_by") == "none_after_answer":  # no answer was sent: the continue after the consumed one
        if stray.get("fired"):
            return "violated", (
                f"a continue with no answer (invoke(None)) to {where}, after the answer {o.get('sent')!r} was consumed, "
                f"fired {', '.join(stray['fired'])}: a continue carries no answer, so the consumed one was delivered again"
            )
        where = f"{where}, sent as a continue with no answer (invoke(None)) after {o.get('sent')!r} was consumed,"
    if stray.get("fired"):
        return "violated", f"the stray answer {o.get('sent')!r} to {where} fired {', '.join(stray['fired'])}"
    moved = [k for k in MOVED_KEYS if before.get(k) != after.get(k)]
    if moved:
        changes = ", ".join(f"{k}: {before.get(k)!r} -> {after.get(k)!r}" for k in moved)
        return "violated", f"the stray answer to {where} moved the thread ({changes})"
    if stray.get("status") in ("error", "refused"):  # refused: by a guard (target.guard), before any effect
        how = f"refused ({error_field(stray.get('error'), 'type')})"
    else:
        how = f"accepted as a no-op ({stray.get('status')})"
    extra = ""
    if before.get("checkpoints") != after.get("checkpoints"):
        extra = f"; it wrote {((after.get('checkpoints') or 0) - (before.get('checkpoints') or 0))} checkpoint(s) with the same state"
    return "holds", f"the stray answer to {where} was inert: {how}{extra}"


def stray_summary(cell: Cell, records: list[TrialRecord]) -> CellResult:
    """The cell's numbers: where the thread was after the first answer, what the stray one did."""
    valid = [r for r in records if r.valid]
    result = CellResult(**base_fields(cell, records))
    result.summary = {
        "resume_by": StrayOptions.of(cell.scenario).resume_by,
        "thread_after_first_answer": dict(
            Counter("waiting at a later interrupt" if r.observed("consumed", ConsumedObs).get("waiting_at") else "completed" for r in valid)
        ),
        "stray_status": dict(Counter(str(r.observed("stray", StrayObs).get("status")) for r in valid)),
        "stray_fired": dict(Counter(",".join(r.observed("stray", StrayObs).get("fired") or []) or "-" for r in valid)),
        "invalid": dict(Counter(r.invalid_reason for r in records if not r.valid)),
    }
    return result


def check_co(cell: Cell, records: list[TrialRecord]) -> Verdict:
    """CO over the cell's trials (``trial_co`` of each, ``co_verdict``)."""
    per = [(r, *trial_co(r)) for r in records if r.valid]
    return co_verdict(per, len(records), next((r.invalid_reason for r in records if not r.valid), None))


def check_ar(cell: Cell, records: list[TrialRecord]) -> Verdict:
    """AR over the cell's trials (``ar_verdict``; ``delivered_verdict`` for a repeated answer)."""
    if StrayOptions.of(cell.scenario).resume_by in REPEATS:
        return delivered_verdict([r for r in records if r.valid], len(records))
    return ar_verdict([r for r in records if r.valid], len(records))


def _addressed(o: dict) -> str:
    """What the stray answer of a trial was addressed to, for AR's reasons."""
    if o.get("resume_by") == "answered_id":
        return "the interrupt it had already answered (by its id), which no longer waits"
    return f"interrupt id {UNKNOWN_ID}, which no interrupt has"


def _later_pause(rec: TrialRecord) -> bool:
    """Was the thread waiting at a later pause when the stray answer came (the first answer consumed)?"""
    return bool(rec.observed("consumed", ConsumedObs).get("waiting_at"))


def delivered_verdict(valid: list[TrialRecord], n: int) -> Verdict:
    """AR for a repeated answer: an answer to a pause that is no longer pending (it was answered)
    is never delivered to the pause the thread waits at now. Violated by a trial where the repeat,
    sent while the thread waited at a later pause, fired an effect or moved the thread: the later
    pause was answered by an answer no one gave to it (an e-mail sent with no human approving it)."""
    waiting = [r for r in valid if _later_pause(r)]
    if not waiting:
        return verdict("AR", "unknown", f"no valid trial of {n} had the thread waiting at a later pause when the answer was repeated")
    landed = [r for r in waiting if trial_co(r)[0] == "violated"]
    if landed:
        o, stray = landed[0].observations, landed[0].observed("stray", StrayObs)
        did = f"fired {', '.join(stray.get('fired') or [])}" if stray.get("fired") else "moved the thread"
        return verdict(
            "AR",
            "violated",
            f"{len(landed)}/{len(waiting)} trials: the answer {o.get('sent')!r}, repeated after its pause was answered, was "
            f"delivered to the later pause the thread waited at and {did} (trial {landed[0].trial_id}): that pause was "
            "answered by no one who read it",
            trial_ids=[r.trial_id for r in landed],
            ledger_seqs=_stray_seqs(landed),
        )
    return verdict(
        "AR",
        "holds",
        f"all {len(waiting)} trials: the repeated answer did not reach the later pause the thread waited at",
        trial_ids=[r.trial_id for r in waiting],
    )


def _stray_seqs(recs: list[TrialRecord]) -> list[int]:
    """The ledger rows the stray calls fired (each fires last in its trial)."""
    seqs: list[int] = []
    for r in recs:
        n_fired = len(r.observed("stray", StrayObs).get("fired") or [])
        rows = [row["seq"] for row in r.ledger if row["racer_id"] in ("stray", "solo")]
        seqs += rows[len(rows) - n_fired :] if n_fired else []
    return seqs


def ar_verdict(valid: list[TrialRecord], n: int) -> Verdict:
    """AR: an answer addressed to nothing pending (an unknown interrupt id, an interrupt already answered) is refused loudly (an error)."""
    if not valid:
        return verdict("AR", "unknown", f"no valid trial of {n}")
    silent = [r for r in valid if r.observed("stray", StrayObs).get("status") != "error"]
    if silent:
        o = silent[0].observations
        stray = silent[0].observed("stray", StrayObs)
        st = stray.get("status")
        fired = stray.get("fired") or []
        did = f"fired {', '.join(fired)}" if fired else "changed nothing and raised nothing"
        return verdict(
            "AR",
            "violated",
            f"{len(silent)}/{len(valid)} trials: the answer {o.get('sent')!r} addressed to {_addressed(o)}, was accepted "
            f"silently (status {st}: it {did})",
            trial_ids=[r.trial_id for r in silent],
        )
    err = error_field(valid[0].observed("stray", StrayObs).get("error"), "type")
    return verdict(
        "AR",
        "holds",
        f"all {len(valid)} trials: the answer addressed to {_addressed(valid[0].observations)}, was refused ({err})",
        trial_ids=[r.trial_id for r in valid],
    )


def co_verdict(per: list[tuple[TrialRecord, str, str]], n: int, why: str | None = None) -> Verdict:
    if not per:
        return verdict("CO", "unknown", f"no valid trial of {n} ({why or 'the first answer never consumed the interrupt'})")
    bad = [(r, why) for r, st, why in per if st == "violated"]
    if bad:
        seqs = _stray_seqs([r for r, _ in bad])  # the stray call fires last
        return verdict(
            "CO", "violated", f"{len(bad)}/{len(per)} trials: {bad[0][1]}", trial_ids=[r.trial_id for r, _ in bad], ledger_seqs=seqs
        )
    return verdict("CO", "holds", f"all {len(per)} trials: {per[0][2]}", trial_ids=[r.trial_id for r, _, _ in per])

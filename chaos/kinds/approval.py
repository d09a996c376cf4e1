"""Approval authority (AA), judged in sweeps: an effect behind an approval fires only after that approval was given.

Judged where the adapter reports each approval it gives apart from its recovery calls: LangGraph
(an answer to an ``interrupt()``, or a breakpoint's ``invoke(None)`` given by the plan), CrewAI
(``resume`` of a pending ``@human_feedback``), LlamaIndex (a ``HumanResponseEvent`` sent), AutoGen
(a task given to a team that waits for a human); not on pydantic-graph (no pause of its own: the
call that runs the node after a pause is the same, answered or not; see ``chaos.targets``).

Why: a pause for a human is only worth its name if nothing can walk past it. With LangGraph's static
breakpoints (``interrupt_before`` / ``interrupt_after``) "recover after a crash" and "approve" are the
same call, ``invoke(None)``: a recovery that finds the thread waiting at the breakpoint passes it and
fires the gated effect (a changed booking, a payment) with no human approval. EO cannot see it (the
effect fired once, as in the approved run); AA does.

What it promises (pure functions of trial records):

* ``dry_observations(result)``: from the dry run's racer result, the gated task, where each approval
  was given among its boundaries, where the gated effect first fired, and how many approvals had
  been given by then (``approvals_needed``: the last of them gates the effect). The victim of a
  kill trial runs the same actions as the dry run up to the kill, so ``before_kill(dry, point)``
  counts the approvals it had given before it was killed.
* ``point_verdicts(point, recs)``: AA at one kill point. Per valid trial: the gated
  effect fired by the resume racer counts as approved when the victim had given
  ``approvals_needed`` approvals before the kill, or the resume racer gave an approval (an answer
  to the plan, reported by the adapter in the outcome's ``approvals``) before it fired (an
  approval continues the run only up to its next pause); otherwise the recovery call (``resume: none |
  input | app``, or the ``invoke(None)`` a ``command`` resume continues a thread with) fired it
  unapproved: violated, with the trial, the ledger row and what the thread waited at. A trial where
  the gated effect never fired is vacuous.
* ``judged(cell, dry, trials)``: whether AA is judged: the adapter declares AA, one kill per trial
  (``crash_depth`` 1: the recoveries of a chain report no approvals), and the gated effect fired
  (in the dry run or in a recovery). ``workflow_verdict(dry, aa)``: AA violated with no crash at all when the dry run
  fired the gated effect before any approval.
"""

from __future__ import annotations

from chaos.kinds.base import Property
from chaos.kinds.checking import combine, verdict
from chaos.kinds.sweep_addon import AtPoint, SweepAddOn
from chaos.kinds.sweep_options import SweepOptions
from chaos.racer.ledger_rows import of_task
from chaos.racer.protocol import RacerResult
from chaos.records import TrialRecord, Verdict
from chaos.scenario.model import Cell
from chaos.targets import TARGETS

__all__ = ["ADD_ON", "PROPERTY", "before_kill", "dry_observations", "judged", "point_verdicts", "trial_aa", "workflow_verdict"]

AA = Property("AA", "approval authority", "approval-authority-aa-sweeps")
PROPERTY = AA.code


def _gated(key: str, gated: str | None) -> bool:
    return of_task(key, gated)


def dry_observations(result: RacerResult) -> dict[str, object]:
    """From the dry run's racer result: ``gated_task``; ``approvals_at`` (per approval it gave, the
    index of the first boundary passed after it); ``approval_at`` (the first of them, None if
    none); ``gated_at`` (the index of the first gated effect's boundary, None if it never fired);
    ``approvals_needed`` (how many approvals the run had given when the gated effect first fired:
    the one that gates it is the last of them; one more than it gave when it never fired)."""
    trace = result.get("trace") or []
    gated = result.get("gated_task")
    times = sorted(int(a["t_mono_ns"]) for o in result.get("outcomes") or [] for a in o.get("approvals") or [])
    at = [next((i for i, e in enumerate(trace) if int(e["t_mono_ns"]) >= t), len(trace)) for t in times]
    gated_at = next((i for i, e in enumerate(trace) if gated and e["barrier"].startswith(f"effect(task={gated})")), None)
    # the run never fired it (the plan rejected it): no number of the victim's answers approves it
    needed = sum(1 for i in at if i <= gated_at) if gated_at is not None else len(at) + 1
    return {"gated_task": gated, "approvals_at": at, "approval_at": at[0] if at else None, "gated_at": gated_at, "approvals_needed": needed}


def before_kill(dry: TrialRecord, point: str) -> dict[str, int]:
    """What a kill trial at ``point`` needs to judge AA: how many approvals its victim had given
    before it was killed (it runs the dry run's actions up to the kill) and how many gate the effect."""
    boundaries = dry.observations.get("boundaries") or []
    idx = boundaries.index(point) if point in boundaries else -1
    given = sum(1 for i in dry.observations.get("approvals_at") or [] if i <= idx)
    return {"approvals_before_kill": given, "approvals_needed": int(dry.observations.get("approvals_needed") or 0)}


def judged(cell: Cell, dry: TrialRecord | None, trials: list[TrialRecord]) -> bool:
    """Is AA judged in this cell? The adapter declares it, one kill per trial, and the gated effect
    fired somewhere (in the dry run, or in a trial's recovery): an approval-gated effect that never
    fires says nothing about approvals."""
    from chaos.targets import get_target

    if (
        dry is None
        or SweepOptions.of(cell.scenario).crash_depth > 1
        or get_target(cell.scenario.target.framework).supports(PROPERTY) is not None
    ):
        return False
    gated = dry.observations.get("gated_task")
    return dry.observations.get("gated_at") is not None or any(
        _gated(k, gated) for r in trials if r.valid for k in r.observations.get("resume_fired") or []
    )


def _waited_at(rec: TrialRecord) -> str:
    at = rec.observations.get("at_kill") or {}
    bp = at.get("breakpoint")
    if bp:
        return f"the static breakpoint {bp.get('when')} {', '.join(bp.get('nodes') or [])}"
    if at.get("pending_interrupts"):
        info = TARGETS.get(str(rec.observations.get("framework")))
        return f"a pending {info.pause_name if info is not None else 'pause'}"
    return "no pending approval yet"


# the words for a recovery call where the adapter declares none (``TargetInfo.recovery_calls``)
NEUTRAL_CALLS = {"none": "the recovery call", "input": "a new run", "command": "the recovery call, continuing the run"}


def recovery_call(framework: str, form: str) -> str:
    """The call a recovery of resume form ``form`` makes on ``framework`` (its ``TargetInfo.recovery_calls``;
    neutral words where the adapter declares none)."""
    info = TARGETS.get(framework)
    calls = (info.recovery_calls if info is not None else {}) or NEUTRAL_CALLS
    return calls.get(form, calls["command"])


def _call(rec: TrialRecord) -> str:
    action = rec.observations.get("resume_action") or {}
    form = action.get("form")
    if form == "app":
        return f"the team's recovery {action.get('recover')}"
    return recovery_call(str(rec.observations.get("framework")), str(form))


def trial_aa(rec: TrialRecord) -> tuple[str, str, list[int]]:
    """(``holds`` | ``violated`` | ``vacuous``, why, the ledger seqs of the unapproved fire)."""
    gated = rec.observations.get("gated_task")
    fired = rec.observations.get("resume_fired") or []
    hits = [i for i, k in enumerate(fired) if _gated(k, gated)]
    if not hits:
        if any(_gated(r["effect_key"], gated) for r in rec.ledger):
            return "holds", f"{gated} fired only before the kill, after its approval", []
        return "vacuous", f"{gated} never fired", []
    first = hits[0]
    need = int(rec.observations.get("approvals_needed") or 0)
    given = int(rec.observations.get("approvals_before_kill") or 0)
    if given >= need:
        return "holds", "the approval was given before the kill", []
    # an approval the resume gave before the fire is the pause the effect waited behind: an
    # approval's invoke continues only up to the next pause, so nothing was walked past after it
    if any(int(a.get("fired_before", 0)) <= first for a in rec.observations.get("resume_approvals") or []):
        return "holds", f"the resume fired {gated} after it gave the approval", []
    rows = sorted((r for r in rec.ledger if r["racer_id"] == "resume" and _gated(r["effect_key"], gated)), key=lambda r: r["seq"])
    key = rows[0]["effect_key"] if rows else fired[first]
    seqs = [rows[0]["seq"]] if rows else []
    seq = f" (ledger seq {seqs[0]})" if seqs else ""
    return (
        "violated",
        f"the recovery ({_call(rec)}) fired {key}{seq} with no approval given: at the kill the thread waited at {_waited_at(rec)}, "
        "and the recovery walked past it",
        seqs,
    )


def point_verdicts(at: AtPoint) -> list[Verdict]:
    """AA at one kill point, trial by trial (``trial_aa``)."""
    point, recs = at.point, at.recs
    valid = [r for r in recs if r.valid]
    if not valid:
        why = recs[0].invalid_reason if recs else "no trial"
        return [verdict(PROPERTY, "unknown", f"{point}: {why}", points=[point], trial_ids=[r.trial_id for r in recs])]
    per = [(r, *trial_aa(r)) for r in valid]
    bad = [(r, why, seqs) for r, st, why, seqs in per if st == "violated"]
    if bad:
        return [
            verdict(
                PROPERTY,
                "violated",
                f"{point}: {bad[0][1]}" + (f" (in {len(bad)} of {len(valid)} repeats)" if len(valid) > 1 else ""),
                points=[point],
                trial_ids=[r.trial_id for r, _, _ in bad],
                ledger_seqs=[s for _, _, seqs in bad for s in seqs],
            )
        ]
    held = [(r, why) for r, st, why, _ in per if st == "holds"]
    if not held:
        gated = valid[0].observations.get("gated_task")
        return [verdict(PROPERTY, "unknown", f"{point}: vacuous, the gated effect {gated} never fired", points=[point], vacuous=True)]
    return [verdict(PROPERTY, "holds", f"{point}: {held[0][1]}", points=[point], trial_ids=[r.trial_id for r, _ in held])]


def workflow_verdict(dry: TrialRecord, aa: Verdict) -> Verdict:
    """AA over the cell: violated with no crash when the uninterrupted run fired the gated effect
    before any approval (the effect is not behind the approval at all)."""
    at, gated_at = dry.observations.get("approval_at"), dry.observations.get("gated_at")
    if gated_at is None or (at is not None and gated_at >= at):
        return aa
    gated = dry.observations.get("gated_task")
    return verdict(
        PROPERTY,
        "violated",
        f"in an uninterrupted run (the dry run {dry.trial_id}) {gated} fired before any approval was given: it is not behind "
        f"the approval; judged over the kill points: {aa.status}: {aa.reason}",
        trial_ids=sorted({dry.trial_id, *aa.evidence.trial_ids}),
        points=aa.evidence.points,
        ledger_seqs=aa.evidence.ledger_seqs,
    )


def properties_of(cell: Cell, dry: TrialRecord | None, trials: list[TrialRecord]) -> tuple[str, ...]:
    return (PROPERTY,) if judged(cell, dry, trials) else ()


def _check(cell: Cell, code: str, dry: TrialRecord | None, parts: list[Verdict]) -> Verdict:
    """AA over the kill points, and in the uninterrupted run."""
    if dry is None:
        return verdict(PROPERTY, "unknown", "the dry run did not run")
    return workflow_verdict(dry, combine(PROPERTY, parts))


# the sweep's add-on (``chaos.kinds.sweep_addon``): where the dry run and each victim approved, AA at each point and in the uninterrupted run
ADD_ON = SweepAddOn(
    properties=(AA,),
    properties_of=properties_of,
    dry_observations=dry_observations,
    before_kill=before_kill,
    judge=point_verdicts,
    check=_check,
)

"""``first_checkpoint``: crash before the first checkpoint is durable -> EO, PC, liveness, FCL.

The kill sweep (``chaos.kinds.sweep``) restricted to the boundaries up to and including the first
``put(...):before`` (the last moment nothing of the run is durable yet), usually resumed with
``none``: does an accepted run survive a crash before its first checkpoint? With durability
``exit`` nothing is durable until the end, so every point up to the final checkpoint qualifies.

FCL (the first checkpoint survives a crash) is judged at each point beside EO, PC and liveness: violated by a
trial where no checkpoint survived the kill and the resume could not finish the run (the accepted
run is known nowhere; the reason says whether effects had already fired), else holds.

On CrewAI the first write is ``@persist``'s state or pending-feedback save (or a checkpoint
provider's): a ``@start`` method that pauses (``@human_feedback`` whose provider notifies the
approver, then raises ``HumanFeedbackPending``) announces the pause before it is saved, and a
kill in between leaves an approver asked about a run known nowhere.

What it needs from an adapter: what every sweep needs (``chaos.kinds.sweep``), and ``checkpoints``
in ``inspect``.
"""

from __future__ import annotations

from chaos.kinds.base import Property
from chaos.kinds.checking import verdict
from chaos.kinds.sweep import PointCheck, Sweep, SweepKind, sweep_checks
from chaos.records import TrialRecord, Verdict, error_field
from chaos.scenario.model import Cell
from chaos.targets import TARGETS


def before_first_checkpoint(cell: Cell, boundaries: list[str]) -> list[str]:
    """The boundaries up to and including the first durable write's ``:before``: the target's
    ``TargetInfo.first_writes`` (LangGraph's checkpoint ``put``; CrewAI's ``@persist`` state or
    pending-feedback save, or its checkpoint provider's write); every boundary where it declares none."""
    info = TARGETS.get(cell.scenario.target.framework)
    first = info.first_writes if info is not None else ()
    out = []
    for b in boundaries:
        out.append(b)
        if first and b.startswith(first) and ":before#" in b:
            break
    return out


def point_fcl(point: str, valid: list[TrialRecord]) -> Verdict:
    """FCL at one kill point: did a run that left no checkpoint behind get recovered?"""
    lost = [
        r
        for r in valid
        if (r.observed_inspect("at_kill").get("checkpoints") or 0) == 0 and r.observed_outcome("resume_outcome").get("status") != "done"
    ]
    if lost:
        fired = sum(len(r.ledger) for r in lost)
        keys = sorted({row["effect_key"] for r in lost for row in r.ledger})
        note = f"; yet {fired} effect(s) had already fired ({', '.join(keys)})" if fired else ""
        o = lost[0].observed_outcome("resume_outcome")
        why = (error_field(o.get("error"), "type") or o.get("status")) if o else "nothing durable to answer or continue"
        return verdict(
            "FCL",
            "violated",
            f"{point}: no checkpoint survived and the resume could not continue ({why}): the accepted run is known nowhere{note}",
            points=[point],
            trial_ids=[r.trial_id for r in lost],
            ledger_seqs=[row["seq"] for r in lost for row in r.ledger],
        )
    return verdict("FCL", "holds", f"{point}: the run was recovered", points=[point], trial_ids=[r.trial_id for r in valid])


FCL = Property("FCL", "first checkpoint survives a crash", "kill-point-sweep-eo-pc-liveness-fcl-kinds-kill_sweep-first_checkpoint")
SWEEP = Sweep(narrow=before_first_checkpoint, extra=(PointCheck(FCL, point_fcl),))


class FirstCheckpoint(SweepKind):
    sweep = SWEEP
    name = "first_checkpoint"
    about = "crash before the first checkpoint is durable: is the accepted run still known anywhere?"
    properties = SWEEP.properties
    checks = sweep_checks(SWEEP)
    title = "Crash before the first checkpoint"


KIND = FirstCheckpoint()

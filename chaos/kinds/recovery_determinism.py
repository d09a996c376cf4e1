"""``recovery_determinism``: the same crash point, recovered the same way each time -> RD, EO, PC, liveness.

Its trials are a kill sweep (``chaos.kinds.sweep``), usually at a few kill points (``kill_points``)
with several repeats each (``trials`` >= 2). A recovery's *decision* is what the fresh process did:
its outcome (or error type), which tasks it ran again (effects it fired), and where it left the
thread. RD holds at a point when every repeat made the same decision; it is violated when repeats
differ, and the reason says whether the durable state at the kill differed too (the write order
itself varied, LangGraph issue 8039) or not (the same state, different decisions). EO, PC and
liveness come from the sweep's own check; RD comes first in the cell's and each point's verdicts.

What it needs from an adapter: what every sweep needs (``chaos.kinds.sweep``).
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable

from chaos.kinds.base import Checker, Property
from chaos.kinds.checking import combine, verdict
from chaos.kinds.sweep import Sweep, SweepFacts, SweepKind, sweep_checks
from chaos.records import CellResult, TrialRecord, Verdict, error_field
from chaos.scenario.model import Cell

SWEEP = Sweep()
RD = Property("RD", "recovery determinism", "recovery-determinism-rd-kind-recovery_determinism")


def check_rd(cell: Cell, f: SweepFacts) -> Verdict:
    """RD over the kill points (each point's ``point_rd``, gathered by the summary), combined."""
    if f.failure is not None:
        return verdict("RD", "unknown", f.failure)
    return combine("RD", f.at_points.get("RD", []))


class RecoveryDeterminism(SweepKind):
    sweep = SWEEP
    name = "recovery_determinism"
    about = "crash at one point again and again: does the recovery decide the same way each time?"
    properties = ("RD",) + SWEEP.properties
    title = "Recovery determinism (repeated crashes at one point)"

    checks = (Checker(RD, check_rd), *sweep_checks(SWEEP))

    def summary(self, cell: Cell, records: Iterable[TrialRecord]) -> tuple[CellResult, SweepFacts]:
        return recovery_summary(cell, list(records))

    def checkers(self, cell: Cell, facts: SweepFacts) -> tuple[Checker[SweepFacts], ...]:
        return (self.checks[0], *SWEEP.checkers(cell, facts))  # RD first, in the cell's and each point's verdicts


KIND = RecoveryDeterminism()


def decision(rec: TrialRecord) -> str:
    o = rec.observed_outcome("resume_outcome")
    after = rec.observed_inspect("after_resume")
    status = o.get("status") if o.get("status") != "error" else f"error {error_field(o.get('error'), 'type')}"
    ran = sorted(Counter(row["task"] for row in rec.ledger if row["racer_id"] == "resume").items())
    return json.dumps({"outcome": status, "ran_again": ran, "next": after.get("next")}, sort_keys=True)


def durable(rec: TrialRecord) -> str:
    at = rec.observations.get("at_kill") or {}
    return json.dumps({k: at.get(k) for k in ("checkpoints", "completed_tasks", "next", "pending_interrupts")}, sort_keys=True)


def point_rd(point: str, recs: list[TrialRecord]) -> Verdict:
    valid = [r for r in recs if r.valid]
    if len(valid) < 2:
        return verdict(
            "RD",
            "unknown",
            f"{point}: {len(valid)} valid recovery, RD needs at least 2 (set trials >= 2)",
            points=[point],
            trial_ids=[r.trial_id for r in recs],
        )
    by_decision: dict[str, list[str]] = defaultdict(list)
    for r in valid:
        by_decision[decision(r)].append(r.trial_id)
    if len(by_decision) == 1:
        return verdict(
            "RD", "holds", f"{point}: {len(valid)} recoveries, one decision", points=[point], trial_ids=[r.trial_id for r in valid]
        )
    states = {durable(r) for r in valid}
    cause = "the durable state at the kill differed between repeats" if len(states) > 1 else "from the same durable state"
    shown = " vs ".join(f"{d} ({', '.join(ids)})" for d, ids in list(by_decision.items())[:3])
    return verdict(
        "RD",
        "violated",
        f"{point}: {len(by_decision)} different recovery decisions, {cause}: {shown}",
        points=[point],
        trial_ids=[r.trial_id for r in valid],
        note="durable states: " + " | ".join(sorted(states))[:1500],
    )


def recovery_summary(cell: Cell, records: list[TrialRecord]) -> tuple[CellResult, SweepFacts]:
    """The sweep's summary, with RD judged at each point (first in the point's verdicts) and the
    number of distinct decisions per point."""
    result, facts = SWEEP.summary(cell, records)
    if facts.failure is not None:
        return result, facts
    by_point: dict[str, list[TrialRecord]] = defaultdict(list)
    for r in records:
        if r.point:
            by_point[r.point].append(r)
    parts = []
    for p in result.points:
        v = point_rd(p.point, by_point.get(p.point, []))
        p.verdicts.insert(0, v)
        parts.append(v)
    facts.at_points["RD"] = parts
    result.summary = {
        "decisions_per_point": {p.point: len({decision(r) for r in by_point.get(p.point, []) if r.valid}) for p in result.points}
    }
    return result, facts

"""Comparing a cell run in kill mode with the same cell from recorded crash states (issue 27).

The fidelity stories (test_crash_states, test_recorded_power, test_crash_chains) ask one question of
two cells: does every kill point (or chain) come to the same thing? Here is that question, once.
"""

from __future__ import annotations

from chaos.records import TrialRecord
from chaos.running.journal import read_journal


def journal_records(run) -> list[TrialRecord]:
    """Every trial a run journaled, as typed records."""
    records, _ = read_journal(run.run_dir / "journal.jsonl")
    return [TrialRecord.model_validate(r) for r in records]


def assert_same_points(kill, rec, *, evidence: bool = True) -> None:
    """Both cells have the same points, and each came to the same reach, effects, durable checkpoints,
    resume outcomes, distribution and verdicts; the cells' verdicts are the same (with ``evidence``:
    naming the same points)."""
    assert [p.point for p in rec.points] == [p.point for p in kill.points] and kill.points
    for pk, pr in zip(kill.points, rec.points, strict=True):
        seen = (pr.reached, pr.effect_counts, pr.durable_checkpoints, pr.resume_outcomes, pr.distribution)
        assert seen == (pk.reached, pk.effect_counts, pk.durable_checkpoints, pk.resume_outcomes, pk.distribution), pk.point
        assert [(v.property, v.status) for v in pr.verdicts] == [(v.property, v.status) for v in pk.verdicts], pk.point
    if evidence:
        assert [(v.property, v.status, v.evidence.points) for v in rec.verdicts] == [
            (v.property, v.status, v.evidence.points) for v in kill.verdicts
        ]
    else:
        assert [(v.property, v.status) for v in rec.verdicts] == [(v.property, v.status) for v in kill.verdicts]

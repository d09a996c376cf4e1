"""A race is judged against the same workflow run once with no race at all.

Before its trials a race cell runs the workload once, uninterrupted, answering its interrupt; every
trial carries that run's effects. A workflow that pays twice for one approval does so with a
single racer and no race: CO still says violated (the answer fired the payment twice), but it says
the duplicate needs no race, and the explanation does not blame the race for it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from kits.runs import run_text

from chaos.records import TrialRecord
from chaos.reports.explain import explain_duplicates
from chaos.running.journal import read_journal

WORKLOADS = Path(__file__).parent / "workloads"


def _race(tmp_path: Path, workload: str):
    shutil.copy(WORKLOADS / "user_workloads.py", tmp_path / "user_workloads.py")
    return run_text(
        tmp_path,
        f"""\
        name: race_base
        kind: race
        target: {{framework: langgraph, backend: sqlite, durability: sync}}
        workload: user_workloads:{workload}
        resume: "command:true"
        racers: {{k: 1}}
        trials: 2
        seed: 3
    """,
    )


def test_a_payment_made_twice_per_approval_is_the_workflows_own_duplicate_not_the_races(tmp_path):
    out = _race(tmp_path, "approval_pays_twice")
    (cell,) = out.results.cells
    assert cell.baseline is not None and cell.baseline.effects == {"send_payment:True": 2}
    assert cell.baseline.workflow_duplicates == {"send_payment:True": 2}
    assert cell.fires == {"2": 2}  # one racer, two payments, in each trial
    co = next(v for v in cell.verdicts if v.property == "CO")
    assert co.status == "violated"
    assert "fired twice in an uninterrupted run" in co.reason and "a duplicate that needs no race" in co.reason
    assert "the race added no fire beyond that" in co.reason
    records, _ = read_journal(out.run_dir / "journal.jsonl")
    trial = TrialRecord.model_validate(records[0])
    assert trial.observations["baseline_effects"] == {"send_payment:True": 2}
    (said,) = explain_duplicates(trial)
    assert "as it does in an uninterrupted run" in said and "needs no race" in said


def test_a_single_payment_per_approval_holds_with_one_racer(tmp_path):
    out = _race(tmp_path, "approval")
    (cell,) = out.results.cells
    assert cell.baseline is not None and cell.baseline.effects == {"send_payment:True": 1}
    assert cell.baseline.workflow_duplicates == {}
    assert {v.property: v.status for v in cell.verdicts} == {"CO": "holds", "LIVENESS": "holds", "LC": "holds"}

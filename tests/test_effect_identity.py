"""Effects are judged by identity, every one of them (issue 39, points 1 and 4).

An effect's identity is what makes it the same effect in two runs: the key a team declares
(``ctx.effect(task, value, key=...)``: an idempotency key, the approved call), else its label and
value. Consume-once and saturation count the gated effect's identity, not its label: a tool that
writes an audit row and a payment fired two effects once each, not one effect twice. Exactly-once
judges every effect a recovery fired against the uninterrupted run's: one that run never fires,
and a declared effect carrying another payload, are findings with their ledger rows.

The apps are public examples ported with scripted models (``tests/workloads/react_pay_tool.py``,
``tests/workloads/crew_self_evaluation.py``); what they do without chaos was established by hand
(the team's report for issue 39 has the scripts and their output).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from kits.runs import run_text

from chaos.records import TrialRecord
from chaos.reports.explain import explain_duplicates
from chaos.running.journal import read_journal

WORKLOADS = Path(__file__).parent / "workloads"


def _race_the_pay_tool(tmp_path: Path, workload: str):
    shutil.copy(WORKLOADS / "react_pay_tool.py", tmp_path / "react_pay_tool.py")
    return run_text(
        tmp_path,
        f"""\
        name: pay_tool_race
        kind: race
        target: {{framework: langgraph, backend: sqlite, durability: sync}}
        workload: react_pay_tool:{workload}
        resume: "command:approve"
        racers: {{k: 1}}
        trials: 2
        seed: 5
    """,
    )


@pytest.mark.parametrize("workload", ["build", "declared"])
def test_a_tool_that_writes_an_audit_row_and_a_payment_fires_each_once_per_approval(tmp_path, workload):
    # by hand: one approval, one process -> one audit row and one payment; with one racer a race
    # is that, so nothing fired twice, and the one racer fired the gated effect once (saturation 1/k)
    out = _race_the_pay_tool(tmp_path, workload)
    (cell,) = out.results.cells
    assert cell.valid_trials == 2
    assert cell.fires == {"1": 2}, cell.fires
    assert cell.saturation == 1.0 and cell.max_fires == 1
    co = next(v for v in cell.verdicts if v.property == "CO")
    assert co.status == "holds", co.reason
    assert "needs no race" not in co.reason
    assert cell.baseline is not None and sorted(cell.baseline.effects.values()) == [1, 1]
    records, _ = read_journal(out.run_dir / "journal.jsonl")
    trial = TrialRecord.model_validate(records[0])
    assert sorted(len(s) for s in trial.observations["fires_by_effect"].values()) == [1, 1]
    assert explain_duplicates(trial) == []

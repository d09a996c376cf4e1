"""A team's node starts a thread that fires an effect after the node returned: LangGraph runs no
task there, so chaos cannot say which step fired it. The effect is still counted, and every cell
that counted it says so, with the fix; the preflight refuses such a workload outright
(``tests/test_preflight.py``)."""

from __future__ import annotations

import pytest
from kits.graphkit import GraphThread
from kits.runkit import race_record

from chaos.kinds.checking import analyze_cell
from chaos.records import TrialRecord
from chaos.scenario.model import expand, parse_scenario

NOTE = (
    "1 effect(s) fired outside a running task (from a thread the node started?): chaos cannot attribute "
    "them to a step; move ctx.effect into the node"
)


@pytest.fixture(scope="module")
def audit_rows(tmp_path_factory) -> list[dict]:
    """The ledger rows of one real run of the workload, answered once."""
    t = GraphThread(tmp_path_factory.mktemp("outside"), "tests.workloads.user_workloads:approval_audit_after_return")
    t.racer("a", [{"op": "run"}, {"op": "resume", "form": "command", "value": True}])
    return t.ledger()


def _cell(kind: str):
    (cell,) = expand(
        parse_scenario(f'name: x\nkind: {kind}\ntarget: {{framework: langgraph}}\nworkload: gate_after_interrupt\nresume: "command:true"\n')
    )
    return cell


def _with(rec: TrialRecord, rows: list[dict]) -> TrialRecord:
    extra = [{**r, "seq": 100 + i, "trial_id": rec.trial_id} for i, r in enumerate(rows)]
    return rec.model_copy(update={"ledger": [*rec.ledger, *extra]})


def test_the_effect_from_the_thread_is_marked_outside_any_task(audit_rows):
    marks = {r["effect_key"]: (r["node"], r["outside_task"]) for r in audit_rows}
    assert marks == {"audit": (None, 1), "send_payment:True": ("approve", 0)}


def test_a_race_cell_reports_the_effect_it_could_not_attribute(audit_rows):
    audit = [r for r in audit_rows if r["outside_task"]]
    result = analyze_cell(_cell("race"), [_with(race_record("c000-t0000", fired_by=["r0"]), audit)])
    assert result.notes == [NOTE]
    assert result.verdicts and all(v.reason.endswith(f"(note: {NOTE})") for v in result.verdicts)


def test_a_sweep_cell_reports_it_too_and_a_cell_without_one_says_nothing(audit_rows):
    audit = [r for r in audit_rows if r["outside_task"]]
    rec = race_record("c000-dry", fired_by=[]).model_copy(
        update={"kind": "kill_sweep", "point": None, "observations": {"boundaries": ["p"]}}
    )
    assert analyze_cell(_cell("kill_sweep"), [_with(rec, audit)]).notes == [NOTE]
    clean = analyze_cell(_cell("kill_sweep"), [rec])
    assert clean.notes == [] and not any("outside a running task" in v.reason for v in clean.verdicts)

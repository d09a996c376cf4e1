"""A team's effects carry their own labels (``send_payment``), fired by nodes of a subgraph
(``interrupt_handler`` in ``response_agent``): PC compares each effect of the resume with the
durable frontier of the (sub)graph whose node fired it, not the label with root-graph node names."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from kits.runkit import race_record
from kits.runs import run_text

from chaos.kinds.sweep import Sweep, check_sweep
from chaos.records import TrialRecord
from chaos.running.journal import read_journal
from chaos.scenario.model import expand, parse_scenario

WORKLOADS = Path(__file__).parent / "workloads"
AFTER_PAYMENT = "put_writes(node=interrupt_handler,channels=__resume__+log+branch:to:confirm):after#1"

SWEEP = """\
name: pc_subgraph
kind: kill_sweep
target: {framework: langgraph, backend: sqlite, durability: sync}
workload: graph_workloads:payment_approvals
resume: "command:ok"
answers: [ok, send]
kill_points: ["put_writes(node=interrupt_handler"]
trials: 1
seed: 3
"""


@pytest.fixture(scope="module")
def subgraph_sweep(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pc")
    shutil.copy(WORKLOADS / "graph_workloads.py", tmp / "graph_workloads.py")
    return run_text(tmp, SWEEP)


def test_a_kill_after_a_subgraph_node_is_durable_is_judged_against_the_subgraph_frontier(subgraph_sweep):
    (cell,) = subgraph_sweep.results.cells
    point = next(p for p in cell.points if p.point == AFTER_PAYMENT)
    records, _ = read_journal(subgraph_sweep.run_dir / "journal.jsonl")
    (rec,) = [r for r in records if r.get("point") == AFTER_PAYMENT]
    at_kill = rec["observations"]["at_kill"]
    # the payment's node is recorded complete inside the subgraph; the root graph knows only triage
    assert at_kill["completed_tasks"] == ["triage"]
    assert at_kill["completed_by_namespace"]["response_agent"] == ["interrupt_handler"]
    # the resume answered only the e-mail: the durable payment node did not run again
    assert point.effect_counts == {"send_email:send": [1], "send_payment:ok": [1]}
    pc = next(v for v in point.verdicts if v.property == "PC")
    assert pc.status == "holds"
    assert "fired by confirm (subgraph response_agent), none by a node durable at the kill" in pc.reason
    # "durable checkpoints at the kill" counts the subgraph's checkpoints too
    assert point.durable_checkpoints == [at_kill["durable_checkpoints"]]
    assert at_kill["durable_checkpoints"] > at_kill["checkpoints"]


def _resumed(rows: list[dict], at_kill: dict) -> TrialRecord:
    """A sweep trial whose resume racer fired ``rows`` after a kill that found ``at_kill`` durable."""
    rec = race_record("c000-p000-r000", fired_by=[])
    ledger = [
        {**rec.ledger[0], "seq": 10 + i, "racer_id": "resume", "task": r["task"], "effect_key": r["task"], "value": None, **r}
        for i, r in enumerate(rows)
    ]
    return rec.model_copy(
        update={
            "kind": "kill_sweep",
            "point": "p",
            "ledger": ledger,
            "observations": {
                "kill": {"point": "p"},
                "at_kill": at_kill,
                "resume_outcome": {"status": "done", "action": {"op": "resume", "form": "command"}},
            },
        }
    )


def _pc(rec: TrialRecord):
    dry = rec.model_copy(update={"trial_id": "c000-dry", "point": None, "ledger": [], "observations": {"boundaries": ["p"]}})
    (cell,) = expand(parse_scenario("name: x\nkind: kill_sweep\ntarget: {framework: langgraph}\nworkload: three_step\n"))
    result = check_sweep(cell, [dry, rec], Sweep())
    return next(v for v in result.points[0].verdicts if v.property == "PC")


SUBGRAPH_FRONTIER = {
    "checkpoints": 3,
    "durable_checkpoints": 5,
    "completed_tasks": ["triage"],
    "completed_by_namespace": {"": ["triage"], "response_agent": ["interrupt_handler"]},
}


def test_a_durable_subgraph_node_whose_effect_fires_again_on_resume_violates_pc():
    again = {"task": "send_payment", "node": "interrupt_handler", "namespace": "response_agent", "outside_task": 0}
    pc = _pc(_resumed([again], SUBGRAPH_FRONTIER))
    assert pc.status == "violated"
    assert "interrupt_handler (subgraph response_agent) recorded complete at the kill, ran again on resume" in pc.reason
    assert "send_payment" in pc.reason and pc.evidence.ledger_seqs == [10]


def test_a_node_of_the_same_name_in_another_graph_is_not_the_durable_one():
    """``interrupt_handler`` is durable in the subgraph; a root-graph node of that name is another node."""
    elsewhere = {"task": "send_payment", "node": "interrupt_handler", "namespace": "", "outside_task": 0}
    assert _pc(_resumed([elsewhere], SUBGRAPH_FRONTIER)).status == "holds"


def test_rows_without_attribution_are_compared_by_label_as_before():
    """Other frameworks and journals written before attribution: the label against the root's completed tasks."""
    old = {"task": "a", "node": None, "namespace": None, "outside_task": None}
    pc = _pc(_resumed([old], {"checkpoints": 2, "completed_tasks": ["a"]}))
    assert pc.status == "violated" and pc.reason.startswith("p: a recorded complete at the kill")

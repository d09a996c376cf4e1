"""A user re-sends an answer (a retried request) and learns whether it is inert (CO).

On a completed thread LangGraph ignores it. On a thread waiting at its next interrupt the same
answer is taken as the answer to that next interrupt: it fires the next gated effect, unless the
answer is addressed to the interrupt it was meant for, by id (``Command(resume={id: v})``).
"""

from __future__ import annotations

import pytest
from kits.runs import run_text

STRAY = """\
name: stray_small
kind: stray_resume
target: {framework: langgraph, backend: sqlite, durability: sync}
workload: gate_after_interrupt
resume: "command:approve"
trials: 1
seed: 5
matrix:
  case:
    - {name: completed, workload: gate_after_interrupt}
    - {name: waiting, workload: two_gates, backend: memory}
    - {name: waiting-by-id, workload: two_gates, backend: memory, resume_by: interrupt}
"""


@pytest.fixture(scope="module")
def stray_run(tmp_path_factory):
    return run_text(tmp_path_factory.mktemp("stray"), STRAY)


def test_a_stray_answer_to_a_completed_thread_is_inert(stray_run):
    cell = stray_run.results.cells[0]
    (co,) = cell.verdicts
    assert cell.cell_id == "case=completed" and cell.valid_trials == 1
    assert co.status == "holds", co.reason
    assert "completed thread was inert" in co.reason


def test_a_stray_answer_to_a_thread_waiting_at_its_next_interrupt_answers_it(stray_run):
    cell = stray_run.results.cells[1]
    co, ar = cell.verdicts  # AR too: the thread waited at a later pause the repeat could reach
    assert cell.backend == "memory"
    assert co.status == "violated"
    assert "fired gate2:approve, end" in co.reason
    assert len(co.evidence.ledger_seqs) == 2 and co.evidence.trial_ids == ["c001-t0000"]
    assert ar.property == "AR" and ar.status == "violated" and ar.evidence.trial_ids == ["c001-t0000"]
    assert stray_run.results.exit_code == 1


def test_a_stray_answer_addressed_to_the_consumed_interrupt_by_id_is_inert(stray_run):
    cell = stray_run.results.cells[2]
    co, ar = cell.verdicts
    assert ar.status == "holds", ar.reason  # addressed by id, the repeat did not reach the next pause
    assert cell.summary["resume_by"] == "interrupt"
    assert co.status == "holds", co.reason
    assert "waiting at a later interrupt (addressed to the first interrupt's id) was inert" in co.reason


def test_the_html_report_explains_the_stray_fire_with_its_ledger_rows(stray_run):
    from chaos.reports.explain import explain_duplicates
    from chaos.running.runfolder import load_run

    records = load_run(stray_run.run_dir)[3]
    said = {r.cell_id: explain_duplicates(r) for r in records}
    assert said["case=completed"] == [] and said["case=waiting-by-id"] == []
    (sentence,) = said["case=waiting"]
    assert "fired gate2:approve, end" in sentence and "gate2:approve (seq" in sentence
    html = (stray_run.run_dir / "report.html").read_text()
    assert sentence.split(";")[0].replace("'", "&#39;") in html

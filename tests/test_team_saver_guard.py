"""A team's own guard inside its own saver is measured, with no ``target.guard`` declared.

The team brings REMIT's cross-process gate the way REMIT is used: ``remit.wrap(SqliteSaver, conn,
cross_process_gate=True)`` in its saver factory (``target.saver``), over LangGraph's docs'
approve-or-reject graph (``tests.workloads.lg_approve_remit``). By hand, without chaos, four
processes answering the paused thread at once give one send and three ``RemitConsumeConflict``
refusals. Before, chaos's own reads of the parked thread went through the gate and took its
claim, and every racer's refusal, raised from inside a saver chaos did not know, was blamed on the
harness: 0 of 3 trials valid. Now chaos reads the store beneath the team's saver (LangGraph's own
``SqliteSaver`` reads) and a refusal of the saver's own is an outcome named after it.
"""

from __future__ import annotations

import pytest
from kits.runs import run_text

from chaos.racer.errors import EnvironmentProblem
from chaos.running.journal import read_journal

REMIT = "remit-contract==0.1.2"

RACE = """\
name: team_remit
kind: race
target: {framework: langgraph, saver: "tests.workloads.lg_approve_remit:remit_saver", durability: sync, requirements: ["remit-contract==0.1.2"]}
workload: tests.workloads.lg_approve_remit:approve_or_reject
resume: "command:approve"
racers: {k: 4}
jitter_ms: 0
trials: 3
seed: 165
"""


@pytest.fixture
def remit_env() -> None:
    """LangGraph's environment with REMIT in it, or the story is skipped with the reason."""
    from chaos.envs import python_for

    try:
        python_for("langgraph", None, [REMIT])
    except EnvironmentProblem as exc:
        pytest.skip(f"{REMIT} cannot be installed here: {exc}")


@pytest.mark.usefixtures("remit_env")
def test_remits_gate_inside_the_teams_own_saver_lets_a_racer_through_and_refuses_or_outlasts_the_rest(tmp_path):
    run = run_text(tmp_path, RACE)
    (cell,) = run.results.cells
    assert cell.valid_trials == 3, cell  # chaos's reads took no claim: every trial measured
    # one send per trial by hand, but a race's outcome is open: the final rehearsal saw REMIT's gate
    # let two racers through in one trial of three. What chaos owes is a verdict that says which.
    assert set(cell.fires) <= {"1", "2", "3", "4"} and sum(cell.fires.values()) == 3  # a send in every trial
    verdicts = {v.property: v for v in cell.verdicts}
    assert verdicts["LIVENESS"].status == "holds"
    assert verdicts["CO"].status == ("holds" if cell.fires == {"1": 3} else "violated"), verdicts["CO"]
    if cell.fires == {"1": 3}:
        assert "by RemitSqliteSaver (target.saver)" in verdicts["CO"].reason
    records, _ = read_journal(run.run_dir / "journal.jsonl")
    racers = [r for rec in records for r in rec["racers"] if r.get("role") == "resume"]
    ends = [r["result"]["outcomes"][-1]["status"] for r in racers]
    refused = [r for r, end in zip(racers, ends, strict=True) if end == "refused"]
    sends = sum(int(n) * c for n, c in cell.fires.items())
    # Every racer was refused by the gate or ran to the end, none a harness error. A racer that reads
    # the thread after the winner finished finds no pending interrupt, so REMIT's gate has no claim to
    # take and LangGraph ends the call with nothing to do: done, no send (the story below; CI saw it
    # once in a trial of three). So a done is a sender or a late comer, never fewer dones than sends.
    assert set(ends) <= {"refused", "done"} and len(racers) == 12, ends
    assert ends.count("done") >= sends
    assert {r["result"]["outcomes"][-1]["error"]["refused_by"] for r in refused} == {"RemitSqliteSaver (target.saver)"}


STRAY = RACE.replace("kind: race", "kind: stray_resume").replace("racers: {k: 4}\njitter_ms: 0\n", "")


@pytest.mark.usefixtures("remit_env")
def test_an_answer_that_comes_after_the_winner_finished_is_done_and_sends_nothing_not_refused(tmp_path):
    """By hand: approve the parked thread, then approve it again. The second call finds the thread
    finished, with no interrupt for REMIT's gate to claim, and LangGraph returns the final state: no
    send, no error. chaos says the same of the race's late comer: inert, an outcome, CO holds."""
    run = run_text(tmp_path, STRAY)
    (cell,) = run.results.cells
    assert cell.valid_trials == 3, cell
    assert {v.property: v.status for v in cell.verdicts} == {"CO": "holds"}
    records, _ = read_journal(run.run_dir / "journal.jsonl")
    strays = [r for rec in records for r in rec["racers"] if r.get("role") == "stray"]
    assert len(strays) == 3
    assert all(o["status"] == "done" for r in strays for o in r["result"]["outcomes"]), strays

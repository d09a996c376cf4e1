"""DBOS Transact (3.4.0) under the kinds it gained after it landed: a deploy between pause and resume,
an answers plan over two pauses, and what ``first_checkpoint`` cannot measure there.

What a DBOS user sees: a workflow paused at its recv under v1 and resumed by a v2 process of the
same application version runs v2's code over v1's recorded steps (a step added after the pause runs:
the deploy resumes as v2 would); resumed by a process of another application version, DBOS runs
nothing of it and leaves it PENDING (ENQUEUED, after ``resume_workflow``) for an executor of its own
version, as DBOS documents, and chaos says so with both version strings; a step inserted before the pause under a pinned version is run,
then DBOS's replay check refuses the recorded recv with ``DBOSUnexpectedStepError``: resumed, then
failed midway. An answers plan sends its n-th answer to the n-th recv, and an answer whose send
committed before a kill is not sent again. A workflow is recorded before its start call returns, so
``first_checkpoint`` has no window to sweep and says why.

Each upgrade pair is one source whose body reads the version at run time, so DBOS's computed
application version is the same on both sides: each case sets ``application_version`` itself.
"""

from __future__ import annotations

import pytest
from kits import framework_support as look
from kits.runs import run_text

from chaos.running.journal import read_journal


@pytest.fixture(scope="module", autouse=True)
def _env():
    from chaos.envs import python_for

    python_for("dbos")


def _observations(run_dir, cell: str) -> list[dict]:
    """The journaled observations of a cell's trials (upgrade: v1, v2 and v2 alone's sides)."""
    out = []
    for d in read_journal(run_dir / "journal.jsonl")[0]:
        rec = d.get("record") or d
        if rec.get("cell_id") == cell:
            out.append(rec.get("observations") or {})
    return out


def test_a_deploy_between_pause_and_resume_runs_v2_under_one_version_and_is_left_for_v1_under_another(tmp_path):
    run = run_text(
        tmp_path,
        """
name: dbos_upgrade
kind: upgrade
target: {framework: dbos, backend: sqlite}
workload: upgrade_step_added
resume: "command:true"
trials: 1
seed: 5
timeout_s: 90
matrix:
  case:
    - {name: pinned, workload_params: {application_version: "1"}, upgrade_to: {workload_params: {application_version: "1"}}}
    - {name: new-version, workload_params: {application_version: "1"}, upgrade_to: {workload_params: {application_version: "2"}}}
    - {name: inserted, workload: upgrade_step_inserted, workload_params: {application_version: "1"},
       upgrade_to: {workload_params: {application_version: "1"}}}
    - {name: resumed-by-id, workload_params: {application_version: "1", recover_by: resume_workflow},
       upgrade_to: {workload_params: {application_version: "2", recover_by: resume_workflow}}}
""",
    )
    results = run.results
    # one application version: v2's process recovers the workflow and runs v2's code over v1's steps,
    # its added audit step included: what v2 alone does
    pinned = look.verdict(look.cell(results, "case=pinned"), "UP")
    assert pinned.status == "holds" and "resumed as v2" in pinned.reason and "audit" in pinned.reason
    # another version: DBOS recovers and dequeues only its own version's workflows, so nothing ran
    # under v2 and the workflow waits for an executor of '1' (as DBOS documents): said with both versions
    left = look.verdict(look.cell(results, "case=new-version"), "UP")
    assert left.status == "holds" and "left for v1" in left.reason
    assert "'1'" in left.reason and "'2'" in left.reason and "PENDING" in left.reason
    (obs,) = _observations(run.run_dir, "case=new-version")
    assert obs["v2"]["fired"] == [] and obs["v2"]["after"]["workflow_status"] == "PENDING"
    assert obs["v2"]["after"]["app_version"] == "1"
    # DBOS.resume_workflow from a v2 executor re-enqueues it, and v2's queue does not dequeue it either
    by_id = look.verdict(look.cell(results, "case=resumed-by-id"), "UP")
    assert by_id.status == "holds" and "left for v1" in by_id.reason and "ENQUEUED" in by_id.reason
    # a step inserted before the pause, version pinned: v2 runs it, then DBOS's replay finds its
    # recorded recv where v2 calls something else, refuses, and the workflow ends in ERROR
    inserted = look.verdict(look.cell(results, "case=inserted"), "UP")
    assert inserted.status == "violated" and "DBOSUnexpectedStepError" in inserted.reason and "check" in inserted.reason
    assert results.exit_code == 1


def test_an_answers_plan_answers_each_recv_in_turn_and_an_answer_already_sent_is_not_sent_again(tmp_path):
    results = run_text(
        tmp_path,
        """
name: dbos_answers
kind: kill_sweep
target: {framework: dbos, backend: sqlite}
workload: two_gates
resume: "command:yes"
answers: ["yes", "no"]
trials: 1
seed: 5
timeout_s: 90
kill_points: ["send(topic=approve):after", "recv(topic=approve):after", "status(SUCCESS):after"]
""",
    ).results
    c = look.cell(results, "default")
    # killed after the first answer's message committed and before its recv consumed it: the plan
    # resumes with the second answer for the second recv, not the first again
    first_sent = look.point(c, "send(topic=approve):after#1")
    assert first_sent.effect_counts == {"pre": [1], "gate:yes": [1], "gate2:no": [1], "end": [1]}
    # every point: each answer reached its own gate once, and every recovery finished the workflow
    assert look.verdict(c, "EO").status == "holds"
    assert look.verdict(c, "LIVENESS").status == "holds"
    assert look.point(c, "status(SUCCESS):after").effect_counts == {"pre": [1], "gate:yes": [1], "gate2:no": [1], "end": [1]}
    assert results.exit_code == 0


def test_first_checkpoint_on_dbos_is_unknown_because_dbos_records_a_workflow_before_its_start_returns(tmp_path):
    results = run_text(
        tmp_path,
        """
name: dbos_first
kind: first_checkpoint
target: {framework: dbos, backend: sqlite}
workload: three_step
resume: none
trials: 1
seed: 5
timeout_s: 90
""",
    ).results
    fcl = look.verdict(look.cell(results), "FCL")
    assert fcl.status == "unknown"
    assert "init_workflow" in fcl.reason and "status(PENDING):before" in fcl.reason

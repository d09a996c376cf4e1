"""A stale or unknown answer (issue 26, LangGraph issues 8837 and 8836).

A client that lost track of a thread sends, after its answer was consumed, a continue with no
answer (``invoke(None)``), or an answer addressed to an interrupt id that no interrupt has. The
user asks for either as a stray variant (``resume_by: none_after_answer | unknown_id``) and gets
a verdict: CO (the stray message is inert) and, for the unknown id, AR (an answer addressed to
nothing is refused loudly). The LangGraph behaviour is pinned (1.2.24) and sequential, so every
trial of a cell shows it.
"""

from __future__ import annotations

import pytest
from kits import framework_support as look
from kits.runs import run_text

from chaos.racer.errors import ScenarioError

STALE = """
name: stale
kind: stray_resume
target: {framework: langgraph, backend: sqlite, durability: sync}
workload: two_asks
resume: "command:true"
trials: 2
seed: 26
matrix:
  case:
    - {name: asks-none, workload: two_asks, resume_by: none_after_answer}
    - {name: gates-none, workload: two_gates, resume_by: none_after_answer}
    - {name: gates-unknown, workload: two_gates, resume_by: unknown_id}
    - {name: email-fixed-none, workload: "examples.email_assistant.app:fixed", resume: "command:accept", resume_by: none_after_answer}
"""


@pytest.fixture(scope="module")
def stale(tmp_path_factory):
    results = run_text(tmp_path_factory.mktemp("stale"), STALE).results
    return {c.axes["case"]["name"]: c for c in results.cells}


def test_a_continue_after_a_consumed_answer_answers_the_next_question_of_the_same_node(stale):
    cell = stale["asks-none"]
    assert cell.valid_trials == cell.trials == 2
    co = look.verdict(cell, "CO")
    assert co.status == "violated" and co.evidence.trial_ids and len(co.evidence.trial_ids) == 2
    assert "invoke(None)" in co.reason and "fired gate2:True" in co.reason and "delivered again" in co.reason
    assert [v.property for v in cell.verdicts] == ["CO"]  # AR is the unknown id's


def test_a_continue_before_a_question_of_another_node_is_inert(stale):
    co = look.verdict(stale["gates-none"], "CO")
    assert co.status == "holds" and "inert" in co.reason and "invoke(None)" in co.reason


def test_the_worked_example_sends_the_email_unapproved_on_a_continue(stale):
    # the fixed assistant asks once per pass, but both passes run inside the response_agent subgraph:
    # the parent's one task keeps the consumed answer, and invoke(None) hands it to the e-mail approval
    co = look.verdict(stale["email-fixed-none"], "CO")
    assert co.status == "violated" and "send_email:reply-msg-7781" in co.reason
    assert "send_payment" not in co.reason  # its effect is keyed: the re-run pays nothing new


def test_an_answer_addressed_to_an_unknown_interrupt_is_accepted_silently(stale):
    cell = stale["gates-unknown"]
    co, ar = look.verdict(cell, "CO"), look.verdict(cell, "AR")
    assert co.status == "holds"  # nothing moved: the answer went nowhere
    assert ar.status == "violated" and "accepted silently" in ar.reason and "raised nothing" in ar.reason
    assert len(ar.evidence.trial_ids) == 2


def test_a_stale_form_needs_a_consumed_answer_sent_as_a_command(tmp_path):
    text = STALE.split("matrix:")[0].replace('resume: "command:true"', "resume: none").replace("two_asks", "two_gates")
    with pytest.raises(ScenarioError, match="resume_by: unknown_id follows a consumed answer"):
        run_text(tmp_path, text + "resume_by: unknown_id\n")


def test_other_frameworks_refuse_the_stale_forms_at_load(tmp_path):
    text = "name: s\nkind: stray_resume\ntarget: {framework: crewai, backend: sqlite}\nworkload: gate_after_interrupt\n"
    with pytest.raises(ScenarioError, match="resume_by"):
        run_text(tmp_path, text + 'resume: "command:true"\nresume_by: none_after_answer\n')

"""A user who asks chaos to address a repeated answer to one pause by its id (``resume_by:
interrupt``) on a framework whose answers carry no pause id is told so, cell by cell: the property
is unknown with the reason, never judged on a plain answer sent in its place."""

from __future__ import annotations

from kits import framework_support as look
from kits.runs import run_text


def test_an_answer_addressed_by_id_is_refused_with_the_reason_on_llamaindex_and_autogen(tmp_path):
    results = run_text(
        tmp_path,
        """
name: addressed
kind: stray_resume
target: {framework: llamaindex, backend: file}
workload: gate_after_interrupt
resume: "command:true"
resume_by: interrupt
trials: 1
matrix:
  case:
    - {name: li}
    - {name: ag, framework: autogen}
""",
    ).results
    reasons = {c.axes["case"]["name"]: look.verdict(c, "CO") for c in results.cells}
    assert reasons["li"].status == "unknown" and "HumanResponseEvent carries no pause id" in reasons["li"].reason
    assert reasons["ag"].status == "unknown" and "AgentChat's next task carries no pause id" in reasons["ag"].reason

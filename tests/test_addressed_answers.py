"""A user who asks chaos to address a repeated answer to one pause by its id (``resume_by:
interrupt``) on a framework whose answers carry no pause id is told so when the scenario loads, in
one line naming the field and the framework: never judged on a plain answer sent in its place."""

from __future__ import annotations

import pytest

from chaos.racer.errors import ScenarioError
from chaos.scenario.model import parse_scenario

ADDRESSED = """\
name: addressed
kind: stray_resume
target: {{framework: {framework}, backend: file}}
workload: gate_after_interrupt
resume: "command:true"
resume_by: interrupt
trials: 1
"""


@pytest.mark.parametrize("framework", ["llamaindex", "autogen"])
def test_an_answer_addressed_by_id_is_refused_at_load_with_the_reason(framework):
    with pytest.raises(ScenarioError) as err:
        parse_scenario(ADDRESSED.format(framework=framework), "addressed.yaml")
    said = str(err.value)
    assert "addressed.yaml:6: resume_by:" in said and f"{framework} does not read the interrupt form" in said
    assert "no interrupt ids to address an answer to" in said

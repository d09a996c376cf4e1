"""A user puts several kinds in one scenario file with the ``case`` axis."""

from __future__ import annotations

from pathlib import Path

import pytest

from chaos.racer.errors import ScenarioError
from chaos.scenario.model import expand, load_scenario, parse_scenario

REPO = Path(__file__).resolve().parents[2]

BASE = """\
name: t
kind: fork
workload: gate_after_interrupt
resume: "command:yes"
matrix:
  case:
"""


def test_each_case_sets_several_axes_at_once_and_names_its_cell():
    s = parse_scenario(
        BASE + "    - {name: f, fork_via: explicit}\n"
        "    - {kind: stray_resume, workload: two_gates, resume_by: interrupt}\n"
        "  backend: [sqlite, memory]\n"
    )
    cells = expand(s)
    assert [c.id for c in cells] == [
        "case=f,backend=sqlite",
        "case=f,backend=memory",
        "case=kind:stray_resume/workload:two_gates/resume_by:interrupt,backend=sqlite",
        "case=kind:stray_resume/workload:two_gates/resume_by:interrupt,backend=memory",
    ]
    assert (cells[0].scenario.kind, cells[0].scenario.fork_via) == ("fork", "explicit")
    assert (cells[3].scenario.kind, cells[3].scenario.workload, cells[3].scenario.resume_by, cells[3].scenario.target.backend) == (
        "stray_resume",
        "two_gates",
        "interrupt",
        "memory",
    )


@pytest.mark.parametrize(
    "case, expected",
    [
        ("    - {colour: red}\n", "t.yaml:5: matrix: matrix case key 'colour' is not an axis; allowed: name, kind"),
        ("    - plain\n", "each matrix case is a mapping of axes to values"),
        (
            "    - {kind: fork, resume: none}\n",
            "t.yaml:6: matrix: (top level): a fork resumes a pending interrupt: set resume to 'command:<value>'",
        ),
    ],
)
def test_a_bad_case_is_refused_with_file_line_and_what_is_allowed(tmp_path, case, expected):
    path = tmp_path / "t.yaml"
    path.write_text(BASE + case)
    with pytest.raises(ScenarioError) as err:
        load_scenario(path)
    assert expected in str(err.value)


def test_the_shipped_contract_scenario_covers_every_contract_kind():
    s = load_scenario(REPO / "scenarios" / "contract_langgraph.yaml")
    kinds = {c.scenario.kind for c in expand(s)}
    assert kinds == {"fork", "stray_resume", "invalid_state", "recovery_determinism"}

"""A workflow with a loop is judged by the pass, not the label: on LlamaIndex, the next pass of a
step that already completed once is progress (PC holds), while a crash inside a pass still shows
as that pass's duplicate (EO)."""

from __future__ import annotations

import shutil
from pathlib import Path

from kits import framework_support as look
from kits.runs import run_text

WORKLOADS = Path(__file__).parent / "workloads"


def test_the_next_pass_of_a_loop_is_progress_not_a_completed_step_run_again(tmp_path):
    shutil.copy(WORKLOADS / "loop_li.py", tmp_path / "loop_li.py")
    results = run_text(
        tmp_path,
        """
name: loop
kind: kill_sweep
target: {framework: llamaindex, backend: file}
workload: loop_li:draft_loop
resume: none
kill_points: ["save(after=check):after#1", "effect(task=draft):after#2"]
trials: 1
""",
    ).results
    c = look.cell(results)
    # killed once the first pass of draft and check is saved: the resume runs draft's second and
    # third passes, which is progress
    after_first = look.point(c, "save(after=check):after#1")
    assert after_first.effect_counts == {"draft:1": [1], "draft:2": [1], "draft:3": [1]}
    assert look.point_verdict(c, "save(after=check):after#1", "PC").status == "holds"
    # killed inside the second pass (after its effect, before its save): that pass runs again
    inside = look.point(c, "effect(task=draft):after#2")
    assert inside.effect_counts == {"draft:1": [1], "draft:2": [2], "draft:3": [1]}
    assert look.point_verdict(c, "effect(task=draft):after#2", "EO").status == "violated"
    assert look.point_verdict(c, "effect(task=draft):after#2", "PC").status == "holds"


def test_an_agents_next_turn_is_progress_not_its_completed_turn_run_again(tmp_path):
    shutil.copy(WORKLOADS / "loop_ag.py", tmp_path / "loop_ag.py")
    shutil.copytree(Path(__file__).resolve().parent.parent / "examples", tmp_path / "examples")
    results = run_text(
        tmp_path,
        """
name: loop_ag
kind: kill_sweep
target: {framework: autogen, backend: file}
workload: loop_ag:two_rounds
resume: none
kill_points: ["save(turn=b):after#1", "effect(task=a):after#2"]
trials: 1
""",
    ).results
    c = look.cell(results)
    # killed once a and b have each taken a turn: a's second turn is progress; the team's own
    # termination condition ends the run after b's second turn
    after_first = look.point(c, "save(turn=b):after#1")
    assert after_first.effect_counts == {"a:1": [1], "b:1": [1], "a:2": [1], "b:2": [1]}
    assert {v.property: v.status for v in after_first.verdicts} == {"EO": "holds", "PC": "holds", "LIVENESS": "holds"}
    # killed inside a's second turn (after its effect, before the save): that turn runs again
    inside = look.point(c, "effect(task=a):after#2")
    assert inside.effect_counts == {"a:1": [1], "b:1": [1], "a:2": [2], "b:2": [1]}
    assert look.point_verdict(c, "effect(task=a):after#2", "PC").status == "holds"

"""A team whose own code knows the human's answers (``answers: workload``) plugs it in on LlamaIndex
and AutoGen as on LangGraph: each pause is answered by the app's ``answer(question)``, given what
the pause asked, and the sweep reaches the gated write."""

from __future__ import annotations

import shutil
from pathlib import Path

from kits import framework_support as look
from kits.runs import run_text

WORKLOADS = Path(__file__).parent / "workloads"
REPO = Path(__file__).resolve().parent.parent


def _sweep(tmp_path: Path, framework: str, factory: str, point: str):
    module = factory.split(":")[0]
    shutil.copy(WORKLOADS / f"{module}.py", tmp_path / f"{module}.py")
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    return run_text(
        tmp_path,
        f"""
name: answered_by_app
kind: kill_sweep
target: {{framework: {framework}, backend: file}}
workload: {factory}
resume: "command:approve"
answers: workload
kill_points: ["{point}"]
trials: 1
""",
    ).results


def test_the_review_loop_is_answered_by_the_apps_own_function_question_by_question(tmp_path):
    results = _sweep(tmp_path, "llamaindex", "own_app_answers_li:review_answered", "effect(task=publish_post)")
    c = look.cell(results)
    # draft 1 was revised, draft 2 approved (the function read each question): the publish was
    # reached, and a kill right after it publishes again on resume
    p = look.point(c, "effect(task=publish_post)")
    assert p.effect_counts == {"publish_post:post-1": [2]}
    assert look.point_verdict(c, "effect(task=publish_post)", "LIVENESS").status == "holds"


def test_the_refund_handoff_is_answered_by_the_apps_own_function(tmp_path):
    results = _sweep(tmp_path, "autogen", "own_app_answers_ag:refund_answered", "effect(task=refund_flight)")
    c = look.cell(results)
    p = look.point(c, "effect(task=refund_flight)")
    assert p.effect_counts == {"refund_flight:ABC123": [2]}
    assert look.point_verdict(c, "effect(task=refund_flight)", "LIVENESS").status == "holds"

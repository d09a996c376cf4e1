"""A user whose graph asks for several approvals gives an answer plan, and every kind that answers
an interrupt follows it: a sweep's resume reaches every approval, a fork resumes with the value the
user chose, and a matrix case can vary the workload's parameters."""

from __future__ import annotations

import shutil
from pathlib import Path

from kits.runs import run_text

from chaos.scenario.model import expand, parse_scenario

WORKLOADS = Path(__file__).parent / "workloads"


def test_a_sweep_with_an_answer_plan_resumes_through_every_approval(tmp_path):
    shutil.copy(WORKLOADS / "graph_workloads.py", tmp_path / "graph_workloads.py")
    out = run_text(
        tmp_path,
        """\
        name: plan_sweep
        kind: kill_sweep
        target: {framework: langgraph, backend: sqlite, durability: sync}
        workload: graph_workloads:payment_approvals  # approvals fires audit from a thread, which the preflight refuses
        resume: "command:ok"
        answers: [ok, send]
        kill_points: ["effect(task=send_payment)"]
        trials: 1
        seed: 3
        """,
    )
    (cell,) = out.results.cells
    (point,) = cell.points
    assert point.point.startswith("effect(task=send_payment):after")
    # killed right after the payment, the fresh process answered the payment again (the task
    # never completed) and then the e-mail: the second approval was reached
    # (effects are counted per effect key: a gated effect's key carries the answer it fired with)
    assert point.effect_counts["send_email:send"] == [1]
    assert point.effect_counts["send_payment:ok"] == [2]
    liveness = next(v for v in cell.verdicts if v.property == "LIVENESS")
    assert liveness.status == "holds", liveness.reason


def test_a_sweep_resume_that_finds_the_thread_running_continues_it_and_answers_by_the_plan(tmp_path):
    # killed after pre's checkpoint, before the first approval was asked: nothing waits for an
    # answer, so the fresh process continues the thread (invoke(None)), and then answers both
    # approvals it stops at by the plan, until the run completes (it used to stop at the first)
    out = run_text(
        tmp_path,
        """\
        name: plan_sweep_mid_run
        kind: kill_sweep
        target: {framework: langgraph, backend: sqlite, durability: sync}
        workload: two_gates
        resume: "command:ok"
        answers: [ok, go]
        kill_points: ["put(step=1,source=loop):after"]
        trials: 1
        seed: 3
        """,
    )
    (cell,) = out.results.cells
    (point,) = cell.points
    assert point.resume_outcomes == ["done"]
    assert point.effect_counts["gate:ok"] == [1] and point.effect_counts["gate2:go"] == [1] and point.effect_counts["end"] == [1]
    assert next(v for v in cell.verdicts if v.property == "LIVENESS").status == "holds"
    assert next(v for v in cell.verdicts if v.property == "AA").status == "holds"  # every approval came from the plan


def test_a_fork_resumes_with_the_second_value_the_user_chose(tmp_path):
    out = run_text(
        tmp_path,
        """\
        name: fork_value
        kind: fork
        target: {framework: langgraph, backend: sqlite, durability: sync}
        workload: gate_after_interrupt
        resume: "command:yes"
        fork_value: false
        fork_via: explicit
        trials: 1
        """,
    )
    (cell,) = out.results.cells
    fd = next(v for v in cell.verdicts if v.property == "FD")
    assert fd.status == "holds", fd.reason
    assert "the fork saw False" in fd.reason


def test_a_matrix_case_may_set_the_workloads_parameters():
    scenario = parse_scenario(
        """\
name: params
kind: kill_sweep
workload: three_step
matrix:
  case:
    - {name: small, workload_params: {size: 1}}
    - {name: large, workload_params: {size: 100}}
""",
        "params.yaml",
    )
    assert [c.scenario.workload_params for c in expand(scenario)] == [{"size": 1}, {"size": 100}]

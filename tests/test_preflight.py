"""A team's graph that is wired wrong is refused before any trial, with what to change.

Before a run folder is written, one racer builds the user's workload and runs it once without
faults (``chaos.running.preflight``). A graph compiled with its own saver or without one, a
``gated_task`` that names a node instead of an effect label, an answer the graph cannot take: each
is exit 3 with one line on the console naming the scenario file, the factory and the fix, and no
run folder. Measured instead, each of these used to come out as a framework violation (or died
inside chaos).
"""

from __future__ import annotations

import pytest
from kits.robustkit import chaos

SCENARIO = """\
name: wiring
kind: kill_sweep
target: {{framework: langgraph, backend: sqlite, durability: sync}}
workload: tests.workloads.user_workloads:{factory}
resume: "command:true"
kill_points: ["effect(task=send_payment)"]
trials: 1
seed: 4
"""


def _run(tmp_path, factory: str):
    scenario = tmp_path / "wiring.yaml"
    scenario.write_text(SCENARIO.format(factory=factory))
    return chaos(["run", str(scenario), "--out", str(tmp_path / "out"), "-q"], tmp_path / "state")


@pytest.mark.parametrize(
    ("factory", "said"),
    [
        ("approval_own_saver", "wrote no checkpoint through ctx.checkpointer: compile the graph with checkpointer=ctx.checkpointer"),
        ("approval_no_checkpointer", "AttributeError"),
        ("approval_gated_by_node", "gated_task 'approve' never fired as an effect after the interrupt was answered"),
        ("approval_wants_a_dict", "did not accept the answer True: TypeError"),
        ("approval_audit_after_return", "fired 1 effect(s) outside a running task (audit)"),
    ],
)
def test_a_miswired_graph_is_refused_with_exit_3_and_the_fix_on_the_console(tmp_path, factory, said):
    out = _run(tmp_path, factory)
    console = out.stdout + out.stderr
    assert out.returncode == 3, console
    assert f"wiring.yaml: workload 'tests.workloads.user_workloads:{factory}'" in console
    assert said in console
    assert "nothing was counted" in console
    assert not (tmp_path / "out").exists()


def test_a_graph_wired_right_passes_the_preflight_and_is_measured(tmp_path):
    out = _run(tmp_path, "approval")
    assert out.returncode == 1, out.stdout + out.stderr  # LangGraph re-runs the node whose writes were lost: EO violated
    assert "run folder:" in out.stdout


def test_a_kind_that_measures_an_error_is_not_refused_for_it(tmp_path):
    """invalid_state's workloads raise by design: the preflight does not call that miswiring."""
    from chaos.running.preflight import wiring_problem
    from chaos.scenario.model import Scenario, expand

    raised = {
        "status": "ok",
        "trace": [{"barrier": "put(step=-1,source=input):before#1"}],
        "outcomes": [
            {"status": "error", "error": {"type": "ValidationError", "message": "count", "where": "app.py:3"}, "action": {"op": "run"}}
        ],
    }
    base = {"name": "p", "target": {"framework": "langgraph", "backend": "sqlite"}, "workload": "invalid_type"}
    (invalid,) = expand(Scenario.model_validate({**base, "kind": "invalid_state"}))
    (sweep,) = expand(Scenario.model_validate({**base, "kind": "kill_sweep", "resume": "none"}))
    assert wiring_problem(invalid, raised) is None
    said = wiring_problem(sweep, raised)
    assert said is not None and said.startswith("raised in an uninterrupted run (no fault injected): ValidationError: count (app.py:3)")

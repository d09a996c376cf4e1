"""A CrewAI flow that finishes in a method its workload does not name as an end is refused before
any trial, with that sentence; named, it is measured.

The flow is CrewAI's own router example (``tests.workloads.crew_router``, ported from the Flows
docs). By hand, without chaos, its run with the flag set returns from ``kickoff`` after
``start_method``, ``second_method`` and ``third_method`` (its ``@persist`` rows, in that order):
``fourth_method`` never runs. CrewAI saves no "finished" mark, so chaos counts a flow finished
once one of ``CrewWorkload.ends`` completed, and ``ends`` defaults to the last of ``methods``
(``fourth_method``). Before, such a workload was measured: every trial's flow, finished in
``third_method``, was judged still waiting (LIVENESS violated).
"""

from __future__ import annotations

from kits.appruns import only_verdict, run_from_repo
from kits.robustkit import chaos

SCENARIO = """\
name: crew_router
kind: kill_sweep
target: {{framework: crewai, backend: sqlite}}
workload: tests.workloads.crew_router:{factory}
resume: none
kill_points: ["save_state(method=second_method):after"]
trials: 1
seed: 7
timeout_s: 120
"""


def test_a_flow_that_finishes_outside_its_ends_is_refused_at_preflight(tmp_path):
    scenario = tmp_path / "crew_router.yaml"
    scenario.write_text(SCENARIO.format(factory="router_default_ends"))
    out = chaos(["run", str(scenario), "--out", str(tmp_path / "out"), "-q"], tmp_path / "state")
    console = out.stdout + out.stderr
    assert out.returncode == 3, console
    assert "crew_router.yaml: workload 'tests.workloads.crew_router:router_default_ends'" in console
    assert "finished its uninterrupted run in method 'third_method', which is not one of its ends (fourth_method" in console
    assert "the baseline finished somewhere chaos does not count as an end" in console
    assert "nothing was counted" in console
    assert not (tmp_path / "out").exists()


def test_the_same_flow_with_both_branches_as_its_ends_is_measured(tmp_path):
    import yaml

    results = run_from_repo(yaml.safe_load(SCENARIO.format(factory="router_both_ends")), tmp_path / "reports")
    (cell,) = results.cells
    # killed after the router saved its state, the kickoff by id runs the flow to third_method: it ends
    assert only_verdict(cell, "LIVENESS").status == "holds"

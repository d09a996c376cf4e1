"""What a team's crash tests look like with the chaos pytest plugin (run from this folder):

    python -m pytest examples/in_pytest --chaos-baseline examples/in_pytest/chaos-baseline.yaml

Without the baseline ``test_a_crash_never_charges_twice`` fails, naming EO and the run folder;
with it the known duplicate is accepted (and a new violation would still fail).
"""

from __future__ import annotations

from typing import Any

from chaos.pytest_plugin import assert_violated
from examples.in_pytest.my_graph import checkout

SWEEP = {"name": "checkout_sweep", "kind": "kill_sweep", "resume": "none", "trials": 1, "seed": 7}


def test_a_crash_never_charges_twice(chaos_run: Any) -> None:
    results = chaos_run(SWEEP, workload=checkout)
    results.assert_holds("EO")  # AssertionError: names the cells, kill points' trials and the run folder


def test_langgraph_still_reruns_a_killed_node(chaos_run: Any) -> None:
    results = chaos_run(SWEEP, workload=checkout)
    assert_violated(results, "EO")  # pins the known bug: fails the day LangGraph stops re-running the node

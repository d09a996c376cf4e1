"""A sweep answers every pause its run stops at, as the team's own driver does.

The OpenAI Agents SDK's "agents as tools" example (``tests/workloads/agents_as_tools_conditional.py``,
ported from examples/agent_patterns/agents_as_tools_conditional.py) asks twice for one request:
approve ``respond_spanish``, then, from inside the Spanish agent, approve ``get_user_name``. The
example's driver approves while the run has interruptions, so the uninterrupted run looks the user
up once. By hand (the app's file store, SIGKILL, a fresh process that restores, approves and runs
until the run ends; no chaos): a kill once the second pause is saved looks the user up once; a kill
after the look-up and before the final state is saved looks them up twice.

Before, ``resume: command:true`` answered only the first pause: the dry run stopped at the second
with nothing fired, the look-up after the kill was filed as "an effect the uninterrupted run never
fires", and the points after the look-up, where the real duplicate is, were never swept.

The example's tools are enabled by its run context (``AppContext``, a pydantic model), which the
workload hands to chaos (``context=``): without it the example is refused at preflight.
"""

from __future__ import annotations

import pytest
from kits.appruns import only_point, only_verdict, run_from_repo


@pytest.fixture(scope="module", autouse=True)
def _env():
    from chaos.envs import python_for

    python_for("openai_agents")


def test_a_sweep_answers_the_nested_approval_too_and_finds_the_lookup_a_crash_repeats(tmp_path):
    results = run_from_repo(
        {
            "name": "agents_as_tools",
            "kind": "kill_sweep",
            "target": {"framework": "openai_agents", "backend": "file"},
            "workload": "tests.workloads.agents_as_tools_conditional:agents_as_tools",
            "resume": "command:true",
            "kill_points": ["save_state(interruptions=1):after#2", "effect(task=get_user_name)"],
            "trials": 1,
        },
        tmp_path,
    )
    (cell,) = results.cells
    assert cell.baseline.effects == {"get_user_name": 1}  # the example's driver approves both pauses
    second_pause = only_point(cell, "save_state(interruptions=1):after#2")
    assert second_pause.effect_counts["get_user_name"] == [1]
    assert only_verdict(second_pause, "EO").status == "holds"
    looked_up = only_point(cell, "effect(task=get_user_name):after#1")
    assert looked_up.duplicates == ["get_user_name"]
    assert only_verdict(cell, "EO").status == "violated"

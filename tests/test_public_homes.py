"""A team imports its guard and effect helpers from one public place, and the old paths still work.

``chaos.workloads`` is where a team's own app finds the types chaos gives it (``WorkloadContext``,
each framework's workload types); the guard a LangGraph scenario measures (``Guard``) and the effect
helpers of a graph the Agent Server serves (``effect``, ``effect_once``) live there too, although
their code is in the framework's package. The paths teams used before the frameworks became packages
(``chaos.targets.guards``, ``chaos.targets.langgraph_server_app``, ``chaos.savers:`` references) are
the same modules under their old names.
"""

from __future__ import annotations

import subprocess
import sys


def test_guard_and_effect_helpers_have_a_public_home_in_chaos_workloads():
    import chaos.targets.langgraph.guards as guards
    import chaos.targets.langgraph_server.app as served
    import chaos.workloads
    from chaos.workloads import Guard, effect, effect_once

    assert Guard is guards.Guard and effect is served.effect and effect_once is served.effect_once
    assert {"Guard", "effect", "effect_once"} <= set(chaos.workloads.__all__)
    guard = Guard(name="claim_row", refuses=(KeyError,))
    assert guard.name == "claim_row"


def test_the_old_paths_are_the_moved_modules():
    import chaos.savers
    import chaos.targets.guards
    import chaos.targets.langgraph.guards
    import chaos.targets.langgraph.savers
    import chaos.targets.langgraph_server.app
    import chaos.targets.langgraph_server_app
    from chaos.targets.guards import Guard
    from chaos.targets.langgraph.custom_saver import saver_ref

    assert chaos.targets.guards is chaos.targets.langgraph.guards and Guard is chaos.targets.langgraph.guards.Guard
    assert chaos.targets.langgraph_server_app is chaos.targets.langgraph_server.app
    assert chaos.savers is chaos.targets.langgraph.savers and chaos.savers.lmdb is chaos.targets.langgraph.savers.lmdb
    assert saver_ref("chaos.savers:lmdb") == "chaos.targets.langgraph.savers:lmdb"


def test_importing_chaos_workloads_imports_no_framework():
    """The public names are imported on first use: an app of one framework never imports another."""
    code = "import sys, chaos.workloads; print(sorted(m for m in sys.modules if m.split('.')[0] in ('langgraph', 'langgraph_sdk', 'langchain_core')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"

"""A team measures its graph as it ships: a scenario that leaves ``durability`` out runs a user's
workload (``package.module:factory``) with LangGraph's own default; the built-in workloads, chaos's
measurement instruments, keep ``sync``. A scenario that names a mode gets that mode."""

from __future__ import annotations

import yaml

from chaos.scenario.model import Scenario, expand
from chaos.targets.langgraph.options import Options


def _durabilities(text: str) -> dict[str, str]:
    scenario = Scenario.model_validate(yaml.safe_load(text))
    return {c.id: Options.of(c.scenario).durability for c in expand(scenario, check=False)}


def test_a_users_workload_runs_with_langgraphs_default_and_a_builtin_one_with_sync():
    assert _durabilities("name: x\nkind: kill_sweep\nworkload: team.app:graph\n") == {"default": "default"}
    assert _durabilities("name: x\nkind: kill_sweep\nworkload: three_step\n") == {"default": "sync"}


def test_a_mode_the_scenario_names_is_kept():
    text = "name: x\nkind: kill_sweep\ntarget: {durability: sync}\nworkload: team.app:graph\n"
    assert _durabilities(text) == {"default": "sync"}
    axis = "name: x\nkind: kill_sweep\nworkload: team.app:graph\nmatrix: {durability: [exit, async]}\n"
    assert _durabilities(axis) == {"durability=exit": "exit", "durability=async": "async"}


def test_each_case_gets_the_default_of_its_own_workload():
    text = (
        "name: x\nkind: kill_sweep\nworkload: three_step\n"
        "matrix:\n  case:\n    - {name: mine, workload: 'team.app:graph'}\n    - {name: builtin, workload: three_step}\n"
    )
    assert _durabilities(text) == {"case=mine": "default", "case=builtin": "sync"}


def test_other_frameworks_are_left_as_they_were():
    text = "name: x\nkind: kill_sweep\ntarget: {framework: crewai}\nworkload: team.app:crew\n"
    assert _durabilities(text) == {"default": "sync"}

"""The Agent Server's orchestrator half: a team's ``langgraph.json`` checked at load, a server per cell.

Why: shared code used to name this framework to check a ``path/langgraph.json#graph_id`` workload
and loaded its host by a ``module:function`` string. Here both are the framework's, behind the
capabilities of ``chaos.targets.hooks`` (``INFO.hooks`` names this module):

* ``validate`` and ``owns_workload`` (``ValidatesScenario``): a ``langgraph.json#graph_id``
  workload is this framework's own form; the file must load and serve that graph id;
* ``host`` (``HostsCells``): the cell's ``langgraph dev`` server (``chaos.targets.langgraph_server.host``).

Orchestrator side: never imported by a racer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from chaos.targets.hooks import HostContext, Refusal
from chaos.targets.langgraph_server.config import ConfigError, is_config_ref
from chaos.targets.langgraph_server.config import load as load_team_config
from chaos.targets.langgraph_server.host import AgentServer
from chaos.targets.langgraph_server.host import host as agent_server

if TYPE_CHECKING:
    from chaos.scenario.model import Cell, Scenario


def owns_workload(ref: str) -> bool:
    """A team's own ``path/langgraph.json#graph_id`` (``chaos.targets.langgraph_server.config``)."""
    return is_config_ref(ref)


def validate(scenario: Scenario, search: list[str]) -> Refusal | None:
    """A team's ``langgraph.json`` workload loads and has the graph id it names."""
    if not is_config_ref(scenario.workload):
        return None
    try:
        load_team_config(scenario.workload, search)
    except ConfigError as exc:
        return Refusal(("workload",), str(exc))
    return None


def host(cell: Cell, context: HostContext) -> AgentServer:
    """The cell's Agent Server, not yet started (``HostsCells``)."""
    return agent_server(cell, context)

"""A team's own ``langgraph.json``, served as deployed: raced and swept by chaos.

The team's folder has its ``langgraph.json`` (two graphs, one a relative file path, a local
dependency folder, an ``env``), as they deploy it; the scenario names it and a graph id:
``workload: team/langgraph.json#agent``. The graph imports a helper from the dependency folder,
reads the env, and counts its payment with ``chaos.targets.langgraph_server.app.effect``. chaos
serves that file (per cell for the race, in the racer for the sweep) and addresses graph ``agent``.
A file that is missing, does not parse, lacks the graph id or sets what chaos cannot honour is
refused at load, in one line naming the file.
"""

from __future__ import annotations

import json
import textwrap

import pytest
from kits.runs import run_text, write_scenario

from chaos.racer.errors import ScenarioError
from chaos.running.journal import read_journal
from chaos.scenario.model import load_scenario

AGENT = """
import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt
from team_tools import amount

from chaos.targets.langgraph_server.app import effect


class State(TypedDict, total=False):
    log: Annotated[list, operator.add]


def quote(state):
    return {"log": ["quote"]}


def pay(state):
    approved = interrupt({"question": f"pay {amount()}?"})
    effect("pay", f"{approved}:{amount()}")  # the team's payment call goes here; then it is counted
    return {"log": ["pay"]}


def make():
    g = StateGraph(State)
    g.add_node("quote", quote)
    g.add_node("pay", pay)
    g.add_edge(START, "quote")
    g.add_edge("quote", "pay")
    g.add_edge("pay", END)
    return g.compile()


graph = make()
"""

OTHER = """
from langgraph.graph import END, START, StateGraph
from typing import TypedDict


class State(TypedDict, total=False):
    log: list


graph = StateGraph(State).add_node("noop", lambda s: {}).add_edge(START, "noop").add_edge("noop", END).compile()
"""

TOOLS = """
import os


def amount():
    return os.environ["TEAM_AMOUNT"]
"""

CONFIG = {
    "dependencies": [".", "./lib"],
    "graphs": {"agent": "./agents/pay_agent.py:graph", "other": "./agents/other.py:graph"},
    "env": {"TEAM_AMOUNT": "40EUR"},
    "python_version": "3.11",
}

SCENARIO = """
name: team_json
kind: race
target: {framework: langgraph_server, backend: inmem}
workload: team/langgraph.json#agent
workload_params: {gated_task: pay, multitask_strategy: enqueue}
resume: "command:yes"
racers: {k: 4}
trials: 2
seed: 9
timeout_s: 120
matrix:
  case:
    - {name: race}
    - {name: sweep, kind: kill_sweep, trials: 1, kill_points: ["effect(task=pay)", "put(step=2"]}
"""


def team_folder(root, config=CONFIG):
    team = root / "team"
    (team / "agents").mkdir(parents=True)
    (team / "lib" / "team_tools").mkdir(parents=True)
    (team / "agents" / "pay_agent.py").write_text(textwrap.dedent(AGENT))
    (team / "agents" / "other.py").write_text(textwrap.dedent(OTHER))
    (team / "lib" / "team_tools" / "__init__.py").write_text(textwrap.dedent(TOOLS))
    (team / "langgraph.json").write_text(json.dumps(config) if isinstance(config, dict) else config)
    return team


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("team_json")
    team_folder(tmp)
    return run_text(tmp, SCENARIO)


def test_the_teams_own_file_is_raced_on_its_graph_id_and_pays_once(served):
    results = json.loads((served.run_dir / "results.json").read_text())
    race = next(c for c in results["cells"] if c["cell_id"] == "case=race")
    assert race["valid_trials"] == 2 and race["fires"] == {"1": 2}
    assert {v["property"]: v["status"] for v in race["verdicts"]} == {"CO": "holds", "LIVENESS": "holds"}
    records, _ = read_journal(served.run_dir / "journal.jsonl")
    paid = {row["effect_key"] for r in records if r.get("cell_id") == "case=race" for row in r.get("ledger") or [] if row["task"] == "pay"}
    assert paid == {"pay:yes:40EUR"}  # the file's env and its dependency folder reached the served graph


def test_a_sweep_kills_the_server_serving_the_teams_file(served):
    records, _ = read_journal(served.run_dir / "journal.jsonl")
    points = [r for r in records if r.get("kind") == "kill_sweep" and r.get("point")]
    assert any(p["point"].startswith("effect(task=pay)") for p in points) and any(p["point"].startswith("put(step=2") for p in points)
    assert all(p["valid"] for p in points)
    results = json.loads((served.run_dir / "results.json").read_text())
    sweep = next(c for c in results["cells"] if c["cell_id"] == "case=sweep")
    status = {v["property"]: v for v in sweep["verdicts"]}
    # a kill at the payment loses the thread (nothing saved yet): the retry pays again
    assert status["EO"]["status"] == "violated" and "duplicated 'pay:yes:40EUR'" in status["EO"]["reason"]
    assert status["LS"]["status"] == "violated"


@pytest.mark.parametrize(
    ("config", "workload", "says"),
    [
        (CONFIG, "team/nowhere.json#agent", "does not exist"),
        ("{not json", "team/langgraph.json#agent", "does not parse"),
        (CONFIG, "team/langgraph.json#nope", "has no graph 'nope'; it has: agent, other"),
        ({**CONFIG, "auth": {"path": "./auth.py:auth"}}, "team/langgraph.json#agent", "cannot honour (auth: custom authentication"),
        ({**CONFIG, "checkpointer": {"ttl": {}}}, "team/langgraph.json#agent", "cannot honour (checkpointer"),
        ({**CONFIG, "dependencies": ["langchain_openai"]}, "team/langgraph.json#agent", "is not a local folder"),
    ],
)
def test_a_file_chaos_cannot_serve_is_refused_at_load_naming_it(tmp_path, config, workload, says):
    team_folder(tmp_path, config)
    path = write_scenario(tmp_path, SCENARIO.replace("team/langgraph.json#agent", workload))
    with pytest.raises(ScenarioError) as err:
        load_scenario(path)
    msg = str(err.value)
    assert says in msg and "json" in msg and "\n" not in msg


def test_a_langgraph_json_workload_is_for_the_agent_server_only(tmp_path):
    team_folder(tmp_path)
    path = write_scenario(tmp_path, SCENARIO.replace("framework: langgraph_server, backend: inmem", "framework: langgraph"))
    with pytest.raises(ScenarioError, match="langgraph_server only"):
        load_scenario(path)


def test_an_env_file_and_a_module_graph_are_read_as_langgraph_dev_reads_them(tmp_path):
    from chaos.targets.langgraph_server.config import load

    team = team_folder(tmp_path, {**CONFIG, "env": ".env", "graphs": {"agent": "team_tools.graphs:graph"}})
    (team / ".env").write_text("# the team's settings\nexport TEAM_AMOUNT='40EUR'\nREGION=eu\n")
    cfg = load("team/langgraph.json#agent", [str(tmp_path / "elsewhere"), str(tmp_path)])
    assert cfg.file == str(team / "langgraph.json") and cfg.graph_id == "agent"
    assert cfg.env == {"TEAM_AMOUNT": "40EUR", "REGION": "eu"}
    assert cfg.graphs == {"agent": "team_tools.graphs:graph"}  # a module: found through the paths below
    assert cfg.paths == (str(team), str(team / "lib"))
    served = load("team/langgraph.json#agent", [str(tmp_path)]).server_config()
    assert served["dependencies"] == [str(team), str(team / "lib")] and served["env"]["REGION"] == "eu"

"""A team's own graph, as deployed behind the Agent Server, raced and swept by chaos.

The graph is the team's (a graph factory in their module, ``def graph(config)``, named in the
scenario as ``package.module:graph``, as a langgraph.json names it): no chaos context. Its
payment node counts the payment with ``chaos.targets.langgraph_server_app.effect`` after making it.
chaos serves it as graph ``app`` beside the built-ins, races four clients on its approval, and
SIGKILLs the server at the payment.
"""

from __future__ import annotations

import json
import textwrap

import pytest
from kits.runs import run_text

from chaos.running.journal import read_journal

AGENT = '''
import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt

from chaos.targets.langgraph_server_app import effect


class State(TypedDict, total=False):
    log: Annotated[list, operator.add]


def quote(state):
    return {"log": ["quote"]}


def pay(state):
    approved = interrupt({"question": "pay 40 EUR?"})
    effect("pay", approved)  # the team's payment call goes here; then it is counted
    return {"log": ["pay"]}


def graph(config=None):
    """The graph factory langgraph.json names (the server calls it with the run's config)."""
    g = StateGraph(State)
    g.add_node("quote", quote)
    g.add_node("pay", pay)
    g.add_edge(START, "quote")
    g.add_edge("quote", "pay")
    g.add_edge("pay", END)
    return g.compile()
'''

SCENARIO = """
name: own_graph
kind: race
target: {framework: langgraph_server, backend: inmem}
workload: team_agent:graph
workload_params: {gated_task: pay, multitask_strategy: enqueue}
resume: "command:yes"
racers: {k: 4}
trials: 2
seed: 9
timeout_s: 120
matrix:
  case:
    - {name: race}
    - {name: kill-at-payment, kind: kill_sweep, trials: 1, kill_points: ["effect(task=pay)"]}
"""


@pytest.fixture(scope="module")
def own(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("own_graph")
    (tmp / "team_agent.py").write_text(textwrap.dedent(AGENT))
    return run_text(tmp, SCENARIO)


def test_the_teams_graph_is_raced_through_the_server_and_pays_once(own):
    results = json.loads((own.run_dir / "results.json").read_text())
    race = next(c for c in results["cells"] if c["cell_id"] == "case=race")
    assert race["valid_trials"] == 2 and race["fires"] == {"1": 2}
    assert {v["property"]: v["status"] for v in race["verdicts"]} == {"CO": "holds", "LIVENESS": "holds"}


def test_a_kill_at_the_teams_payment_loses_the_thread_and_the_retry_asks_again(own):
    records, _ = read_journal(own.run_dir / "journal.jsonl")
    (point,) = [r for r in records if r.get("kind") == "kill_sweep" and r.get("point")]
    assert point["valid"] and point["point"].startswith("effect(task=pay)")
    resume = next(o for o in point["racers"] if o["role"] == "resume")
    assert resume["result"]["inspect_before"]["thread_found"] is False
    assert [row["task"] for row in point["ledger"]].count("pay") == 1  # paid before the kill; the re-created run waits to be asked again

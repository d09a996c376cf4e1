"""A team's own graph, as deployed behind the Agent Server, raced and swept by chaos.

The graph is the team's (a graph factory in their module, ``def graph(config)``, named in the
scenario as ``package.module:graph``, as a langgraph.json names it): no chaos context. Its
payment node counts the payment with ``chaos.targets.langgraph_server.app.effect`` after making it.
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

from chaos.targets.langgraph_server.app import effect


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


def test_a_kill_at_the_teams_payment_loses_the_thread_and_the_retry_pays_again(own):
    """The client had been told of the pause and had answered; the server paid and died before it
    saved anything. After the restart the thread is gone: the client re-creates it, is asked again,
    answers again, and the payment is made a second time. Judged, not vacuous: EO and LS violated."""
    records, _ = read_journal(own.run_dir / "journal.jsonl")
    (point,) = [r for r in records if r.get("kind") == "kill_sweep" and r.get("point")]
    assert point["valid"] and point["point"].startswith("effect(task=pay)")
    resume = next(o for o in point["racers"] if o["role"] == "resume")
    lost = resume["result"]["inspect_before"]["lost_thread"]
    assert resume["result"]["inspect_before"]["thread_found"] is False
    (out,) = resume["result"]["outcomes"]
    assert out["status"] == "done" and out["lost_thread"] == lost
    assert [(row["task"], row["racer_id"]) for row in point["ledger"] if row["task"] == "pay"] == [("pay", "victim"), ("pay", "resume")]
    results = json.loads((own.run_dir / "results.json").read_text())
    sweep = next(c for c in results["cells"] if c["cell_id"] == "case=kill-at-payment")
    status = {v["property"]: v for v in sweep["verdicts"]}
    assert {k: v["status"] for k, v in status.items()} == {"EO": "violated", "PC": "holds", "LIVENESS": "holds", "LS": "violated"}
    assert "duplicated 'pay:yes'" in status["EO"]["reason"] and lost in status["LS"]["reason"]

"""A run of several Agent Server cells starts one server for the cells that would start it alike.

A team races its approval through the server under two ``multitask_strategy`` settings and its
own graph beside chaos's built-ins. The two built-in cells ask for the same server (the same
graphs, environment and ledger), so the second is served by the first cell's server, idle by
then; the team's graph needs a server that serves it too (another ``langgraph.json``), so that
cell gets its own. Every cell is judged as before, and no server outlives the run.
"""

from __future__ import annotations

import json
import textwrap

import psutil
import pytest
from kits.runs import run_text

AGENT = """
import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt

from chaos.targets.langgraph_server.app import effect


class State(TypedDict, total=False):
    log: Annotated[list, operator.add]


def pay(state):
    approved = interrupt({"question": "pay 40 EUR?"})
    effect("pay", approved)
    return {"log": ["pay"]}


def graph(config=None):
    g = StateGraph(State)
    g.add_node("pay", pay)
    g.add_edge(START, "pay")
    g.add_edge("pay", END)
    return g.compile()
"""

SCENARIO = """
name: shared_server
kind: race
target: {framework: langgraph_server, backend: inmem}
workload: gate_after_interrupt
resume: "command:true"
racers: {k: 2}
trials: 1
seed: 11
timeout_s: 120
matrix:
  case:
    - {name: reject, workload_params: {multitask_strategy: reject}}
    - {name: enqueue, workload_params: {multitask_strategy: enqueue}}
    - {name: own-graph, workload: "team_agent:graph", resume: "command:yes", workload_params: {gated_task: pay, multitask_strategy: enqueue}}
"""


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("shared_server")
    (tmp / "team_agent.py").write_text(textwrap.dedent(AGENT))
    return run_text(tmp, SCENARIO, keep_work=True)


def test_cells_that_ask_for_the_same_server_share_one_and_a_different_graph_gets_its_own(shared):
    servers = sorted(p.name for p in (shared.run_dir / "work").glob("agent-server-*"))
    # cell 0's server served cell 1 too (same graphs, environment, ledger); cell 2 serves the team's graph
    assert servers == ["agent-server-0", "agent-server-2"]
    configs = {name: json.loads((shared.run_dir / "work" / name / "langgraph.json").read_text()) for name in servers}
    assert "app" not in configs["agent-server-0"]["graphs"] and "app" in configs["agent-server-2"]["graphs"]


def test_every_cell_is_judged_as_with_a_server_of_its_own(shared):
    results = json.loads((shared.run_dir / "results.json").read_text())
    cells = {c["cell_id"]: c for c in results["cells"]}
    assert set(cells) == {"case=reject", "case=enqueue", "case=own-graph"}
    for cell in cells.values():
        assert cell["valid_trials"] == 1, cell
        status = {v["property"]: v["status"] for v in cell["verdicts"]}
        assert status["LIVENESS"] == "holds" and status["CO"] in ("holds", "violated")


def test_no_server_outlives_the_run(shared):
    left = []
    for p in psutil.process_iter(["cmdline"]):
        try:
            cmd = " ".join(p.info["cmdline"] or [])
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        if "langgraph_cli" in cmd and str(shared.run_dir) in cmd:
            left.append(cmd)
    assert left == []

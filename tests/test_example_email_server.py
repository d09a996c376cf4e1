"""The worked example (examples/email_assistant) deployed behind LangGraph's Agent Server.

``examples/email_assistant/scenarios/server.yaml``: the graph factories of ``served.py`` served by a
real ``langgraph dev`` as a langgraph.json names them, driven through langgraph-sdk only. What the
app's owner must read (its README): stock still pays twice with four clients (bug 1, the replay,
is the app's whatever serves it), fixed pays once; the server SIGKILLed after the payment loses the
thread (LS), and the client's retry pays again on stock, not on fixed (its idempotency key lives
outside the server). Cut to one race trial per variant (about a minute and a half).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

import chaos

REPO = Path(__file__).resolve().parent.parent
SCENARIO = REPO / "examples" / "email_assistant" / "scenarios" / "server.yaml"


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> chaos.RunResults:
    data = yaml.safe_load(SCENARIO.read_text())
    data["trials"] = 1
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(REPO)  # the scenario names the app as examples.email_assistant.served:<variant>
        return chaos.run(data, out=tmp_path_factory.mktemp("email_server"))


def _verdicts(results: chaos.RunResults, case: str) -> dict[str, tuple[str, str]]:
    (cell,) = [c for c in results.cells if c.axes["case"]["name"] == case]
    assert cell.valid_trials == cell.trials, (case, cell.failure)
    return {v.property: (v.status, v.reason) for v in cell.verdicts}


def test_four_clients_through_the_server_pay_twice_on_stock_once_on_fixed(served):
    stock = _verdicts(served, "stock-race-k4")
    assert stock["CO"][0] == "violated" and "uninterrupted run" in stock["CO"][1]  # bug 1: no race needed
    fixed = _verdicts(served, "fixed-race-k4")
    assert fixed["CO"][0] == "holds" and fixed["LIVENESS"][0] == "holds"


def test_the_server_killed_after_paying_loses_the_thread_and_only_stock_pays_again(served):
    stock = _verdicts(served, "stock-server-kill")
    assert stock["EO"][0] == "violated" and "duplicated 'send_payment:INV-1042'" in stock["EO"][1]
    assert stock["LS"][0] == "violated" and "no longer knows thread" in stock["LS"][1]
    fixed = _verdicts(served, "fixed-server-kill")
    assert {p: s for p, (s, _) in fixed.items()} == {"EO": "holds", "PC": "holds", "LIVENESS": "holds", "LS": "violated"}

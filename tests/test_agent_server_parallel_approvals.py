"""A team's trip agent behind the Agent Server whose first pause asks two approvals at once (two
bookings) and whose second asks to pay, raced through the runs API (issue 39: races at any pause).

The graph is the team's (``def graph(config)``, named as a langgraph.json names it). By hand
(``langgraph dev``, three clients of the runs API answering one pause of one thread at once,
``multitask_strategy: enqueue``):

* at the bookings, a plain answer is refused ("you must specify the interrupt id"); three clients
  each sending ``command: {resume: {id: "approve", ...}}`` for both pending ids book the hotel and
  the flight once each: the first run answers both, the later ones name ids already answered and
  fire nothing (their runs succeed, the thread waits at the payment);
* at the payment (the bookings answered by id on the way), three clients answering it pay once.

chaos's racers send what those clients send, so the race is judged, not refused: LIVENESS and CO
hold, one fire per booking and one payment per trial.
"""

from __future__ import annotations

import textwrap

import pytest
from kits import framework_support as look
from kits.runs import run_text

AGENT = """
import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt

from chaos.targets.langgraph_server.app import effect


class Trip(TypedDict, total=False):
    vals: Annotated[list, operator.add]


def book(what):
    def node(state):
        answer = interrupt(f"approve booking the {what}?")
        if answer == "approve":
            effect("book", what)  # the booking call goes here; then it is counted
        return {"vals": [f"{what}:{answer}"]}

    return node


def pay(state):
    answer = interrupt("pay 900 EUR for the trip?")
    if answer == "approve":
        effect("pay", "900")
    return {"vals": ["paid"]}


def graph(config=None):
    g = StateGraph(Trip)
    g.add_node("book_hotel", book("hotel"))
    g.add_node("book_flight", book("flight"))
    g.add_node("pay", pay)
    g.add_edge(START, "book_hotel")
    g.add_edge(START, "book_flight")
    g.add_edge("book_hotel", "pay")
    g.add_edge("book_flight", "pay")
    g.add_edge("pay", END)
    return g.compile()
"""

SCENARIO = """
name: trip_server
kind: race
target: {framework: langgraph_server, backend: inmem}
workload: trip_agent:graph
workload_params: {gated_task: book, multitask_strategy: enqueue}
resume: "command:approve"
racers: {k: 3}
trials: 2
seed: 39
timeout_s: 120
matrix:
  case:
    - {name: bookings}
    - {name: payment, workload_params: {gated_task: pay, multitask_strategy: enqueue}, at_pause: 2}
"""


@pytest.fixture(scope="module")
def trip(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("trip_server")
    (tmp / "trip_agent.py").write_text(textwrap.dedent(AGENT))
    return run_text(tmp, SCENARIO).results


def test_three_clients_approving_both_bookings_by_id_book_each_once(trip):
    c = look.cell(trip, "case=bookings")
    assert c.valid_trials == 2 and not c.racer_errors  # no client was told to specify the interrupt id
    assert c.fires == {"1": 2}  # hotel once, flight once, in each trial
    assert look.verdict(c, "LIVENESS").status == "holds"
    assert look.verdict(c, "CO").status == "holds"


def test_a_race_at_the_payment_answers_both_bookings_by_id_on_the_way(trip):
    c = look.cell(trip, "case=payment")
    assert c.valid_trials == 2 and not c.racer_errors  # the parking client reached the payment
    assert c.fires == {"1": 2}
    assert look.verdict(c, "LIVENESS").status == "holds"
    assert look.verdict(c, "CO").status == "holds"

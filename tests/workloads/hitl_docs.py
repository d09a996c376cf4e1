"""Human-in-the-loop examples of LangGraph's own docs, ported as a team would bring them to chaos.

Source: the LangGraph docs' "Interrupts" page (docs.langchain.com/oss/python/langgraph/interrupts,
formerly langchain-ai.github.io/langgraph/how-tos/human_in_the_loop/), sections "Using with
subgraphs called as functions", "Handling multiple interrupts" (resume them all with a map by
interrupt id), "Validating human input" and "Approve or reject". The graphs are the docs' own,
renamed to what a team would do with them; the docs' counters and ``print`` calls are effects
(``ctx.effect``), and nothing else is added. No model is needed: the docs' examples have none.

``subgraph_review``: a parent node notifies the reviewer and calls a subgraph as a function; the
subgraph's ``human_node`` asks for a name (``interrupt``) and records it. The parent node runs
again when the answer comes (the docs' point), so an uninterrupted run notifies twice.

``parallel_bookings``: two nodes run in parallel from START, each asking to approve its booking
(a hotel, a flight); the answer must be a map by interrupt id (a plain value is refused while both
are pending). Each approved booking is a ``book`` effect.

``validate_age``: the docs' validation loop: ``interrupt`` again until the answer is a positive
integer, then ``record_age``. A plan whose first answer is not an age is asked again by design.

``bookings_then_pay``: the docs' two parallel bookings, then one more approval (the docs'
approve-or-reject) before paying: a trip agent's first pause has two interrupts at once, its second
one. Each approved booking is a ``book`` effect; the approved payment, ``pay``.

``two_reviews``: the docs' approve-or-reject node twice in a row (approve the draft, approve the
send), then ``send_email``; each review answered ``approve`` goes on, anything else ends the run.
"""

from __future__ import annotations

import operator
from typing import Annotated, TypedDict


class NameState(TypedDict, total=False):
    state_counter: int
    name: str


def subgraph_review(ctx):
    from langgraph.graph import START, StateGraph
    from langgraph.types import interrupt

    from chaos.workloads.langgraph import LangGraphWorkload

    def node_in_subgraph(state):
        # the docs: "This code will **NOT** run again!" (the subgraph saved its step)
        return {"state_counter": state.get("state_counter", 0) + 1}

    def human_node(state):
        answer = interrupt("what is your name?")  # the docs' question
        ctx.effect("record_name", answer)
        return {"name": answer}

    sub = StateGraph(NameState)
    sub.add_node("some_node", node_in_subgraph)
    sub.add_node("human_node", human_node)
    sub.add_edge(START, "some_node")
    sub.add_edge("some_node", "human_node")
    subgraph = sub.compile()  # called as a function inside a node: the parent's checkpointer

    def parent_node(state):
        # the docs: "This code will run again on resuming!": here it notifies the reviewer
        ctx.effect("notify_reviewer")
        return subgraph.invoke(state)

    g = StateGraph(NameState)
    g.add_node("parent_node", parent_node)
    g.add_edge(START, "parent_node")
    return LangGraphWorkload(graph=g.compile(checkpointer=ctx.checkpointer), input={"state_counter": 1}, gated_task="record_name")


class TripState(TypedDict, total=False):
    vals: Annotated[list[str], operator.add]


def parallel_bookings(ctx):
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    from chaos.workloads.langgraph import LangGraphWorkload

    def book(what: str):
        def node(state):
            answer = interrupt(f"approve booking the {what}?")
            if answer == "approve":
                ctx.effect("book", what)
            return {"vals": [f"{what}:{answer}"]}

        return node

    g = StateGraph(TripState)
    g.add_node("book_hotel", book("hotel"))
    g.add_node("book_flight", book("flight"))
    g.add_edge(START, "book_hotel")
    g.add_edge(START, "book_flight")
    g.add_edge("book_hotel", END)
    g.add_edge("book_flight", END)
    return LangGraphWorkload(graph=g.compile(checkpointer=ctx.checkpointer), input={"vals": []}, gated_task="book")


def bookings_then_pay(ctx):
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    from chaos.workloads.langgraph import LangGraphWorkload

    def book(what: str):
        def node(state):
            answer = interrupt(f"approve booking the {what}?")
            if answer == "approve":
                ctx.effect("book", what)
            return {"vals": [f"{what}:{answer}"]}

        return node

    def pay(state):
        answer = interrupt("pay for the trip?")
        if answer == "approve":
            ctx.effect("pay", "trip")
        return {"vals": [f"pay:{answer}"]}

    g = StateGraph(TripState)
    g.add_node("book_hotel", book("hotel"))
    g.add_node("book_flight", book("flight"))
    g.add_node("pay", pay)
    g.add_edge(START, "book_hotel")
    g.add_edge(START, "book_flight")
    g.add_edge("book_hotel", "pay")
    g.add_edge("book_flight", "pay")
    g.add_edge("pay", END)
    return LangGraphWorkload(graph=g.compile(checkpointer=ctx.checkpointer), input={"vals": []}, gated_task="pay")


class AgeState(TypedDict, total=False):
    age: int


def validate_age(ctx):
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    from chaos.workloads.langgraph import LangGraphWorkload

    def get_age_node(state):
        prompt = "What is your age?"
        while True:
            answer = interrupt(prompt)
            if isinstance(answer, int) and answer > 0:
                break
            prompt = f"'{answer}' is not a valid age. Please enter a positive number."
        ctx.effect("record_age", answer)
        return {"age": answer}

    g = StateGraph(AgeState)
    g.add_node("get_age", get_age_node)
    g.add_edge(START, "get_age")
    g.add_edge("get_age", END)
    return LangGraphWorkload(graph=g.compile(checkpointer=ctx.checkpointer), input={}, gated_task="record_age")


class MailState(TypedDict, total=False):
    draft: str
    log: Annotated[list[str], operator.add]


def two_reviews(ctx):
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Command, interrupt

    from chaos.workloads.langgraph import LangGraphWorkload

    def write_draft(state):
        return {"draft": "Quarterly numbers attached.", "log": ["drafted"]}

    def review(question: str, then: str):
        def node(state):  # the docs' approval_node: approve goes on, anything else ends the run
            decision = interrupt({"question": question, "draft": state["draft"]})
            return Command(goto=then if decision == "approve" else END, update={"log": [f"{question}:{decision}"]})

        return node

    def send_email(state):
        ctx.effect("send_email", state["draft"])
        return {"log": ["sent"]}

    g = StateGraph(MailState)
    g.add_node("write_draft", write_draft)
    g.add_node("review_draft", review("approve the draft?", "review_send"), destinations=("review_send", END))
    g.add_node("review_send", review("send it to the customer?", "send_email"), destinations=("send_email", END))
    g.add_node("send_email", send_email)
    g.add_edge(START, "write_draft")
    g.add_edge("write_draft", "review_draft")
    g.add_edge("send_email", END)
    return LangGraphWorkload(graph=g.compile(checkpointer=ctx.checkpointer), input={"log": []}, gated_task="send_email")

"""LangGraph's "How to Review Tool Calls" how-to, ported as a team would bring it to chaos.

Source: langchain-ai/langgraph, docs/docs/how-tos/human_in_the_loop/review-tool-calls.ipynb (the
notebook as of commit 43f9b6701~1, before the HITL docs were consolidated). The graph is the docs'
own: ``call_llm`` -> ``human_review_node`` (``interrupt`` with the tool call; the answer is
``{"action": "continue" | "update" | "feedback", "data": ...}`` and the node returns a
``Command(goto=...)``) -> ``run_tool`` -> ``call_llm`` -> END. The only changes: the model is a fake
(the next message is read from the conversation, as a real model given the same history would
answer), and the tool's ``print`` (the weather search, the call a team would pay for) is an effect
(``ctx.effect("weather_search", city)``).

A plan ``continue`` asks once and searches "sf"; a plan ``feedback`` then ``continue`` asks twice
(the model re-plans with the city the reviewer asked for) and searches "San Francisco, USA" only.
"""

from __future__ import annotations

from typing import Literal


def fake_llm(messages):
    """The docs' model bound to ``weather_search``: a tool call for "sf" first; after a reviewer's
    feedback (a tool message that is not the search's result) the call again, in the format asked;
    after the search's result, the answer."""
    from langchain_core.messages import AIMessage, ToolMessage

    last = messages[-1]
    calls = sum(1 for m in messages if isinstance(m, AIMessage) and m.tool_calls)
    if isinstance(last, ToolMessage) and last.content == "Sunny!":
        return AIMessage(content="It's sunny!", id=f"ai-{len(messages)}")
    city = "sf" if calls == 0 else "San Francisco, USA"
    call = {"id": f"call-{calls}", "name": "weather_search", "args": {"city": city}}
    return AIMessage(content="", tool_calls=[call], id=f"ai-{len(messages)}")


def review_tool_calls(ctx):
    from langchain_core.tools import tool
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.types import Command, interrupt

    from chaos.workloads.langgraph import LangGraphWorkload

    @tool
    def weather_search(city: str):
        """Search for the weather"""
        ctx.effect("weather_search", city)  # the docs print "Searching for: {city}"
        return "Sunny!"

    class State(MessagesState):
        """Simple state."""

    def call_llm(state):
        return {"messages": [fake_llm(state["messages"])]}

    def human_review_node(state) -> Command[Literal["call_llm", "run_tool"]]:
        last_message = state["messages"][-1]
        tool_call = last_message.tool_calls[-1]
        human_review = interrupt({"question": "Is this correct?", "tool_call": tool_call})
        review_action = human_review["action"]
        review_data = human_review.get("data")
        if review_action == "continue":
            return Command(goto="run_tool")
        elif review_action == "update":
            updated_message = {
                "role": "ai",
                "content": last_message.content,
                "tool_calls": [{"id": tool_call["id"], "name": tool_call["name"], "args": review_data}],
                "id": last_message.id,
            }
            return Command(goto="run_tool", update={"messages": [updated_message]})
        elif review_action == "feedback":
            tool_message = {"role": "tool", "content": review_data, "name": tool_call["name"], "tool_call_id": tool_call["id"]}
            return Command(goto="call_llm", update={"messages": [tool_message]})

    def run_tool(state):
        new_messages = []
        tools = {"weather_search": weather_search}
        for tool_call in state["messages"][-1].tool_calls:
            result = tools[tool_call["name"]].invoke(tool_call["args"])
            new_messages.append({"role": "tool", "name": tool_call["name"], "content": result, "tool_call_id": tool_call["id"]})
        return {"messages": new_messages}

    def route_after_llm(state) -> Literal["__end__", "human_review_node"]:
        if len(state["messages"][-1].tool_calls) == 0:
            return END
        return "human_review_node"

    builder = StateGraph(State)
    builder.add_node(call_llm)
    builder.add_node(run_tool)
    builder.add_node(human_review_node)
    builder.add_edge(START, "call_llm")
    builder.add_conditional_edges("call_llm", route_after_llm)
    builder.add_edge("run_tool", "call_llm")
    graph = builder.compile(checkpointer=ctx.checkpointer)
    return LangGraphWorkload(
        graph=graph, input={"messages": [{"role": "user", "content": "what's the weather in sf?"}]}, gated_task="weather_search"
    )

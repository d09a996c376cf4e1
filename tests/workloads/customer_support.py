"""A flight-support agent whose sensitive tools wait behind a static breakpoint, as a team writes it
after LangGraph's customer-support tutorial (part 3), in our own words, with a scripted chat model.

The shape the tutorial teaches: ``fetch_user_info`` loads the passenger's flights into the state,
the ``assistant`` (a chat model bound to the tools) picks a tool, ``route_tools`` sends a read-only
tool call to ``safe_tools`` and a booking change to ``sensitive_tools``, both return to the
assistant, and the graph is compiled with ``interrupt_before=["sensitive_tools"]``: the run stops
before a booking changes, the user looks at the tool call, and approves with
``graph.invoke(None, config)`` (or rejects by answering the tool call with a ToolMessage).

Here the model is scripted (no LLM): it reads the thread's messages, so a fresh process after a
crash answers as the first one did: it searches flights, then moves the ticket to flight 19250,
then says it is done. The irreversible writes (changing, cancelling a ticket) go through
``ctx.effect``; ``gated_task`` is the change the breakpoint guards.
"""

from __future__ import annotations

from typing import Annotated, Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition
from typing_extensions import TypedDict

from chaos import WorkloadContext
from chaos.workloads.langgraph import LangGraphWorkload

TICKET = "7240005432906569"
NEW_FLIGHT = 19250


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    user_info: str


class ScriptedAssistant(BaseChatModel):
    """A chat model that plans from the conversation so far: search, change the ticket, report."""

    @property
    def _llm_type(self) -> str:
        return "scripted-flight-assistant"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:  # the tutorial binds its tools to the model
        return self

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        answered = sum(1 for m in messages if isinstance(m, ToolMessage))
        if answered == 0:
            call = {"name": "search_flights", "args": {"departure_airport": "CDG", "arrival_airport": "BSL"}, "id": "call-search"}
            reply = AIMessage(content="", tool_calls=[call])
        elif answered == 1:
            call = {"name": "update_ticket_to_new_flight", "args": {"ticket_no": TICKET, "new_flight_id": NEW_FLIGHT}, "id": "call-update"}
            reply = AIMessage(content="", tool_calls=[call])
        else:
            reply = AIMessage(content=f"Your ticket {TICKET} is now on flight {NEW_FLIGHT}.")
        return ChatResult(generations=[ChatGeneration(message=reply)])


def build(ctx: WorkloadContext, *, at_compile: bool = True, after: list[str] | None = None) -> LangGraphWorkload:
    @tool
    def fetch_user_flight_information() -> str:
        """Fetch the passenger's tickets and flights."""
        return f"ticket {TICKET}: flight 19233 CDG -> BSL"

    @tool
    def search_flights(departure_airport: str, arrival_airport: str) -> str:
        """Search flights between two airports."""
        return f"flights {departure_airport} -> {arrival_airport}: {NEW_FLIGHT} tomorrow 09:40"

    @tool
    def update_ticket_to_new_flight(ticket_no: str, new_flight_id: int) -> str:
        """Move the ticket to another flight."""
        ctx.effect("update_ticket", f"{ticket_no}->{new_flight_id}")
        return "Ticket successfully updated to new flight."

    @tool
    def cancel_ticket(ticket_no: str) -> str:
        """Cancel the ticket."""
        ctx.effect("cancel_ticket", ticket_no)
        return "Ticket successfully cancelled."

    safe_tools = [fetch_user_flight_information, search_flights]
    sensitive_tools = [update_ticket_to_new_flight, cancel_ticket]
    sensitive_names = {t.name for t in sensitive_tools}
    runnable = ScriptedAssistant().bind_tools(safe_tools + sensitive_tools)

    def fetch_user_info(state: State) -> dict:
        return {"user_info": fetch_user_flight_information.invoke({})}

    def assistant(state: State) -> dict:
        return {"messages": [runnable.invoke(state["messages"])]}

    def route_tools(state: State) -> str:
        if tools_condition(state) == END:
            return END
        first_call = state["messages"][-1].tool_calls[0]
        return "sensitive_tools" if first_call["name"] in sensitive_names else "safe_tools"

    g = StateGraph(State)
    g.add_node("fetch_user_info", fetch_user_info)
    g.add_node("assistant", assistant)
    g.add_node("safe_tools", ToolNode(safe_tools))
    g.add_node("sensitive_tools", ToolNode(sensitive_tools))
    g.add_edge(START, "fetch_user_info")
    g.add_edge("fetch_user_info", "assistant")
    g.add_conditional_edges("assistant", route_tools, ["safe_tools", "sensitive_tools", END])
    g.add_edge("safe_tools", "assistant")
    g.add_edge("sensitive_tools", "assistant")
    breakpoints = [] if after else ["sensitive_tools"]
    graph = g.compile(checkpointer=ctx.checkpointer, interrupt_before=breakpoints if at_compile else None, interrupt_after=after)
    return LangGraphWorkload(
        graph=graph,
        input={"messages": [("user", "Please move my flight to tomorrow's first one to Basel.")]},
        gated_task="update_ticket",
        interrupt_before=None if at_compile else breakpoints,
    )


def per_invoke(ctx: WorkloadContext) -> LangGraphWorkload:
    """The same agent compiled without breakpoints; the workload passes ``interrupt_before`` to every invoke."""
    return build(ctx, at_compile=False)


def review_after_assistant(ctx: WorkloadContext) -> LangGraphWorkload:
    """The same agent paused after every turn of the assistant (``interrupt_after=["assistant"]``):
    three pauses per run, each approved with ``invoke(None)``."""
    return build(ctx, after=["assistant"])

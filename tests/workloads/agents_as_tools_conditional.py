"""The OpenAI Agents SDK's "agents as tools with conditional enabling" example, ported as a team would.

Source: openai/openai-agents-python, examples/agent_patterns/agents_as_tools_conditional.py (commit
7f7a44f8). An orchestrator has three sub-agents as tools; ``respond_spanish`` needs approval
(``needs_approval=True``) and its Spanish agent calls ``get_user_name``, which needs approval too:
one request asks twice, the second time from inside the nested agent run. ``respond_french`` is
enabled for the "french_spanish" preference (the example's auto-mode choice) and needs no approval;
``respond_italian`` is off. The driver is the example's: ``while result.interruptions``, approve,
``Runner.run(orchestrator, state)``.

Changes, and only these: the models are scripted (the next step is read from the conversation:
the orchestrator calls both language tools in one turn, then combines their answers; the Spanish
agent calls ``get_user_name``, then greets; the French agent answers); ``get_user_name``'s ``print``
is an effect (``ctx.effect("get_user_name")``). The run context is the example's ``AppContext``
(a pydantic model), its preference "french_spanish" (``workload_params.language_preference`` to
change it), handed to chaos as the workload's ``context``.
"""

from __future__ import annotations

from typing import Any

from agents import Agent, AgentBase, ModelSettings, RunContextWrapper
from agents.decorators import tool
from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call
from pydantic import BaseModel

from chaos.workloads import OpenAIAgentsWorkload
from chaos.workloads.openai_agents import MAX_MODEL_CALLS, outputs_in

REQUEST = "Answer in Spanish and French: How do you say good morning?"


def responder(calls: list[tuple[str, dict, str]], final: str) -> ScriptedModel:
    """A model that makes every planned call with no output yet in one turn, then says ``final``."""

    def respond(call: Any) -> list[Any]:
        done = outputs_in(call.input)
        todo = [function_call(n, a, call_id=c) for n, a, c in calls if c not in done]
        return todo or [assistant_message(final)]

    return ScriptedModel([ModelStep.respond(respond)] * MAX_MODEL_CALLS)


class AppContext(BaseModel):
    language_preference: str = "spanish_only"  # "spanish_only", "french_spanish", "european"


def french_spanish_enabled(ctx: RunContextWrapper[AppContext], agent: AgentBase) -> bool:
    """Enable for French+Spanish and European preferences."""
    return ctx.context.language_preference in ["french_spanish", "european"]


def european_enabled(ctx: RunContextWrapper[AppContext], agent: AgentBase) -> bool:
    """Only enable for European preference."""
    return ctx.context.language_preference == "european"


def orchestrator(ctx: Any, preference: str) -> Agent:
    @tool(needs_approval=True)
    async def get_user_name() -> str:
        ctx.effect("get_user_name")  # the example prints "Getting the user's name..."
        return "Kaz"

    spanish_agent = Agent(
        name="spanish_agent",
        instructions=(
            "Respond in Spanish. Call get_user_name exactly once before replying, then greet that "
            "user by name and answer the user's question in a non-empty final response."
        ),
        model_settings=ModelSettings(tool_choice="required"),
        tools=[get_user_name],
        model=responder([("get_user_name", {}, "call_name")], "¡Buenos días, Kaz!"),
    )
    french_agent = Agent(
        name="french_agent",
        instructions="You respond in French. Always reply to the user's question in French.",
        model=responder([], "Bonjour !"),
    )
    italian_agent = Agent(
        name="italian_agent",
        instructions="You respond in Italian. Always reply to the user's question in Italian.",
        model=responder([], "Buongiorno!"),
    )
    question = {"input": REQUEST}
    calls = [("respond_spanish", question, "call_es"), ("respond_french", question, "call_fr")]
    if preference == "european":
        calls.append(("respond_italian", question, "call_it"))
    if preference == "spanish_only":
        calls = calls[:1]
    return Agent(
        name="orchestrator",
        instructions=(
            "You are a multilingual assistant. Call each available language tool requested by the "
            "user exactly once, including every requested tool when multiple languages are requested. "
            "Wait for all tool calls to finish, then combine their responses into a non-empty final "
            "response. Never translate the user's request yourself."
        ),
        tools=[
            spanish_agent.as_tool(
                tool_name="respond_spanish",
                tool_description="Respond to the user's question in Spanish",
                is_enabled=True,
                needs_approval=True,
            ),
            french_agent.as_tool(
                tool_name="respond_french",
                tool_description="Respond to the user's question in French",
                is_enabled=french_spanish_enabled,
            ),
            italian_agent.as_tool(
                tool_name="respond_italian",
                tool_description="Respond to the user's question in Italian",
                is_enabled=european_enabled,
            ),
        ],
        model=responder(calls, "¡Buenos días, Kaz! / Bonjour !"),
    )


def agents_as_tools(ctx: Any) -> OpenAIAgentsWorkload:
    preference = str(ctx.params.get("language_preference", "french_spanish"))  # the example's auto-mode choice
    return OpenAIAgentsWorkload(
        agent=orchestrator(ctx, preference),
        input=REQUEST,
        gated_task="get_user_name",
        context=AppContext(language_preference=preference),
    )

"""AutoGen AgentChat's human-in-the-loop example, ported as its docs write it ("Human-in-the-Loop",
"Using Termination Conditions"): a lazy assistant that hands off to the user when it cannot finish,
a ``RoundRobinGroupChat`` stopped by ``HandoffTermination(target="user") | TextMentionTermination("TERMINATE")``,
the user's answer sent as the next run's task, and the team kept with ``save_state`` / ``load_state``.

The model is replayed (autogen-ext's ``ReplayChatCompletionClient``, no LLM): hand off to the user,
then (given the answer) publish the forecast with a tool, then say TERMINATE. A replayed client's
place in its list lives in the process, not in the team's saved state: a team restored in a fresh
process starts its replies over, so the answered approval is asked again, restart after restart
(the by-hand truth: the same question after every ``load_state`` + answer in a new process).
"""

from __future__ import annotations

from typing import Any


def weather(ctx: Any) -> Any:
    from autogen_agentchat.agents import AssistantAgent
    from autogen_agentchat.base import Handoff
    from autogen_agentchat.conditions import HandoffTermination, TextMentionTermination
    from autogen_agentchat.teams import RoundRobinGroupChat
    from autogen_core import FunctionCall
    from autogen_core.models import CreateResult, ModelFamily, ModelInfo, RequestUsage
    from autogen_core.tools import FunctionTool
    from autogen_ext.models.replay import ReplayChatCompletionClient

    from chaos.workloads.autogen import AutoGenWorkload

    info = ModelInfo(vision=False, function_calling=True, json_output=False, family=ModelFamily.UNKNOWN, structured_output=False)
    usage = RequestUsage(prompt_tokens=0, completion_tokens=0)

    def call(name: str, arguments: str = "{}") -> CreateResult:
        return CreateResult(
            content=[FunctionCall(id=f"call_{name}", arguments=arguments, name=name)],
            finish_reason="function_calls",
            usage=usage,
            cached=False,
        )

    async def publish_forecast(city: str) -> str:
        ctx.effect_hook("publish_forecast", city)
        return f"forecast for {city} published"

    def team(max_turns: int) -> Any:
        replies = [
            call("transfer_to_user"),
            call("publish_forecast", '{"city": "New York"}'),
            "The weather in New York is sunny. TERMINATE",
        ]
        lazy = AssistantAgent(
            "lazy_assistant",
            model_client=ReplayChatCompletionClient(replies * 4, model_info=info),
            tools=[FunctionTool(publish_forecast, name="publish_forecast", description="publish the forecast")],
            handoffs=[Handoff(target="user", message="Transfer to user.")],
            system_message="If you cannot complete the task, transfer to the user. Otherwise, when finished, respond with 'TERMINATE'.",
        )
        stop = HandoffTermination(target="user") | TextMentionTermination("TERMINATE")
        return RoundRobinGroupChat([lazy], termination_condition=stop, max_turns=max_turns)

    return AutoGenWorkload(team=team, task="What is the weather in New York?", gated_task="publish_forecast", tasks={})

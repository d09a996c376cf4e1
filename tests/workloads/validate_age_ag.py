"""An AgentChat validation loop: an assistant asks the user for their age (a handoff to the user)
and records it once the answer is a positive number; any other answer is refused and the same
question asked again, by design. The model is scripted on the conversation (no LLM), so a team
restored with ``load_state`` in a fresh process answers exactly as the team that paused does: given
a wrong answer, both ask again. That repeat is the app's own loop, not the restore's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from chaos.workloads.autogen import AutoGenWorkload
from examples.autogen_refund.app import ScriptedClient, call


def _script(messages: Sequence[Any]) -> Any:
    from autogen_core.models import FunctionExecutionResultMessage, UserMessage

    if any(isinstance(m, FunctionExecutionResultMessage) and any(r.name == "record_age" for r in m.content) for m in messages):
        return "Age recorded. TERMINATE"
    answers = [str(m.content).strip() for m in messages if isinstance(m, UserMessage) and m.source == "user"]
    if len(answers) >= 2 and answers[-1].isdigit() and int(answers[-1]) > 0:
        return call("record_age", age=int(answers[-1]))
    return call("transfer_to_user")  # first ask, or the answer is not a positive number: ask again


def ask_age(ctx: Any) -> Any:
    from autogen_agentchat.agents import AssistantAgent
    from autogen_agentchat.base import Handoff
    from autogen_agentchat.conditions import HandoffTermination, TextMentionTermination
    from autogen_agentchat.teams import RoundRobinGroupChat
    from autogen_core.tools import FunctionTool

    async def record_age(age: int) -> str:
        ctx.effect_hook("record_age", age)
        return f"age {age} recorded"

    def team(max_turns: int) -> Any:
        clerk = AssistantAgent(
            "age_clerk",
            model_client=ScriptedClient(_script),
            tools=[FunctionTool(record_age, name="record_age", description="record the user's age")],
            handoffs=[Handoff(target="user", message="How old are you? Please enter a positive number.")],
        )
        stop = HandoffTermination(target="user") | TextMentionTermination("TERMINATE")
        return RoundRobinGroupChat([clerk], termination_condition=stop, max_turns=max_turns)

    return AutoGenWorkload(team=team, task="Please register me.", gated_task="record_age", tasks={})

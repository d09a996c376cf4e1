"""An AgentChat team with a loop: agents ``a`` and ``b`` take turns twice each (a round-robin team
stopped by its own ``TextMentionTermination`` on b's second
result; a counting condition such as ``MaxMessageTermination`` is reset by AgentChat at every stop,
so a team run one turn at a time never reaches it), each turn calling a tool that fires the agent's
effect with the turn's round (``a:1``, ``b:1``, ``a:2``, ``b:2``)."""

from __future__ import annotations

from typing import Any

from autogen_agentchat.conditions import TextMentionTermination
from autogen_agentchat.teams import RoundRobinGroupChat
from autogen_core.models import AssistantMessage

from chaos.workloads.autogen import AutoGenWorkload
from examples.autogen_refund.app import ScriptedClient, call


def _agent(name: str, effect: Any) -> Any:
    from autogen_agentchat.agents import AssistantAgent
    from autogen_core.tools import FunctionTool

    async def work(round: int) -> str:
        effect(name, round)
        return f"{name} round {round} done"

    def script(messages: Any) -> Any:  # the round: one more than the agent's own turns so far
        return call("work", round=1 + sum(1 for m in messages if isinstance(m, AssistantMessage)))

    return AssistantAgent(name, model_client=ScriptedClient(script), tools=[FunctionTool(work, name="work", description="work")])


def two_rounds(ctx: Any) -> AutoGenWorkload:
    def make(max_turns: int) -> RoundRobinGroupChat:
        agents = [_agent("a", ctx.effect), _agent("b", ctx.effect)]
        return RoundRobinGroupChat(agents, termination_condition=TextMentionTermination("b round 2 done"), max_turns=max_turns)

    return AutoGenWorkload(team=make, tasks={"a": "a", "b": "b"})

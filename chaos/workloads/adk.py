"""Built-in Google ADK workloads: an ``LlmAgent`` whose model is scripted, in a resumable ``App``.

Why a scripted model: chaos runs no LLM and reaches no network. ``ScriptedLlm`` is a ``BaseLlm``
that reads the request's history and calls the next tool of its plan that has no successful
response yet, then answers with text: the same model a Gemini agent would be, for the runner, the
session service and resumability, which is what chaos measures.

* ``three_step``: tools ``a``, ``b``, ``c`` in turn, one effect each, then a text answer.
* ``gate_after_interrupt``: tool ``pre``; tool ``gate`` with ``require_confirmation=True`` (ADK's
  tool confirmation: the invocation pauses on an ``adk_request_confirmation`` function call); its
  effect keyed by the confirmation's ``payload`` (``gate:<payload>``); tool ``end``.

A team's own app returns an ``ADKWorkload`` from its factory (``package.module:factory``): its own
``App`` (resumability on, for a pause to be resumed), the tool names that are effects, and the tool
whose effect a confirmation gates.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.apps import App, ResumabilityConfig
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.tools import FunctionTool, ToolContext
from google.genai import types

from chaos.workloads import WorkloadContext

CONFIRM = "adk_request_confirmation"  # the function call ADK's tool confirmation pauses on
APP_NAME = "chaos_adk"


@dataclass
class ADKWorkload:
    """``app``: the ADK ``App`` (its ``resumability_config`` on for a confirmation to be resumed);
    ``tasks``: tool name -> effect label; ``gated_task``: the effect a confirmation gates;
    ``message``: the user's first message; ``meta``: facts the kinds read."""

    app: App
    tasks: dict[str, str]
    gated_task: str | None = None
    message: str = "go"
    meta: dict[str, Any] = field(default_factory=dict)


class ScriptedLlm(BaseLlm):
    """Calls the tools of ``plan`` in order (the next one without a successful response in the
    request's history), then answers ``final``. No network, no key."""

    model: str = "chaos-scripted"
    plan: list[str] = []
    args: dict[str, dict[str, Any]] = {}  # tool -> the arguments the model calls it with
    final: str = "done"

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        done: set[str] = set()
        for content in llm_request.contents:
            for part in content.parts or []:
                fr = part.function_response
                if fr is not None and fr.name in self.plan and "error" not in (fr.response or {}):
                    done.add(str(fr.name))
        nxt = next((t for t in self.plan if t not in done), None)
        if nxt is None:
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=self.final)]))
        else:
            call = types.FunctionCall(name=nxt, args=dict(self.args.get(nxt, {})))
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(function_call=call)]))


def effect_tool(ctx: WorkloadContext, name: str, *, confirm: bool = False) -> FunctionTool:
    """A tool named ``name`` that fires its effect (keyed by the confirmation's payload when it
    has a confirmation) and returns ``{"ok": name}``."""

    def tool(tool_context: ToolContext) -> dict:
        conf = tool_context.tool_confirmation
        value = (
            None if conf is None or conf.payload is None else (conf.payload if isinstance(conf.payload, str) else json.dumps(conf.payload))
        )
        ctx.effect(name, value)
        return {"ok": name}

    tool.__name__ = name
    tool.__doc__ = f"Runs step {name}."
    return FunctionTool(tool, require_confirmation=confirm)


def app_of(name: str, plan: list[str], tools: list[FunctionTool], resumable: bool = True) -> App:
    agent = LlmAgent(name="agent", model=ScriptedLlm(plan=plan), instruction="Run the steps.", tools=list(tools))
    return App(name=name, root_agent=agent, resumability_config=ResumabilityConfig(is_resumable=resumable))


def three_step(ctx: WorkloadContext) -> ADKWorkload:
    plan = ["a", "b", "c"]
    return ADKWorkload(app=app_of(APP_NAME, plan, [effect_tool(ctx, t) for t in plan]), tasks={t: t for t in plan})


def gate_after_interrupt(ctx: WorkloadContext) -> ADKWorkload:
    plan = ["pre", "gate", "end"]
    tools = [effect_tool(ctx, "pre"), effect_tool(ctx, "gate", confirm=True), effect_tool(ctx, "end")]
    return ADKWorkload(app=app_of(APP_NAME, plan, tools), tasks={t: t for t in plan}, gated_task="gate")


BUILTIN: dict[str, Callable[[WorkloadContext], ADKWorkload]] = {
    "three_step": three_step,
    "gate_after_interrupt": gate_after_interrupt,
}

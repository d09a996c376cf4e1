"""LlamaIndex's human-in-the-loop agent, ported: the ``FunctionAgent`` of LlamaIndex's agent tutorial
("Human in the loop", https://developers.llamaindex.ai/python/framework/understanding/agent/human_in_the_loop),
whose tool ``dangerous_task`` waits for a human with ``ctx.wait_for_event(HumanResponseEvent,
waiter_event=InputRequiredEvent(...))``. The LLM is LlamaIndex's own fake,
``MockFunctionCallingLLM`` (it calls every tool, then answers "Tool calls complete."); the task
fires its effect (``dangerous_task``) once the human said "yes". The tool keeps the docs' ``ctx``
(LlamaIndex finds the Context parameter by its annotation, so this module keeps its annotations as
objects: no ``from __future__ import annotations``); chaos's context is ``chaos_ctx``.

Needs ``llama-index-core`` beside the workflows package (``target.requirements``).
"""

from typing import Any

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.workflow import Context, HumanResponseEvent, InputRequiredEvent

from chaos.workloads.llamaindex import LlamaWorkload


def dangerous_agent(chaos_ctx: Any) -> Any:
    async def dangerous_task(ctx: Context) -> str:
        """A dangerous task that requires human confirmation."""
        question = "Are you sure you want to proceed? "
        response = await ctx.wait_for_event(
            HumanResponseEvent,
            waiter_id=question,
            waiter_event=InputRequiredEvent(prefix=question, user_name="Laurie"),
            requirements={"user_name": "Laurie"},
        )
        if response.response.strip().lower() == "yes":
            chaos_ctx.effect("dangerous_task", "done")
            return "Dangerous task completed successfully."
        return "Dangerous task aborted."

    agent = FunctionAgent(
        tools=[dangerous_task],
        llm=MockFunctionCallingLLM(),
        system_prompt="You are a helpful assistant that can perform dangerous tasks.",
    )
    return LlamaWorkload(workflow=agent, input={"user_msg": "I want to proceed with the dangerous task."}, gated_task="dangerous_task")


async def recover(chaos_ctx: Any, thread: Any) -> None:
    """The team's own resume driver (``resume: app:tests.workloads.li_function_agent:recover``): the
    docs' restore (``Context.from_dict`` + ``run(ctx=...)``), plus what LlamaIndex's
    ``UnserializableKeyWarning`` asks for: the agent's ``memory``, skipped by ``to_dict``, set again
    on the restored run's context before the human's answer is sent (the scenario's plan, else
    "yes"). A run that had ended is left alone; with nothing saved, the agent starts again."""
    from llama_index.core.memory import Memory

    wf = thread.workflow
    if thread.saved is None:
        await thread.drive(wf.run(**thread.input))
        return
    if thread.ended:
        return
    handler = wf.run(ctx=Context.from_dict(wf, thread.saved))
    await handler.ctx.store.set("memory", Memory.from_defaults(session_id=thread.thread_id, token_limit=40000))
    if thread.awaiting_input:
        answer = thread.answer if thread.answer is not None else "yes"
        handler.ctx.send_event(HumanResponseEvent(response=str(answer), user_name="Laurie"))
    await thread.drive(handler)

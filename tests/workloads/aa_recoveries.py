"""Team recovery drivers (``resume: app:``) for the approval-authority stories: each is what a team
might write to "pick the run up after a crash", on its framework's documented calls, with no
human's answer in hand. Each imports its framework only when called (a racer has one framework).
"""

from __future__ import annotations

from typing import Any


async def autogen_continue(ctx: Any, thread: Any) -> None:
    """AgentChat's documented "continue": ``load_state`` the saved team and ``run()`` with no task.
    On a round-robin team that stopped for a human, the next agent speaks: past the pause."""
    if thread.saved is None:
        await thread.run(thread.task)
        return
    if thread.ended:
        return
    await thread.team.load_state(thread.saved)
    await thread.run(None)


async def llamaindex_resend(ctx: Any, thread: Any) -> None:
    """Restore the saved context (``Context.from_dict``) and, where the run waited for the editor,
    send the event the review step would have sent had the editor approved (``Approved``): a
    recovery that "knows" the answer, with no ``HumanResponseEvent`` from anyone."""
    from workflows import Context

    from examples.llamaindex_review.app import Approved

    wf = thread.workflow
    if thread.saved is None:
        await thread.drive(wf.run(**thread.input))
        return
    if thread.ended:
        return
    handler = wf.run(ctx=Context.from_dict(wf, thread.saved))
    if thread.awaiting_input:
        handler.ctx.send_event(Approved(post_id=thread.input["post_id"], revision=1))
    await thread.drive(handler)


def crewai_kickoff(ctx: Any, run: Any) -> Any:
    """CrewAI's documented restore, ``kickoff(inputs={"id": ...})``, whether a review is pending or
    not: CrewAI runs the flow again from its start, so the review is asked again."""
    return run.flow_class().kickoff(inputs={"id": run.thread_id})

"""A post-review workflow on LlamaIndex Workflows, written from the framework's human-in-the-loop
docs: a step returns ``InputRequiredEvent`` to ask a human, the answer comes back as a
``HumanResponseEvent``, and the application saves ``handler.ctx.to_dict()`` to resume later.

``draft`` writes a post (no model: a fixed text, as a ``MockLLM`` would give) and ``ask`` asks the
editor to review it. The editor answers ``revise`` (back to ``draft``: a loop), ``approve``
(``publish`` posts it: the irreversible effect, counted with ``ctx.effect``) or ``reject``
(``archive`` files it away: a second end). Two factories:

* ``stock``: as the docs write it: ``publish`` posts, then returns ``StopEvent``.
* ``fixed``: ``publish`` posts with an idempotency key (the post id, as a publishing API's
  idempotency key would be: a post goes out once), through ``ctx.effect_once``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from workflows import Context, Workflow, step
from workflows.events import Event, HumanResponseEvent, InputRequiredEvent, StartEvent, StopEvent

from chaos.workloads.llamaindex import LlamaWorkload


class Redraft(Event):
    pass


class Drafted(Event):
    post_id: str
    revision: int


class Approved(Event):
    post_id: str
    revision: int


class Rejected(Event):
    post_id: str


class ReviewWorkflow(Workflow):
    def __init__(self, publish: Callable[[str, Any], None], **kw: Any):
        super().__init__(**kw)
        self.publish_effect = publish  # ctx.effect (stock) or ctx.effect_once (fixed)

    @step
    async def draft(self, ctx: Context, ev: StartEvent | Redraft) -> Drafted:
        post_id = await ctx.store.get("post_id", default=None) or str(ev.get("post_id", "post-1"))
        revision = await ctx.store.get("revision", default=0) + 1
        await ctx.store.set("post_id", post_id)
        await ctx.store.set("revision", revision)
        await ctx.store.set("text", f"{post_id}, draft {revision}")  # what a MockLLM would write
        return Drafted(post_id=post_id, revision=revision)

    @step
    async def ask(self, ctx: Context, ev: Drafted) -> InputRequiredEvent:
        return InputRequiredEvent(prefix=f"review {ev.post_id} draft {ev.revision}: approve, revise or reject? ")

    @step
    async def review(self, ctx: Context, ev: HumanResponseEvent) -> Redraft | Approved | Rejected:
        answer = str(ev.response).strip().lower()
        post_id, revision = await ctx.store.get("post_id"), await ctx.store.get("revision")
        if answer == "approve":
            return Approved(post_id=post_id, revision=revision)
        if answer == "reject":
            return Rejected(post_id=post_id)
        if answer == "revise":
            return Redraft()
        raise ValueError(f"unknown review answer {answer!r}: approve, revise or reject")

    @step
    async def publish(self, ctx: Context, ev: Approved) -> StopEvent:
        self.publish_effect("publish_post", ev.post_id)  # the irreversible write: the post goes out
        return StopEvent(result=f"published {ev.post_id} (draft {ev.revision})")

    @step
    async def archive(self, ctx: Context, ev: Rejected) -> StopEvent:
        return StopEvent(result=f"archived {ev.post_id}")


def _timeout(ctx: Any) -> float:
    return float(ctx.params.get("timeout_s", 20))


def stock(ctx: Any) -> LlamaWorkload:
    """As the docs write it: the post is published with a plain call."""
    wf = ReviewWorkflow(ctx.effect, timeout=_timeout(ctx))
    return LlamaWorkload(workflow=wf, input={"post_id": "post-1"}, gated_task="publish_post")


def fixed(ctx: Any) -> LlamaWorkload:
    """The post is published with an idempotency key (the post id): a second call is a no-op."""
    wf = ReviewWorkflow(ctx.effect_once, timeout=_timeout(ctx))
    return LlamaWorkload(workflow=wf, input={"post_id": "post-1"}, gated_task="publish_post")


async def recover(ctx: Any, thread: Any) -> None:
    """The app's own resume driver (``resume: app:examples.llamaindex_review.app:recover``), as the
    docs write it: restore the saved context with ``Context.from_dict`` and run on it; a run that
    waits for the editor gets the editor's answer (the scenario's ``answers`` plan, pause by pause,
    in ``thread.answer``; else ``ctx.params["answer"]``, default ``approve``, standing for the app's
    inbox) as a ``HumanResponseEvent``. A run that had ended
    is left alone; with nothing saved, the post is drafted again from the start."""
    wf = thread.workflow
    if thread.saved is None:
        await thread.drive(wf.run(**thread.input))
        return
    if thread.ended:
        return
    handler = wf.run(ctx=Context.from_dict(wf, thread.saved))
    if thread.awaiting_input:
        answer = thread.answer if thread.answer is not None else ctx.params.get("answer", "approve")
        handler.ctx.send_event(HumanResponseEvent(response=answer))
    await thread.drive(handler)

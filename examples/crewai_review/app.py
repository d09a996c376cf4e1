"""A content-review flow on CrewAI Flows, after CrewAI's own human-in-the-loop documentation.

The flow, as CrewAI's docs build one: a ``@start`` method drafts a post and is reviewed with
``@human_feedback``; the review is asynchronous (the docs' pattern for Slack or e-mail reviews):
the feedback provider sends the review request to the reviewer and raises
``HumanFeedbackPending``, CrewAI saves the pending review (``@persist``), and a later process
answers it with ``Flow.from_pending(flow_id).resume(feedback)``. A ``@router`` reads the feedback
and sends the flow to one of two ends: ``publish`` (the post goes live) or ``archive`` (the draft
is filed away). No LLM: the draft is fixed text (a fake model).

Irreversible writes, counted with ``ctx.effect``: ``notify_reviewer`` (the review request),
``publish_post`` and ``archive_draft``.

* ``stock``: as the docs write it.
* ``fixed``: every write with an idempotency key (``ctx.effect_once``: the draft id), and a
  ``prepare`` step that is saved before the reviewer is asked, so a crash between the request
  and the saved pause leaves a flow to resume instead of a reviewer asked about nothing.
"""

from __future__ import annotations

from typing import Any

from crewai.flow.flow import Flow, FlowState, listen, router, start

from chaos.workloads.crewai import CrewWorkload

DRAFT_ID = "post-7"


class ReviewState(FlowState):
    draft: str = ""
    decision: str = ""


def _provider(ctx, once: bool) -> Any:
    from crewai.flow.async_feedback.types import HumanFeedbackPending

    class ReviewRequest:
        """The async review: send the request to the reviewer, then pause until the answer."""

        def request_feedback(self, context: Any, flow: Any) -> str:
            (ctx.effect_once if once else ctx.effect)("notify_reviewer", DRAFT_ID)
            raise HumanFeedbackPending(context=context)

    return ReviewRequest()


def stock(ctx) -> CrewWorkload:
    from crewai.flow.human_feedback import human_feedback

    class ContentReview(Flow[ReviewState]):
        @start()
        @human_feedback(message="Publish this post?", provider=_provider(ctx, once=False))
        def draft(self):
            self.state.draft = "Our spring release is out."  # the fake model's draft
            return self.state.draft

        @router(draft)
        def decide(self, result: Any = None):
            feedback = str(getattr(result, "feedback", result) or "").strip().lower()
            self.state.decision = "approved" if feedback == "approve" else "rejected"
            return self.state.decision

        @listen("approved")
        def publish(self):
            ctx.effect("publish_post", DRAFT_ID)

        @listen("rejected")
        def archive(self):
            ctx.effect("archive_draft", DRAFT_ID)

    return CrewWorkload(
        flow_class=ContentReview,
        methods=("draft", "decide", "publish", "archive"),
        ends=("publish", "archive"),
        pause_method="draft",
        pausable=True,
        gated_task=ctx.params.get("gated_task", "publish_post"),  # a rejection gates the archive
    )


def fixed(ctx) -> CrewWorkload:
    from crewai.flow.human_feedback import human_feedback

    class ContentReview(Flow[ReviewState]):
        @start()
        def prepare(self):
            self.state.draft = "Our spring release is out."  # the fake model's draft, saved before anyone is asked

        @listen(prepare)
        @human_feedback(message="Publish this post?", provider=_provider(ctx, once=True))
        def review(self):
            return self.state.draft

        @router(review)
        def decide(self, result: Any = None):
            feedback = str(getattr(result, "feedback", result) or "").strip().lower()
            self.state.decision = "approved" if feedback == "approve" else "rejected"
            return self.state.decision

        @listen("approved")
        def publish(self):
            ctx.effect_once("publish_post", DRAFT_ID)

        @listen("rejected")
        def archive(self):
            ctx.effect_once("archive_draft", DRAFT_ID)

    return CrewWorkload(
        flow_class=ContentReview,
        methods=("prepare", "review", "decide", "publish", "archive"),
        ends=("publish", "archive"),
        pause_method="review",
        pausable=True,
        gated_task=ctx.params.get("gated_task", "publish_post"),  # a rejection gates the archive
    )


def resume_review(ctx, run) -> Any:
    """A team's own resume driver, as CrewAI documents it: answer the pending review with the
    plan's answer for it (``run.answer``) by ``from_pending(id).resume(feedback)``; with nothing
    pending, restore the flow by id (``kickoff(inputs={"id": ...})``), which CrewAI runs again from
    its start."""
    if run.persistence.load_pending_feedback(run.thread_id) is not None:
        flow = run.flow_class.from_pending(run.thread_id, run.persistence)
        answer = run.answer if run.answer is not None else (run.answers[0] if run.answers else "approve")
        return flow.resume(str(answer))
    return run.flow_class().kickoff(inputs={"id": run.thread_id})

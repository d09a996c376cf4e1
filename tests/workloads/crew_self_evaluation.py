"""CrewAI's self-evaluation loop flow, ported in our own words with a scripted writer and reviewer.

Source: crewAIInc/crewAI-examples, ``flows/self_evaluation_loop_flow`` (the Shakespearean X post
flow): ``generate_shakespeare_x_post`` (``@start("retry")``) writes a post on a topic, with the
reviewer's feedback when there is some; the ``@router`` ``evaluate_x_post`` has a review crew judge
it (valid or not, and why), counts the attempt and routes to ``complete``, ``retry`` (back to the
start) or ``max_retry_exceeded``; ``save_result`` (``@listen("complete")``) saves the post. Here the
post is published (effect ``publish_post``), as a team that ships the loop does, and the flow's
state is kept by ``@persist`` (chaos adds it, backend ``sqlite``).

No LLM: the writer is scripted and deterministic in the flow's state, as a fake model must be, and
writes what a model asked again writes: another post. The first post is too long (the reviewer
asks for a shorter one); every later one is short and valid, and names its attempt.

* ``stock``: publishes as a team logs it, the post itself as the effect's value.
* ``declared``: the same, with the effect's identity declared (``key=``): the one post the flow
  publishes about its topic, so a second post is a duplicate and another text a changed payload.
"""

from __future__ import annotations

from crewai.flow.flow import Flow, FlowState, listen, router, start

from chaos.workloads.crewai import CrewWorkload

TOPIC = "Flying cars"
MAX_CHARS = 280


class PostState(FlowState):
    x_post: str = ""
    feedback: str | None = None
    valid: bool = False
    retry_count: int = 0


def write_post(topic: str, feedback: str | None, attempt: int) -> str:
    """The scripted writer: a rambling first post; then, with feedback, a short one naming its attempt."""
    if feedback is None:
        return f"Hark! {topic} " + "doth soar o'er the heavens, " * 20
    return f"Hark, {topic} take wing at last! (draft {attempt + 1})"


def review_post(post: str) -> tuple[bool, str | None]:
    """The scripted reviewer: valid when it fits in an X post."""
    if len(post) > MAX_CHARS:
        return False, f"The post is {len(post)} characters; keep it under {MAX_CHARS}."
    return True, None


def _flow(ctx, declare: bool) -> type:
    class ShakespeareXPostFlow(Flow[PostState]):
        @start("retry")
        def generate_x_post(self):
            self.state.x_post = write_post(TOPIC, self.state.feedback, self.state.retry_count)

        @router(generate_x_post)
        def evaluate_x_post(self):
            if self.state.retry_count > 3:
                return "max_retry_exceeded"
            valid, feedback = review_post(self.state.x_post)
            self.state.valid = valid
            self.state.feedback = feedback
            self.state.retry_count += 1
            return "complete" if valid else "retry"

        @listen("complete")
        def save_result(self):
            if declare:
                ctx.effect("publish_post", self.state.x_post, key=f"x post on {TOPIC}")
            else:
                ctx.effect("publish_post", self.state.x_post)

        @listen("max_retry_exceeded")
        def max_retry_exceeded_exit(self):
            ctx.observe("gave_up", self.state.x_post)

    return ShakespeareXPostFlow


def _workload(ctx, declare: bool) -> CrewWorkload:
    return CrewWorkload(
        flow_class=_flow(ctx, declare),
        methods=("generate_x_post", "evaluate_x_post", "save_result", "max_retry_exceeded_exit"),
        ends=("save_result", "max_retry_exceeded_exit"),
    )


def stock(ctx) -> CrewWorkload:
    return _workload(ctx, declare=False)


def declared(ctx) -> CrewWorkload:
    return _workload(ctx, declare=True)

"""A quiz tutor on pydantic-graph, after the question graph of pydantic-graph's own documentation.

The graph is the documented one (Ask -> Answer -> Evaluate -> Congratulate | Reprimand -> Ask),
with a fake model (a fixed list of questions and a string compare instead of an LLM), and its
irreversible writes counted with ``ctx.deps.effect``:

* ``Ask`` posts the next question to the learner (``send_question``, keyed by the question);
* ``Answer`` is the pause: a run stops before it until the learner answers;
* ``Evaluate`` compares the answer; ``Reprimand`` posts feedback (``send_feedback``) and asks
  again; ``Congratulate`` grants the badge (``award_badge``) and ends the run.

Two resume drivers, each plugged in with ``resume: app:...``:

* ``cli``: the documentation's driver as written: ``load_next()``; if a snapshot was waiting, start
  a new ``iter`` from ``Evaluate(answer)`` with its state; if none, start over from ``Ask()``.
* ``recover``: the fixed driver: it removes the lock file a dead process left, answers the pause
  that waits, re-runs a node whose process died before its successor was saved, and never starts
  over. The fixed app (``fixed``) also sends with idempotency keys (``effect_once``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Any

from pydantic_graph import BaseNode, End, Graph, GraphRunContext

from chaos.workloads.pydantic_graph import Deps, PGRun, PGWorkload

QUESTIONS = [("What is the capital of France?", "Paris"), ("What is 2 + 2?", "4"), ("What colour is the sky?", "blue")]


@dataclass
class QuizState:
    round: int = 0
    question: str | None = None
    idempotent: bool = False  # the fixed app sends with idempotency keys
    log: list[str] = field(default_factory=list)


def _send(ctx: GraphRunContext[QuizState, Deps], task: str, value: str) -> None:
    if ctx.state.idempotent:
        ctx.deps.effect_once(task, value)
    else:
        ctx.deps.effect(task, value)
    ctx.state.log.append(f"{task}:{value}")


@dataclass
class Ask(BaseNode[QuizState, Deps, str]):
    async def run(self, ctx: GraphRunContext[QuizState, Deps]) -> Answer:
        question, _ = QUESTIONS[ctx.state.round % len(QUESTIONS)]  # the fake model's next question
        ctx.state.question = question
        _send(ctx, "send_question", f"q{ctx.state.round + 1}")
        return Answer(question)


@dataclass
class Answer(BaseNode[QuizState, Deps, str]):
    """The pause: the learner's answer arrives as ``ctx.deps.answer``."""

    question: str

    async def run(self, ctx: GraphRunContext[QuizState, Deps]) -> Evaluate:
        if ctx.deps.answer is None:
            raise RuntimeError("Answer ran without the learner's answer")
        return Evaluate(str(ctx.deps.answer))


@dataclass
class Evaluate(BaseNode[QuizState, Deps, str]):
    answer: str

    async def run(self, ctx: GraphRunContext[QuizState, Deps]) -> Congratulate | Reprimand:
        _, expected = QUESTIONS[ctx.state.round % len(QUESTIONS)]  # the fake judge
        if self.answer.strip().lower() == expected.lower():
            return Congratulate(f"Well done: {expected}")
        return Reprimand(f"{self.answer!r} is wrong, the answer was {expected}")


@dataclass
class Congratulate(BaseNode[QuizState, Deps, str]):
    comment: str

    async def run(self, ctx: GraphRunContext[QuizState, Deps]) -> End[str]:
        _send(ctx, "award_badge", f"q{ctx.state.round + 1}")
        return End(self.comment)


@dataclass
class Reprimand(BaseNode[QuizState, Deps, str]):
    comment: str

    async def run(self, ctx: GraphRunContext[QuizState, Deps]) -> Ask:
        _send(ctx, "send_feedback", f"q{ctx.state.round + 1}")
        ctx.state.round += 1
        return Ask()


QUIZ = Graph(nodes=[Ask, Answer, Evaluate, Congratulate, Reprimand], state_type=QuizState, name="quiz")
TASKS = {"Ask": "send_question", "Congratulate": "award_badge", "Reprimand": "send_feedback"}


def stock(ctx) -> PGWorkload:
    """The documented graph as written (plain sends)."""
    return PGWorkload(graph=QUIZ, start=Ask, pause=Answer, tasks=TASKS, state_type=QuizState)


def fixed(ctx) -> PGWorkload:
    """The same graph, every send with an idempotency key (the question number)."""
    return PGWorkload(graph=QUIZ, start=Ask, pause=Answer, tasks=TASKS, state_type=partial(QuizState, idempotent=True))


async def _until_pause(run: Any) -> Any:
    """Drive a graph run as the documentation does: ``next()`` until it ends or reaches ``Answer``."""
    while True:
        node = await run.next()
        if isinstance(node, End | Answer):
            return node


async def cli(ctx, run: PGRun) -> Any:
    """The documentation's resume driver, as written (one call per answer)."""
    persistence = run.persistence
    if snapshot := await persistence.load_next():
        state = snapshot.state
        assert run.answer is not None
        node: BaseNode = Evaluate(str(run.answer))
    else:
        state = run.state()
        node = Ask()
    async with run.graph.iter(node, state=state, deps=run.deps(), persistence=persistence) as graph_run:
        return await _until_pause(graph_run)


async def recover(ctx, run: PGRun) -> Any:
    """The fixed driver: never starts over; continues from what the file says."""
    persistence = run.persistence
    lock = persistence.json_file.with_name(persistence.json_file.name + ".pydantic-graph-persistence-lock")
    lock.unlink(missing_ok=True)  # one worker per run: a lock left now is a dead process's
    snaps = await persistence.load_all()
    if any(s.kind == "end" for s in snaps):
        return snaps[-1].node  # finished: nothing to do
    nodes = [s for s in snaps if s.kind == "node"]
    if not nodes:
        node, state = run.start(), run.state()  # nothing of the run survived: start it
    else:
        last = nodes[-1]
        asked = [s for s in nodes if isinstance(s.node, Answer)]
        if isinstance(last.node, Answer):
            k = asked.index(last)
            if k >= len(run.answers):
                return last.node  # waits for the learner
            if last.status == "created":
                await persistence.load_next()  # take it, as the documentation's driver does
            node, state = Evaluate(str(run.answers[k])), last.state
        elif last.status == "created":
            async with run.graph.iter_from_persistence(persistence, deps=run.deps()) as graph_run:
                return await _until_pause(graph_run)
        else:
            # its process died while it ran, or before its successor was saved: run it again
            # (its sends are idempotent)
            node, state = last.node, last.state
    async with run.graph.iter(node, state=state, deps=run.deps(), persistence=persistence) as graph_run:
        return await _until_pause(graph_run)

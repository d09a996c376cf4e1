"""Built-in pydantic-graph workloads (nodes at module level: pydantic-graph reads their hints).

* ``three_step``: A -> B -> C -> End, each node firing one effect (tasks ``a``, ``b``, ``c``).
* ``invalid_type``: IA -> Bad -> IC over ``CountState`` (``count: int``); ``Bad`` assigns a string
  to ``count`` (a dataclass field: nothing checks the assignment). The invalid-state kind reads
  what the file persistence then writes and whether a fresh process can load it.
* ``gate_after_interrupt``: Pre -> Ask | Gate(answer) -> Finish -> End. pydantic-graph has no
  interrupt(): its documented human-in-the-loop pattern stops iterating when the next node needs
  a human (here ``Ask``: its snapshot is durable with status ``created``) and a later process
  continues with ``iter_from_persistence(..., deps=answer)``. ``Ask`` turns the answer into
  ``Gate``, whose effect is keyed by it (``gate:True``).

Nodes reach the effect hook and the human's answer through the run's deps (``Deps``).
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic_graph import BaseNode, End, Graph, GraphRunContext


@dataclass
class State:
    log: list[str] = field(default_factory=list)


@dataclass
class Deps:
    """The run's deps: ``effect(task, value=None)`` counts an irreversible effect (call it inside the
    node that performs it); ``effect_once`` is its idempotent form (keyed by thread, task, value);
    ``answer`` is the human's answer when a resume answers a pause (else None)."""

    effect: Callable[..., None]
    answer: object = None

    def effect_once(self, task: str, value: object = None) -> None:
        self.effect(task, value, once=True)


def _fire(ctx: GraphRunContext, task: str, value: object = None) -> None:
    ctx.deps.effect(task, value)
    ctx.state.log.append(task)


@dataclass
class C(BaseNode[State, Deps, list]):
    async def run(self, ctx: GraphRunContext[State, Deps]) -> End[list]:
        _fire(ctx, "c")
        return End(list(ctx.state.log))


@dataclass
class B(BaseNode[State, Deps, list]):
    async def run(self, ctx: GraphRunContext[State, Deps]) -> C:
        _fire(ctx, "b")
        return C()


@dataclass
class A(BaseNode[State, Deps, list]):
    async def run(self, ctx: GraphRunContext[State, Deps]) -> B:
        _fire(ctx, "a")
        return B()


@dataclass
class Finish(BaseNode[State, Deps, list]):
    async def run(self, ctx: GraphRunContext[State, Deps]) -> End[list]:
        _fire(ctx, "end")
        return End(list(ctx.state.log))


@dataclass
class Gate(BaseNode[State, Deps, list]):
    answer: str = ""

    async def run(self, ctx: GraphRunContext[State, Deps]) -> Finish:
        _fire(ctx, "gate", self.answer)
        return Finish()


@dataclass
class Ask(BaseNode[State, Deps, list]):
    """The pause: a run stops before this node until a human's answer arrives in deps."""

    async def run(self, ctx: GraphRunContext[State, Deps]) -> Gate:
        if ctx.deps.answer is None:
            raise RuntimeError("Ask ran without an answer")
        return Gate(answer=str(ctx.deps.answer))


@dataclass
class Pre(BaseNode[State, Deps, list]):
    async def run(self, ctx: GraphRunContext[State, Deps]) -> Ask:
        _fire(ctx, "pre")
        return Ask()


@dataclass
class CountState:
    log: list[str] = field(default_factory=list)
    count: int = 0


INVALID_COUNT = "not-a-number"


@dataclass
class IC(BaseNode[CountState, Deps, list]):
    async def run(self, ctx: GraphRunContext[CountState, Deps]) -> End[list]:
        ctx.deps.effect("c", None)
        ctx.state.log.append("c")
        return End(list(ctx.state.log))


@dataclass
class Bad(BaseNode[CountState, Deps, list]):
    async def run(self, ctx: GraphRunContext[CountState, Deps]) -> IC:
        ctx.deps.effect("bad", None)
        ctx.state.log.append("bad")
        ctx.state.count = INVALID_COUNT  # the schema-breaking write under test
        return IC()


@dataclass
class IA(BaseNode[CountState, Deps, list]):
    async def run(self, ctx: GraphRunContext[CountState, Deps]) -> Bad:
        ctx.deps.effect("a", None)
        ctx.state.log.append("a")
        ctx.state.count = 1
        return Bad()


@dataclass
class PGWorkload:
    """A pydantic-graph app as chaos drives it (a team's factory ``f(ctx) -> PGWorkload``).

    ``graph``: the ``Graph``; ``start``: builds the first node; ``pause``: the node class a run
    stops before until a human answers (the answer reaches it as ``ctx.deps.answer``); ``tasks``:
    node id -> the effect label it fires (for reports; PC compares snapshot ids); ``state_type``:
    builds a fresh state; ``answer``: ``answer(node) -> value`` for ``answers: workload``."""

    graph: Graph
    start: Callable[[], BaseNode]
    pause: type | None = None
    gated_task: str | None = None
    tasks: dict[str, str] = field(default_factory=dict)  # node id -> task whose effect it fires
    state_type: Callable[[], object] = State  # builds a fresh state (a class, or any factory)
    meta: dict[str, object] = field(default_factory=dict)
    answer: Callable[[object], object] | None = None


@dataclass
class PGRun:
    """What a team's own resume driver gets (``resume: app:package.module:recover`` calls
    ``recover(ctx, run)``, sync or async, in the fresh process): the graph, the run's instrumented
    ``FileStatePersistence`` (types set), ``deps(answer=None)`` (a ``Deps`` whose effect hook
    counts), ``state()`` (a fresh state), ``start()`` (the first node), how many snapshots the file
    holds (0: nothing of the run survived) and ``answers`` (the scenario's plan, if any). Return
    what the driver's last ``run.next()`` returned (``End`` or a node) or None."""

    thread_id: str
    graph: Graph
    persistence: Any
    deps: Callable[..., Deps]
    state: Callable[[], object]
    start: Callable[[], BaseNode]
    snapshots: int
    answers: list[object] = field(default_factory=list)
    answer: object = None  # the plan's answer for the pause the run waits at now (None: no plan, or used up)


def three_step(ctx) -> PGWorkload:
    return PGWorkload(graph=Graph(nodes=[A, B, C], state_type=State, name="three_step"), start=A, tasks={"A": "a", "B": "b", "C": "c"})


def gate_after_interrupt(ctx) -> PGWorkload:
    return PGWorkload(
        graph=Graph(nodes=[Pre, Ask, Gate, Finish], state_type=State, name="gate_after_interrupt"),
        start=Pre,
        pause=Ask,
        gated_task="gate",
        tasks={"Pre": "pre", "Gate": "gate", "Finish": "end"},
    )


def invalid_type(ctx) -> PGWorkload:
    return PGWorkload(
        graph=Graph(nodes=[IA, Bad, IC], state_type=CountState, name="invalid_type"),
        start=IA,
        tasks={"IA": "a", "Bad": "bad", "IC": "c"},
        state_type=CountState,
        meta={"invalid": {"task": "bad", "field": "count", "value": INVALID_COUNT}},
    )


BUILTIN = {"three_step": three_step, "gate_after_interrupt": gate_after_interrupt, "invalid_type": invalid_type}

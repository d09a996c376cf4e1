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
    effect: Callable[[str, Any], None]
    answer: Any = None


def _fire(ctx: GraphRunContext, task: str, value: Any = None) -> None:
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
    graph: Graph
    start: Callable[[], BaseNode]
    pause: type | None = None
    gated_task: str | None = None
    tasks: dict[str, str] = field(default_factory=dict)  # node id -> task whose effect it fires
    state_type: type = State
    meta: dict[str, Any] = field(default_factory=dict)


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

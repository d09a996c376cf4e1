"""The Agent Framework's own sample ``python/samples/03-workflows/checkpoint/checkpoint_with_resume.py``
(microsoft/agent-framework, MIT licence, Copyright (c) Microsoft), ported briefly to run under chaos.

``start`` sends the numbers 1..N; ``worker`` loops on itself, one number per superstep, computing its
factor pairs into executor state saved by ``on_checkpoint_save`` and restored by
``on_checkpoint_restore``; the last pass yields every number's pairs. The sample interrupts the run at
random superstep ends and resumes from ``get_latest`` in the same process, over
``InMemoryCheckpointStorage``; here the storage is chaos's ``FileCheckpointStorage`` and the
interruptions are SIGKILLs at every write. What the port adds: each computation is counted with
``ctx.effect("worker", n)`` (the sample's own ``print``), so a number computed twice shows.
``workload_params.upper_limit`` (default 4; the sample's is 10).
"""

from dataclasses import dataclass
from typing import Any

from agent_framework import Executor, WorkflowBuilder, WorkflowContext, handler

from chaos.workloads import AFWorkload


@dataclass
class ComputeTask:
    remaining_numbers: list[int]


class StartExecutor(Executor):
    @handler
    async def start(self, upper_limit: int, ctx: WorkflowContext[ComputeTask]) -> None:
        await ctx.send_message(ComputeTask(remaining_numbers=list(range(1, upper_limit + 1))))


class WorkerExecutor(Executor):
    def __init__(self, id: str, effect: Any) -> None:
        super().__init__(id=id)
        self._effect = effect
        self._composite_number_pairs: dict[int, list[tuple[int, int]]] = {}

    @handler
    async def compute(self, task: ComputeTask, ctx: WorkflowContext[ComputeTask, dict[int, list[tuple[int, int]]]]) -> None:
        next_number = task.remaining_numbers.pop(0)
        self._effect("worker", next_number)  # the sample prints "Computing factor pairs for <n>"
        pairs = [(i, next_number // i) for i in range(1, next_number) if next_number % i == 0]
        self._composite_number_pairs[next_number] = pairs
        if not task.remaining_numbers:
            await ctx.yield_output(self._composite_number_pairs)
        else:
            await ctx.send_message(task)

    async def on_checkpoint_save(self) -> dict[str, Any]:
        return {"composite_number_pairs": self._composite_number_pairs}

    async def on_checkpoint_restore(self, state: dict[str, Any]) -> None:
        self._composite_number_pairs = state.get("composite_number_pairs", {})


def factor_pairs(ctx) -> AFWorkload:
    def build():
        start, worker = StartExecutor(id="start"), WorkerExecutor(id="worker", effect=ctx.effect)
        return WorkflowBuilder(start_executor=start, name="factor_pairs").add_edge(start, worker).add_edge(worker, worker).build()

    return AFWorkload(
        build=build,
        input=int(ctx.params.get("upper_limit", 4)),
        name="factor_pairs",
        allowed_types=["tests.workloads.agent_framework_factor_pairs:ComputeTask"],
        tasks={"worker": "worker"},
    )

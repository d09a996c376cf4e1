"""Agent Framework apps a team might write wrong (imported only in the agent_framework environment).

* ``does_not_build``: an edge from an executor that sends ``str`` to one that takes only ``int``:
  ``WorkflowBuilder.build()`` refuses the graph.
* ``unlisted_type``: the gate asks with a ``Ticket`` that is not on the storage's allow-list: the
  framework cannot save the pause's checkpoint, logs it and runs on.
* ``unwritable_storage``: a team's own storage whose folder cannot be made (its parent is a file).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agent_framework import Executor, FileCheckpointStorage, WorkflowBuilder, WorkflowContext, handler, response_handler

from chaos.workloads.agent_framework import AFWorkload, Step, gate_after_interrupt


class Counter(Executor):
    @handler
    async def count(self, n: int, ctx: WorkflowContext[int]) -> None:
        await ctx.send_message(n + 1)


def does_not_build(ctx) -> AFWorkload:
    def build():
        a = Step("a", ctx.effect)
        return WorkflowBuilder(start_executor=a, name="does_not_build").add_edge(a, Counter(id="count")).build()

    return AFWorkload(build=build, input="x", name="does_not_build")


@dataclass
class Ticket:
    amount: int


class TicketGate(Executor):
    def __init__(self, effect):
        super().__init__(id="gate")
        self._effect = effect

    @handler
    async def ask(self, message: str, ctx: WorkflowContext[str]) -> None:
        await ctx.request_info(Ticket(amount=42), str)

    @response_handler
    async def on_answer(self, original: Ticket, answer: str, ctx: WorkflowContext[str]) -> None:
        self._effect("gate", answer)
        await ctx.send_message(answer)


def unlisted_type(ctx) -> AFWorkload:
    def build():
        pre, gate, end = Step("pre", ctx.effect), TicketGate(ctx.effect), Step("end", ctx.effect, last=True)
        return WorkflowBuilder(start_executor=pre, name="unlisted_type").add_edge(pre, gate).add_edge(gate, end).build()

    return AFWorkload(build=build, input="refund-42", name="unlisted_type", gated_task="gate")  # no allowed_types


def unwritable_storage(folder: Path) -> FileCheckpointStorage:
    blocker = Path(folder) / "not-a-folder"
    blocker.parent.mkdir(parents=True, exist_ok=True)
    blocker.write_text("a file where the storage wants its folder")
    return FileCheckpointStorage(blocker / "checkpoints")


gate = gate_after_interrupt

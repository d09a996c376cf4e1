"""Release notes with a human approval, on the Microsoft Agent Framework (a team's own app under chaos).

Ported from the framework's own sample ``python/samples/03-workflows/checkpoint/
checkpoint_with_human_in_the_loop.py`` (microsoft/agent-framework, MIT licence, Copyright (c)
Microsoft): ``prepare_brief`` normalises a brief and asks the ``writer`` agent (an
``AgentExecutor``) for a draft; ``review_gateway`` sends every draft to a human with
``ctx.request_info(HumanApprovalRequest(...), str)``; "approve" ends the run with the draft as the
output, anything else goes back to the writer. Checkpoints go to ``FileCheckpointStorage``; the
human's answer comes later, in any process, as ``workflow.run(checkpoint_id=...,
responses={request_id: answer})``, the sample's resume path.

What the port changes: the chat client is a fake (``ScriptedWriter``: no network, no key), and on
approval the gateway does what a team's app does with approved notes: it publishes them (an
irreversible effect, through ``ctx.effect``). Two variants:

* ``stock``: ``publish`` is a plain call in the response handler. The framework commits a
  superstep's work in the checkpoint saved after the superstep, so a crash after the publish and
  before that checkpoint restores the response-entry checkpoint and publishes again; two processes
  answering the same request both publish.
* ``fixed``: the publish carries an idempotency key (the draft's iteration: ``release-notes-v1``),
  as a publishing API's key would (``ctx.effect_once``): a second attempt publishes nothing. And the
  checkpoints go to ``LinearFileStorage`` (the scenario's ``workload_params.storage``), which keeps
  the chain of ``previous_checkpoint_id`` linear: the first writer of a parent's child wins, a second
  live writer is refused (what microsoft/agent-framework issue 8522 proposes for the framework).
"""

from __future__ import annotations

import fcntl
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_framework import (
    Agent,
    AgentExecutor,
    AgentExecutorRequest,
    AgentExecutorResponse,
    BaseChatClient,
    ChatResponse,
    Executor,
    FileCheckpointStorage,
    Message,
    WorkflowBuilder,
    WorkflowContext,
    handler,
    response_handler,
)

from chaos.workloads import AFWorkload, WorkloadContext

BRIEF = (
    "Introduce our limited edition smart coffee grinder. Mention the $249 price, highlight the "
    "sensor that auto-adjusts the grind, and invite customers to pre-order on the website."
)
REQUEST_TYPE = "examples.agent_framework_release_notes.app:HumanApprovalRequest"


class ScriptedWriter(BaseChatClient):
    """The writer's model, replayed: draft n is a fixed text (no network, no key)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    async def _inner_get_response(
        self, *, messages: Any, stream: bool, options: Any, **kwargs: Any
    ) -> ChatResponse:  # the non-streaming form only: the workflow never streams the writer
        self.calls += 1
        text = f"Draft {self.calls}: meet the $249 smart grinder; its sensor tunes every grind. Pre-order today."
        return ChatResponse(messages=[Message(role="assistant", contents=[text])], response_id=f"draft-{self.calls}")


class BriefPreparer(Executor):
    """Normalises the brief and asks the writer (as the sample does)."""

    def __init__(self, id: str, agent_id: str) -> None:
        super().__init__(id=id)
        self._agent_id = agent_id

    @handler
    async def prepare(self, brief: str, ctx: WorkflowContext[AgentExecutorRequest, str]) -> None:
        normalized = " ".join(brief.split()).strip()
        if not normalized.endswith("."):
            normalized += "."
        ctx.set_state("brief", normalized)
        prompt = f"You are drafting product release notes. Summarise the brief below in two sentences.\n\nBRIEF: {normalized}"
        await ctx.send_message(
            AgentExecutorRequest(messages=[Message("user", contents=[prompt])], should_respond=True), target_id=self._agent_id
        )


@dataclass
class HumanApprovalRequest:
    """What the reviewer is asked (pickled into the checkpoint: on the storage's allow-list)."""

    prompt: str = ""
    draft: str = ""
    iteration: int = 0


class ReviewGateway(Executor):
    """Sends each draft to a human; publishes an approved one, returns any other answer to the writer."""

    def __init__(self, id: str, writer_id: str, ctx: WorkloadContext, idempotent: bool) -> None:
        super().__init__(id=id)
        self._writer_id = writer_id
        self._iteration = 0
        self._ctx = ctx
        self._idempotent = idempotent

    @handler
    async def on_agent_response(self, response: AgentExecutorResponse, ctx: WorkflowContext) -> None:
        self._iteration += 1
        await ctx.request_info(
            request_data=HumanApprovalRequest(
                prompt="Review the draft. Reply 'approve' or provide edit instructions.",
                draft=response.agent_response.text,
                iteration=self._iteration,
            ),
            response_type=str,
        )

    @response_handler
    async def on_human_feedback(
        self, original_request: HumanApprovalRequest, feedback: str, ctx: WorkflowContext[AgentExecutorRequest | str, str]
    ) -> None:
        reply = feedback.strip()
        if len(reply) == 0 or reply.lower() == "approve":
            if self._idempotent:  # the publishing API's idempotency key: one release per approved draft
                self._ctx.effect_once("publish", f"release-notes-v{original_request.iteration}")
            else:
                self._ctx.effect("publish", f"release-notes-v{original_request.iteration}")
            await ctx.yield_output(original_request.draft)
            return
        prompt = f"Revise the launch note. Respond with the new copy only.\n\nPrevious draft:\n{original_request.draft}\n\nHuman guidance: {reply}"
        await ctx.send_message(
            AgentExecutorRequest(messages=[Message("user", contents=[prompt])], should_respond=True), target_id=self._writer_id
        )

    async def on_checkpoint_save(self) -> dict[str, Any]:
        return {"iteration": self._iteration}

    async def on_checkpoint_restore(self, state: dict[str, Any]) -> None:
        self._iteration = state.get("iteration", 0)


def _workload(ctx: WorkloadContext, idempotent: bool) -> AFWorkload:
    def build() -> Any:
        writer = AgentExecutor(Agent(client=ScriptedWriter(), instructions="Write concise, warm release notes.", name="writer"))
        gateway = ReviewGateway(id="review_gateway", writer_id="writer", ctx=ctx, idempotent=idempotent)
        prepare = BriefPreparer(id="prepare_brief", agent_id="writer")
        return (
            WorkflowBuilder(max_iterations=6, start_executor=prepare, name="release_notes")
            .add_edge(prepare, writer)
            .add_edge(writer, gateway)
            .add_edge(gateway, writer)  # revisions loop
            .build()
        )

    return AFWorkload(
        build=build,
        input=BRIEF,
        name="release_notes",
        allowed_types=[REQUEST_TYPE],
        gated_task="publish",
        tasks={"review_gateway": "publish"},
    )


def stock(ctx: WorkloadContext) -> AFWorkload:
    return _workload(ctx, idempotent=False)


def fixed(ctx: WorkloadContext) -> AFWorkload:
    return _workload(ctx, idempotent=True)


class ForkRefused(RuntimeError):
    """A second live writer tried to continue a checkpoint another process is continuing."""


class LinearFileStorage(FileCheckpointStorage):
    """``FileCheckpointStorage`` whose chain stays linear: a save claims its parent (``<parent>.next``,
    holding an exclusive ``flock`` while it writes). A parent whose claim is held by a live writer, or
    whose claimed child exists, is refused; a claim left by a writer that died before its child was
    written is taken over (the kernel drops a dead process's lock), so a crashed run resumes."""

    async def save(self, checkpoint: Any) -> str:
        parent = checkpoint.previous_checkpoint_id
        if parent is None:
            return await super().save(checkpoint)
        fd = os.open(self.storage_path / f"{parent}.next", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise ForkRefused(f"checkpoint {parent} is being continued by another process") from None
            claimed = os.read(fd, 200).decode().strip()
            if claimed and claimed != checkpoint.checkpoint_id and (self.storage_path / f"{claimed}.json").exists():
                raise ForkRefused(f"checkpoint {parent} was already continued by {claimed}")
            os.lseek(fd, 0, os.SEEK_SET)
            os.ftruncate(fd, 0)
            os.write(fd, checkpoint.checkpoint_id.encode())
            return await super().save(checkpoint)
        finally:
            os.close(fd)


def linear_storage(folder: Path) -> LinearFileStorage:
    """The fixed variant's storage (``workload_params.storage``), over the trial's folder."""
    return LinearFileStorage(folder, allowed_checkpoint_types=[REQUEST_TYPE])

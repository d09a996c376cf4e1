"""Checkpoint storages with barriers on every write, named by what the checkpoint records.

Why: the Agent Framework saves a ``WorkflowCheckpoint`` on a run's entry (since 1.13.0), when
responses are delivered (the response-entry checkpoint) and at the end of every superstep; a kill
sweep must stop a racer on each of those writes, and inside ``FileCheckpointStorage``'s own write
path, which (read from agent_framework/_workflows/_checkpoint.py, 1.23.0) creates
``.maf-ckpt-<hex>.tmp`` in the storage folder, ``json.dump``s the encoded checkpoint into it,
closes it without ``fsync`` and ``os.replace``s it onto ``<checkpoint_id>.json`` (no directory
``fsync`` either), on a worker thread.

Boundaries (``describe``: what the checkpoint records, e.g. ``superstep=2,pending=gate``):

* ``save(X):before``: nothing of this checkpoint is on disk;
* ``save(X):tmp`` (FileCheckpointStorage only): the temporary file is written and closed, the
  rename not done: the checkpoint is not visible under its name;
* ``save(X):after``: the rename is done (for a team's own storage: its ``save`` returned).

The framework logs and swallows a failed save ("Failed to create checkpoint ... does not fail the
workflow run"); ``SaveLog`` keeps those, so an outcome says which checkpoints were never written.
"""

from __future__ import annotations

import logging
import os
import types
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from chaos.racer.barrier import BarrierClient


class Message(Protocol):
    """A ``WorkflowMessage`` as a checkpoint holds it (what the adapter reads of it)."""

    source_id: str
    target_id: str | None
    type: object


class Request(Protocol):
    """A pending ``request_info`` event of a checkpoint."""

    source_executor_id: str


class Checkpoint(Protocol):
    """A ``WorkflowCheckpoint``: the fields the adapter reads."""

    checkpoint_id: str
    previous_checkpoint_id: str | None
    timestamp: str
    iteration_count: int
    messages: dict[str, list[Message]]
    pending_request_info_events: dict[str, Request]
    state: dict[str, object]


class Storage(Protocol):
    """A ``CheckpointStorage`` (the calls the adapter makes)."""

    async def save(self, checkpoint: Checkpoint) -> str: ...
    async def load(self, checkpoint_id: str) -> Checkpoint: ...
    async def list_checkpoints(self, *, workflow_name: str) -> list[Checkpoint]: ...
    async def delete(self, checkpoint_id: str) -> bool: ...
    async def get_latest(self, *, workflow_name: str) -> Checkpoint | None: ...
    async def list_checkpoint_ids(self, *, workflow_name: str) -> list[str]: ...


Targets = Callable[[Message], list[str]]  # a message -> the executors it is delivered to


def describe(cp: Checkpoint, targets: Targets) -> str:
    """What a checkpoint records, as a boundary's content: ``entry=pre`` (a run's first message),
    ``responses=gate`` (answers delivered, not yet handled), ``superstep=N,next=b`` (messages in
    flight to b), ``superstep=N,pending=gate`` (waiting for answers), ``superstep=N,idle``."""
    msgs = [m for batch in (cp.messages or {}).values() for m in batch]
    nxt = sorted({t for m in msgs for t in targets(m)})
    if msgs and all(str(m.source_id).startswith("internal:") for m in msgs):
        kind = "responses" if any(str(getattr(m.type, "value", m.type)) == "response" for m in msgs) else "entry"
        return f"{kind}={'+'.join(nxt)}"
    pending = sorted({str(getattr(e, "source_executor_id", "?")) for e in (cp.pending_request_info_events or {}).values()})
    parts = [f"superstep={cp.iteration_count}"]
    if nxt:
        parts.append(f"next={'+'.join(nxt)}")
    if pending:
        parts.append(f"pending={'+'.join(pending)}")
    if not nxt and not pending:
        parts.append("idle")
    return ",".join(parts)


class _Hooks:
    """The live session's barrier and the names of the saves in flight, by destination path (the
    rename runs on a worker thread that knows only the path)."""

    barrier: BarrierClient | None = None
    names: dict[str, str] = {}


_HOOKS = _Hooks()


def _install_os_proxy() -> None:
    """Route ``os.replace`` of the framework's checkpoint module through a barrier (once per process):
    the module's own code runs unchanged; only its view of ``os`` passes ``save(X):tmp`` first."""
    from agent_framework._workflows import _checkpoint

    if isinstance(_checkpoint.os, types.SimpleNamespace):
        return
    real = _checkpoint.os

    def replace(src: str | os.PathLike[str], dst: str | os.PathLike[str], **kw: int | None) -> None:
        name = _HOOKS.names.get(str(dst))
        if name and _HOOKS.barrier is not None:
            _HOOKS.barrier.hit(name + ":tmp")
        real.replace(src, dst, **kw)

    proxy = types.SimpleNamespace(**{k: getattr(real, k) for k in dir(real) if not k.startswith("__")})
    proxy.replace = replace
    _checkpoint.os = proxy  # a namespace with os's names, replace wrapped


def file_storage(folder: Path, allowed: list[str], barrier: BarrierClient, targets: Targets) -> Storage:
    """A ``FileCheckpointStorage`` on ``folder`` with barriers on its saves and its rename."""
    from agent_framework import FileCheckpointStorage

    _install_os_proxy()
    _HOOKS.barrier = barrier

    class ChaosFileCheckpointStorage(FileCheckpointStorage):
        async def save(self, checkpoint: Checkpoint) -> str:
            name = f"save({describe(checkpoint, targets)})"
            dest = str(self._validate_file_path(checkpoint.checkpoint_id))
            barrier.hit(name + ":before")
            _HOOKS.names[dest] = name
            try:
                out = await super().save(checkpoint)
            finally:
                _HOOKS.names.pop(dest, None)
            barrier.hit(name + ":after")
            return out

        async def load(self, checkpoint_id: str) -> Checkpoint:
            barrier.mark("read")
            return await super().load(checkpoint_id)

    return ChaosFileCheckpointStorage(folder, allowed_checkpoint_types=list(allowed))


class OwnStorage:
    """A team's own ``CheckpointStorage`` (``workload_params.storage: package.module:factory``,
    called as ``factory(folder)``) with barriers around its ``save``; every other call passes through."""

    def __init__(self, inner: Storage, barrier: BarrierClient, targets: Targets):
        self.inner = inner
        self.barrier = barrier
        self.targets = targets

    async def save(self, checkpoint: Checkpoint) -> str:
        name = f"save({describe(checkpoint, self.targets)})"
        self.barrier.hit(name + ":before")
        out = await self.inner.save(checkpoint)
        self.barrier.hit(name + ":after")
        return str(out)

    async def load(self, checkpoint_id: str) -> Checkpoint:
        self.barrier.mark("read")
        return await self.inner.load(checkpoint_id)

    async def list_checkpoints(self, *, workflow_name: str) -> list[Checkpoint]:
        return list(await self.inner.list_checkpoints(workflow_name=workflow_name))

    async def delete(self, checkpoint_id: str) -> bool:
        return bool(await self.inner.delete(checkpoint_id))

    async def get_latest(self, *, workflow_name: str) -> Checkpoint | None:
        return await self.inner.get_latest(workflow_name=workflow_name)

    async def list_checkpoint_ids(self, *, workflow_name: str) -> list[str]:
        return list(await self.inner.list_checkpoint_ids(workflow_name=workflow_name))


class SaveLog(logging.Handler):
    """The saves the framework failed and swallowed (its runner logs them and goes on)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.failed: list[dict[str, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if "Failed to create checkpoint" in text and len(self.failed) < 16:
            self.failed.append({"logger": record.name, "message": text[:1000]})


def watch_saves() -> SaveLog:
    log = SaveLog()
    logging.getLogger("agent_framework").addHandler(log)
    return log


def storage_folder(store_path: Path) -> Path:
    """The trial's checkpoint folder (next to where file-backed targets keep their state)."""
    folder = store_path.with_suffix("")
    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, 0o755)
    return folder

"""A team's own LangGraph checkpointer (``target.saver: package.module:factory``), racer side.

Why: chaos knows three savers; PyPI has dozens. A scenario names a factory that returns a
``BaseCheckpointSaver`` given a ``SaverContext`` (the trial's folder, shared by its racers, so a
resumed racer opens the same store). chaos wraps what it returns in ``ChaosSaver``: a delegating
saver whose ``put`` / ``put_writes`` / ``aput`` / ``aput_writes`` hit the barriers before and after
the inner call, with the same boundary names as the built-in backends, so every kind runs on it.
Delegation (not a subclass of the saver's class) keeps a saver whose async methods call its sync
ones (or the reverse) from hitting a barrier twice.

``load_saver`` refuses, with one sentence naming the reference, a factory that does not import,
raises, or returns something that is not a ``BaseCheckpointSaver``; ``python -m
chaos.targets.langgraph.custom_saver REF`` runs that check in the racers' Python (the preflight).
"""

from __future__ import annotations

import inspect
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chaos.racer.barrier import BarrierClient
from chaos.targets.base import error_of
from chaos.targets.langgraph.saver_boundaries import put_name, writes_name
from chaos.workloads import call_factory


@dataclass(frozen=True)
class SaverContext:
    """What a saver factory gets: ``folder`` is the trial's store folder (every racer of the trial
    and its resumes get the same one; put an embedded database or files there), ``trial_id`` and
    ``thread_id`` name the trial (a server-backed saver can key a database or prefix by them)."""

    folder: Path
    trial_id: str = ""
    thread_id: str = ""
    racer_id: str = ""


def saver_context(spec: Any) -> SaverContext:
    """The context of a racer's spec: the folder next to the trial's store path (every racer of a
    trial, and every resume, gets the same one), created if missing."""
    store = spec.get("store") or {}
    base = Path(store["path"]).parent if store.get("path") else Path(tempfile.mkdtemp(prefix="chaos-saver-"))
    folder = base / "saver"
    folder.mkdir(parents=True, exist_ok=True)
    return SaverContext(
        folder=folder, trial_id=spec.get("trial_id", ""), thread_id=spec.get("thread_id", ""), racer_id=spec.get("racer_id", "")
    )


class SaverError(Exception):
    """The factory did not give a saver: the message names the reference and what to change."""


# the module a scenario's ``chaos.savers:<name>`` means: chaos's own factories, racer side (an SSH
# host gets the racer folders only, not chaos/savers.py)
SAVER_ALIASES = {"chaos.savers": "chaos.targets.langgraph.savers"}


def saver_ref(ref: str) -> str:
    """``ref`` with an aliased module replaced by the racer-side one it names."""
    module, sep, attr = ref.partition(":")
    return f"{SAVER_ALIASES.get(module, module)}{sep}{attr}"


def load_saver(ref: str, ctx: SaverContext) -> Any:
    """Import ``ref``, call it with ``ctx``, check it returned a ``BaseCheckpointSaver``."""
    from langgraph.checkpoint.base import BaseCheckpointSaver

    saver = call_factory(saver_ref(ref), ctx, "target.saver", "saver", SaverError, as_written=ref)
    if not isinstance(saver, BaseCheckpointSaver):
        raise SaverError(
            f"target.saver {ref!r} returned {type(saver).__name__}, not a langgraph BaseCheckpointSaver: "
            "return the saver itself (opened and set up), not a context manager or a connection"
        )
    return saver


def wrap(inner: Any, barrier: BarrierClient, reads: Any = None) -> Any:
    """A ``BaseCheckpointSaver`` delegating every method to ``inner``, writes through barriers;
    ``reads`` (``chaos.targets.langgraph.guards.Reads``) gives chaos's own reads a guard's inspection keys."""
    from langgraph.checkpoint.base import BaseCheckpointSaver

    read_config = reads.config if reads is not None else (lambda config: config)

    class ChaosSaver(BaseCheckpointSaver):
        def __init__(self) -> None:
            super().__init__(serde=inner.serde)
            self.inner = inner

        def get_tuple(self, config):
            return inner.get_tuple(read_config(config))

        async def aget_tuple(self, config):
            return await inner.aget_tuple(read_config(config))

        @property
        def config_specs(self) -> list:
            return inner.config_specs

        def put(self, config, checkpoint, metadata, new_versions):
            name = put_name(metadata)
            barrier.hit(name + ":before")
            try:
                out = inner.put(config, checkpoint, metadata, new_versions)
            except BaseException as exc:
                barrier.failed(name, error_of(exc))
                raise
            barrier.hit(name + ":after")
            return out

        def put_writes(self, config, writes, task_id, task_path=""):
            name = writes_name(writes, task_path)
            barrier.hit(name + ":before")
            try:
                out = inner.put_writes(config, writes, task_id, task_path)
            except BaseException as exc:
                barrier.failed(name, error_of(exc))
                raise
            barrier.hit(name + ":after")
            return out

        async def aput(self, config, checkpoint, metadata, new_versions):
            name = put_name(metadata)
            barrier.hit(name + ":before")
            try:
                out = await inner.aput(config, checkpoint, metadata, new_versions)
            except BaseException as exc:
                barrier.failed(name, error_of(exc))
                raise
            barrier.hit(name + ":after")
            return out

        async def aput_writes(self, config, writes, task_id, task_path=""):
            name = writes_name(writes, task_path)
            barrier.hit(name + ":before")
            try:
                out = await inner.aput_writes(config, writes, task_id, task_path)
            except BaseException as exc:
                barrier.failed(name, error_of(exc))
                raise
            barrier.hit(name + ":after")
            return out

        def __getattr__(self, name: str) -> Any:  # the saver's own extras (setup, close, ...)
            return getattr(inner, name)

    # every other method of the base class (get_tuple, list, delete_thread, get_next_version, ...,
    # whatever this langgraph release defines) goes to the inner saver, not to the base's default
    own = set(vars(ChaosSaver))
    for name, member in vars(BaseCheckpointSaver).items():
        if name.startswith("_") or name in own or not inspect.isfunction(member):
            continue
        setattr(ChaosSaver, name, _delegate(name, member))
    ChaosSaver.__name__ = ChaosSaver.__qualname__ = f"Chaos{type(inner).__name__}"
    return ChaosSaver()


def _delegate(name: str, member: Any) -> Any:
    """A method that calls the inner saver's ``name`` (async, async generator or plain, as ``member``)."""
    if inspect.iscoroutinefunction(member):

        async def acall(self: Any, *args: Any, **kwargs: Any) -> Any:
            return await getattr(self.inner, name)(*args, **kwargs)

        acall.__name__ = name
        return acall
    if inspect.isasyncgenfunction(member):

        async def agen(self: Any, *args: Any, **kwargs: Any) -> Any:
            async for item in getattr(self.inner, name)(*args, **kwargs):
                yield item

        agen.__name__ = name
        return agen

    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(self.inner, name)(*args, **kwargs)

    call.__name__ = name
    return call


def close_saver(saver: Any) -> None:
    """Close what the factory opened, if the saver says how (``close()``); errors are ignored."""
    close = getattr(saver, "close", None)
    if callable(close):
        try:
            close()
        except Exception:
            pass


def main(argv: list[str]) -> int:
    """The preflight's check: build the saver once over a temporary folder; one line, exit 3."""
    ref = argv[0]
    with tempfile.TemporaryDirectory(prefix="chaos-saver-check-") as tmp:
        try:
            saver = load_saver(ref, SaverContext(folder=Path(tmp), trial_id="preflight", thread_id="preflight"))
        except SaverError as exc:
            print(exc, file=sys.stderr)
            return 3
        close_saver(saver)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""A team's own LangGraph checkpointer (``target.saver: package.module:factory``), racer side.

Why: chaos knows three savers; PyPI has dozens. A scenario names a factory that returns a
``BaseCheckpointSaver`` given a ``SaverContext`` (the trial's folder, shared by its racers, so a
resumed racer opens the same store). chaos wraps what it returns in ``ChaosSaver``: a delegating
saver whose ``put`` / ``put_writes`` / ``aput`` / ``aput_writes`` hit the barriers before and after
the inner call, with the same boundary names as the built-in backends, so every kind runs on it.
Delegation (not a subclass of the saver's class) keeps a saver whose async methods call its sync
ones (or the reverse) from hitting a barrier twice.

A team's saver may carry its own guard (REMIT's gate brought as ``remit.wrap(SqliteSaver, conn,
cross_process_gate=True)``, a subclass of LangGraph's saver that claims what it reads). chaos's own
reads (inspections, every read outside the app's calls) never pass through it: with a declared
guard they carry its inspection keys (``target.guard``'s ``inspect``); without one, a saver whose
class subclasses one of LangGraph's concrete savers is read through that saver's own methods, the
store beneath the subclass (``beneath``). An exception of the saver's own (its class neither the
standard library's nor LangGraph's) that ends an app's call is the saver's refusal
(``ChaosSaver.refused``): an outcome named after the saver's class, never a harness error.

``load_saver`` refuses, with one sentence naming the reference, a factory that does not import,
raises, or returns something that is not a ``BaseCheckpointSaver``; ``python -m
chaos.targets.langgraph.custom_saver REF`` runs that check in the racers' Python (the preflight).
"""

from __future__ import annotations

import builtins
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


def beneath(saver: Any) -> Any:
    """The LangGraph saver class ``saver``'s own class subclasses (``SqliteSaver`` under REMIT's
    gate), whose reads see the store (its database connection, ``conn``) without what the subclass
    adds; None when the saver is one of LangGraph's own, keeps no ``conn``, or subclasses none of its
    concrete savers (only ``BaseCheckpointSaver``)."""
    from langgraph.checkpoint.base import BaseCheckpointSaver

    if _is_langgraph(type(saver)) or getattr(saver, "conn", None) is None:
        return None  # LangGraph's own, or a store that is not a database connection the stock reads open
    for cls in type(saver).__mro__[1:]:
        if _is_langgraph(cls) and cls is not BaseCheckpointSaver and "get_tuple" in vars(cls):
            return cls
    return None


def _is_langgraph(cls: type) -> bool:
    return cls.__module__.split(".", 1)[0] == "langgraph"


def own_error(exc: BaseException) -> bool:
    """Is ``exc`` of a class of the saver's own (not the standard library's, nor LangGraph's)?"""
    top = type(exc).__module__.split(".", 1)[0]
    return top not in sys.stdlib_module_names and top not in ("builtins", "langgraph")


def wrap(inner: Any, barrier: BarrierClient, reads: Any = None) -> Any:
    """A ``BaseCheckpointSaver`` delegating every method to ``inner``, writes through barriers;
    ``reads`` (``chaos.targets.langgraph.guards.Reads``) tells the app's reads from chaos's own:
    chaos's carry a declared guard's inspection keys, or else read the store beneath the saver's
    own subclass (``beneath``)."""
    from langgraph.checkpoint.base import BaseCheckpointSaver

    read_config = reads.config if reads is not None else (lambda config: config)
    declared = bool(reads is not None and reads.inspect)
    stock = None if declared or reads is None else beneath(inner)
    raised: list[BaseException] = []  # what the saver raised into the app's calls (its refusals)

    def noted(exc: BaseException) -> None:
        if own_error(exc):
            raised.append(exc)

    class ChaosSaver(BaseCheckpointSaver):
        def __init__(self) -> None:
            super().__init__(serde=inner.serde)
            self.inner = inner

        def refused(self, exc: BaseException) -> str | None:
            """The saver's name when ``exc`` (or what it was raised from) is an error of the saver's
            own it raised into the app's call: its guard's refusal."""
            seen: set[int] = set()
            e: BaseException | None = exc
            while e is not None and id(e) not in seen:
                if any(e is r for r in raised):
                    return f"{type(inner).__name__} (target.saver)"
                seen.add(id(e))
                e = e.__cause__ or e.__context__
            return None

        def get_tuple(self, config):
            if stock is not None and not reads.depth:  # chaos's own read: the store beneath the saver's guard
                return stock.get_tuple(inner, config)
            try:
                return inner.get_tuple(read_config(config))
            except BaseException as exc:
                noted(exc)
                raise

        async def aget_tuple(self, config):
            try:
                return await inner.aget_tuple(read_config(config))
            except BaseException as exc:
                noted(exc)
                raise

        def list(self, config, **kw):
            if stock is not None and not reads.depth:
                yield from stock.list(inner, config, **kw)
                return
            yield from inner.list(config, **kw)

        @property
        def config_specs(self) -> builtins.list:
            return inner.config_specs

        def put(self, config, checkpoint, metadata, new_versions):
            name = put_name(metadata)
            barrier.hit(name + ":before")
            try:
                out = inner.put(config, checkpoint, metadata, new_versions)
            except BaseException as exc:
                noted(exc)
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
                noted(exc)
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
                noted(exc)
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
                noted(exc)
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

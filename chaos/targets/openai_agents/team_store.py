"""A team's own store of the saved ``RunState`` (``workload_params.store: package.module:factory``), racer side.

Why: the SDK stores nothing; the state blob lives wherever the team puts it, and chaos ships three
stores (``chaos.targets.openai_agents.stores``). A scenario names a factory that, given a
``StoreContext`` (``chaos.workloads.openai_agents``), returns a ``StateStore``: ``save(key, blob)``
and ``load(key)`` of text. chaos wraps it in ``TeamStore``, a ``BlobStore`` whose ``save`` passes
``save_state(<what>):before`` and ``:after`` around the team's ``save`` (the built-in stores'
boundary names, so every kind runs on it) and whose ``load`` marks ``read``.

``load_store`` refuses, with one sentence naming the field and the reference, a factory that does
not import, raises, or returns something without ``save`` and ``load``; the target's preflight runs
it before any trial.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from chaos.racer.barrier import BarrierClient
from chaos.racer.protocol import RacerSpec
from chaos.targets.base import error_of
from chaos.targets.common import store_file
from chaos.workloads import call_factory

if TYPE_CHECKING:
    from chaos.workloads.openai_agents import StateStore

FIELD = "workload_params.store"


class StoreError(Exception):
    """The factory did not give a state store: the message names the field, the reference and what to change."""


def store_ref(spec: RacerSpec) -> str | None:
    """The team's store a racer spec names, else None (a built-in store by backend)."""
    ref = (spec.get("workload_params") or {}).get("store")
    return None if ref is None else str(ref)


def shape_problem(ref: object) -> str | None:
    """``ref`` is not a ``package.module:factory`` string: say what to write."""
    if isinstance(ref, str) and ":" in ref.strip(":"):
        return None
    return f"{FIELD} is {ref!r}: name a package.module:factory that takes a StoreContext and returns an object with save(key, blob) and load(key)"


def load_store(ref: str, folder: Path, thread_id: str = "", trial_id: str = "", racer_id: str = "") -> StateStore:
    """Import ``ref``, call it with a ``StoreContext`` over ``folder``, check it returned a ``StateStore``."""
    from chaos.workloads.openai_agents import StateStore, StoreContext

    folder.mkdir(parents=True, exist_ok=True)
    ctx = StoreContext(folder=folder, thread_id=thread_id, trial_id=trial_id, racer_id=racer_id)
    store = call_factory(ref, ctx, FIELD, "state store", StoreError)
    if not isinstance(store, StateStore):
        raise StoreError(
            f"{FIELD} {ref!r} returned {type(store).__name__}, which has no save(key, blob) and load(key): "
            "return the store object itself (chaos.workloads.openai_agents.StateStore)"
        )
    return store


def store_folder(spec: RacerSpec) -> Path:
    """The folder a team's store gets: beside the trial's store files, shared by its racers and resumes."""
    return store_file(spec, "").parent.resolve() / "state_store"


class TeamStore:
    """A ``BlobStore`` over a team's ``StateStore``: the run's document as text under its thread id."""

    def __init__(self, inner: StateStore, ref: str, thread_id: str, barrier: BarrierClient):
        self.inner = inner
        self.thread_id = thread_id
        self.barrier = barrier
        self.where = f"{FIELD} {ref}"

    def load(self) -> dict | None:
        try:
            blob = self.inner.load(self.thread_id)
            return None if blob is None else json.loads(blob)
        finally:
            self.barrier.mark("read")

    def save(self, what: str, doc: dict) -> None:
        name = f"save_state({what})"
        self.barrier.hit(name + ":before")
        try:
            self.inner.save(self.thread_id, json.dumps(doc))
        except BaseException as exc:
            self.barrier.failed(name, error_of(exc))
            raise
        self.barrier.hit(name + ":after")

    def close(self) -> None:
        pass  # the protocol is save and load: a team's store closes with its process


def open_team_store(spec: RacerSpec, ref: str, barrier: BarrierClient) -> TeamStore:
    """The trial's blob store when its scenario names the team's own."""
    inner = load_store(ref, store_folder(spec), spec["thread_id"], spec.get("trial_id", ""), spec.get("racer_id", ""))
    return TeamStore(inner, ref, spec["thread_id"], barrier)

"""The effect ledger's rows: their columns, how one is made, and what a ledger promises.

Why a module of its own: the SQLite ledger (``chaos.racer.ledger``) and the Postgres one
(``chaos.racer.ledger_pg``) write the same rows; both import them from here, so neither imports the
other for them (``open_ledger`` picks the Postgres one only where a run asks for it).

Racer side: standard library only.
"""

from __future__ import annotations

import os
import socket
import time
from typing import Protocol, TypedDict, runtime_checkable

from chaos.racer.redact import redact, stable_mask

COLUMNS = (
    "seq",
    "run_id",
    "cell_id",
    "trial_id",
    "thread_id",
    "effect_key",
    "task",
    "value",
    "racer_id",
    "host",
    "pid",
    "t_wall",
    "t_mono_ns",
    "node",
    "namespace",
    "task_id",
    "outside_task",
)

# Where an effect was fired, added after the first release: a ledger written before has no such
# columns and gets them (NULL) when it is opened (``ensure_columns``). ``node``: the framework task
# or node that was running; ``namespace``: the (sub)graph it ran in, without task ids (``""``: the
# root graph); ``task_id``: the framework's id of that task; ``outside_task``: 1 when the effect was
# fired with no task running (e.g. from a thread the node started), 0 inside one, NULL when the
# adapter does not attribute effects.
ATTRIBUTION = {"node": "TEXT", "namespace": "TEXT", "task_id": "TEXT", "outside_task": "INTEGER"}


class Where(TypedDict, total=False):
    """Where an effect was fired (see ``ATTRIBUTION``); an adapter that cannot tell passes none."""

    node: str | None
    namespace: str | None
    task_id: str | None
    outside_task: bool


class Ledger(Protocol):
    def append(self, *, task: str, value: str | None, thread_id: str, where: Where | None = None, key: str | None = None) -> int: ...
    def rows(self, *, run_id: str, trial_id: str | None = None) -> list[dict]: ...
    def close(self) -> None: ...


@runtime_checkable
class AppendsOnce(Protocol):
    """A ledger with an idempotent append (``effect_once``: a second attempt with the same key
    records nothing): ``(seq, inserted)``."""

    def append_once(
        self, *, task: str, value: str | None, thread_id: str, where: Where | None = None, key: str | None = None
    ) -> tuple[int, bool]: ...


@runtime_checkable
class CopiesRows(Protocol):
    """A ledger that can insert rows it returned again under another trial's id (new seqs, every
    other column as it was): a recorded crash state's effects become its point trial's
    (``chaos.kinds.crash_states``), so ``append_once`` and ``rows`` see them as that trial's own."""

    def copy_rows(self, rows: list[dict], trial_id: str) -> None: ...


def effect_key(task: str, value: str | None, key: str | None = None) -> str:
    """An effect's identity: ``task@key`` when the team declared one (``ctx.effect(task, value,
    key=...)``: an idempotency key, the approved call; its value is then its payload, compared
    apart), else ``task``, or ``task:value`` (e.g. ``gate:True``): the label and its value."""
    if key is not None:
        return f"{task}@{key}"
    return task if value is None else f"{task}:{value}"


def of_task(key: str, task: str | None) -> bool:
    """Is ``key`` an identity of the effect label ``task`` (``task``, ``task:value``, ``task@key``)?"""
    return bool(task) and (key == task or key.startswith(f"{task}:") or key.startswith(f"{task}@"))


def declared(row: dict) -> bool:
    """Does the row carry a declared identity (``task@key``), so its value is a payload of its own?"""
    return row["effect_key"] != effect_key(row["task"], row["value"])


def stored_value(context: dict, value: str | None) -> str | None:
    """An effect's value as the ledger stores it: any secret in it masked (``chaos.racer.redact``),
    distinct secrets kept distinct, so effect keys compare as the values did."""
    return None if value is None else redact(value, stable_mask(str(context.get("run_id", ""))))


def stored_task(context: dict, task: str) -> str:
    """An effect's name as the ledger stores it: masked like its value (a name is the user's text
    too: a DSN or a token in it must not reach ledger.sqlite), the same name always the same mask
    within a run. A name without a secret is stored as it is."""
    return redact(task, stable_mask(str(context.get("run_id", ""))))


def stored_key(context: dict, task: str, value: str | None, key: str | None) -> str:
    """An effect's identity (``effect_key``) as the ledger stores it: its parts masked as they are stored."""
    return effect_key(stored_task(context, task), stored_value(context, value), None if key is None else stored_task(context, key))


def row_values(context: dict, task: str, value: str | None, thread_id: str, where: Where | None = None, key: str | None = None) -> tuple:
    """The values of one effect row, in ``COLUMNS`` order without ``seq``: who fired it, where, when."""
    identity = stored_key(context, task, value, key)
    value = stored_value(context, value)
    task = stored_task(context, task)
    w = where or {}
    outside = w.get("outside_task")
    return (
        context.get("run_id", ""),
        redact(context.get("cell_id", "")),  # a matrix of workload_params puts them in the cell's id
        context.get("trial_id", ""),
        thread_id,
        identity,
        task,
        value,
        context.get("racer_id", ""),
        context.get("host") or socket.gethostname(),
        os.getpid(),
        time.time(),
        time.monotonic_ns(),
        w.get("node"),
        w.get("namespace"),
        w.get("task_id"),
        None if outside is None else int(bool(outside)),
    )
